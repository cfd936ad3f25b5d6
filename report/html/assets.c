/* assets.c: the page's CSS and JavaScript as C strings (assets.h), from the generated
 * build/gen/html_assets.inc. It must hold nothing but those arrays. */
#include "assets.h"

#include "html_assets.inc"
