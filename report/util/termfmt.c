/* termfmt.c: the report's markdown laid out for a terminal (termfmt.h). It must never change a
 * word or a number of the markdown (only how it is laid out), never write past an allocation,
 * and never print a line wider than the width it is given. */
#include "termfmt.h"
#include "sbuf.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#define SEP 2          /* spaces between two columns */
#define TEXT_MIN 8     /* a text column is never cut narrower than this */
#define HEAD_LINES 2   /* a header is widened until it takes at most this many lines */
#define WRAP_MIN 16    /* a wrapping text column narrower than this goes under its row instead */

/* "…" where the locale is UTF-8, else "..." (LC_ALL, LC_CTYPE, LANG: the first one set). */
static const char *ell = "...";
static size_t ellw = 3;

static void choose_ellipsis(void)
{
    const char *v = NULL;
    const char *names[] = {"LC_ALL", "LC_CTYPE", "LANG"};
    for (int i = 0; i < 3 && !v; i++) {
        v = getenv(names[i]);
        if (v && !*v)
            v = NULL;
    }
    int utf8 = v && (strstr(v, "UTF-8") || strstr(v, "utf-8") || strstr(v, "UTF8") || strstr(v, "utf8"));
    ell = utf8 ? "\xe2\x80\xa6" : "...";
    ellw = utf8 ? 1 : 3;
}

int term_width(int fd)
{
    if (!isatty(fd))
        return 0;
    long w = 0;
    const char *c = getenv("COLUMNS");
    if (c && *c) {
        char *end;
        long v = strtol(c, &end, 10);
        if (*end == '\0' && v > 0)
            w = v;
    }
    struct winsize ws;
    if (w <= 0 && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        w = ws.ws_col;
    if (w <= 0 || w > TERM_MAX_WIDTH)
        w = TERM_MAX_WIDTH;
    return w < TERM_MIN_WIDTH ? TERM_MIN_WIDTH : (int)w;
}

size_t term_display_width(const char *s, size_t len)
{
    size_t w = 0;
    for (size_t i = 0; i < len; i++)
        if (((unsigned char)s[i] & 0xc0) != 0x80)
            w++;
    return w;
}

static size_t dw(const char *s)
{
    return term_display_width(s, strlen(s));
}

/* Bytes of s's first n code points (n at most its width). */
static size_t prefix_bytes(const char *s, size_t len, size_t n)
{
    size_t i = 0;
    for (size_t cp = 0; i < len; i++) {
        if (((unsigned char)s[i] & 0xc0) != 0x80 && cp++ == n)
            break;
    }
    return i;
}

static void put_spaces(struct sbuf *b, size_t n)
{
    for (; n > 0; n--)
        sbuf_printf(b, " ");
}

static void put_mem(struct sbuf *b, const char *s, size_t n)
{
    sbuf_printf(b, "%.*s", (int)n, s);
}

/* s in at most w columns: whole, or cut at its end (or, from_start, at its start) with the
 * ellipsis. Returns the columns written. */
static size_t put_cut(struct sbuf *b, const char *s, size_t w, int from_start)
{
    size_t len = strlen(s), sw = term_display_width(s, len);
    if (sw <= w) {
        put_mem(b, s, len);
        return sw;
    }
    if (w <= ellw) {
        put_mem(b, s, prefix_bytes(s, len, w));
        return w;
    }
    size_t keep = w - ellw;
    if (from_start) {
        size_t at = prefix_bytes(s, len, sw - keep);
        sbuf_printf(b, "%s", ell);
        put_mem(b, s + at, len - at);
    } else {
        put_mem(b, s, prefix_bytes(s, len, keep));
        sbuf_printf(b, "%s", ell);
    }
    return w;
}

/* ---- words onto lines ---- */

struct lines {
    char **v;
    size_t n, cap;
    int oom;
};

static void lines_push(struct lines *l, const char *s, size_t n)
{
    if (l->oom)
        return;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 4;
        char **v = realloc(l->v, cap * sizeof *v);
        if (!v) {
            l->oom = 1;
            return;
        }
        l->v = v;
        l->cap = cap;
    }
    char *d = malloc(n + 1);
    if (!d) {
        l->oom = 1;
        return;
    }
    memcpy(d, s, n);
    d[n] = '\0';
    l->v[l->n++] = d;
}

static void lines_free(struct lines *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->v[i]);
    free(l->v);
    memset(l, 0, sizeof *l);
}

/* s word-wrapped into lines of at most w columns (a word wider than w is split); an empty s
 * gives no line. */
