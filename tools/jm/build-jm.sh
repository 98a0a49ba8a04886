#!/usr/bin/env bash
# Builds ldecod, the decoder of JM (the H.264/AVC reference software), for the conformance checks:
#   BUILD/ldecod        the decoder (JM's bin/ldecod.exe)
#   BUILD/decoder.cfg   JM's bin/decoder.cfg, which the harnesses pass with -d when it lies beside ldecod
# The source (--source) is a JM tarball or an unpacked JM tree holding ldecod/ and lcommon/ (at its top or in
# its one top folder); it is unpacked or copied into BUILD/source, never built in place. With --manifest, the
# tarball's line in that MANIFEST.tsv (columns file, bytes, sha256, ...) gives the SHA-256 it must have.
# Logs: BUILD/make.log.
set -euo pipefail

prog=build-jm build="" source="" manifest="" jobs=$(nproc 2>/dev/null || echo 2)
usage() {
  cat <<USAGE
usage: build-jm.sh --build-dir DIR --source TARBALL|DIR [--manifest MANIFEST.tsv] [-j N]
  --build-dir DIR    where the source, the build log and ldecod go
  --source X         a JM tarball (any that tar unpacks) or an unpacked JM tree
  --manifest FILE    check the tarball's SHA-256 against its line in FILE (a line for it must be there)
  -j N               parallel make jobs (default: $jobs)
USAGE
}
# shellcheck source=../scripts/lib.sh
. "$(dirname "$0")/../scripts/lib.sh"
parse_options "--build-dir=build --source=source --manifest=manifest -j=jobs" "$@"
[ -n "$build" ] && [ -n "$source" ] || usage_error "--build-dir and --source are needed"
log() { echo "build-jm: $*"; }
[ -e "$source" ] || die "JM source not found: $source"
# jm_root DIR: DIR, or its one folder, that holds ldecod/Makefile (nothing when none does).
jm_root() {
  if [ -f "$1/ldecod/Makefile" ]; then
    echo "$1"
  else
    find "$1" -mindepth 3 -maxdepth 3 -path '*/ldecod/Makefile' -printf '%h\n' | sed 's,/ldecod$,,' | head -1
  fi
}
no_tree() { die "$source holds no JM tree (ldecod/Makefile at its top or in its top folder)"; }
mkdir -p "$build"
build=$(cd "$build" && pwd)

# ---- 1. the source tree in $build/source (again only when the source or its SHA-256 changed) ----
if [ -f "$source" ]; then
  sum=$(sha256sum "$source" | cut -d' ' -f1)
  if [ -n "$manifest" ]; then
    want=$(awk -F'\t' -v f="$(basename "$source")" '$1 == f { print $3 }' "$manifest")
    [ -n "$want" ] || die "$manifest has no line for $(basename "$source")"
    [ "$sum" = "$want" ] || die "$source: SHA-256 $sum, $manifest says $want"
  fi
else
  sum=directory
fi
stamp="$(cd "$(dirname "$source")" && pwd)/$(basename "$source") $sum"
if [ ! -f "$build/source/.gpuec-source-ok" ] || [ "$(cat "$build/source/.gpuec-source-ok")" != "$stamp" ]; then
  rm -rf "$build/source"
  mkdir -p "$build/source"
  if [ -d "$source" ]; then
    root=$(jm_root "$source")
    [ -n "$root" ] || no_tree
    log "copying $root"
    cp -a "$root/." "$build/source/"
  else
    log "unpacking $source"
    tar -xf "$source" -C "$build/source" || die "cannot unpack $source"
  fi
  echo "$stamp" >"$build/source/.gpuec-source-ok"
fi
root=$(jm_root "$build/source")
[ -n "$root" ] || no_tree
# JM 19.0 decodes at most MAX_NUM_SLICES = 50 slices a picture (ldecod/inc/defines.h; more: error 200, "Maximum
# number of supported slices exceeded"), fewer than the e2e matrices' --slice-max-mbs 37 gives at 720p (98) and
# 1080p (221). The limit sizes two arrays of each picture (and, for field pictures, lists per slice) and changes
# no decoding: the copy here gets at least 1024.
max_slices=1024
defines="$root/ldecod/inc/defines.h"
slices=$(sed -n 's/^#define MAX_NUM_SLICES[[:space:]]*\([0-9]*\).*/\1/p' "$defines" 2>/dev/null | head -1)
if [ -n "$slices" ] && [ "$slices" -lt $max_slices ]; then
  log "MAX_NUM_SLICES $slices -> $max_slices ($defines)"
  sed -i "s/^#define MAX_NUM_SLICES[[:space:]].*/#define MAX_NUM_SLICES $max_slices/" "$defines"
fi

# ---- 2. make, with the build line of ../shared/tools/MANIFEST.tsv: JM 19.0 defines globals in its headers
#      (ColorComponent, ...), which gcc >= 10 links only with -fcommon ----
log "building ldecod (log: $build/make.log)"
rm -f "$root/bin/ldecod.exe"
make -C "$root/ldecod" -j"$jobs" OPT=2 CFLAGS="-fcommon -Wno-unused-but-set-variable" >"$build/make.log" 2>&1 ||
  { tail -20 "$build/make.log" >&2; die "make of ldecod failed (see $build/make.log)"; }
[ -x "$root/bin/ldecod.exe" ] || die "make wrote no $root/bin/ldecod.exe (see $build/make.log)"
cp "$root/bin/ldecod.exe" "$build/ldecod.tmp" && mv "$build/ldecod.tmp" "$build/ldecod"
if [ -f "$root/bin/decoder.cfg" ]; then cp "$root/bin/decoder.cfg" "$build/decoder.cfg"; else rm -f "$build/decoder.cfg"; fi
log "ok: $build/ldecod"
