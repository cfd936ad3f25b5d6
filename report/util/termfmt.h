/* termfmt.h: the report's markdown laid out for a terminal (docs/report.md, "On a terminal"):
 * tables as aligned plain-text columns (numbers right-aligned, a dashed rule under the header,
 * header words wrapped onto a second line where that saves room, a column that is empty in every
 * row left out), long cells cut with an ellipsis, headings underlined, other lines word-wrapped,
 * no line wider than the width. Only the layout changes: the words and numbers are the
 * markdown's (report.md keeps the markdown, whole names included). It must never read or write
 * a file, and never cut a number: only text cells are shortened.
 *   term_width: the width to lay out for on the stream's terminal: COLUMNS when set (a whole
 *   number), else the terminal's own (TIOCGWINSZ), else 100; never more than TERM_MAX_WIDTH and
 *   never less than TERM_MIN_WIDTH. 0 when fd is not a terminal.
 *   term_layout: the text (caller frees), NULL when out of memory.
 *   term_display_width: columns a UTF-8 string takes (one a code point; wide East Asian
 *   characters are counted as one, the report's own text has none). */
#ifndef PERFSCOPE_REPORT_TERMFMT_H
#define PERFSCOPE_REPORT_TERMFMT_H

#include <stddef.h>

#define TERM_MAX_WIDTH 100
#define TERM_MIN_WIDTH 40

int term_width(int fd);
char *term_layout(const char *markdown, int width);
size_t term_display_width(const char *s, size_t len);

#endif
