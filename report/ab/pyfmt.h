/* pyfmt.h: the few Python number behaviours the A/B judgement must reproduce byte for byte,
 * because compare.py's numbers and table are the contract: round(x, n), repr(float) (also
 * str()), and format(x, ','). It must never depend on the locale or allocate. */
#ifndef PERFSCOPE_PYFMT_H
#define PERFSCOPE_PYFMT_H

#include <stddef.h>

/* Python's round(x, ndigits) for a float: the double nearest the correctly rounded decimal,
 * ties to even on the exact binary value; inf and nan come back unchanged. 0 <= ndigits <= 17. */
double py_round(double x, int ndigits);

/* Python's repr(x) of a float ("1.0", "0.0001", "1e-05", "1e+16", "inf", "-0.0") into buf.
 * Returns buf. size >= PYFMT_BUF is always enough. */
#define PYFMT_BUF 64
char *py_repr(double x, char *buf, size_t size);

/* Python's format(x, ',') of a float: repr with ',' between groups of three integer digits
 * ("1,234,567.0"; scientific forms are not grouped: "1e+16"). Returns buf. */
char *py_format_comma(double x, char *buf, size_t size);

#endif
