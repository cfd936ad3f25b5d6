/* libburn.so: a library for dlopen tests; lib_burn(seconds) burns CPU in its own body. */
#include "burn.h"

DEFINE_BURN_SINK
DEFINE_BURN(lib_burn)
