#!/usr/bin/env bash
# Checks the build dependencies through pkg-config; as root installs the missing Debian packages,
# as anyone else prints the apt-get line to run. Never touches anything when all are present.
set -u
need_pkgs=()
for mod in libunwind:libunwind-dev libdw:libdw-dev libcjson:libcjson-dev zlib:zlib1g-dev; do
  pc=${mod%%:*}; deb=${mod#*:}
  if ! pkg-config --exists "$pc" 2>/dev/null; then need_pkgs+=("$deb"); fi
done
command -v pkg-config >/dev/null 2>&1 || need_pkgs+=(pkg-config)
command -v cc >/dev/null 2>&1 || need_pkgs+=(build-essential)
command -v python3 >/dev/null 2>&1 || need_pkgs+=(python3)
[ ${#need_pkgs[@]} -eq 0 ] && exit 0
line="apt-get install -y ${need_pkgs[*]}"
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "perfscope: installing build dependencies: ${need_pkgs[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null && apt-get install -y -qq "${need_pkgs[@]}" >/dev/null || {
    echo "perfscope: could not install; run: $line" >&2; exit 1; }
else
  echo "perfscope: missing build dependencies; run as root: $line" >&2
  exit 1
fi
