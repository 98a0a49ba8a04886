#!/usr/bin/env bash
# Builds a complete FFmpeg 5.1.9 (a user's ffmpeg, configured after Debian's debian/rules) from Debian's
# ffmpeg source package 7:5.1.9-0+deb12u1 with plugin/ffmpeg/*.patch applied (the gudcanny filter,
# libx264's checked gpu-* keys and ROI warnings), linked with gpuec's patched x264 and libgudcanny
# (static, through generated pkg-config files):
#   BUILD/ffmpeg, BUILD/ffprobe  the programs, stripped: FFmpeg's own libraries, x264 and libgudcanny
#                             static; the Debian libraries (dav1d, opus, lame, vorbis, freetype, ...)
#                             dynamic, found through the RPATH $ORIGIN/lib
#   BUILD/lib                 those Debian libraries (ldd's closure less glibc, libstdc++ and libgcc_s):
#                             copy BUILD/ffmpeg with BUILD/lib and it runs on a host without them
#   BUILD/source              the Debian source tree (Debian's own patches applied by dpkg-source)
#   BUILD/tree                source + our patches, configured and built in place
#   BUILD/pkgconfig           x264.pc, gudcanny.pc;  BUILD/deps/include: x264.h, x264_config.h;
#   BUILD/deps/lib            links to the archives the pkg-config files name
# Everything FFmpeg builds natively (all codecs, formats, protocols, filters, libavdevice with lavfi),
# NVIDIA's codec headers (Debian's libffmpeg-nvenc-dev: -hwaccel cuda, *_cuvid, nvenc, hwupload_cuda;
# libcuda/libnvcuvid are loaded at run time) and the CUDA filters (scale_cuda, yadif_cuda, ...: compiled
# to PTX by clang, --enable-cuda-llvm). --disable-autodetect: each feature is enabled explicitly.
# The source comes from `apt-get source` (needs a deb-src entry: tools/scripts/install-deps.sh adds one) or from
# --source (an unpacked tree, a .dsc, or the .orig tarball). Debian files are checked against pinned
# SHA-256 sums (plugin/debian-source.sh). Logs: BUILD/download/*.log, BUILD/tree/{configure,make}.log.
set -euo pipefail

DEB_PACKAGE=ffmpeg
DEB_VERSION="7:5.1.9-0+deb12u1"
ORIG_NAME="ffmpeg_5.1.9.orig.tar.xz"
ORIG_SHA256="d9b593bb2ba93d4b50f74177e0cdcd41747e708596367deed0c30348a71dd176"
DEBIAN_NAME="ffmpeg_5.1.9-0+deb12u1.debian.tar.xz"
DEBIAN_SHA256="71b20472ecd2764bc98e3229d34c0f7c8dcfe4a6cbacc23fd5604c23bac04632"
SOURCE_TITLE=FFmpeg SOURCE_MARKER=libavfilter/allfilters.c SOURCE_OPTION=FFMPEG_SOURCE

here=$(cd "$(dirname "$0")" && pwd)
build="" source="" x264_dir="" x264_libs="" canny_include="" canny_libs="" jobs=$(nproc 2>/dev/null || echo 2)

# The Debian libraries linked (dynamically; pkg-config names in ext_pcs, for the checks), shipped in
# BUILD/lib with what they need (png, brotli, expat, ogg, gomp): AV1 decoding, Opus, MP3 and Vorbis
# encoding, drawtext (freetype, fontconfig, fribidi), the soxr resampler, zscale (zimg). Not taken, for
# size: libvpx (VP8/VP9 encoding, 3 MB; FFmpeg decodes them natively), libxml2 (dash demuxer; pulls ICU,
# 30 MB), gnutls (https; ~6 MB with nettle, gmp, p11-kit, unistring), openssl (nonfree with --enable-gpl),
# webp, theora, speex (FFmpeg decodes them natively), libass, x265, aom, svtav1.
ext_libs=(libdav1d libopus libmp3lame libvorbis libfreetype libfontconfig libfribidi libsoxr libzimg)
ext_pcs=(dav1d opus vorbis vorbisenc freetype2 fontconfig fribidi soxr zimg zlib)  # lame has no .pc

