/* t_api: marks phases in-process through include/perfscope.h:
 *   api_outer begin, api_inner begin, api_inner end (tokens 42), api_outer end (no tokens),
 * burning a little CPU in each, then prints "done". Without the shim the calls do nothing. */
#include "burn.h"
#include "perfscope.h"
#include <stdio.h>

DEFINE_BURN_SINK
DEFINE_BURN(burn_api)

int main(void)
{
    perfscope_begin("api_outer");
    burn_api(0.02);
    perfscope_begin("api_inner");
    burn_api(0.02);
    perfscope_end("api_inner", 42);
    burn_api(0.02);
    perfscope_end("api_outer", -1);
    printf("done\n");
    return 0;
}
