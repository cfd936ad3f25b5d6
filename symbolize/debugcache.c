/* debugcache.c: debug files kept with their DWARF inflated, by build id (see debugcache.h). It
 * must never hand libdwfl a file it has not checked (a regular file in a folder only its user
 * can write, ELF, the module's build id, a .debug_info, every section inside the file and none
 * overlapping another, no compressed .debug_* section left, no dwz link), never write a copy
 * that differs from its source in any section's bytes, and never take from libdwfl a file it
 * has already opened itself: a copy is only ever handed out on a later run. */
#include "debugcache.h"
#include "outfile.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A debug file, and the sum of its inflated .debug_* sections, at most this large: past it
 * the file is used as found, never copied. */
#define DEBUGCACHE_MAX_BYTES (1ull << 30)
/* The alignment an inflated section may ask for, at most: a larger one is a hostile file's way
 * of making the copy huge (the gap before it is written out as zeros). */
#define DEBUGCACHE_MAX_ALIGN 4096u
#define BUILD_ID_MAX 64

static pthread_once_t dir_once = PTHREAD_ONCE_INIT;
static char cache_dir[4096]; /* "" when off */
/* One copy written at a time: the temporary name is per process, and two threads (the
 * prefetcher and the resolver) may open files side by side. It also guards the buffer. */
static pthread_mutex_t copy_mu = PTHREAD_MUTEX_INITIALIZER;
static char io_buf[1 << 16];

static void resolve_dir(void)
{
    const char *env = getenv("PERFSCOPE_DEBUG_CACHE");
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int n = -1;
    if (env && *env) {
        if (strcmp(env, "0") != 0)
            n = snprintf(cache_dir, sizeof cache_dir, "%s", env);
    } else if (xdg && xdg[0] == '/') {
        n = snprintf(cache_dir, sizeof cache_dir, "%s/perfscope/debug", xdg);
    } else if (home && home[0] == '/') {
        n = snprintf(cache_dir, sizeof cache_dir, "%s/.cache/perfscope/debug", home);
    }
    if (n <= 0 || (size_t)n >= sizeof cache_dir)
        cache_dir[0] = '\0';
}

/* The folder is one only this user can write into: anyone else could put a file there under a
 * build id's name (forged DWARF), or a link under the temporary name. */
static int folder_ours(void)
{
    struct stat st;
    return stat(cache_dir, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == geteuid() &&
           !(st.st_mode & (S_IWGRP | S_IWOTH));
}

struct shape {
    int compressed;         /* .debug_* sections stored compressed */
    int altlink;            /* a .gnu_debugaltlink (dwz): found relative to the file's own path */
    int odd;                /* a section, or the section headers, past the end of the file; two
                             * sections overlapping; an inflated section aligned past the bound */
    int info;               /* a .debug_info section */
    uint64_t inflated;      /* the compressed sections' sizes once inflated */
};

struct span {
    uint64_t off, size;
};

static int by_offset(const void *a, const void *b)
{
    const struct span *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static int shape_of(Elf *e, uint64_t file_size, struct shape *s)
{
    memset(s, 0, sizeof *s);
    GElf_Ehdr eh;
    size_t shstrndx, nscn;
    if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || elf_getshdrnum(e, &nscn) != 0 ||
        elf_getshdrstrndx(e, &shstrndx) != 0)
        return -1;
    if (eh.e_shoff > file_size || (uint64_t)nscn * eh.e_shentsize > file_size - eh.e_shoff)
        s->odd = 1;
    struct span *spans = calloc(nscn ? nscn : 1, sizeof *spans);
    if (!spans)
        return -1;
    size_t nspans = 0;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh)) {
            free(spans);
            return -1;
        }
        if (sh.sh_type != SHT_NOBITS && sh.sh_size > 0 && nspans < nscn) {
            if (sh.sh_offset > file_size || sh.sh_size > file_size - sh.sh_offset)
                s->odd = 1;
            spans[nspans++] = (struct span){sh.sh_offset, sh.sh_size};
        }
        const char *name = elf_strptr(e, shstrndx, sh.sh_name);
        if (!name)
            continue;
        if (strcmp(name, ".gnu_debugaltlink") == 0)
            s->altlink = 1;
        if (strcmp(name, ".debug_info") == 0)
            s->info = 1;
        if ((sh.sh_flags & SHF_COMPRESSED) && strncmp(name, ".debug_", 7) == 0) {
            GElf_Chdr ch;
            if (!gelf_getchdr(scn, &ch)) {
                free(spans);
                return -1;
            }
            s->compressed++;
            s->inflated += ch.ch_size;
            if (ch.ch_addralign > DEBUGCACHE_MAX_ALIGN)
                s->odd = 1;
        }
    }
    qsort(spans, nspans, sizeof *spans, by_offset);
    for (size_t i = 1; i < nspans; i++)
        if (spans[i].off < spans[i - 1].off + spans[i - 1].size)
            s->odd = 1;
    free(spans);
    return 0;
}

