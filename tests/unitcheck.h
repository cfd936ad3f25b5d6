/* tests/unitcheck.h: the C unit drivers' one check convention (ring_unit.c, kchain_unit.c):
 * CHECK(cond, fmt, ...) prints one "FAIL ..." line per broken rule; unit_done() is main's return
 * value, 1 when any check failed, else 0 after "ok N" (the checks run). Never tests timing. */
#ifndef PERFSCOPE_TEST_UNITCHECK_H
#define PERFSCOPE_TEST_UNITCHECK_H

#include <stdio.h>

static int checks, failed;
#define CHECK(cond, ...)                   \
    do {                                   \
        checks++;                          \
        if (!(cond)) {                     \
            failed++;                      \
            printf("FAIL ");               \
            printf(__VA_ARGS__);           \
            printf("\n");                  \
        }                                  \
    } while (0)

static inline int unit_done(void)
{
    if (failed)
        return 1;
    printf("ok %d\n", checks);
    return 0;
}

#endif
