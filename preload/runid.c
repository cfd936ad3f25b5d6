/* runid.c: which run this process belongs to (runid.h). The rule, in order:
 *   1. a folder without .leader, meta.json and procs.jsonl holds no run: a new run;
 *   2. PERFSCOPE_RUN_ID=unrecorded:<this folder>: an ancestor was refused here, or found the
 *      folder unusable: refused, quietly (checked first, before the folder is read);
 *   3. PERFSCOPE_RUN_ID names the folder's run (.leader's run=, else meta.json's run_id): join;
 *   4. it names another run: refused (the folder holds another run);
 *   5. no id to compare (none inherited: env -i, a hand-built environment; or a folder from a
 *      shim without run ids): the leader's lock is held: join (a run in progress, its first
 *      process perhaps ended and a follower leading); meta.json's status is final: refused (an
 *      earlier, finished run); a process procs.jsonl lists is alive: join; else refused (an
 *      earlier run whose processes are all gone: killed).
 * It only reads the folder (by path, no lock kept); the verdict is kept for leader.c, which
 * begins .leader's state anew only for a new run. */
#include "runid.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "config.h"
#include "execenv.h"
#include "fds.h"
#include "leader.h"
#include "procs.h"
#include "runfolder.h"
#include "safefmt.h"
#include "shim.h"

static char run_id[RUNID_MAX];
static int is_new;
static enum runid_verdict verdict = RUNID_OTHER;

const char *runid_get(void)
{
    return verdict == RUNID_OTHER ? "" : run_id;
}

int runid_is_new(void)
{
    return is_new;
}

void runid_after_fork(void)
{
    is_new = 0;
}

static int exists(const char *name)
{
    char path[PATH_MAX];
    struct stat st;
    ps_path(path, sizeof path, name);
    return lstat(path, &st) == 0;
}

/* meta.json's status and run_id, when it parses; 0 when there is none to read. */
static int meta_facts(char *status, size_t ssize, char *id, size_t isize)
{
    status[0] = id[0] = 0;
    char path[PATH_MAX];
    ps_path(path, sizeof path, RUN_META);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
    if (fd < 0)
        return 0;
    struct stat st;
    static char buf[1 << 17]; /* meta.c renders at most 64 KiB */
    ssize_t n = -1;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        n = read(fd, buf, sizeof buf - 1);
    ps_real_close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    cJSON *m = cJSON_Parse(buf);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(m, "status");
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(m, "run_id");
    if (cJSON_IsString(s) && s->valuestring)
        snprintf(status, ssize, "%s", s->valuestring);
    if (cJSON_IsString(r) && r->valuestring)
        snprintf(id, isize, "%s", r->valuestring);
    cJSON_Delete(m);
    return 1;
}

static void make_id(void)
{
    uint32_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r)
        r = (uint32_t)(ps_start_ns ^ (ps_start_ns >> 32)) * 2654435761u;
    snprintf(run_id, sizeof run_id, "%d-%llx-%08x", (int)getpid(), (unsigned long long)ps_start_ns, r);
}

static enum runid_verdict refuse(char *why, size_t size, const char *fmt, const char *a, const char *b)
{
    char what[512];
    snprintf(what, sizeof what, fmt, a, b);
    snprintf(why, size,
             "perfscope: %s holds %s: this process is not recorded there and runs unmeasured "
             "(a run folder is one run: give PERFSCOPE_OUT a new folder, or remove this one)\n",
             ps_cfg.out_dir, what);
    return verdict = RUNID_OTHER;
}

enum runid_verdict runid_decide(char *why, size_t size)
{
    why[0] = 0;
    is_new = 0;
    const char *env = getenv(RUNID_ENV);
    /* Rule 2 first: an ancestor refused here, or found the folder unusable (runid_unusable),
     * has said so; the folder is not even read (an unusable one holds nothing to read). */
    if (env && strncmp(env, RUNID_UNRECORDED, strlen(RUNID_UNRECORDED)) == 0) {
        if (strcmp(env + strlen(RUNID_UNRECORDED), ps_cfg.out_dir) == 0)
            return verdict = RUNID_OTHER; /* said by an ancestor */
        env = NULL;                       /* refused for another folder: no id of ours */
    }
    char folder_id[RUNID_MAX], meta_id[RUNID_MAX], status[64];
    int lock_held = 0;
    int has_leader = leader_folder_state(folder_id, sizeof folder_id, &lock_held);
    /* Rule 3 as .leader alone answers it (every process of a run after its first): meta.json,
     * read and parsed for nothing else here, is left alone. */
    if (has_leader && folder_id[0] && env && strcmp(env, folder_id) == 0) {
        safefmt_join(run_id, sizeof run_id, folder_id, NULL, NULL);
        return verdict = RUNID_JOIN;
    }
    int has_meta = meta_facts(status, sizeof status, meta_id, sizeof meta_id);
    if (!folder_id[0])
        safefmt_join(folder_id, sizeof folder_id, meta_id, NULL, NULL);
    if (!has_leader && !has_meta && !exists(RUN_META) && !exists(RUN_PROCS)) {
        make_id();
        is_new = 1;
        return verdict = RUNID_NEW;
    }
    if (env && *env && folder_id[0]) {
        if (strcmp(env, folder_id) == 0) {
            safefmt_join(run_id, sizeof run_id, folder_id, NULL, NULL);
            return verdict = RUNID_JOIN;
        }
        return refuse(why, size, "another run (run %s, status %s)", folder_id, status[0] ? status : "unknown");
    }
    pid_t pids[4];
    int ended = status[0] && strcmp(status, "running") != 0;
    if (!lock_held && ended)
        return refuse(why, size, "an earlier run that has ended (status %s%s)", status,
                      folder_id[0] ? "" : ", from a shim without run ids");
    if (lock_held || ps_run_pids(pids, 4) > 0) {
        if (folder_id[0])
            safefmt_join(run_id, sizeof run_id, folder_id, NULL, NULL);
        else
            make_id(); /* a run of a shim without run ids, in progress: its processes from here on */
        return verdict = RUNID_JOIN;
    }
    return refuse(why, size, "an earlier run whose processes are all gone (status %s%s)",
                  status[0] ? status : "unknown", status[0] ? ": killed?" : "");
}

void runid_unusable(void)
{
    verdict = RUNID_OTHER;
    run_id[0] = 0;
    runid_export();
}

void runid_export(void)
{
    if (verdict == RUNID_OTHER) {
        char mark[PATH_MAX + sizeof RUNID_UNRECORDED];
        snprintf(mark, sizeof mark, "%s%s", RUNID_UNRECORDED, ps_cfg.out_dir);
        execenv_put(RUNID_ENV, mark);
        return;
    }
    const char *env = getenv(RUNID_ENV);
    if (!env || strcmp(env, run_id) != 0)
        execenv_put(RUNID_ENV, run_id);
}
