/* page.c: report.html's page writer (page.h). It must escape every text it is given, write
 * every JSON so that no "</" can end its script element early, and reference no resource
 * outside the page. */
#include "page.h"
#include "assets.h"

#include <stdlib.h>
#include <string.h>

void html_text(struct sbuf *b, const char *s)
{
    char buf[512];
    size_t n = 0;
    for (; s && *s; s++) {
        const char *rep = NULL;
        unsigned char c = (unsigned char)*s;
        switch (c) {
        case '&': rep = "&amp;"; break;
        case '<': rep = "&lt;"; break;
        case '>': rep = "&gt;"; break;
        case '"': rep = "&quot;"; break;
        case '\'': rep = "&#39;"; break;
        default: break;
        }
        if (n + 8 >= sizeof buf) {
            buf[n] = '\0';
            sbuf_printf(b, "%s", buf);
            n = 0;
        }
        if (rep) {
            size_t k = strlen(rep);
            memcpy(buf + n, rep, k);
            n += k;
        } else {
            buf[n++] = c < 0x20 || c == 0x7f ? '?' : (char)c;
        }
    }
    buf[n] = '\0';
    sbuf_printf(b, "%s", buf);
}

void html_page_begin(struct html_page *p, const char *title)
{
    memset(p, 0, sizeof *p);
    sbuf_printf(&p->b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>");
    html_text(&p->b, title);
    sbuf_printf(&p->b, "</title>\n<style>\n%s</style>\n</head>\n<body>\n"
                       "<svg id=\"ps-ns\" width=\"0\" height=\"0\" aria-hidden=\"true\"></svg>\n<h1>", html_report_css);
    html_text(&p->b, title);
    sbuf_printf(&p->b, "</h1>\n");
}

void html_h2(struct html_page *p, const char *title)
{
    sbuf_printf(&p->b, "<h2>");
    html_text(&p->b, title);
    sbuf_printf(&p->b, "</h2>\n");
}

/* JSON inside <script type="application/json">: every '<' (only ever inside a JSON string)
 * becomes \u003c, the same string to a JSON parser, so no name can close the element ("</script")
 * or open a comment ("<!--"). */
static void json_script(struct sbuf *b, const cJSON *data)
{
    char *s = data ? cJSON_PrintUnformatted(data) : NULL; /* made UTF-8 with the page (sbuf_take) */
    if (!s) {
        if (data)
            b->oom = 1;
        sbuf_printf(b, "null");
        return;
    }
    char *start = s;
    for (char *c = s; *c; c++)
        if (*c == '<') {
            sbuf_printf(b, "%.*s\\u003c", (int)(c - start), start);
            start = c + 1;
        }
    sbuf_printf(b, "%s", start);
    free(s);
}

static void figure(struct html_page *p, const char *kind, const char *title, const cJSON *data,
                   const char *note)
{
    unsigned id = p->figures++;
    sbuf_printf(&p->b, "<div class=\"ps-fig ps-%s\" id=\"fig%u\" data-kind=\"%s\" data-title=\"", kind, id, kind);
    html_text(&p->b, title);
    sbuf_printf(&p->b, "\">\n<h3>");
    html_text(&p->b, title);
    sbuf_printf(&p->b, "</h3>\n");
    if (note && *note) {
        sbuf_printf(&p->b, "<p class=\"ps-note\">");
        html_text(&p->b, note);
        sbuf_printf(&p->b, "</p>\n");
    }
    sbuf_printf(&p->b, "<script type=\"application/json\" class=\"ps-data\">");
    json_script(&p->b, data);
    sbuf_printf(&p->b, "</script>\n<noscript>This picture is drawn by the page's script.</noscript>\n</div>\n");
}

void html_flame(struct html_page *p, const char *phase, const cJSON *tree, const char *note)
{
    figure(p, "flame", phase, tree, note);
}

void html_lines(struct html_page *p, const char *title, const cJSON *chart)
{
    figure(p, "lines", title, chart, NULL);
}

void html_timeline(struct html_page *p, const char *title, const cJSON *timeline)
{
    figure(p, "timeline", title, timeline, NULL);
}

char *html_page_end(struct html_page *p)
{
    sbuf_printf(&p->b, "<script>\n%s</script>\n<script>\n%s</script>\n</body>\n</html>\n", html_charts_js,
                html_flame_js);
    return sbuf_take(&p->b);
}
