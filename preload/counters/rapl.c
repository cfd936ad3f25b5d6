/* rapl.c: CPU energy from the powercap tree (RAPL): finds the intel-rapl:* zones once, then reads
 * each zone's energy_uj by path at every call and reports it raw (wraparound is the report's job,
 * hence max_energy_range_uj beside it). Must never keep a descriptor open between reads (the
 * target may close descriptors it did not open), never report an unreadable counter as 0, and
 * never abort or print: a problem becomes an "error" string in the JSON and one log line. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "counters/parts.h"
#include "log.h"

#define MAX_ZONES 64
#define MAX_DEPTH 3

struct zone {
    char zone[64];   /* directory name, "intel-rapl:0:1" */
    char name[64];   /* contents of its name file, "dram"; "" when unreadable */
    char *energy;    /* path of energy_uj */
    long long max_range; /* max_energy_range_uj, -1 when unknown */
};

static struct zone zones[MAX_ZONES];
static int nzones;

static int parse_u64(const char *s, unsigned long long *out) {
    if (*s < '0' || *s > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

static int known(const char *zone) {
    for (int i = 0; i < nzones; i++)
        if (strcmp(zones[i].zone, zone) == 0) return 1;
    return 0;
}

static void add_zone(const char *zone, const char *dir) {
    char path[PATH_MAX], buf[128];
    const char *op;
    unsigned long long v;
    if (nzones >= MAX_ZONES || strlen(zone) >= sizeof zones[0].zone || known(zone)) return;
    if (snprintf(path, sizeof path, "%s/energy_uj", dir) >= (int)sizeof path) return;
    struct zone *z = &zones[nzones];
    memset(z, 0, sizeof *z);
    z->energy = strdup(path);
    if (!z->energy) return;
    strcpy(z->zone, zone);
    if (snprintf(path, sizeof path, "%s/name", dir) < (int)sizeof path &&
        counters_read_small(path, buf, sizeof z->name, &op) >= 0)
        strcpy(z->name, buf);
    z->max_range = -1;
    if (snprintf(path, sizeof path, "%s/max_energy_range_uj", dir) < (int)sizeof path &&
        counters_read_small(path, buf, sizeof buf, &op) >= 0 && parse_u64(buf, &v) == 0)
        z->max_range = (long long)v;
    nzones++;
}

/* Zones sit at the top of the powercap class folder (as symlinks) and, on kernels or fixtures
 * that only nest them, as subdirectories of their parent zone: both are walked, names deduped. */
static int scan(const char *dir, int depth) {
    DIR *d = opendir(dir);
    if (!d) {
        char why[160];
        counters_errtext(why, sizeof why, dir, errno);
        if (depth == 0)
            ps_log_run_once("rapl.root", "counters: RAPL: cannot open %s; no CPU energy", why);
        return -1;
    }
    struct dirent *e;
    char path[PATH_MAX];
    struct stat st;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "intel-rapl:", 11) != 0) continue;
        if (snprintf(path, sizeof path, "%s/%s", dir, e->d_name) >= (int)sizeof path) continue;
        if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) continue;
        add_zone(e->d_name, path);
        if (depth < MAX_DEPTH) scan(path, depth + 1);
    }
    closedir(d);
    return 0;
}

static int zone_cmp(const void *a, const void *b) {
    return strverscmp(((const struct zone *)a)->zone, ((const struct zone *)b)->zone);
}

void rapl_open(const char *root) {
    rapl_close();
    if (!root || !*root) return;
    if (scan(root, 0) != 0) return;
    qsort(zones, (size_t)nzones, sizeof zones[0], zone_cmp);
    if (nzones == 0)
        ps_log_run_once("rapl.none", "counters: RAPL: no intel-rapl zones under %s; no CPU energy",
                    root);
}

void rapl_close(void) {
    for (int i = 0; i < nzones; i++) free(zones[i].energy);
    nzones = 0;
}

static void add_error(cJSON *o, const struct zone *z, const char *why) {
    char key[96];
    cJSON_AddStringToObject(o, "error", why);
    snprintf(key, sizeof key, "rapl.read.%.63s", z->zone);
    counters_log_once(key, "counters: RAPL zone %s (%s): cannot read %s: %s; its energy is "
                      "left out", z->zone, z->name, z->energy, why);
}

void rapl_add_json(cJSON *obj) {
    cJSON *arr = cJSON_AddArrayToObject(obj, "rapl");
    if (!arr) return;
    for (int i = 0; i < nzones; i++) {
        const struct zone *z = &zones[i];
        cJSON *o = cJSON_CreateObject();
        if (!o) return;
        cJSON_AddItemToArray(arr, o);
        cJSON_AddStringToObject(o, "zone", z->zone);
        cJSON_AddStringToObject(o, "name", z->name);
        char buf[64], why[192];
        const char *op;
        unsigned long long v;
        if (counters_read_small(z->energy, buf, sizeof buf, &op) < 0) {
            int err = errno;
            char what[32];
            snprintf(what, sizeof what, "%s energy_uj", op);
            counters_errtext(why, sizeof why, what, err);
            if (err == EACCES || err == EPERM)
                strncat(why, " (energy_uj is root-only since Linux 5.10)",
                        sizeof why - strlen(why) - 1);
            add_error(o, z, why);
            continue;
        }
        if (parse_u64(buf, &v) != 0) {
            add_error(o, z, "energy_uj: not a number");
            continue;
        }
        cJSON_AddNumberToObject(o, "energy_uj", (double)v);
        if (z->max_range >= 0)
            cJSON_AddNumberToObject(o, "max_energy_range_uj", (double)z->max_range);
    }
}
