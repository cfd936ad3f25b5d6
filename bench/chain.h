/* bench/chain.h: the 40-deep call chain the bench's targets run their work under, so every
 * sample has a deep stack to unwind. Include after defining
 *   static uint64_t leaf(uint64_t x, uint64_t n)   (noinline: the work itself);
 * it defines f39 (calls leaf) ... f0 (calls f1). The `+ k` after each call keeps it a real
 * call (no sibling-call optimisation), so the chain stays 40 frames deep. Never put work here:
 * the probes and the pairs must unwind the same frames. */
#ifndef BENCH_CHAIN_H
#define BENCH_CHAIN_H
#include <stdint.h>

#define LINK(k, next)                                                      \
    __attribute__((noinline)) static uint64_t f##k(uint64_t x, uint64_t n) \
    {                                                                      \
        uint64_t r = next(x + k, n);                                       \
        __asm__ volatile("" : "+r"(r));                                    \
        return r + k;                                                      \
    }
LINK(39, leaf) LINK(38, f39) LINK(37, f38) LINK(36, f37) LINK(35, f36)
LINK(34, f35) LINK(33, f34) LINK(32, f33) LINK(31, f32) LINK(30, f31)
LINK(29, f30) LINK(28, f29) LINK(27, f28) LINK(26, f27) LINK(25, f26)
LINK(24, f25) LINK(23, f24) LINK(22, f23) LINK(21, f22) LINK(20, f21)
LINK(19, f20) LINK(18, f19) LINK(17, f18) LINK(16, f17) LINK(15, f16)
LINK(14, f15) LINK(13, f14) LINK(12, f13) LINK(11, f12) LINK(10, f11)
LINK(9, f10)  LINK(8, f9)   LINK(7, f8)   LINK(6, f7)   LINK(5, f6)
LINK(4, f5)   LINK(3, f4)   LINK(2, f3)   LINK(1, f2)   LINK(0, f1)
#undef LINK
#endif
