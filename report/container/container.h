/* container.h: a `docker run ...` or `podman run ...` command as a target (docs/containers.md),
 * for `perfscope record` and the matrix's arms. The client is only a remote control: the engine
 * is a child of the daemon. So perfscope adds right after `run` the id file, the container shim
 * folder (read-only, at CONTAINER_SHIM_DIR) and the run folder (read-write, at its own path),
 * and -e for LD_PRELOAD, PERFSCOPE_OUT, LLMPERFSCOPE_MARKERS and every other PERFSCOPE_* setting
 * of the run; follows the container from the host (its first process's host pid, NSpid of every
 * process in its pid namespace, the image); stops it itself on a timeout or an interrupt
 * (`stop -t`, then `kill`); after it stops copies each mapped file with samples into OUT/symfs,
 * gives the run folder back to the user who ran perfscope, removes the container and writes
 * OUT/container.json. It must never add a capability or change a security option, never
 * change the container's user, and never leave the container behind, running or stopped. */
#ifndef PERFSCOPE_REPORT_CONTAINER_H
#define PERFSCOPE_REPORT_CONTAINER_H

#include <limits.h>
#include <pthread.h>
#include <signal.h>

#define CONTAINER_SHIM_DIR "/perfscope/shim"   /* where the shim folder is mounted inside */
#define CONTAINER_STOP_S 10   /* docker stop -t after an interrupt: docker's own default grace */
#define CONTAINER_TIMEOUT_STOP_S 2 /* ... after a matrix arm's timeout: the arm is lost anyway */
#define CONTAINER_MAX_PIDS 4096

struct container_pid {
    int pid, host_pid;  /* inside the container's pid namespace, and on the host */
};

struct container {
    char **tool_argv;          /* the client and its global options (before `run`) */
    int ntool;
    char out[PATH_MAX];        /* the run folder, absolute */
    char cidfile[PATH_MAX + 32];
    char id[80];               /* the container's id, once the client wrote it */
    int host_pid;              /* its first process on the host (0: not seen) */
    char image[512], image_id[160];
    int user_rm;               /* the user asked --rm (not passed on: removed here after the copy) */
    int stop_s;                /* docker stop -t: CONTAINER_STOP_S unless the caller sets it */
    int stopped_by_us;         /* a timeout or an interrupt stopped it (stop -t, then kill) */
    int killed;                /* it outlived stop -t and was killed */
    struct container_pid pids[CONTAINER_MAX_PIDS];
    int npids;
    pthread_t follower;
    int following;
    volatile int done;
    pthread_mutex_t lock;
    double copy_s;             /* how long the symbol copy took */
    int copied, copy_failed;
};

/* The index of `run` in argv when argv is `docker|podman [global options] run ...`, else -1. */
int container_run_index(char *const *argv);

/* Prepares c for argv (container_run_index(argv) >= 0) run into out_abs with the shim at
 * shim_path (its container folder is <dir of shim_path>/container/): *argv_out gets the client's
 * command with perfscope's options added right after `run` (the user's --rm taken out), the
 * settings taken from envp (a host run's environment: LD_PRELOAD, PERFSCOPE_*, LLMPERFSCOPE_*),
 * *env_out the client's environment (envp without them). Both arrays and their strings are
 * allocated: strv_free_v (strv.h). 0, or -1 with the reason in err. */
int container_prepare(struct container *c, char *const *argv, const char *out_abs,
                      const char *shim_path, char *const *envp, char ***argv_out,
                      char ***env_out, char *err, size_t errlen);

/* Starts following the container from the host in the background (its id file, its first
 * process, the image, NSpid of its processes). */
void container_follow(struct container *c);

/* For proc_cmd.before_kill (arg: the struct container): stops the container itself. */
void container_stop(void *arg);

/* After the client has ended: stops the container if it still runs (stop_asked: at once;
 * otherwise it is waited for, for at most wait_s when > 0, and stop stops that wait), copies the mapped files with samples
 * into OUT/symfs, gives the run folder's files to our uid and gid, removes the container and
 * writes OUT/container.json. Anything that fails is said in one line on stderr (prefixed who). */
void container_finish(struct container *c, int stop_asked, volatile sig_atomic_t *stop,
                      double wait_s, const char *who);

/* OUT/symfs: each file mapped inside the container that holds a frame of a sample, copied out
 * with `cp` (container_symfs.c). Returns the files copied; *failed counts those that could not be. */
int container_copy_symbols(struct container *c, int *failed, const char *who);

/* Runs the client with args (the container's tool and global options first), stdout into buf
 * (NUL-terminated, trailing blanks cut) when buf is not NULL: its exit status, or -1. */
int container_tool(const struct container *c, char *buf, size_t size, double timeout_s, ...);

#endif
