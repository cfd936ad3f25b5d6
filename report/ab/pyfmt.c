/* pyfmt.c: Python's round(), repr() and format(',') of floats, in C (see pyfmt.h). glibc's
 * printf rounds the exact binary value correctly with ties to even, as CPython's dtoa does, so
 * both go through it. It must never use the locale's separators or write past its buffer. */
#include "pyfmt.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double py_round(double x, int ndigits)
{
    if (!isfinite(x) || ndigits < 0 || ndigits > 17)
        return x;
    /* Largest double: 309 integer digits, + point, 17 decimals, sign, NUL. */
    char buf[400];
    snprintf(buf, sizeof buf, "%.*f", ndigits, x);
    return strtod(buf, NULL);
}

/* Shortest decimal digits that read back as x (x finite, nonzero, positive): digits without
 * trailing zeros into d, and decpt such that x = 0.d * 10^decpt. */
static void shortest_digits(double x, char *d, size_t dsize, int *decpt)
{
    char s[40];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(s, sizeof s, "%.*e", prec - 1, x);
        if (strtod(s, NULL) == x || prec == 17)
            break;
    }
    /* s is "D[.DDD]e[+-]XX" */
    size_t n = 0;
    const char *p = s;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9' && n + 1 < dsize)
            d[n++] = *p;
    while (n > 1 && d[n - 1] == '0')
        n--;
    d[n] = '\0';
    int exp10 = *p == 'e' ? atoi(p + 1) : 0;
    *decpt = exp10 + 1;
}

char *py_repr(double x, char *buf, size_t size)
{
    if (size == 0)
        return buf;
    if (isnan(x)) {
        snprintf(buf, size, "nan");
        return buf;
    }
    if (isinf(x)) {
        snprintf(buf, size, "%s", x < 0 ? "-inf" : "inf");
        return buf;
    }
    const char *sign = signbit(x) ? "-" : "";
    if (x == 0) {
        snprintf(buf, size, "%s0.0", sign);
        return buf;
    }
    char d[24];
    int decpt;
    shortest_digits(fabs(x), d, sizeof d, &decpt);
    int nd = (int)strlen(d);
    char z[24] = "";      /* zeros between the point and the digits, or after the digits */
    if (decpt <= -4 || decpt > 16) {
        /* D[.DDD]e+XX: one digit, the rest after a point, a signed exponent of 2+ digits */
        snprintf(buf, size, "%s%c%s%se%c%02d", sign, d[0], nd > 1 ? "." : "", d + 1,
                 decpt - 1 < 0 ? '-' : '+', abs(decpt - 1));
    } else if (decpt <= 0) {
        memset(z, '0', (size_t)-decpt);
        z[-decpt] = '\0';
        snprintf(buf, size, "%s0.%s%s", sign, z, d);
    } else if (decpt >= nd) {
        memset(z, '0', (size_t)(decpt - nd));
        z[decpt - nd] = '\0';
        snprintf(buf, size, "%s%s%s.0", sign, d, z);
    } else {
        snprintf(buf, size, "%s%.*s.%s", sign, decpt, d, d + decpt);
    }
    return buf;
}

char *py_format_comma(double x, char *buf, size_t size)
{
    char r[PYFMT_BUF];
    py_repr(x, r, sizeof r);
    if (size == 0)
        return buf;
    const char *p = r;
    size_t o = 0;
    if (*p == '-' && o + 1 < size)
        buf[o++] = *p++;
    size_t intlen = strspn(p, "0123456789");
    /* Only a plain fixed-point number is grouped; "inf", "nan" and "1e+16" have no run of more
     * than three digits before their end or their 'e'. */
    for (size_t i = 0; i < intlen && o + 1 < size; i++) {
        if (i > 0 && (intlen - i) % 3 == 0 && o + 2 < size)
            buf[o++] = ',';
        buf[o++] = p[i];
    }
    for (p += intlen; *p && o + 1 < size; p++)
        buf[o++] = *p;
    buf[o] = '\0';
    return buf;
}
