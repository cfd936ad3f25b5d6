/* r_nohdr_lib: a library built without unwind tables and linked without .eh_frame_hdr, as a
 * hand-made or old toolchain's library may be: its code's unwind information is in its file's
 * .debug_frame alone (from -g), which libunwind reads by opening the file. */
__attribute__((noinline)) unsigned nohdr_spin(unsigned x, int rounds)
{
    for (int i = 0; i < rounds; i++)
        x = x * 2654435761u + 7;
    return x;
}
