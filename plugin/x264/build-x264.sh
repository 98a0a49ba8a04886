#!/usr/bin/env bash
# Builds two x264s from Debian's x264 source package 2:0.164.3095+gitbaee400-3:
#   BUILD/stock/x264            the unmodified source (the byte-identity baseline)
#   BUILD/patched/x264          the source with plugin/x264/*.patch applied, linked with our stage
#   BUILD/patched/libx264.a     (plus x264.h, x264_config.h) for other consumers (FFmpeg)
#   BUILD/timed/x264            with --timed only: the source with plugin/x264/bench/*.patch, which
#                               times x264's own residual writer per frame (tools/bench/bench-stage.sh)
# The source comes from `apt-get source` (needs a deb-src entry: tools/scripts/install-deps.sh adds one derived
# from the machine's apt sources) or from --source (a directory of an unpacked source tree, a .dsc, or
# an x264 .orig tarball). Downloaded or given Debian files are checked against pinned SHA-256 sums
# (plugin/debian-source.sh).
set -euo pipefail

DEB_PACKAGE=x264
DEB_VERSION="2:0.164.3095+gitbaee400-3"
ORIG_NAME="x264_0.164.3095+gitbaee400.orig.tar.gz"
ORIG_SHA256="8b237e94b08c196a1da22f2f25875f10be4cff3648df4eeff21e00da8f683fc2"
DEBIAN_NAME="x264_0.164.3095+gitbaee400-3.debian.tar.xz"
DEBIAN_SHA256="4980a5595db7465c8035e872d31e0eedd98dea936c1601f1cc338433eaff96b7"
SOURCE_TITLE=x264 SOURCE_MARKER=encoder/cavlc.c SOURCE_OPTION=X264_SOURCE

here=$(cd "$(dirname "$0")" && pwd)
build="" source="" cflags="" libs="" timed=0 jobs=$(nproc 2>/dev/null || echo 2)

usage() {
  cat <<USAGE
usage: build-x264.sh --build-dir DIR [--source DIR|FILE.dsc|FILE.orig.tar.gz] [--cflags FLAGS] [--libs LIBS]
                    [--timed] [-j N]
  --build-dir DIR  where the source, the stock and the patched build go
  --source X       x264 source to use instead of 'apt-get source x264=$DEB_VERSION'
  --cflags FLAGS   extra compiler flags for the patched build (include dirs of the gpuec stage)
  --libs LIBS      libraries the patched x264 links after libx264.a (the gpuec stage archives)
  --timed          also build BUILD/timed/x264: stock + bench/*.patch (residual writer timing)
  -j N             parallel make jobs (default: $jobs)
USAGE
}

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --source) source=$2; shift 2 ;;
    --cflags) cflags=$2; shift 2 ;;
    --libs) libs=$2; shift 2 ;;
    --timed) timed=1; shift ;;
    -j) jobs=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build-x264: unknown argument '$1'" >&2; usage >&2; exit 1 ;;
  esac
done
[ -n "$build" ] || { usage >&2; exit 1; }
mkdir -p "$build"
build=$(cd "$build" && pwd)
log() { echo "build-x264: $*"; }
die() { echo "build-x264: error: $*" >&2; exit 2; }
check_source_dir() {  # an x264 tree of build 164
  [ -f "$1/encoder/cavlc.c" ] && [ -f "$1/x264.h" ] || die "$1 is not an x264 source tree"
  grep -q '#define X264_BUILD 164' "$1/x264.h" || die "$1 is not x264 build 164"
}
# shellcheck source=../debian-source.sh
. "$here/../debian-source.sh"

# ---- 1. pristine source tree in $build/source ----
debian_source "$build" "$source"
pristine="$build/source"

configure_flags=(--enable-static --bit-depth=8 --chroma-format=all
                 --disable-lavf --disable-ffms --disable-gpac --disable-lsmash --disable-swscale --disable-avs)

build_tree() {  # name stamp-content extra-configure-args...
  local name=$1 stamp=$2; shift 2
  local dir="$build/$name"
  if [ ! -f "$dir/.gpuec-stamp" ] || [ "$(cat "$dir/.gpuec-stamp")" != "$stamp" ]; then
    log "preparing $name tree"
    rm -rf "$dir"
    cp -a "$pristine" "$dir"
    local patches=()
    case "$name" in
      patched) patches=("$here"/*.patch) ;;
      timed) patches=("$here"/bench/*.patch) ;;
    esac
    for p in "${patches[@]}"; do
      log "applying $(basename "$p")"
      patch -d "$dir" -p1 --batch --forward --quiet <"$p" || die "$(basename "$p") does not apply"
    done
    (cd "$dir" && ./configure "${configure_flags[@]}" "$@" >configure.log 2>&1) ||
      die "configure of $name failed (see $dir/configure.log and $dir/config.log)"
    echo "$stamp" >"$dir/.gpuec-stamp"
  fi
  rm -f "$dir/x264"  # relink every time: the stage libraries may have changed
  log "building $name"
  make -C "$dir" -j"$jobs" x264 >"$dir/make.log" 2>&1 || { tail -30 "$dir/make.log" >&2; die "make of $name failed (see $dir/make.log)"; }
}

build_tree stock "stock"
patch_sum=$(cat "$here"/*.patch | sha256sum | cut -d' ' -f1)
build_tree patched "$patch_sum $cflags $libs" --extra-cflags="$cflags" --extra-ldflags="$libs -lstdc++ -lm"
if [ "$timed" = 1 ]; then
  build_tree timed "$(cat "$here"/bench/*.patch | sha256sum | cut -d' ' -f1)"
  log "ok: $build/timed/x264"
fi
log "ok: $build/stock/x264 and $build/patched/x264"
