/* config.c: the configuration (config.h): every variable the shim reads from the environment,
 * read once at start into ps_cfg, with its default and range; a bad value is logged and the
 * default used, never a reason to stop the target. Also the paths of the run folder's files. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "runfolder.h"
#include "safefmt.h"

struct ps_config ps_cfg;

void ps_path(char *buf, size_t size, const char *name)
{
    /* Without stdio: a fork child names .leader with it, and snprintf's first call there would
     * fault its code in. A path too long comes out empty (opens nothing), never cut short. */
    struct safefmt f;
    safefmt_init(&f, buf, size);
    safefmt_str(&f, ps_cfg.out_dir);
    safefmt_str(&f, "/");
    safefmt_str(&f, name);
    if (f.overflow && size)
        buf[0] = 0;
}

static long env_long(const char *name, const char *alt, long def, long lo, long hi)
{
    const char *v = getenv(name);
    if ((!v || !*v) && alt)
        v = getenv(alt);
    if (!v || !*v)
        return def;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || *end || x < lo || x > hi) {
        ps_log("%s=%s is not a number in %ld..%ld; using %ld", name, v, lo, hi, def);
        return def;
    }
    return x;
}

/* The paths below are joined without stdio: every image reads its configuration at start, and
 * snprintf's first call there faulted its code in (safefmt_join). */
static void absolute(char *dst, size_t size, const char *path)
{
    if (path[0] == '/') {
        safefmt_join(dst, size, path, NULL, NULL);
        return;
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        safefmt_join(cwd, sizeof cwd, ".", NULL, NULL);
    safefmt_join(dst, size, cwd, "/", path);
}

/* The markers file's variable: LLMPERFSCOPE_MARKERS, else PERFSCOPE_MARKERS (the same variable
 * under our own prefix; the first wins when both are set), NULL when neither is. */
const char *config_markers_var(void)
{
    static const char *const names[] = {"LLMPERFSCOPE_MARKERS", "PERFSCOPE_MARKERS"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *v = getenv(names[i]);
        if (v && *v)
            return names[i];
    }
    return NULL;
}

const char *const ps_clock_names[3] = { "auto", "perf", "timer" };
const char *const ps_unwind_names[3] = { "libunwind", "fp", "kernel" };

/* Which of names[0..2] the variable says; unset or empty: names[0]; anything else is logged
 * and names[0] taken. */
static int env_choice(const char *var, const char *const names[3])
{
    const char *v = getenv(var);
    for (int i = 0; v && i < 3; i++)
        if (strcmp(v, names[i]) == 0)
            return i;
    if (v && *v)
        ps_log("%s=%s is not %s, %s or %s; using %s", var, v, names[0], names[1], names[2], names[0]);
    return 0;
}

void config_read(void)
{
    const char *out = getenv("PERFSCOPE_OUT");
    const char *prefix = getenv("LLMPERFSCOPE_CPUPROF_OUT");
    if (out && *out) {
        absolute(ps_cfg.out_dir, sizeof ps_cfg.out_dir, out);
        safefmt_join(ps_cfg.file_prefix, sizeof ps_cfg.file_prefix, ps_cfg.out_dir, "/" RUN_SAMPLES_PREFIX, NULL);
    } else if (prefix && *prefix) {
        /* The reference harness names a file prefix; its folder is the run folder. */
        absolute(ps_cfg.file_prefix, sizeof ps_cfg.file_prefix, prefix);
        safefmt_join(ps_cfg.out_dir, sizeof ps_cfg.out_dir, ps_cfg.file_prefix, NULL, NULL);
        char *slash = strrchr(ps_cfg.out_dir, '/');
        if (slash && slash != ps_cfg.out_dir)
            *slash = 0;
    } else {
        absolute(ps_cfg.out_dir, sizeof ps_cfg.out_dir, "perfscope-out");
        safefmt_join(ps_cfg.file_prefix, sizeof ps_cfg.file_prefix, ps_cfg.out_dir, "/" RUN_SAMPLES_PREFIX, NULL);
    }
    ps_cfg.hz = (int)env_long("PERFSCOPE_HZ", "LLMPERFSCOPE_CPUPROF_HZ", 199, 0, 100000);
    if (ps_cfg.hz > PS_HZ_MAX) {
        ps_log("PERFSCOPE_HZ=%d: above %d samples a CPU second, each sample's signal costs a thread more than "
               "its own work gets; %d Hz used", ps_cfg.hz, PS_HZ_MAX, PS_HZ_MAX);
        ps_cfg.hz = PS_HZ_MAX;
    }
    ps_cfg.clock = (enum ps_clock)env_choice("PERFSCOPE_CLOCK", ps_clock_names);
    ps_cfg.unwind = (enum ps_unwind)env_choice("PERFSCOPE_UNWIND", ps_unwind_names);
    const char *fast = getenv("PERFSCOPE_UNWIND_FAST");
    ps_cfg.unwind_fast = !(fast && strcmp(fast, "0") == 0);
    ps_cfg.max_frames = (int)env_long("PERFSCOPE_MAX_FRAMES", NULL, 64, 1, 256);
    ps_cfg.counter_ms = (int)env_long("PERFSCOPE_COUNTER_MS", NULL, 100, 0, 3600000);
    const char *markers = config_markers_var() ? getenv(config_markers_var()) : NULL;
    if (markers)
        absolute(ps_cfg.markers, sizeof ps_cfg.markers, markers);
    const char *pc = getenv("PERFSCOPE_POWERCAP_ROOT");
    safefmt_join(ps_cfg.powercap_root, sizeof ps_cfg.powercap_root, pc && *pc ? pc : "/sys/class/powercap", NULL, NULL);
    const char *nvml = getenv("PERFSCOPE_NVML");
    safefmt_join(ps_cfg.nvml_path, sizeof ps_cfg.nvml_path, nvml && *nvml ? nvml : "libnvidia-ml.so.1", NULL, NULL);
}

/* Our own variables hold absolute paths from here on, so children that start in another
 * working directory (exec after chdir, posix_spawn, system) write into the same run folder. */
static void export_absolute(const char *name, const char *abs)
{
    const char *v = getenv(name);
    if (v && *v && v[0] != '/')
        setenv(name, abs, 1);
}

void config_export_absolute(void)
{
    export_absolute("PERFSCOPE_OUT", ps_cfg.out_dir);
    /* Only the variable the markers file came from: the other one, when set, is left as given. */
    if (config_markers_var())
        export_absolute(config_markers_var(), ps_cfg.markers);
    export_absolute("LLMPERFSCOPE_CPUPROF_OUT", ps_cfg.file_prefix);
}
