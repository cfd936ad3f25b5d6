#!/usr/bin/env bash
# install.sh install|uninstall: `make install` / `make uninstall` (docs/install.md). The one list
# of what an installation holds (files() below); install copies it under DESTDIR+PREFIX and
# records, in PKGLIBDIR/install-manifest, every file it wrote and every folder it had to create;
# uninstall removes exactly those files and then those folders, each only when empty. It must
# never remove anything it did not install, nor a folder that was there before.
#
# Variables (from make): PREFIX (/usr/local), DESTDIR (""), BUILD (build), BINDIR, PKGLIBDIR,
# INCLUDEDIR, PKGCONFIGDIR, PYTHONDIR, MANDIR (defaults under PREFIX, below).
set -eu
action=${1:-}
PREFIX=${PREFIX:-/usr/local}
DESTDIR=${DESTDIR:-}
BUILD=${BUILD:-build}
BINDIR=${BINDIR:-$PREFIX/bin}
PKGLIBDIR=${PKGLIBDIR:-$PREFIX/lib/perfscope}
INCLUDEDIR=${INCLUDEDIR:-$PREFIX/include}
PKGCONFIGDIR=${PKGCONFIGDIR:-$PREFIX/lib/pkgconfig}
PYTHONDIR=${PYTHONDIR:-$PREFIX/share/perfscope/python}
MANDIR=${MANDIR:-$PREFIX/share/man}
MANIFEST=$PKGLIBDIR/install-manifest
cd "$(dirname "$0")/.."

die() { echo "install.sh: $*" >&2; exit 1; }
case $PREFIX in /*) ;; *) die "PREFIX=$PREFIX is not an absolute path" ;; esac

# "MODE SOURCE DEST" lines: everything an installation holds (DEST without DESTDIR; SOURCE @pc is
# perfscope.pc, written for this PREFIX by pc_file). The shim
# goes to PKGLIBDIR, where an installed perfscope looks for it (../lib/perfscope/ from its bin/);
# it needs nothing of ours at run time, only Debian's libunwind, libcjson and zlib.
files() {
    local t
    for t in perfscope perfscope-report perfscope-symbolize; do
        echo "755 $BUILD/$t $BINDIR/$t"
    done
    echo "644 $BUILD/libperfscope.so $PKGLIBDIR/libperfscope.so"
    # The container shim folder, beside the shim, where `perfscope record -- docker run` looks
    # (docs/containers.md): the shim with RPATH $ORIGIN, its non-glibc libraries, glibc-floor.
    for t in "$BUILD"/container/*; do
        [ -f "$t" ] && echo "644 $t $PKGLIBDIR/container/${t##*/}"
    done
    echo "644 include/perfscope.h $INCLUDEDIR/perfscope.h"
    echo "644 @pc $PKGCONFIGDIR/perfscope.pc"
    echo "644 python/perfscope_markers.py $PYTHONDIR/perfscope_markers.py"
    for t in man/*.1; do
        echo "644 $t $MANDIR/man1/${t#man/}"
    done
}

# perfscope.pc for this PREFIX: the header only (its functions are weak references the shim
# provides at run time, so a program links nothing of ours).
pc_file() {
    local version
    version=$(sed -n 's/^#define PERFSCOPE_VERSION "\(.*\)"$/\1/p' format/version.h)
    [ -n "$version" ] || die "no PERFSCOPE_VERSION in format/version.h"
    cat <<EOF
prefix=$PREFIX
includedir=$INCLUDEDIR

Name: perfscope
Description: perfscope's in-process phase markers (perfscope.h); no-ops without the shim
Version: $version
Cflags: -I\${includedir}
Libs:
EOF
}

# mkdir -p DIR under DESTDIR, printing every folder it creates, outermost first.
make_dir() {
    local d=$1 missing=()
    while [ "$d" != / ] && [ ! -d "$DESTDIR$d" ]; do
        missing=("$d" ${missing[@]+"${missing[@]}"})
        d=$(dirname "$d")
    done
    for d in ${missing[@]+"${missing[@]}"}; do
        mkdir "$DESTDIR$d"
        echo "$d"
    done
}

do_install() {
    local mode src dst list created=() d
    list=$(files)
    while read -r mode src dst; do
        [ "$src" = @pc ] || [ -f "$src" ] || die "$src is missing (make first)"
    done <<<"$list"
    # DESTDIR itself is the packager's staging folder: made when missing, never recorded.
    [ -z "$DESTDIR" ] || mkdir -p "$DESTDIR"
    pc=$(mktemp)   # global: the EXIT trap runs after this function returned
    trap 'rm -f "$pc"' EXIT
    pc_file >"$pc"
    # Folders an earlier install created stay ours (a reinstall over it).
    if [ -f "$DESTDIR$MANIFEST" ]; then
        while read -r kind d; do
            [ "$kind" = d ] && created+=("$d")
        done <"$DESTDIR$MANIFEST"
    fi
    while read -r mode src dst; do
        while read -r d; do
            [ -n "$d" ] && created+=("$d")
        done < <(make_dir "$(dirname "$dst")")
        [ "$src" = @pc ] && src=$pc
        install -m "$mode" "$src" "$DESTDIR$dst"
        echo "install $dst"
    done <<<"$list"
    {
        echo "# perfscope install-manifest: what make install wrote (f) and the folders it created (d)"
        while read -r mode src dst; do echo "f $dst"; done <<<"$list"
        echo "f $MANIFEST"
        for d in ${created[@]+"${created[@]}"}; do echo "d $d"; done | sort -u
    } >"$DESTDIR$MANIFEST.tmp"
    mv "$DESTDIR$MANIFEST.tmp" "$DESTDIR$MANIFEST"
}

do_uninstall() {
    local kind p dirs=()
    if [ ! -f "$DESTDIR$MANIFEST" ]; then
        echo "uninstall: no $DESTDIR$MANIFEST: nothing installed there (same PREFIX and DESTDIR as make install?)" >&2
        return 0
    fi
    while read -r kind p; do
        case $kind in
            f) if [ -e "$DESTDIR$p" ] || [ -L "$DESTDIR$p" ]; then rm -f "$DESTDIR$p"; echo "remove $p"; fi ;;
            d) dirs+=("$p") ;;
        esac
    done <"$DESTDIR$MANIFEST"
    # Deepest first; a folder that still holds something (not ours) stays.
    while read -r p; do
        [ -n "$p" ] || continue
        rmdir "$DESTDIR$p" 2>/dev/null && echo "remove $p/" || true
    done < <(printf '%s\n' ${dirs[@]+"${dirs[@]}"} | awk '{ print length($0) " " $0 }' | sort -rn | cut -d' ' -f2-)
}

case $action in
    pc) pc_file ;;
    install) do_install ;;
    uninstall) do_uninstall ;;
    *) die "usage: install.sh install|uninstall|pc" ;;
esac