usage() {
  cat <<USAGE
usage: build-ffmpeg.sh --build-dir DIR --x264-dir DIR --x264-libs LIBS --gudcanny-include DIR
                       --gudcanny-libs LIBS [--source DIR|FILE.dsc|FILE.orig.tar.xz] [-j N]
  --build-dir DIR         where the source, the build tree, BUILD/ffmpeg, BUILD/ffprobe and BUILD/lib go
  --x264-dir DIR          the patched x264 build tree: libx264.a, x264.h, x264_config.h
  --x264-libs LIBS        what a static link of that libx264.a needs after it (the gpuec stage archives)
  --gudcanny-include DIR  the folder holding canny/gudcanny.h
  --gudcanny-libs LIBS    the static link line of libgudcanny (gpuec_gudcanny and what it needs)
  --source X              ffmpeg source to use instead of 'apt-get source ffmpeg=$DEB_VERSION'
  -j N                    parallel make jobs (default: $jobs)
Configures FFmpeg as a user's build (after Debian's debian/rules): all native components, libavdevice
(lavfi), ffprobe, --enable-gpl --enable-libx264 --enable-libgudcanny, zlib, bzlib, lzma, iconv,
the Debian libraries ${ext_libs[*]},
NVIDIA's codec headers (ffnvcodec: cuda, nvdec, cuvid, nvenc) and the CUDA filters (--enable-cuda-llvm,
clang). No ffplay, docs, X11, SDL, VAAPI, VDPAU, ALSA, TLS. BUILD/ffmpeg and BUILD/ffprobe load the
Debian libraries from BUILD/lib (RPATH \$ORIGIN/lib): copy them together.
Rebuilds only what changed: when the patches, the configure flags or the pkg-config files change, the
files the patches change are updated in BUILD/tree, configure runs again and make recompiles what that
touches (delete BUILD/tree to start over); the programs are relinked and BUILD/lib is refilled on
every run (the libraries may have changed).
Needs (tools/scripts/install-deps.sh): pkg-config make cc nasm clang patchelf and the -dev packages of
$(printf '%s ' "${ext_pcs[@]}")ffnvcodec (libffmpeg-nvenc-dev).
USAGE
}

while [ $# -gt 0 ]; do
  case "$1" in
    --build-dir) build=$2; shift 2 ;;
    --source) source=$2; shift 2 ;;
    --x264-dir) x264_dir=$2; shift 2 ;;
    --x264-libs) x264_libs=$2; shift 2 ;;
    --gudcanny-include) canny_include=$2; shift 2 ;;
    --gudcanny-libs) canny_libs=$2; shift 2 ;;
    -j) jobs=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "build-ffmpeg: unknown argument '$1'" >&2; usage >&2; exit 1 ;;
  esac
done
[ -n "$build" ] && [ -n "$x264_dir" ] && [ -n "$canny_include" ] && [ -n "$canny_libs" ] || { usage >&2; exit 1; }
log() { echo "build-ffmpeg: $*"; }
die() { echo "build-ffmpeg: error: $*" >&2; exit 2; }
check_source_dir() {  # an FFmpeg 5.1.9 tree
  [ -f "$1/libavfilter/allfilters.c" ] && [ -f "$1/RELEASE" ] || die "$1 is not an FFmpeg source tree"
  grep -qx '5.1.9' "$1/RELEASE" || die "$1 is not FFmpeg 5.1.9 (RELEASE says $(head -1 "$1/RELEASE"))"
}
# shellcheck source=../debian-source.sh
. "$here/../debian-source.sh"
hint="run tools/scripts/install-deps.sh"

for f in libx264.a x264.h x264_config.h; do
  [ -f "$x264_dir/$f" ] || die "$x264_dir/$f missing (build the patched x264 first: target x264_builds)"
done
grep -q 'i_gpu_entropy' "$x264_dir/x264.h" || die "$x264_dir/x264.h is not gpuec's patched x264 (no i_gpu_entropy)"
[ -f "$canny_include/canny/gudcanny.h" ] || die "$canny_include/canny/gudcanny.h missing"
for tool in pkg-config make cc ldd; do command -v "$tool" >/dev/null || die "$tool missing: $hint"; done
command -v nasm >/dev/null || die "nasm missing (FFmpeg's x86 assembly): $hint"
command -v clang >/dev/null || die "clang missing (FFmpeg's CUDA filters, --enable-cuda-llvm): $hint"
command -v patchelf >/dev/null || die "patchelf missing (RPATH \$ORIGIN/lib of BUILD/ffmpeg): $hint"
for pc in "${ext_pcs[@]}" ffnvcodec; do
  pkg-config --exists "$pc" || die "pkg-config finds no '$pc' (its -dev package): $hint"
