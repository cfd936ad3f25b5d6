/* sym_dl.so: loaded with dlopen by sym_target after the run started; dl_burn burns CPU in its
 * own body. */
#include "burn.h"

DEFINE_BURN_SINK
DEFINE_BURN(dl_burn)
