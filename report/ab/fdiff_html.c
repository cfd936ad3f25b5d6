/* fdiff_html.c: the function-level diff as a page (fd_html, fdiff.h), for `perfscope diff
 * --profiles --html FILE` and matrix --profile's functions.html: per phase group a differential
 * flame graph (B's shape: width = B's mean CPU per token, or per wall second, of each call path;
 * colour = its change against A in percentage points of A's total for the group, the table's
 * "pp"; hover: A, B, the change and the function's inclusive p-value) and the function table.
 * The tree, the escaping and the page are report/html's; this file only maps the diff's figures
 * onto them. It must never write a file or print (the caller writes the text through
 * format/outfile.c). */
#include "fdiff.h"
#include "html/flametree.h"
#include "html/page.h"

#include <stdlib.h>
#include <string.h>

/* a change of this many pp (or more) is drawn at full colour; smaller ones paler, in proportion */
#define FDIFF_HTML_FULL_PP 10.0

/* each node's "p": the inclusive p-value of the function it is a frame of, where it has one */
static void add_p(cJSON *node, const struct fd_set *s, const struct fd_group *g, int root)
{
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(node, "n");
    double p = root ? g->total.p : -1;
    for (size_t j = 0; !root && j < g->nf; j++)
        if (strcmp(strpool_str(&s->pool, g->f[j].name), n->valuestring) == 0)
            p = g->f[j].incl.p;
    if (p >= 0)
        cJSON_AddNumberToObject(node, "p", p);
    cJSON *c = cJSON_GetObjectItemCaseSensitive(node, "c"), *x;
    cJSON_ArrayForEach(x, c) add_p(x, s, g, 0);
}

static cJSON *group_tree(const struct fd_set *s, const struct fd_group *g)
{
    const char **stacks = malloc((g->nst ? g->nst : 1) * sizeof *stacks);
    double *a = malloc((g->nst ? g->nst : 1) * sizeof *a), *b = malloc((g->nst ? g->nst : 1) * sizeof *b);
    double unit = g->per_token ? 1000.0 : 1.0; /* ms per token, or CPU s per wall s */
    cJSON *tree = NULL;
    if (stacks && a && b) {
        for (size_t j = 0; j < g->nst; j++) {
            stacks[j] = strpool_str(&s->pool, g->st[j].stack);
            a[j] = g->st[j].a * unit;
            b[j] = g->st[j].b * unit;
        }
        double a_total = g->total.a * unit;
        tree = flame_tree_pairs(strpool_str(&s->pool, g->name), stacks, a, b, g->nst,
                                a_total > 0 ? 100.0 / a_total : 0);
    }
    if (tree) {
        add_p(tree, s, g, 1);
        cJSON_AddStringToObject(tree, "u", g->per_token ? "ms CPU per token" : "s CPU per s of wall");
        cJSON_AddStringToObject(tree, "du", "pp of A's total for the phase");
        cJSON_AddStringToObject(tree, "pk", "the function's inclusive CPU, over runs");
        cJSON_AddNumberToObject(tree, "dmax", FDIFF_HTML_FULL_PP);
    }
    free(stacks);
    free(a);
    free(b);
    return tree;
}

static void cell(struct sbuf *b, const char *s)
{
    sbuf_printf(b, "<td>");
    html_text(b, s);
    sbuf_printf(b, "</td>");
}

