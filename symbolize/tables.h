/* tables.h: the writers of a collected profile into the run folder: profile.json (tables.c),
 * stacks.folded (export_folded.c), profile.pb.gz (export_pprof.c) and trace.json
 * (export_trace.c), flame.json (export_flame.c). Each returns 0, or -1 with "<path>: <why>" in err; each writes through
 * outfile.c only, and none changes the profile. */
#ifndef PERFSCOPE_TABLES_H
#define PERFSCOPE_TABLES_H

#include <stddef.h>

#include "profile.h"

int tables_write(const struct profile *p, int top, char *err, size_t errlen);
int export_folded(const struct profile *p, char *err, size_t errlen);
int export_pprof(const struct profile *p, char *err, size_t errlen);
int export_trace(const struct profile *p, char *err, size_t errlen);
int export_flame(const struct profile *p, char *err, size_t errlen);

#endif
