/* machine.h: is the machine quiet enough to measure on? The matrix asks before every arm, with
 * the shim's own rule (meta.json's machine_before): not clean when the 1-minute load average is
 * above a quarter of the cores, or when another process is running (state R) right now: not
 * this process nor its ancestors (whoever runs the measurement), and never a kernel thread. */
#ifndef PERFSCOPE_REPORT_MACHINE_H
#define PERFSCOPE_REPORT_MACHINE_H

#include <cjson/cJSON.h>

#define MACHINE_BUSY_KEPT 8

struct machine_state {
    double load[3];
    long cores;
    int nbusy;
    int nkernel;        /* kernel threads running whose stat was read, not counted as busy (on
                         * the real /proc those told apart by their missing executable are
                         * neither read nor counted) */
    struct {
        long pid;
        char comm[24];
    } busy[MACHINE_BUSY_KEPT];
    int clean;
    char why[160];      /* "" when clean */
};

void machine_check(struct machine_state *st);

/* The same with the process table read from proc_root instead of /proc (a test's fake tree);
 * the load average and cores are the machine's. */
void machine_check_in(const char *proc_root, struct machine_state *st);

/* {"loadavg":[..], "busy_processes":[{"pid","comm"}], "clean":bool, "why_not":...} */
cJSON *machine_json(const struct machine_state *st);

#endif
