/* t_deep REPORT: a 40-deep chain of distinct functions deep_0 -> deep_1 -> ... -> deep_39, the
 * last of which burns 0.3 s of CPU in burn_leaf. REPORT gets the run-time address of burn_leaf
 * (to place the other symbols). A sampled stack in burn_leaf should read burn_leaf, deep_39, ...,
 * deep_0, main. */
#include "burn.h"
#include <stdio.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_leaf)

static double seconds = 0.3;
volatile int depth_sink;

#define CHAIN(n, next)                                   \
    __attribute__((noinline)) void deep_##n(void)       \
    {                                                    \
        depth_sink++;                                    \
        next;                                            \
        __asm__ volatile("" ::: "memory");               \
        depth_sink--;                                    \
    }

CHAIN(39, burn_leaf(seconds))
CHAIN(38, deep_39()) CHAIN(37, deep_38()) CHAIN(36, deep_37()) CHAIN(35, deep_36())
CHAIN(34, deep_35()) CHAIN(33, deep_34()) CHAIN(32, deep_33()) CHAIN(31, deep_32())
CHAIN(30, deep_31()) CHAIN(29, deep_30()) CHAIN(28, deep_29()) CHAIN(27, deep_28())
CHAIN(26, deep_27()) CHAIN(25, deep_26()) CHAIN(24, deep_25()) CHAIN(23, deep_24())
CHAIN(22, deep_23()) CHAIN(21, deep_22()) CHAIN(20, deep_21()) CHAIN(19, deep_20())
CHAIN(18, deep_19()) CHAIN(17, deep_18()) CHAIN(16, deep_17()) CHAIN(15, deep_16())
CHAIN(14, deep_15()) CHAIN(13, deep_14()) CHAIN(12, deep_13()) CHAIN(11, deep_12())
CHAIN(10, deep_11()) CHAIN(9, deep_10()) CHAIN(8, deep_9()) CHAIN(7, deep_8())
CHAIN(6, deep_7()) CHAIN(5, deep_6()) CHAIN(4, deep_5()) CHAIN(3, deep_4())
CHAIN(2, deep_3()) CHAIN(1, deep_2()) CHAIN(0, deep_1())

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: t_deep REPORT\n");
        return 2;
    }
    deep_0();
    FILE *f = fopen(argv[1], "w");
    if (!f)
        return 1;
    fprintf(f, "{\"burn_leaf\":%lu}\n", (unsigned long)(uintptr_t)burn_leaf);
    fclose(f);
    return 0;
}