static int same_build_id(Elf *e, const unsigned char *id, int n)
{
    const void *got;
    ssize_t len = dwelf_elf_gnu_build_id(e, &got);
    return len == n && memcmp(got, id, (size_t)n) == 0;
}

/* A sound copy at path: its descriptor, else -1. */
static int open_copy(const char *path, const unsigned char *id, int n)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return -1;
    struct stat st;
    int ok = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= 2 * DEBUGCACHE_MAX_BYTES) {
        Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
        struct shape s;
        ok = e && shape_of(e, (uint64_t)st.st_size, &s) == 0 && s.info && !s.compressed && !s.odd &&
             !s.altlink && same_build_id(e, id, n);
        elf_end(e);
    }
    if (!ok) {
        close(fd);
        return -1;
    }
    return fd;
}

static int copy_bytes(int from, int to, uint64_t size)
{
    for (uint64_t off = 0; off < size;) {
        ssize_t r = pread(from, io_buf, sizeof io_buf, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        for (ssize_t done = 0; done < r;) {
            ssize_t w = write(to, io_buf + done, (size_t)(r - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0)
                return -1;
            done += w;
        }
        off += (uint64_t)r;
    }
    return 0;
}

/* Whether fd holds, len bytes from off, what buf does (buf NULL: what src holds at the same
 * offset). */
static int holds(int fd, uint64_t off, uint64_t len, const char *buf, int src)
{
    static char theirs[sizeof io_buf];
    for (uint64_t at = 0; at < len;) {
        size_t want = len - at < sizeof io_buf ? (size_t)(len - at) : sizeof io_buf;
        ssize_t r = pread(fd, io_buf, want, (off_t)(off + at));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return 0;
        if (buf) {
            if (memcmp(io_buf, buf + at, (size_t)r) != 0)
                return 0;
        } else if (pread(src, theirs, (size_t)r, (off_t)(off + at)) != r || memcmp(io_buf, theirs, (size_t)r) != 0) {
            return 0;
        }
        at += (uint64_t)r;
    }
    return 1;
}

/* libelf's writing is checked, not trusted (a section whose data is not flagged dirty is not
 * written at all: only its place is filled, with zeros): every section of e holds in fd, byte
 * for byte, its inflated data (moved[i]) or the source's bytes where they were. */
static int written_as_held(Elf *e, int fd, int src, const unsigned char *moved)
{
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            return 0;
        if (sh.sh_type == SHT_NOBITS || sh.sh_size == 0)
            continue;
        if (moved[elf_ndxscn(scn)]) {
            Elf_Data *d = elf_getdata(scn, NULL);
            if (!d || d->d_size != sh.sh_size || elf_getdata(scn, d) ||
                !holds(fd, sh.sh_offset, sh.sh_size, d->d_buf, -1))
                return 0;
        } else if (!holds(fd, sh.sh_offset, sh.sh_size, NULL, src)) {
            return 0;
        }
    }
    return 1;
}

/* In the copy open as fd: each compressed .debug_* section inflated and placed after the end of
 * the file (the compressed bytes stay where they were, unreferenced), then the section headers
 * after them. libelf's layout is ours (ELF_F_LAYOUT), so nothing else moves. */
static int inflate_in_place(int fd, int src, uint64_t size, uint64_t inflated)
{
    Elf *e = elf_begin(fd, ELF_C_RDWR, NULL);
    GElf_Ehdr eh;
    size_t shstrndx, nscn;
    unsigned char *moved = NULL;
    if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &shstrndx) != 0 ||
        elf_getshdrnum(e, &nscn) != 0 || !(moved = calloc(nscn ? nscn : 1, 1)))
        goto fail;
    elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
    uint64_t end = size;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        const char *name;
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED) ||
            !(name = elf_strptr(e, shstrndx, sh.sh_name)) || strncmp(name, ".debug_", 7) != 0)
            continue;
        Elf_Data *d;
        if (elf_compress(scn, 0, 0) != 1 || !(d = elf_getdata(scn, NULL)) ||
            !elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY) || !gelf_getshdr(scn, &sh))
            goto fail;
        uint64_t align = sh.sh_addralign > 1 ? sh.sh_addralign : 1;
        if ((align & (align - 1)) || align > DEBUGCACHE_MAX_ALIGN || elf_ndxscn(scn) >= nscn)
            goto fail;
        sh.sh_offset = (end + align - 1) & ~(align - 1);
        end = sh.sh_offset + sh.sh_size;
        if (!gelf_update_shdr(scn, &sh))
            goto fail;
        moved[elf_ndxscn(scn)] = 1;
    }
    /* What was asked for, and not more: the source, the inflated bytes, their alignment. */
    if (end == size || end > size + inflated + (uint64_t)nscn * DEBUGCACHE_MAX_ALIGN)
        goto fail;
    eh.e_shoff = (end + 7) & ~7ull;
    if (!gelf_update_ehdr(e, &eh) || elf_update(e, ELF_C_WRITE) < 0 || !written_as_held(e, fd, src, moved))
        goto fail;
    free(moved);
    elf_end(e);
    return 0;
