# plugin/debian-source.sh: sourced by plugin/x264/build-x264.sh and plugin/ffmpeg/build-ffmpeg.sh, never run.
# debian_source BUILD SOURCE puts the pristine source tree of a Debian source package in BUILD/source, once
# (BUILD/source/.gpuec-source-ok marks it done; delete BUILD/source to start over). SOURCE empty: `apt-get source
# --download-only PACKAGE=VERSION` into BUILD/download (needs a deb-src entry: tools/scripts/install-deps.sh adds
# one), then as a .dsc. SOURCE a directory: an unpacked tree, copied. SOURCE a .dsc: its .orig and .debian
# tarballs (beside it) are checked against the pinned SHA-256 sums and dpkg-source unpacks it, applying Debian's
# own patches (debian/patches/series). SOURCE a tarball: unpacked; the .orig tarball is checked against its sum.
# The caller sets
#   DEB_PACKAGE, DEB_VERSION     the source package and its Debian version (epoch included)
#   ORIG_NAME, ORIG_SHA256       the .orig tarball's file name and SHA-256
#   DEBIAN_NAME, DEBIAN_SHA256   the .debian tarball's file name and SHA-256
#   SOURCE_TITLE                 the project's name in messages (x264, FFmpeg)
#   SOURCE_MARKER                a file every source tree of the project holds (relative to the tree)
#   SOURCE_OPTION                the CMake setting that passes SOURCE (X264_SOURCE, FFMPEG_SOURCE)
# and defines log MESSAGE, die MESSAGE (exits) and check_source_dir DIR (dies unless the tree DIR, given as
# SOURCE, is the version the patches are for).

# check_sha FILE SHA256: dies unless FILE has that SHA-256.
check_sha() {
  local got
  got=$(sha256sum "$1" | cut -d' ' -f1)
  [ "$got" = "$2" ] || die "$1: SHA-256 $got, expected $2 (not Debian's $DEB_PACKAGE $DEB_VERSION)"
}

debian_source() {  # BUILD SOURCE
  local build=$1 source=$2 pristine="$1/source" dir
  [ ! -f "$pristine/.gpuec-source-ok" ] || return 0
  rm -rf "$pristine" "$build/download"
  mkdir -p "$build/download"
  if [ -z "$source" ]; then
    log "fetching Debian source package $DEB_PACKAGE=$DEB_VERSION"
    command -v dpkg-source >/dev/null || die "dpkg-source missing: run tools/scripts/install-deps.sh"
    (cd "$build/download" && apt-get source --download-only "$DEB_PACKAGE=$DEB_VERSION" >apt-source.log 2>&1) ||
      die "apt-get source failed (see $build/download/apt-source.log); a deb-src entry is needed: run" \
          "tools/scripts/install-deps.sh, or pass -D$SOURCE_OPTION=..."
    source="$build/download/${DEB_PACKAGE}_${DEB_VERSION#*:}.dsc"
  fi
  if [ -d "$source" ]; then
    check_source_dir "$source"
    cp -a "$source" "$pristine"
    rm -rf "$pristine/.git" "$pristine/.pc"
  elif [[ "$source" == *.dsc ]]; then
    dir=$(dirname "$source")
    check_sha "$dir/$ORIG_NAME" "$ORIG_SHA256"
    check_sha "$dir/$DEBIAN_NAME" "$DEBIAN_SHA256"
    dpkg-source --no-check -x "$source" "$pristine" >"$build/download/dpkg-source.log" 2>&1 ||
      die "dpkg-source -x failed (see $build/download/dpkg-source.log)"
    rm -rf "$pristine/.pc"
  elif [[ "$source" == *.tar.gz || "$source" == *.tar.xz || "$source" == *.tar.bz2 ]]; then
    [[ "$(basename "$source")" != "$ORIG_NAME" ]] || check_sha "$source" "$ORIG_SHA256"
    mkdir -p "$pristine"
    tar -xf "$source" -C "$pristine" --strip-components=1
    [ -f "$pristine/$SOURCE_MARKER" ] || die "$source does not hold an $SOURCE_TITLE source tree"
  else
    die "--source must be a directory, a .dsc or a tarball: $source"
  fi
  touch "$pristine/.gpuec-source-ok"
}