static void wrap(struct lines *out, const char *s, size_t w)
{
    if (w < 1)
        w = 1;
    size_t len = strlen(s);
    size_t i = 0;
    while (i < len) {
        while (i < len && s[i] == ' ')
            i++;
        if (i >= len)
            break;
        /* The longest run of whole words from i that fits, the spaces between them kept. */
        size_t pos = i, cols = 0, last_fit = i;
        while (pos < len) {
            size_t ws = pos;
            while (ws < len && s[ws] == ' ')
                ws++;
            if (ws >= len)
                break;
            size_t we = ws;
            while (we < len && s[we] != ' ')
                we++;
            size_t need = cols + (pos == i ? 0 : ws - pos) + term_display_width(s + ws, we - ws);
            if (need > w)
                break;
            cols = need;
            last_fit = we;
            pos = we;
        }
        if (last_fit == i) {
            /* One word wider than the line: split it, after its last '-' that fits if any. */
            size_t we = i;
            while (we < len && s[we] != ' ')
                we++;
            size_t n = prefix_bytes(s + i, we - i, w);
            for (size_t k = n; k > 1; k--)
                if (s[i + k - 1] == '-') {
                    n = k;
                    break;
                }
            lines_push(out, s + i, n);
            i += n;
            continue;
        }
        lines_push(out, s + i, last_fit - i);
        i = last_fit;
    }
}

/* One prose line: wrapped at width, the first line after first (already the line's start), the
 * rest indented by indent. */
static void put_wrapped(struct sbuf *b, const char *first, const char *text, size_t indent, size_t width)
{
    struct lines l = {0};
    size_t fw = dw(first);
    size_t avail = width > indent + 1 ? width - indent : 1;
    if (fw > indent)
        avail = width > fw + 1 ? width - fw : 1;
    wrap(&l, text, avail);
    if (l.oom) {
        b->oom = 1;
        lines_free(&l);
        return;
    }
    if (!l.n) {
        put_cut(b, first, width, 0);
        sbuf_printf(b, "\n");
    }
    for (size_t i = 0; i < l.n; i++) {
        if (i == 0)
            sbuf_printf(b, "%s", first);
        else
            put_spaces(b, fw > indent ? fw : indent);
        sbuf_printf(b, "%s\n", l.v[i]);
    }
    lines_free(&l);
}

/* ---- tables ---- */

enum { AL_LEFT, AL_RIGHT };

struct table {
    char ***cell;        /* [row][col], unescaped, trimmed */
    size_t nrows, ncols; /* row 0 the header */
    int *align;
    int oom;
};

/* One markdown row into its cells: split on '|' not preceded by '\', "\|" back to '|'. */
static char **split_row(const char *line, size_t len, size_t *n)
{
    size_t cap = 8, k = 0;
    char **v = calloc(cap, sizeof *v);
    if (!v)
        return NULL;
    size_t i = 0;
    if (i < len && line[i] == '|')
        i++;
    while (i < len) {
        char *c = malloc(len - i + 1);
        if (!c)
            goto oom;
        size_t o = 0;
        while (i < len && line[i] != '|') {
            if (line[i] == '\\' && i + 1 < len && line[i + 1] == '|') {
                c[o++] = '|';
                i += 2;
                continue;
            }
            c[o++] = line[i++];
        }
        int closed = i < len;
        if (closed)
            i++;
        c[o] = '\0';
        char *s = c;
        while (*s == ' ')
            s++;
        size_t sl = strlen(s);
        while (sl && s[sl - 1] == ' ')
            s[--sl] = '\0';
        memmove(c, s, sl + 1);
        if (!closed && !*c) { /* nothing after the last '|' */
            free(c);
            break;
        }
        if (k + 1 >= cap) {
            char **nv = realloc(v, 2 * cap * sizeof *nv);
            if (!nv) {
                free(c);
                goto oom;
            }
            v = nv;
            cap *= 2;
        }
        v[k++] = c;
    }
    *n = k;
    return v;
oom:
    for (size_t j = 0; j < k; j++)
        free(v[j]);
    free(v);
    return NULL;
}

static int is_rule_row(const char *line, size_t len)
{
    int dash = 0;
    for (size_t i = 0; i < len; i++) {
        if (line[i] == '-')
            dash = 1;
        else if (line[i] != '|' && line[i] != ':' && line[i] != ' ')
            return 0;
    }
    return dash;
}