static void table(struct sbuf *b, const struct fd_set *s, const struct fd_group *g)
{
    if (!g->shown) {
        sbuf_printf(b, "<p class=\"ps-note\">No function changed by %.1f pp or more.</p>\n", s->floor_pp);
        return;
    }
    sbuf_printf(b, "<table class=\"ps-fdiff\">\n<tr><th>function</th><th>self A</th><th>self B</th><th>self</th>"
                   "<th>share of the change</th><th>p</th><th>p (Holm)</th><th>inclusive A</th>"
                   "<th>inclusive B</th><th>inclusive</th><th>p</th></tr>\n");
    for (size_t j = 0; j < g->nf; j++) {
        const struct fd_func *fn = &g->f[j];
        if (!fn->shown)
            continue;
        char v[6][48];
        fd_fmt_value(g, fn->self.a, v[0], sizeof v[0]);
        fd_fmt_value(g, fn->self.b, v[1], sizeof v[1]);
        fd_fmt_value(g, fn->incl.a, v[2], sizeof v[2]);
        fd_fmt_value(g, fn->incl.b, v[3], sizeof v[3]);
        fd_fmt_p(fn->self.p, v[4], sizeof v[4]);
        fd_fmt_p(fn->incl.p, v[5], sizeof v[5]);
        char hp[48], share[32];
        fd_fmt_p(fn->self.p_holm, hp, sizeof hp);
        if (g->total.b != g->total.a)
            snprintf(share, sizeof share, "%.0f%%", fn->share * 100.0);
        else
            snprintf(share, sizeof share, "-");
        sbuf_printf(b, "<tr data-function=\"");
        html_text(b, strpool_str(&s->pool, fn->name));
        sbuf_printf(b, "\" data-significant=\"%d\">", fn->significant);
        cell(b, strpool_str(&s->pool, fn->name));
        sbuf_printf(b, "<td>%s</td><td>%s</td><td>%+.1f pp</td><td>%s</td><td>%s</td><td>%s%s</td>"
                       "<td>%s</td><td>%s</td><td>%+.1f pp</td><td>%s</td></tr>\n",
                    v[0], v[1], fn->self.pp, share, v[4], hp, fn->significant ? " <b>significant</b>" : "",
                    v[2], v[3], fn->incl.pp, v[5]);
    }
    sbuf_printf(b, "</table>\n");
}

char *fd_html(const struct fd_set *s, const struct fd_result *r)
{
    struct html_page p;
    html_page_begin(&p, "perfscope diff: which functions changed, B against A");
    sbuf_printf(&p.b, "<p>%zu A against %zu B profiled runs. Per phase group, a differential flame graph: "
                      "B's shape (width: B's mean CPU of each call path, per token, or per second of wall "
                      "where the phase has no tokens), coloured by its change against A in percentage "
                      "points of A's total for the phase (blue: less in B, orange: more; full colour at "
                      "%.0f pp or more); hover a frame for "
                      "A, B, the change and the function's p-value. Then the functions whose self CPU "
                      "changed by %.1f pp or more (docs/diff.md).</p>\n",
                s->n[0], s->n[1], FDIFF_HTML_FULL_PP, s->floor_pp);
    for (size_t i = 0; i < r->ng; i++) {
        const struct fd_group *g = &r->g[i];
        const char *name = strpool_str(&s->pool, g->name);
        char head[300], note[300], a[48], b[48], pv[32];
        snprintf(head, sizeof head, "%s %+.1f%%", name, g->total.pp);
        fd_fmt_value(g, g->total.a, a, sizeof a);
        fd_fmt_value(g, g->total.b, b, sizeof b);
        fd_fmt_p(g->total.p, pv, sizeof pv);
        snprintf(note, sizeof note, "%s: A %s, B %s (p %s)", fd_unit_word(g), a, b, pv);
        cJSON *tree = group_tree(s, g);
        if (!tree) {
            sbuf_free(&p.b);
            return NULL;
        }
        sbuf_printf(&p.b, "<section class=\"ps-group\" data-group=\"");
        html_text(&p.b, name);
        sbuf_printf(&p.b, "\">\n");
        html_h2(&p, head);
        html_flame(&p, name, tree, note);
        cJSON_Delete(tree);
        table(&p.b, s, g);
        sbuf_printf(&p.b, "</section>\n");
    }
    if (r->skipped[0]) {
        sbuf_printf(&p.b, "<p class=\"ps-note\">Left out: ");
        html_text(&p.b, r->skipped);
        sbuf_printf(&p.b, ".</p>\n");
    }
    return html_page_end(&p);
}
