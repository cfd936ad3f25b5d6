/* sym_stripped.so: stripped (strip --strip-all) by the test, so its only symbol is the exported
 * stripped_entry in .dynsym. The CPU is burnt in secret_spin, a static function placed after
 * stripped_entry: a symbolizer that names an address by the nearest symbol before it would call
 * it stripped_entry; the right answer is sym_stripped.so!0x<offset>. */
#include "sym_burn.h"

static uint64_t secret_spin(double seconds);

__attribute__((noinline)) uint64_t stripped_entry(double seconds)
{
    return secret_spin(seconds) + 1;
}

static __attribute__((noinline)) uint64_t secret_spin(double seconds)
{
    uint64_t until = sym_thread_cpu_ns() + (uint64_t)(seconds * 1e9), x = 7;
    for (;;) {
        for (int i = 0; i < SYM_SPIN; i++) {
            x = x * 2862933555777941757ull + 3037000493ull;
            __asm__ volatile("" : "+r"(x));
        }
        if (sym_thread_cpu_ns() >= until)
            break;
    }
    return x;
}
