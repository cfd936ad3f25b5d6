/* debugcache.h: separate debug files kept with their DWARF already inflated, by build id.
 *
 * Debian's debug packages (libc6-dbg, the -dbgsym packages) ship their .debug_* sections
 * zlib-compressed, and libdw inflates every one of them when it opens the file: for libc that
 * is 4 MB inflated to 10 MB, about 60 ms of every run's fixed cost here, paid again by every
 * run. The first run that needs such a file writes a copy of it whose .debug_* sections are
 * stored inflated, under the cache folder, named by the build id; later runs hand libdwfl that
 * copy, which opens in under a millisecond. Like perf's ~/.debug and debuginfod's cache, it
 * is never cleaned by itself (one file per distinct library build; `rm -r` the folder at any
 * time).
 *
 * The folder: $PERFSCOPE_DEBUG_CACHE, else $XDG_CACHE_HOME/perfscope/debug, else
 * $HOME/.cache/perfscope/debug; PERFSCOPE_DEBUG_CACHE=0 turns the cache off.
 *
 * It must never hand libdwfl a file whose build id differs from the module's, never leave a
 * half-written file under a cache name, and never make a lookup fail that would have worked
 * without it: on any error it falls back to the file libdwfl found. */
#ifndef PERFSCOPE_DEBUGCACHE_H
#define PERFSCOPE_DEBUGCACHE_H

#include <elfutils/libdwfl.h>

/* A Dwfl_Callbacks.find_debuginfo: the cached copy for the module's build id when there is a
 * sound one; else dwfl_standard_find_debuginfo's file, first copied into the cache when its
 * .debug_* sections are compressed (and the copy handed on instead). */
int debugcache_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                              Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                              GElf_Word debuglink_crc, char **debuginfo_file_name);

#endif
