/* sym_cache.c: a library of three plain functions for t_tools_symbolize_cache, which never runs
 * it: the test writes a run folder by hand whose frames are addresses in these functions (the
 * first byte of one, as a leaf and as a return address). Built -O0 -g; nothing else may be
 * added here without checking the test's layout assumptions. */
__attribute__((noinline)) int sc_fa(int x)
{
    return x * 3 + 1;
}

__attribute__((noinline)) int sc_fb(int x)
{
    return sc_fa(x) + 2;
}

__attribute__((noinline)) int sc_fc(int x)
{
    return sc_fb(x) * 5;
}
