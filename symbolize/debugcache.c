/* debugcache.c: debug files kept with their DWARF inflated, by build id (see debugcache.h). It
 * must never hand libdwfl a file it has not checked (a regular file, ELF, the module's build id,
 * every section inside the file, no compressed .debug_* section left), and never change what
 * a lookup finds: the copy holds the same sections, only stored inflated. */
#include "debugcache.h"
#include "outfile.h"

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
#define BUILD_ID_MAX 64

static pthread_once_t dir_once = PTHREAD_ONCE_INIT;
static char cache_dir[4096]; /* "" when off */
/* One copy written at a time: the temporary name is per process, and two threads (the
 * prefetcher and the resolver) may open files side by side. */
static pthread_mutex_t copy_mu = PTHREAD_MUTEX_INITIALIZER;

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

/* Creates path and every missing folder above it (0700: a user's cache). 0 when it is a folder. */
static int make_dirs(const char *path)
{
    char buf[sizeof cache_dir];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0700) != 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(buf, 0700) != 0 && errno != EEXIST)
        return -1;
    struct stat st;
    return stat(buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

struct shape {
    int compressed;         /* .debug_* sections stored compressed */
    int altlink;            /* a .gnu_debugaltlink (dwz): found relative to the file's own path */
    int outside;            /* a section, or the section headers, past the end of the file */
    int info;               /* a .debug_info section */
    uint64_t inflated;      /* the compressed sections' sizes once inflated */
};

static int shape_of(Elf *e, uint64_t file_size, struct shape *s)
{
    memset(s, 0, sizeof *s);
    size_t shstrndx;
    GElf_Ehdr eh;
    size_t nscn;
    if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || elf_getshdrnum(e, &nscn) != 0 ||
        elf_getshdrstrndx(e, &shstrndx) != 0)
        return -1;
    if (eh.e_shoff > file_size || (uint64_t)nscn * eh.e_shentsize > file_size - eh.e_shoff)
        s->outside = 1;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            return -1;
        if (sh.sh_type != SHT_NOBITS && (sh.sh_offset > file_size || sh.sh_size > file_size - sh.sh_offset))
            s->outside = 1;
        const char *name = elf_strptr(e, shstrndx, sh.sh_name);
        if (!name)
            continue;
        if (strcmp(name, ".gnu_debugaltlink") == 0)
            s->altlink = 1;
        if (strcmp(name, ".debug_info") == 0)
            s->info = 1;
        if ((sh.sh_flags & SHF_COMPRESSED) && strncmp(name, ".debug_", 7) == 0) {
            GElf_Chdr ch;
            if (!gelf_getchdr(scn, &ch))
                return -1;
            s->compressed++;
            s->inflated += ch.ch_size;
        }
    }
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
        ok = e && shape_of(e, (uint64_t)st.st_size, &s) == 0 && s.info && !s.compressed && !s.outside &&
             same_build_id(e, id, n);
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
    static char buf[1 << 16];
    for (uint64_t off = 0; off < size;) {
        ssize_t r = pread(from, buf, sizeof buf, (off_t)off);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return -1;
        for (ssize_t done = 0; done < r;) {
            ssize_t w = write(to, buf + done, (size_t)(r - done));
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

/* Whether the file under fd holds section ndx of e byte for byte where its header says:
 * libelf's writing is checked, not trusted (a section whose data is not flagged is not written
 * at all, and only its place is filled, with zeros). */
static int written_as_held(Elf *e, int fd, size_t ndx)
{
    static char buf[1 << 16];
    Elf_Scn *scn = elf_getscn(e, ndx);
    GElf_Shdr sh;
    Elf_Data *d;
    if (!scn || !gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)) || d->d_size != sh.sh_size ||
        elf_getdata(scn, d))
        return 0;
    for (uint64_t off = 0; off < sh.sh_size;) {
        size_t want = sh.sh_size - off < sizeof buf ? (size_t)(sh.sh_size - off) : sizeof buf;
        ssize_t r = pread(fd, buf, want, (off_t)(sh.sh_offset + off));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0 || memcmp(buf, (const char *)d->d_buf + off, (size_t)r) != 0)
            return 0;
        off += (uint64_t)r;
    }
    return 1;
}

/* In the copy open as fd: each compressed .debug_* section inflated and placed after the end of
 * the file (the compressed bytes stay where they were, unreferenced), then the section headers
 * after them. libelf's layout is ours (ELF_F_LAYOUT), so nothing else moves. */
