/* utf8.h: names read from a run folder (maps paths, perf map names, thread names, symbol names
 * of arbitrary files) may hold any bytes; JSON and protobuf strings must be valid UTF-8. These
 * replace every byte that is not part of a valid UTF-8 sequence, and every control byte, by '?',
 * so one bad name can never make profile.json or trace.json unreadable. Never allocate. */
#ifndef PERFSCOPE_UTF8_H
#define PERFSCOPE_UTF8_H

#include <stddef.h>

/* In place; the length never changes. */
void utf8_sanitize(char *s);

/* s itself when it is already clean, else a cleaned copy in buf (cut to len - 1 bytes). */
const char *utf8_clean(const char *s, char *buf, size_t len);

#endif
