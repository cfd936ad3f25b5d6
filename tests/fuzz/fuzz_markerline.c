/* fuzz_markerline: libFuzzer harness for the marker line parser (preload/markerline.c), which
 * runs inside the target on every line any script appends to the markers file. Checks the
 * promises of markerline.h on every input: spans inside the line, names valid, at most
 * PS_MARKER_ATTRS_MAX attributes, an error named for a bad line, the line never written to; and
 * the clock rule's answer agrees with its definition. */
#include "fuzz_input.h"
#include "markerline.h"

#include <string.h>

static int inside(struct ps_mspan s, const char *line, size_t len)
{
    return s.len == 0 || (s.p >= line && s.len <= len && (size_t)(s.p - line) <= len - s.len);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* The first 16 bytes, when there are that many, give the clock rule its times. */
    uint64_t start = fuzz_u64(data, size, 0), read = fuzz_u64(data, size, 8);
    char *line = malloc(size ? size : 1);
    char *copy = malloc(size ? size : 1);
    if (!line || !copy) {
        free(line);
        free(copy);
        return 0;
    }
    memcpy(line, data, size);
    memcpy(copy, data, size);
    static struct ps_marker m;
    int rc = ps_marker_parse(line, size, &m);
    if (memcmp(line, copy, size) != 0)
        __builtin_trap(); /* the line is never written to */
    size_t used = size > PS_MARKER_LINE_MAX ? PS_MARKER_LINE_MAX : size;
    if (rc == 1) {
        if (!inside(m.name, line, used) || !ps_marker_valid_name(m.name.p, m.name.len) ||
            m.nattrs > PS_MARKER_ATTRS_MAX || m.error != PS_MARKER_OK)
            __builtin_trap();
        for (size_t i = 0; i < m.nattrs; i++)
            if (!inside(m.attrs[i].key, line, used) || !inside(m.attrs[i].value, line, used) ||
                !ps_marker_valid_name(m.attrs[i].key.p, m.attrs[i].key.len))
                __builtin_trap();
        if (m.has_t) {
            int on = ps_marker_t_on_run_clock(m.t, start, read);
            int want = !(start > PS_MARKER_CLOCK_SLACK_NS && m.t < start - PS_MARKER_CLOCK_SLACK_NS) &&
                       !(read <= UINT64_MAX - PS_MARKER_CLOCK_SLACK_NS &&
                         m.t > read + PS_MARKER_CLOCK_SLACK_NS);
            if (on != want)
                __builtin_trap();
        }
    } else if (rc == -1) {
        if (m.error == PS_MARKER_OK || !inside(m.bad, line, used))
            __builtin_trap();
    } else if (rc != 0) {
        __builtin_trap();
    }
    free(line);
    free(copy);
    return 0;
}
