/* assets.h: the page's CSS and JavaScript, built into the binary from report/html/report.css,
 * flame.js and charts.js (the Makefile turns each into a C array with od and sed, into
 * build/gen/html_assets.inc). Nothing here is ever read from disk at run time. */
#ifndef PERFSCOPE_REPORT_HTML_ASSETS_H
#define PERFSCOPE_REPORT_HTML_ASSETS_H

extern const char html_report_css[];
extern const char html_flame_js[];
extern const char html_charts_js[];

#endif
