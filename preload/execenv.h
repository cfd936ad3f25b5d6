/* execenv.h: the environment a new image gets from this one, made so the shim still loads in
 * it after the target changed directory. The README's own form, LD_PRELOAD=build/libperfscope.so,
 * names the shim relative to the directory the run started in: after a cd, ld.so refused it in
 * the exec'd image. At start the shim's own entry of LD_PRELOAD, when given relative, is made
 * absolute in this process's environment (what system(), popen(), execv(), posix_spawn with
 * environ and every later copy of environ hand on); the exec and posix_spawn wrappers make it so
 * in an environment the target built itself, and PERFSCOPE_OUT, LLMPERFSCOPE_MARKERS and
 * LLMPERFSCOPE_CPUPROF_OUT too (config.c exports absolute ones at start). Only those entries
 * change; every other byte of the environment is kept. execenv_fix is async-signal-safe (execve
 * may be called from a handler): no malloc, no locks; in a vfork child it hands envp on as is. */
#ifndef PERFSCOPE_EXECENV_H
#define PERFSCOPE_EXECENV_H

#include <stddef.h>

/* At start, before anything of the target runs: finds the shim's own path and rewrites its
 * relative LD_PRELOAD entry, if any, in this process's environment. */
void execenv_start(void);

/* setenv(name, value, 1), except that a variable the environment lacks is added in an array of
 * the shim's own, never freed: the C library's setenv copies the array into one of its own,
 * which the program's next setenv that adds a variable frees (realloc), and main's envp (the C
 * library passes environ as it is after the constructors) or a copy of environ the program
 * kept would then point into freed memory. The C library frees only the arrays it made. */
void execenv_put(const char *name, const char *value);

/* Memory of a rewritten environment, from mmap (released after a failed exec). */
struct execenv {
    void *mem;
    size_t len;
};

/* envp itself when nothing in it needs rewriting (or it cannot be: a vfork child, no memory),
 * else a rewritten copy in e's memory. */
char *const *execenv_fix(char *const envp[], struct execenv *e);
/* After the call that used execenv_fix's result returned (a failed exec, posix_spawn). Keeps
 * errno. */
void execenv_release(struct execenv *e);

#endif