static void table_free(struct table *t)
{
    for (size_t r = 0; t->cell && r < t->nrows; r++) {
        for (size_t c = 0; t->cell[r] && t->cell[r][c]; c++)
            free(t->cell[r][c]);
        free(t->cell[r]);
    }
    free(t->cell);
    free(t->align);
    memset(t, 0, sizeof *t);
}

/* The table lines [lines, lines + n) (the rule row second) into t. */
static int table_read(struct table *t, const char **line, const size_t *len, size_t n)
{
    memset(t, 0, sizeof *t);
    t->cell = calloc(n, sizeof *t->cell);
    if (!t->cell)
        return -1;
    char **rule = NULL;
    size_t nrule = 0;
    for (size_t i = 0; i < n; i++) {
        size_t k = 0;
        char **v = split_row(line[i], len[i], &k);
        if (!v)
            return -1;
        if (i == 1 && is_rule_row(line[i], len[i])) {
            rule = v;
            nrule = k;
            continue;
        }
        /* Each row ends in NULL (split_row leaves room for it); shorter rows are padded
         * with empty cells below. */
        v[k] = NULL;
        t->cell[t->nrows++] = v;
        if (k > t->ncols)
            t->ncols = k;
    }
    t->align = calloc(t->ncols ? t->ncols : 1, sizeof *t->align);
    if (!t->align)
        goto fail;
    for (size_t c = 0; c < t->ncols && c < nrule; c++)
        t->align[c] = strlen(rule[c]) && rule[c][strlen(rule[c]) - 1] == ':' ? AL_RIGHT : AL_LEFT;
    for (size_t r = 0; r < t->nrows; r++) {
        size_t k = 0;
        while (t->cell[r][k])
            k++;
        char **v = realloc(t->cell[r], (t->ncols + 1) * sizeof *v);
        if (!v)
            goto fail;
        for (size_t c = k; c < t->ncols; c++) {
            v[c] = strdup("");
            if (!v[c]) {
                for (size_t j = c; j <= t->ncols; j++)
                    v[j] = NULL;
                t->cell[r] = v;
                goto fail;
            }
        }
        v[t->ncols] = NULL;
        t->cell[r] = v;
    }
    for (size_t j = 0; rule && j < nrule; j++)
        free(rule[j]);
    free(rule);
    return 0;
fail:
    for (size_t j = 0; rule && j < nrule; j++)
        free(rule[j]);
    free(rule);
    return -1;
}

static size_t longest_word(const char *s)
{
    size_t best = 0;
    while (*s) {
        while (*s == ' ')
            s++;
        const char *e = s;
        while (*e && *e != ' ')
            e++;
        size_t w = term_display_width(s, (size_t)(e - s));
        if (w > best)
            best = w;
        s = e;
    }
    return best;
}

static size_t wrapped_lines(const char *s, size_t w)
{
    struct lines l = {0};
    wrap(&l, s, w);
    size_t n = l.oom ? 99 : l.n;
    lines_free(&l);
    return n;
}

/* How a cell wider than its column is shortened: the first column (names) cut at the end, a
 * "source" column (paths) at the start, keeping the line number; other text wraps. */
enum { FIT_CUT_END, FIT_CUT_START, FIT_WRAP };

static int fit_of(const struct table *t, size_t c, size_t first_col)
{
    if (c == first_col)
        return FIT_CUT_END;
    const char *h = t->cell[0][c];
    if (strcmp(h, "source") == 0 || strcmp(h, "file") == 0)
        return FIT_CUT_START;
    return t->align[c] == AL_RIGHT ? FIT_CUT_END : FIT_WRAP;
}

static void put_cell(struct sbuf *b, const char *s, size_t w, int align, int fit, int last)
{
    size_t sw = dw(s);
    if (sw > w) {
        put_cut(b, s, w, fit == FIT_CUT_START);
        return;
    }
    if (align == AL_RIGHT)
        put_spaces(b, w - sw);
    sbuf_printf(b, "%s", s);
    if (align == AL_LEFT && !last)
        put_spaces(b, w - sw);
}

/* One table row (its header or body), each cell wrapped or cut to its column; multi-line cells
 * leave the others blank on their extra lines; a column taken out of the grid (keep 2) follows
 * the row as "  header: text", wrapped. Trailing blanks are not written. */
