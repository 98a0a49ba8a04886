#!/usr/bin/env bash
# Install everything gpuec needs on a fresh Debian 12 machine (run as root or with sudo).
# Debian packages only; the deb-src entry needed by `apt-get source x264` (and ffmpeg) is derived from the
# machine's own apt sources, never written from a host name.
set -euo pipefail
case "${1:-}" in -h|--help) sed -n '2,4p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "install-deps: run this as root (no sudo here)" >&2; exit 1; }
  SUDO="sudo"
fi

PKGS=(build-essential cmake ninja-build pkg-config nasm dpkg-dev patch xz-utils
      libgtest-dev googletest ffmpeg libjpeg-dev python3 libxxhash-dev)
# Our ffmpeg (plugin/ffmpeg/build-ffmpeg.sh): NVIDIA's codec headers, clang for FFmpeg's CUDA filters,
# patchelf for its RPATH, and the -dev packages of the Debian libraries it links.
PKGS+=(libffmpeg-nvenc-dev clang patchelf zlib1g-dev libbz2-dev liblzma-dev libdav1d-dev libopus-dev
       libmp3lame-dev libvorbis-dev libfreetype-dev libfontconfig-dev libfribidi-dev
       libsoxr-dev libzimg-dev)

enable_deb_src() {
  # Already have a deb-src entry for the main archive?
  if grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null; then
    return 0
  fi
  local out=/etc/apt/sources.list.d/gpuec-deb-src.sources
  if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    # deb822: copy every stanza with Types: deb as Types: deb-src.
    awk 'BEGIN{RS=""; ORS="\n\n"} /(^|\n)Types:[^\n]*deb([ \t]|\n|$)/ {
           gsub(/Types:[^\n]*/, "Types: deb-src"); print }' \
      /etc/apt/sources.list.d/debian.sources | $SUDO tee "$out" >/dev/null
  elif [ -f /etc/apt/sources.list ]; then
    grep -E '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' |
      $SUDO tee /etc/apt/sources.list.d/gpuec-deb-src.list >/dev/null
  else
    echo "install-deps: no apt sources found to derive a deb-src entry from" >&2
    return 1
  fi
  echo "install-deps: added a deb-src entry derived from the existing apt sources"
}

need_install=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need_install+=("$p")
done

enable_deb_src
$SUDO apt-get update -qq
if [ ${#need_install[@]} -gt 0 ]; then
  echo "install-deps: installing ${need_install[*]}"
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_install[@]}"
fi
echo "install-deps: ok"
