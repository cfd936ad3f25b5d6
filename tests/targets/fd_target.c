/* fd_target: a target for the function-level diff (tests/t_tools_fdiff.sh): prefill (100 tokens)
 * spends 0.05 s of CPU in kern_prefill; decode (50 tokens) 0.1 s in kern_attn and FFN_S s in
 * kern_ffn (0.1 s; a B build passes -DFFN_S=0.15: 50% more in that one function). Phases through
 * include/perfscope.h; the burns are by thread CPU time, so only sampling varies between runs. */
#include "burn.h"
#include "perfscope.h"

#ifndef FFN_S
#define FFN_S 0.1
#endif

DEFINE_BURN_SINK
DEFINE_BURN(kern_prefill)
DEFINE_BURN(kern_attn)
DEFINE_BURN(kern_ffn)

int main(void)
{
    perfscope_begin("prefill");
    kern_prefill(0.05);
    perfscope_end("prefill", 100);
    perfscope_begin("decode");
    for (int i = 0; i < 5; i++) {
        kern_attn(0.02);
        kern_ffn(FFN_S / 5);
    }
    perfscope_end("decode", 50);
    return 0;
}