static void put_row(struct sbuf *b, const struct table *t, size_t r, const size_t *w, const int *keep,
                    size_t first_col, int header, size_t width)
{
    struct lines *cl = calloc(t->ncols, sizeof *cl);
    if (!cl) {
        b->oom = 1;
        return;
    }
    size_t nl = 1, last = 0;
    for (size_t c = 0; c < t->ncols; c++) {
        if (keep[c] != 1)
            continue;
        last = c;
        const char *s = t->cell[r][c];
        int fit = header ? FIT_WRAP : fit_of(t, c, first_col);
        if (fit == FIT_WRAP && dw(s) > w[c])
            wrap(&cl[c], s, w[c]);
        else
            lines_push(&cl[c], s, strlen(s));
        if (cl[c].oom)
            b->oom = 1;
        if (cl[c].n > nl)
            nl = cl[c].n;
    }
    for (size_t k = 0; k < nl; k++) {
        size_t start = b->len;
        int any = 0;
        for (size_t c = 0; c < t->ncols; c++) {
            if (keep[c] != 1)
                continue;
            if (any)
                put_spaces(b, SEP);
            any = 1;
            /* A header sits at the bottom of its column's header lines. */
            size_t off = header ? nl - cl[c].n : 0;
            const char *s = k >= off && k - off < cl[c].n ? cl[c].v[k - off] : "";
            int fit = header ? FIT_CUT_END : fit_of(t, c, first_col);
            put_cell(b, s, w[c], header && t->align[c] == AL_RIGHT ? AL_RIGHT : t->align[c], fit, c == last);
        }
        while (!b->oom && b->len > start && b->buf[b->len - 1] == ' ')
            b->buf[--b->len] = '\0';
        sbuf_printf(b, "\n");
    }
    for (size_t c = 0; c < t->ncols && !header; c++) {
        if (keep[c] != 2 || !*t->cell[r][c])
            continue;
        struct sbuf first = {0};
        sbuf_printf(&first, "  ");
        put_cut(&first, t->cell[0][c], 20, 0);
        sbuf_printf(&first, ": ");
        char *f = sbuf_take(&first);
        if (!f) {
            b->oom = 1;
            break;
        }
        put_wrapped(b, f, t->cell[r][c], 4, width);
        free(f);
    }
    for (size_t c = 0; c < t->ncols; c++)
        lines_free(&cl[c]);
    free(cl);
}

static void put_table(struct sbuf *b, struct table *t, size_t width)
{
    size_t nc = t->ncols;
    size_t *w = calloc(nc ? nc : 1, sizeof *w), *body = calloc(nc ? nc : 1, sizeof *body);
    int *keep = calloc(nc ? nc : 1, sizeof *keep);
    if (!w || !body || !keep) {
        b->oom = 1;
        goto done;
    }
    size_t first_col = nc, nkeep = 0;
    for (size_t c = 0; c < nc; c++) {
        for (size_t r = 1; r < t->nrows; r++)
            if (dw(t->cell[r][c]) > body[c])
                body[c] = dw(t->cell[r][c]);
        const char *h = t->cell[0][c];
        keep[c] = body[c] > 0 || *h;
        if (!keep[c])
            continue;
        nkeep++;
        if (first_col == nc)
            first_col = c;
        w[c] = body[c] > longest_word(h) ? body[c] : longest_word(h);
        size_t hw = dw(h);
        while (w[c] < hw && wrapped_lines(h, w[c]) > HEAD_LINES)
            w[c]++;
    }
    size_t total = nkeep ? SEP * (nkeep - 1) : 0;
    for (size_t c = 0; c < nc; c++)
        total += keep[c] ? w[c] : 0;
    /* Too wide even with a long wrapping text column (notes) at WRAP_MIN: that column leaves
     * the grid and follows each row, the longest first. */
    while (total > width) {
        size_t best = nc;
        for (size_t c = 0; c < nc; c++)
            if (keep[c] == 1 && fit_of(t, c, first_col) == FIT_WRAP && t->align[c] == AL_LEFT &&
                body[c] > WRAP_MIN && (best == nc || body[c] > body[best]))
                best = c;
        if (best == nc || total - w[best] + (w[best] < WRAP_MIN ? w[best] : WRAP_MIN) <= width)
            break;
        keep[best] = 2;
        total -= w[best] + SEP;
    }
    /* Still too wide: number columns' headers take more lines (down to the widest of the
     * column's values and header words); then the widest text column loses a column at a time,
     * down to TEXT_MIN; then any column, down to one. */
    for (int pass = 0; pass < 3 && total > width; pass++) {
        while (total > width) {
            size_t best = nc;
            for (size_t c = 0; c < nc; c++) {
                if (keep[c] != 1)
                    continue;
                size_t lw = longest_word(t->cell[0][c]), numeric = body[c] > lw ? body[c] : lw;
                size_t floor = pass == 0 ? (t->align[c] == AL_LEFT ? w[c] : numeric)
                             : pass == 1 ? (t->align[c] == AL_LEFT ? TEXT_MIN : numeric)
                                         : 1;
                if (w[c] > floor && (best == nc || w[c] > w[best]))
                    best = c;
            }
            if (best == nc)
                break;
            w[best]--;
            total--;
        }
    }
    put_row(b, t, 0, w, keep, first_col, 1, width);
    /* The rule: a run of dashes per column. */
    int any = 0;
    for (size_t c = 0; c < nc; c++) {
        if (keep[c] != 1)
            continue;
        if (any)
            put_spaces(b, SEP);
        any = 1;
        for (size_t k = 0; k < w[c]; k++)
            sbuf_printf(b, "-");
    }
    sbuf_printf(b, "\n");
    for (size_t r = 1; r < t->nrows; r++)
        put_row(b, t, r, w, keep, first_col, 0, width);
done:
    free(w);
    free(body);
    free(keep);
}

