# container_lib.sh: what the container tests share (tests/t_tools_container*.sh), sourced after
# lib.sh. need_docker skips the test with one line when no daemon answers; make_image builds an
# image offline (no registry): a folder with the files given and the libraries ldd lists for
# them, plus /bin/sh (dash) and its libraries, imported with `docker import`. Every image and
# container a test makes is named perfscope-test-*, and removed by container_cleanup (a trap).
DOCKER=${DOCKER:-docker}

need_docker() {
    command -v "$DOCKER" >/dev/null 2>&1 || skip "no docker client: container tests skipped"
    "$DOCKER" info >/dev/null 2>&1 || skip "no docker daemon answers (docker info failed): container tests skipped"
}

CONTAINER_IMAGES=()
container_cleanup() {
    local img
    for img in "${CONTAINER_IMAGES[@]}"; do
        "$DOCKER" ps -aq --filter "ancestor=$img" | xargs -r "$DOCKER" rm -f >/dev/null 2>&1
        "$DOCKER" rmi -f "$img" >/dev/null 2>&1
    done
}
trap container_cleanup EXIT

# add_file DIR HOSTPATH [INSIDE]: copies a file and its ldd libraries into the image folder.
add_file() {
    local dir=$1 src=$2 dst=${3:-$2} lib
    mkdir -p "$dir$(dirname "$dst")"
    cp -L "$src" "$dir$dst"
    for lib in $(ldd "$src" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $3} $1 ~ /^\// {print $1}'); do
        [ -e "$dir$lib" ] && continue
        mkdir -p "$dir$(dirname "$lib")"
        cp -L "$lib" "$dir$lib"
    done
}

# make_image NAME DIR: imports DIR (already filled with add_file) as image NAME; /bin/sh added.
make_image() {
    local name=$1 dir=$2
    add_file "$dir" "$(readlink -f /bin/sh)" /bin/sh
    mkdir -p "$dir/tmp" "$dir/proc" "$dir/sys" "$dir/dev" "$dir/etc"
    tar -C "$dir" -c . | "$DOCKER" import - "$name" >/dev/null || fail "docker import $name failed"
    CONTAINER_IMAGES+=("$name")
}