done
[ -f /usr/include/lame/lame.h ] || die "lame/lame.h missing (libmp3lame-dev): $hint"

mkdir -p "$build"
build=$(cd "$build" && pwd)

# ---- 1. pristine source tree in $build/source ----
# From a .dsc, dpkg-source applies Debian's patches (for 5.1.9-0+deb12u1 one rangecoder revert).
debian_source "$build" "$source"
pristine="$build/source"

# ---- 2. headers, libraries and pkg-config files of the two libraries ----
# Only x264.h and x264_config.h are copied: x264's tree also has a config.h that must not shadow FFmpeg's.
# FFmpeg's configure takes only -l flags as libraries (a path to an archive would land before the
# object files): every archive of the link lines gets a link in BUILD/deps/lib and is named with -l.
write_if_changed() {  # file content
  if [ ! -f "$1" ] || [ "$(cat "$1")" != "$2" ]; then printf '%s\n' "$2" >"$1"; fi
}
as_l_flags() {  # link line -> the same line with each .../libNAME.a linked into deps/lib and named -lNAME
  local out="" token name
  for token in $1; do
    if [[ "$token" == */lib*.a ]]; then
      [ -f "$token" ] || die "$token missing"
      name=$(basename "$token" .a)
      ln -sfn "$token" "$build/deps/lib/$name.a"
      out+=" -l${name#lib}"
    else
      out+=" $token"
    fi
  done
  echo "${out# }"
}
mkdir -p "$build/deps/include" "$build/deps/lib" "$build/pkgconfig"
for f in x264.h x264_config.h; do
  cmp -s "$x264_dir/$f" "$build/deps/include/$f" || cp "$x264_dir/$f" "$build/deps/include/$f"
done
x264_dir=$(cd "$x264_dir" && pwd)
canny_include=$(cd "$canny_include" && pwd)
x264_l=$(as_l_flags "$x264_dir/libx264.a $x264_libs")
canny_l=$(as_l_flags "$canny_libs")
write_if_changed "$build/pkgconfig/x264.pc" "Name: x264
Description: gpuec's patched x264 (static, with the gpuec entropy stage)
Version: 0.164.3095
Cflags: -I$build/deps/include
Libs: -L$build/deps/lib $x264_l -lstdc++ -lm -lpthread -ldl"
write_if_changed "$build/pkgconfig/gudcanny.pc" "Name: gudcanny
Description: GUD-Canny edge detection, C interface (gpuec, static)
Version: 0.1
Cflags: -I$canny_include
Libs: -L$build/deps/lib $canny_l -lstdc++ -lm -lpthread"

# After Debian's debian/rules (CONFIG + CONFIG_standard) less what is not wanted on a server host or not
# shipped (see ext_libs), static instead of shared, no autodetection (each feature named here).
configure_flags=(
  --disable-shared --enable-static --disable-autodetect --enable-pthreads
  --disable-doc --disable-ffplay --disable-debug --extra-version=gpuec
  --enable-gpl --enable-libx264 --enable-libgudcanny
  --enable-zlib --enable-bzlib --enable-lzma --enable-iconv
  "${ext_libs[@]/#/--enable-}"
  --enable-ffnvcodec --enable-cuda --enable-cuda-llvm --enable-nvdec --enable-cuvid --enable-nvenc
)

