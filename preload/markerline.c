/* markerline.c: one markers line parsed (markerline.h). Pure: it reads only the bytes it is
 * given (never past len, never past a NUL), writes only *m, calls nothing that allocates, locks
 * or depends on the locale (no ctype, no strtoull), and never fails on any input: every line is
 * a boundary, a blank or comment, or a bad line with its reason. */
#include "markerline.h"

#include <string.h>

static int is_sep(char c)
{
    return c == ' ' || c == '\t';
}

static int name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '.' || c == '-';
}

int ps_marker_valid_name(const char *s, size_t len)
{
    if (len == 0 || len > PS_MARKER_NAME_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!name_char(s[i]))
            return 0;
    return 1;
}

/* A whole decimal number of at most 64 bits: digits only, at least one. */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
    if (len == 0)
        return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return 0;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return 0;
        v = v * 10 + d;
    }
    *out = v;
    return 1;
}

static int span_is(struct ps_mspan s, const char *word)
{
    size_t n = strlen(word);
    return s.len == n && memcmp(s.p, word, n) == 0;
}

/* The next word at or after *at (spaces and tabs between words); 0 when there is none. */
static int next_word(const char *line, size_t len, size_t *at, struct ps_mspan *w)
{
    size_t i = *at;
    while (i < len && is_sep(line[i]))
        i++;
    if (i == len)
        return 0;
    size_t start = i;
    while (i < len && !is_sep(line[i]))
        i++;
    *w = (struct ps_mspan){line + start, i - start};
    *at = i;
    return 1;
}

static int bad(struct ps_marker *m, enum ps_marker_error e, struct ps_mspan what)
{
    m->error = e;
    m->bad = what;
    return -1;
}

int ps_marker_parse(const char *line, size_t len, struct ps_marker *m)
{
    m->cut = len > PS_MARKER_LINE_MAX;
    if (m->cut)
        len = PS_MARKER_LINE_MAX;
    const char *nul = len ? memchr(line, 0, len) : NULL;
    if (nul)
        len = (size_t)(nul - line);
    m->name = (struct ps_mspan){line, 0};
    m->end = 0;
    m->has_t = 0;
    m->t = 0;
    m->nattrs = 0;
    m->error = PS_MARKER_OK;
    m->bad = (struct ps_mspan){line, 0};
    while (len && (line[len - 1] == '\r' || is_sep(line[len - 1])))
        len--;
    size_t at = 0;
    while (at < len && is_sep(line[at]))
        at++;
    if (at == len || line[at] == '#')
        return 0;

    struct ps_mspan name, event, kv;
    next_word(line, len, &at, &name);
    if (!ps_marker_valid_name(name.p, name.len))
        return bad(m, PS_MARKER_BAD_NAME, name);
    if (!next_word(line, len, &at, &event) || !(span_is(event, "begin") || span_is(event, "end")))
        return bad(m, PS_MARKER_BAD_EVENT, name);
    m->name = name;
    m->end = span_is(event, "end");
    while (next_word(line, len, &at, &kv)) {
        const char *eq = memchr(kv.p, '=', kv.len);
        size_t klen = eq ? (size_t)(eq - kv.p) : 0;
        if (!eq || !ps_marker_valid_name(kv.p, klen) || klen + 1 == kv.len)
            return bad(m, PS_MARKER_BAD_ATTR, kv);
        struct ps_mspan key = {kv.p, klen}, value = {eq + 1, kv.len - klen - 1};
        uint64_t v;
        if (span_is(key, "t")) {
            if (!parse_u64(value.p, value.len, &v))
                return bad(m, PS_MARKER_BAD_T, value);
            m->t = v;
            m->has_t = 1;
            continue;
        }
        if (span_is(key, "tokens") && !parse_u64(value.p, value.len, &v))
            return bad(m, PS_MARKER_BAD_TOKENS, value);
        if (m->nattrs < PS_MARKER_ATTRS_MAX) /* always: see PS_MARKER_ATTRS_MAX */
            m->attrs[m->nattrs++] = (struct ps_marker_attr){key, value};
    }
    return 1;
}

int ps_marker_t_on_run_clock(uint64_t t, uint64_t run_start_ns, uint64_t read_ns)
{
    uint64_t lo = run_start_ns > PS_MARKER_CLOCK_SLACK_NS ? run_start_ns - PS_MARKER_CLOCK_SLACK_NS : 0;
    uint64_t hi = read_ns < UINT64_MAX - PS_MARKER_CLOCK_SLACK_NS ? read_ns + PS_MARKER_CLOCK_SLACK_NS : UINT64_MAX;
    return t >= lo && t <= hi;
}
