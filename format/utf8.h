/* utf8.h: names read from a run folder (maps paths, perf map names, thread names, symbol names
 * of arbitrary files) may hold any bytes; JSON and protobuf strings must be valid UTF-8. These
 * replace every byte that is not part of a valid UTF-8 sequence, and every control byte, by '?',
 * so one bad name can never make profile.json or trace.json unreadable. Never allocate. */
#ifndef PERFSCOPE_UTF8_H
#define PERFSCOPE_UTF8_H

#include <stddef.h>

/* In place; the length never changes. */
void utf8_sanitize(char *s);

/* In place: every byte that is not part of a valid UTF-8 sequence becomes '?', control bytes
 * kept. For a whole printed JSON document (its own newlines kept; its printer escaped the
 * controls inside strings but passed other bytes as they came): a name from a run folder holding
 * bytes that are not UTF-8 (a thread name, a zone, a log line) made run.json unreadable to a
 * strict reader (Python's json.load). */
void utf8_fix_text(char *s);

/* s itself when it is already clean, else a cleaned copy in buf (cut to len - 1 bytes). */
const char *utf8_clean(const char *s, char *buf, size_t len);

#endif