# ---- 3. the patched, configured tree ----
tree="$build/tree"
stamp=$( { cat "$here"/*.patch; printf '%s\n' "${configure_flags[@]}"; cat "$build/pkgconfig/"*.pc; } | sha256sum | cut -d' ' -f1)
apply_patches() {  # dir
  for p in "$here"/*.patch; do
    log "applying $(basename "$p")"
    patch -d "$1" -p1 --batch --forward --quiet <"$p" || die "$(basename "$p") does not apply"
  done
}
if [ ! -f "$tree/.gpuec-stamp" ] || [ "$(cat "$tree/.gpuec-stamp")" != "$stamp" ]; then
  rm -f "$tree/.gpuec-stamp"
  if [ -f "$tree/.gpuec-prepared" ]; then
    # A tree built before: patch a fresh copy and copy over only the files that differ, so that make
    # recompiles only what they touch (configure rewrites config.h etc. only when their content changes).
    log "updating the tree"
    rm -rf "$build/tree.new"
    cp -a "$pristine" "$build/tree.new"
    apply_patches "$build/tree.new"
    (cd "$build/tree.new" && find . -type f ! -name .gpuec-source-ok) | while read -r f; do
      cmp -s "$build/tree.new/$f" "$tree/$f" || { mkdir -p "$(dirname "$tree/$f")" && cp "$build/tree.new/$f" "$tree/$f"; }
    done
    rm -rf "$build/tree.new"
  else
    log "preparing the tree"
    rm -rf "$tree"
    cp -a "$pristine" "$tree"
    rm -f "$tree/.gpuec-source-ok"
    apply_patches "$tree"
    touch "$tree/.gpuec-prepared"
  fi
  log "configuring"
  (cd "$tree" && PKG_CONFIG_PATH="$build/pkgconfig" ./configure "${configure_flags[@]}" >configure.log 2>&1) ||
    { tail -5 "$tree/ffbuild/config.log" >&2 || true; die "configure failed (see $tree/configure.log and $tree/ffbuild/config.log)"; }
  ! grep -q "without pkg-config" "$tree/configure.log" ||
    die "configure did not find x264 through BUILD/pkgconfig/x264.pc (see $tree/configure.log)"
  echo "$stamp" >"$tree/.gpuec-stamp"
fi
rm -f "$tree"/ff{mpeg,probe}{,_g}  # relink every time: libx264.a or libgudcanny may have changed
log "building"
make -C "$tree" -j"$jobs" ffmpeg ffprobe >"$tree/make.log" 2>&1 || { tail -30 "$tree/make.log" >&2; die "make failed (see $tree/make.log)"; }

# ---- 4. the programs and the Debian libraries they load, in BUILD/lib ----
# FFmpeg's make strips ffmpeg/ffprobe (ffmpeg_g, ffprobe_g keep the symbols). The RPATH (DT_RPATH, not
# RUNPATH: it also serves the libraries' own dependencies, e.g. libpng of libfreetype) is $ORIGIN/lib.
is_system_lib() {  # glibc's libraries and the C++ runtime: every host has them
  case "$1" in
    libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|libresolv.so*|libutil.so*|libmvec.so*|ld-linux*|\
    libstdc++.so*|libgcc_s.so*) return 0 ;;
  esac
  return 1
}
rm -rf "$build/lib.tmp"
mkdir -p "$build/lib.tmp"
for prog in ffmpeg ffprobe; do
  deps=$(env -u LD_LIBRARY_PATH ldd "$tree/$prog") || die "ldd $tree/$prog failed"
  ! grep -q 'not found' <<<"$deps" || die "$prog: libraries not found: $(grep 'not found' <<<"$deps" | tr -s ' \t\n' ' ')"
  while read -r name path; do
    is_system_lib "$name" || cp -L "$path" "$build/lib.tmp/$name"
  done < <(awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' <<<"$deps")
  cp "$tree/$prog" "$build/$prog.tmp"
  patchelf --force-rpath --set-rpath '$ORIGIN/lib' "$build/$prog.tmp"
done
rm -rf "$build/lib"
mv "$build/lib.tmp" "$build/lib"
for prog in ffmpeg ffprobe; do
  mv "$build/$prog.tmp" "$build/$prog"
  # Every library it loads must now come from BUILD/lib or be a system one.
  while read -r name path; do
    is_system_lib "$name" || [ "$path" = "$build/lib/$name" ] || die "$prog: $name resolves to $path, not BUILD/lib"
  done < <(env -u LD_LIBRARY_PATH ldd "$build/$prog" | awk '$2 == "=>" { print $1, $3 }')
done
log "ok: $build/ffmpeg, $build/ffprobe, $build/lib ($(ls "$build/lib" | wc -l) libraries, $(du -sh "$build/lib" | cut -f1))"
