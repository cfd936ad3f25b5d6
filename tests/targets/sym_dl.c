/* sym_dl.so: loaded with dlopen by sym_target after the run started; dl_burn burns CPU in its
 * own body. */
#include "sym_burn.h"

SYM_BURN(dl_burn)