fail:
    free(moved);
    elf_end(e);
    return -1;
}

/* Split DWARF: a skeleton unit's .dwo is found relative to the folder of the file libdw was
 * given, which for a copy would be the cache's. Such files are used as found. */
static int has_skeleton(int fd)
{
    Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
    if (!dw)
        return 1;
    int found = 0;
    Dwarf_CU *cu = NULL;
    Dwarf_Half version;
    uint8_t type;
    Dwarf_Die cudie;
    while (!found && dwarf_get_units(dw, cu, &cu, &version, &type, &cudie, NULL) == 0)
        found = type == DW_UT_skeleton || dwarf_hasattr(&cudie, DW_AT_GNU_dwo_name) ||
                dwarf_hasattr(&cudie, DW_AT_dwo_name);
    dwarf_end(dw);
    return found;
}

/* Writes the inflated copy of the debug file open as src to path. 0, or -1 (nothing there). */
static int write_copy(int src, const char *path, const unsigned char *id, int n)
{
    struct stat st, there;
    if (fstat(src, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > DEBUGCACHE_MAX_BYTES)
        return -1;
    /* Something else under the name (a folder, a link) stays: renaming over it would fail or
     * replace what is not ours, at every run. */
    if (lstat(path, &there) == 0 && !S_ISREG(there.st_mode))
        return -1;
    Elf *e = elf_begin(src, ELF_C_READ_MMAP, NULL);
    struct shape s = {0};
    int worth = e && shape_of(e, (uint64_t)st.st_size, &s) == 0 && s.compressed && s.info && !s.altlink &&
                !s.odd && s.inflated <= DEBUGCACHE_MAX_BYTES && same_build_id(e, id, n);
    elf_end(e);
    if (!worth)
        return -1;
    if (outfile_make_dirs(cache_dir, 0700) != 0 || !folder_ours()) /* 0700: a user's cache */
        return -1;
    struct outfile o;
    char err[256];
    if (outfile_open_update(&o, path, err, sizeof err) != 0)
        return -1;
    int fd = fileno(o.f);
    if (copy_bytes(src, fd, (uint64_t)st.st_size) != 0 ||
        inflate_in_place(fd, src, (uint64_t)st.st_size, s.inflated) != 0 || has_skeleton(fd)) {
        outfile_abort(&o);
        return -1;
    }
    return outfile_commit(&o, err, sizeof err);
}

static int copy_path(char *buf, size_t len, const unsigned char *id, int n)
{
    char hex[2 * BUILD_ID_MAX + 1];
    for (int i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", id[i]);
    int w = snprintf(buf, len, "%s/%s.debug", cache_dir, hex);
    return w > 0 && (size_t)w < len ? 0 : -1;
}

/* libdwfl asks the same callback for a dwz alternate file, with the alternate's name as the
 * debuglink and no CRC: what the module's own debug file is does not answer that. */
static int for_module_itself(Dwfl_Module *mod, const char *debuglink_file, GElf_Word debuglink_crc)
{
    GElf_Addr bias;
    Elf *main_elf = dwfl_module_getelf(mod, &bias);
    if (!main_elf)
        return 0;
    GElf_Word crc = 0;
    const char *link = dwelf_elf_gnu_debuglink(main_elf, &crc);
    if (!link || !debuglink_file)
        return !link && !debuglink_file;
    return strcmp(link, debuglink_file) == 0 && crc == debuglink_crc;
}

int debugcache_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                              Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                              GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    pthread_once(&dir_once, resolve_dir);
    const unsigned char *id;
    GElf_Addr id_vaddr;
    int n = dwfl_module_build_id(mod, &id, &id_vaddr);
    char path[sizeof cache_dir + 2 * BUILD_ID_MAX + 16];
    int keyed = cache_dir[0] && n > 0 && n <= BUILD_ID_MAX && copy_path(path, sizeof path, id, n) == 0 &&
                for_module_itself(mod, debuglink_file, debuglink_crc);
    if (keyed && folder_ours()) {
        int fd = open_copy(path, id, n);
        char *name = fd >= 0 ? strdup(path) : NULL;
        if (name) {
            *debuginfo_file_name = name;
            return fd;
        }
        if (fd >= 0)
            close(fd);
    }
    int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name, debuglink_file,
                                          debuglink_crc, debuginfo_file_name);
    /* Whatever the standard search found, libdwfl has already opened it as the module's debug
     * file (and ignores the descriptor returned): it stays this run's; the copy, written now,
     * serves the runs after it. */
    if (keyed && *debuginfo_file_name) {
        int src = open(*debuginfo_file_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        if (src >= 0) {
            pthread_mutex_lock(&copy_mu);
            int copy = open_copy(path, id, n); /* written meanwhile by the other thread */
            if (copy >= 0)
                close(copy);
            else
                write_copy(src, path, id, n);
            pthread_mutex_unlock(&copy_mu);
            close(src);
        }
    }
    return fd;
}
