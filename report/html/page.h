/* page.h: report.html's page writer (page.c), for every part of the report that draws a page
 * (the run report, report/run/html_run.c; later `perfscope diff --html`). The page is one
 * self-contained file: its CSS and JavaScript (report/html/report.css, flame.js, charts.js,
 * built into the binary) are inlined, and nothing is ever fetched: no URL is ever written as a
 * resource. C writes only data and text; the pictures are drawn in the page from the data:
 *   html_flame: a flame graph of one phase group from a tree (flametree.h's node schema:
 *     {"n":name,"m":module,"f":"file:line","v":samples,"i":inline 0/1,"t":truncated 0/1,
 *      "c":[children],"d":optional differential value; when present the graph is coloured by it});
 *   html_lines: a line chart {"unit","series":[{"name","t":[s],"v":[..]}],"phases":[..]};
 *   html_timeline: {"t1":s,"phases":[{"name","depth","t0","t1"}],"procs":[{"pid","exe","t0","t1"}]}.
 * Every text given is escaped here (html_text); every JSON is written so that it cannot close
 * the script element holding it. It must never write a file (the caller writes the text through
 * format/outfile.c) and never print. */
#ifndef PERFSCOPE_REPORT_HTML_PAGE_H
#define PERFSCOPE_REPORT_HTML_PAGE_H

#include <cjson/cJSON.h>

#include "sbuf.h"

struct html_page {
    struct sbuf b;
    unsigned figures;
};

/* The head (title escaped, the CSS) and the page's first heading. */
void html_page_begin(struct html_page *p, const char *title);
/* s escaped for HTML text and attribute values (& < > " '), control bytes as '?'. */
void html_text(struct sbuf *b, const char *s);
/* A section heading. */
void html_h2(struct html_page *p, const char *title);
/* The figures: a heading (escaped) and the data, drawn in the page. */
void html_flame(struct html_page *p, const char *phase, const cJSON *tree, const char *note);
void html_lines(struct html_page *p, const char *title, const cJSON *chart);
void html_timeline(struct html_page *p, const char *title, const cJSON *timeline);
/* The scripts and the end of the page: the text (caller frees), or NULL when out of memory. */
char *html_page_end(struct html_page *p);

#endif