/* ---- the document ---- */

static void put_heading(struct sbuf *b, const char *text, char under, size_t width)
{
    size_t n = put_cut(b, text, width, 0);
    sbuf_printf(b, "\n");
    if (under) {
        for (size_t i = 0; i < n; i++)
            sbuf_printf(b, "%c", under);
        sbuf_printf(b, "\n");
    }
}

char *term_layout(const char *md, int width_in)
{
    size_t width = width_in < TERM_MIN_WIDTH ? TERM_MIN_WIDTH : (size_t)width_in;
    choose_ellipsis();
    struct sbuf b = {0};
    /* The document as lines. */
    size_t nl = 0, cap = 256;
    const char **line = malloc(cap * sizeof *line);
    size_t *len = malloc(cap * sizeof *len);
    if (!line || !len)
        goto oom;
    for (const char *p = md; *p;) {
        const char *e = strchr(p, '\n');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (nl == cap) {
            cap *= 2;
            const char **l2 = realloc(line, cap * sizeof *line);
            if (!l2)
                goto oom;
            line = l2;
            size_t *n2 = realloc(len, cap * sizeof *len);
            if (!n2)
                goto oom;
            len = n2;
        }
        line[nl] = p;
        len[nl++] = n;
        p += n + (e ? 1 : 0);
    }
    int fence = 0;
    char *tmp = NULL;
    for (size_t i = 0; i < nl && !b.oom; i++) {
        const char *s = line[i];
        size_t n = len[i];
        if (n >= 3 && memcmp(s, "```", 3) == 0) {
            fence = !fence;
            continue;
        }
        free(tmp);
        tmp = strndup(s, n);
        if (!tmp)
            goto oom;
        if (fence) {
            put_wrapped(&b, "  ", tmp, 4, width);
            continue;
        }
        if (n && s[0] == '|') {
            size_t j = i;
            while (j < nl && len[j] && line[j][0] == '|')
                j++;
            struct table t;
            if (table_read(&t, line + i, len + i, j - i) != 0) {
                table_free(&t);
                goto oom;
            }
            put_table(&b, &t, width);
            table_free(&t);
            i = j - 1;
            continue;
        }
        if (n > 4 && memcmp(s, "### ", 4) == 0) {
            put_heading(&b, tmp + 4, 0, width);
            continue;
        }
        if (n > 3 && memcmp(s, "## ", 3) == 0) {
            put_heading(&b, tmp + 3, '-', width);
            continue;
        }
        if (n > 2 && memcmp(s, "# ", 2) == 0) {
            put_heading(&b, tmp + 2, '=', width);
            continue;
        }
        if (!n) {
            sbuf_printf(&b, "\n");
            continue;
        }
        /* A bullet ("- ", "  - ") hangs its continuation lines under its text. */
        size_t lead = 0;
        while (lead < n && s[lead] == ' ')
            lead++;
        size_t indent = lead;
        if (lead + 1 < n && s[lead] == '-' && s[lead + 1] == ' ')
            indent = lead + 2;
        char first[64];
        size_t fl = indent < sizeof first - 1 ? indent : sizeof first - 1;
        memcpy(first, s, fl);
        first[fl] = '\0';
        put_wrapped(&b, first, tmp + fl, indent, width);
    }
    free(tmp);
    free(line);
    free(len);
    return sbuf_take(&b);
oom:
    free(line);
    free(len);
    sbuf_free(&b);
    return NULL;
}
