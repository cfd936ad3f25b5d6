#!/usr/bin/env bash
# container-shim.sh DIR [LIB...]: makes DIR (build/container/) loadable in an image that holds
# glibc alone: beside DIR/libperfscope.so (linked with RPATH $ORIGIN) it copies every library ldd
# lists for it that is not part of glibc, and each LIB the shim loads with dlopen (libunwind) with
# the libraries ldd lists for that, and writes DIR/glibc-floor, the newest GLIBC_x.y symbol version the
# shim and those libraries need (objdump -T): the oldest glibc an image may hold. It never
# touches anything outside DIR. docs/containers.md says how the folder is used.
set -euo pipefail
dir=$1
shift
shim=$dir/libperfscope.so
[ -f "$shim" ] || { echo "container-shim.sh: no $shim" >&2; exit 1; }
# glibc's own libraries: the image has them (and they must match its ld.so).
glibc_re='^(libc|libm|libdl|libpthread|librt|libresolv|libutil|libanl|libnsl|ld-linux[-a-z0-9_]*)\.so'
find "$dir" -maxdepth 1 -name '*.so.*' -type f -delete
{
  ldd "$shim" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
  for lib in "$@"; do
    [ -f "$lib" ] || { echo "container-shim.sh: no $lib" >&2; exit 1; }
    echo "${lib##*/} $lib"
    ldd "$lib" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}'
  done
} | sort -u | while read -r name path; do
  [[ $name =~ $glibc_re ]] && continue
  cp -L "$path" "$dir/$name"
  chmod 0644 "$dir/$name"
done
# The newest glibc symbol version any of them needs.
floor=$(for f in "$dir"/*.so*; do objdump -T "$f"; done | grep -o 'GLIBC_[0-9][0-9.]*' | sort -u -V | tail -n 1)
echo "${floor#GLIBC_}" > "$dir/glibc-floor"