static int inflate_in_place(int fd, uint64_t size)
{
    Elf *e = elf_begin(fd, ELF_C_RDWR, NULL);
    GElf_Ehdr eh;
    size_t shstrndx;
    if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) || elf_getshdrstrndx(e, &shstrndx) != 0) {
        elf_end(e);
        return -1;
    }
    size_t nscn;
    size_t *moved_ndx = elf_getshdrnum(e, &nscn) == 0 ? calloc(nscn ? nscn : 1, sizeof *moved_ndx) : NULL;
    if (!moved_ndx) {
        elf_end(e);
        return -1;
    }
    elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
    uint64_t end = size;
    size_t moved = 0;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        const char *name;
        if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_COMPRESSED) ||
            !(name = elf_strptr(e, shstrndx, sh.sh_name)) || strncmp(name, ".debug_", 7) != 0)
            continue;
        Elf_Data *d;
        /* The inflated bytes must be written out: flagged dirty, else libelf keeps them in
         * memory only (and fills their new place with zeros). */
        if (elf_compress(scn, 0, 0) != 1 || !(d = elf_getdata(scn, NULL)) ||
            !elf_flagdata(d, ELF_C_SET, ELF_F_DIRTY) || !gelf_getshdr(scn, &sh))
            goto fail;
        uint64_t align = sh.sh_addralign > 1 ? sh.sh_addralign : 1;
        if (align & (align - 1))
            goto fail;
        sh.sh_offset = (end + align - 1) & ~(align - 1);
        end = sh.sh_offset + sh.sh_size;
        if (!gelf_update_shdr(scn, &sh) || moved == nscn)
            goto fail;
        moved_ndx[moved++] = elf_ndxscn(scn);
    }
    if (!moved)
        goto fail;
    eh.e_shoff = (end + 7) & ~7ull;
    if (!gelf_update_ehdr(e, &eh) || elf_update(e, ELF_C_WRITE) < 0)
        goto fail;
    for (size_t i = 0; i < moved; i++)
        if (!written_as_held(e, fd, moved_ndx[i]))
            goto fail;
    free(moved_ndx);
    elf_end(e);
    return 0;
fail:
    free(moved_ndx);
    elf_end(e);
    return -1;
}

/* Writes the inflated copy of the debug file open as src to path. 0, or -1 (nothing there). */
static int write_copy(int src, const char *path, const unsigned char *id, int n)
{
    struct stat st;
    if (fstat(src, &st) != 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > DEBUGCACHE_MAX_BYTES)
        return -1;
    Elf *e = elf_begin(src, ELF_C_READ_MMAP, NULL);
    struct shape s = {0};
    int worth = e && shape_of(e, (uint64_t)st.st_size, &s) == 0 && s.compressed && !s.altlink &&
                !s.outside && s.inflated <= DEBUGCACHE_MAX_BYTES && same_build_id(e, id, n);
    elf_end(e);
    if (!worth || make_dirs(cache_dir) != 0)
        return -1;
    struct outfile o;
    char err[256];
    if (outfile_open_update(&o, path, err, sizeof err) != 0)
        return -1;
    int fd = fileno(o.f);
    if (copy_bytes(src, fd, (uint64_t)st.st_size) != 0 || inflate_in_place(fd, (uint64_t)st.st_size) != 0) {
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

int debugcache_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
                              Dwarf_Addr base, const char *file_name, const char *debuglink_file,
                              GElf_Word debuglink_crc, char **debuginfo_file_name)
{
    pthread_once(&dir_once, resolve_dir);
    const unsigned char *id;
    GElf_Addr id_vaddr;
    int n = dwfl_module_build_id(mod, &id, &id_vaddr);
    char path[sizeof cache_dir + 2 * BUILD_ID_MAX + 16];
    int keyed = cache_dir[0] && n > 0 && n <= BUILD_ID_MAX && copy_path(path, sizeof path, id, n) == 0;
    if (keyed) {
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
    if (!keyed || (fd < 0 && !*debuginfo_file_name))
        return fd;
    /* Found by build id, libdwfl opens the file itself and hands back no descriptor: this run
     * keeps libdwfl's file (and inflates it), the copy serves the runs after it. Found by
     * .gnu_debuglink, the descriptor is ours to replace with the copy's. */
    int src = fd >= 0 ? fd : open(*debuginfo_file_name, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (src < 0)
        return fd;
    pthread_mutex_lock(&copy_mu);
    int copy = open_copy(path, id, n); /* written meanwhile by the other thread */
    if (copy < 0 && write_copy(src, path, id, n) == 0)
        copy = open_copy(path, id, n);
    pthread_mutex_unlock(&copy_mu);
    char *name = copy >= 0 && fd >= 0 ? strdup(path) : NULL;
    if (!name) {
        if (copy >= 0)
            close(copy);
        if (src != fd)
            close(src);
        return fd;
    }
    close(fd);
    free(*debuginfo_file_name);
    *debuginfo_file_name = name;
    return copy;
}
