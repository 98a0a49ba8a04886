#!/usr/bin/env bash
# download.sh: fetch clips of the xiph "derf" collection listed in sequences/derf.tsv.
# See `download.sh --help` and sequences/README.md.
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
manifest=${GPUEC_DERF_MANIFEST:-$here/derf.tsv}
base_url=${GPUEC_DERF_URL:-https://media.xiph.org/video/derf/y4m}
base_url=${base_url%/}

usage() {
  cat <<EOF
usage: download.sh [options] (NAME... | --all | --set SET...)

Downloads clips listed in sequences/derf.tsv from the xiph derf y4m collection
($base_url/FILE) into the clips folder, resuming partial
downloads (FILE.part), and checks that each y4m header has the manifest's
width and height (a frame count that differs from the manifest is only a
warning: the manifest's counts are best knowledge). Clips already complete
are skipped without touching the network.

Clips folder (first that is set):
  --dest DIR, \$GPUEC_SEQUENCES, \$GPUEC_SHARED_DIR/sequences, <repo>/../shared/sequences
  (the shared folder may be read-only: then use --dest or GPUEC_SEQUENCES, and point
  gpuec-clip at the same folder with GPUEC_SEQUENCES)

Selection:
  NAME...          clip names from derf.tsv (first column), e.g. foreman_cif akiyo_qcif
  --all            every clip in the manifest (several hundred GB with the 2160p clips)
  --set SET        a group, may be repeated:
                     small  (QCIF and CIF)   qcif   cif   4cif
                     hd     (720p and 1080p) 720p   1080p 2160p
                     shared (the clips of which the shared folder holds a copy)

Options:
  --dest DIR       clips folder to download into
  --list           print the manifest with the local state of each clip and exit
  --dry-run        print what would be downloaded and exit
  --force          download again even when a complete file exists
  --timeout S      connection timeout in seconds (default 10)
  -h, --help       this help

Environment:
  GPUEC_DERF_URL       base URL instead of https://media.xiph.org/video/derf/y4m
                       (a mirror, or file:///path for tests)
  GPUEC_DERF_MANIFEST  manifest instead of sequences/derf.tsv

Uses curl if present, else wget. Without network the script stops after one
short connection attempt (exit 2); then use the clips in the shared folder
(foreman_cif, foreman_qcif, suzie_cif: see gpuec-clip list) and the synthetic
clips (gpuec-clip get pan_1080p / pan_720p / noise_cif / checkerboard_cif).

Exit codes: 0 ok, 1 usage error, 2 download or verification failure.
EOF
}

die_usage() { echo "download.sh: $*" >&2; echo "(see download.sh --help)" >&2; exit 1; }
die() { echo "download.sh: error: $*" >&2; exit 2; }

# ------------------------------------------------------------------ arguments
dest=""; all=0; list=0; dry=0; force=0; timeout=10
sets=(); names=()
while [ $# -gt 0 ]; do
  case "$1" in
    -h|--help) usage; exit 0 ;;
    --all) all=1 ;;
    --set) [ $# -ge 2 ] || die_usage "--set needs a value"; sets+=("$2"); shift ;;
    --set=*) sets+=("${1#--set=}") ;;
    --dest) [ $# -ge 2 ] || die_usage "--dest needs a value"; dest=$2; shift ;;
    --dest=*) dest=${1#--dest=} ;;
    --list) list=1 ;;
    --dry-run) dry=1 ;;
    --force) force=1 ;;
    --timeout) [ $# -ge 2 ] || die_usage "--timeout needs a value"; timeout=$2; shift ;;
    --timeout=*) timeout=${1#--timeout=} ;;
    --) shift; names+=("$@"); break ;;
    -*) die_usage "unknown option '$1'" ;;
    *) names+=("$1") ;;
  esac
  shift
done
[[ "$timeout" =~ ^[1-9][0-9]*$ ]] || die_usage "--timeout needs a whole number of seconds"
for s in "${sets[@]+"${sets[@]}"}"; do
  case "$s" in small|qcif|cif|4cif|hd|720p|1080p|2160p|shared) ;; *) die_usage "unknown set '$s'" ;; esac
done
[ -r "$manifest" ] || die "cannot read the manifest $manifest"

if [ -z "$dest" ]; then
  if [ -n "${GPUEC_SEQUENCES:-}" ]; then dest=$GPUEC_SEQUENCES
  elif [ -n "${GPUEC_SHARED_DIR:-}" ]; then dest=$GPUEC_SHARED_DIR/sequences
  else dest=$(realpath -m "$here/../../shared/sequences")
  fi
fi

# ------------------------------------------------------------------ manifest
# Rows: name file width height fps frames shared notes
declare -A M_FILE M_W M_H M_FRAMES M_SHARED
order=()
while IFS=$'\t' read -r name file w h fps frames shared notes; do
  [ -z "$name" ] || [ "$name" = "name" ] || [ "${name:0:1}" = "#" ] && continue
  order+=("$name"); M_FILE[$name]=$file; M_W[$name]=$w; M_H[$name]=$h
  M_FRAMES[$name]=$frames; M_SHARED[$name]=$shared
done < "$manifest"

in_set() {  # in_set NAME SET
  local n=$1 w=${M_W[$1]} h=${M_H[$1]}
  case "$2" in
    small) [ "$w" -le 352 ] ;;
    qcif) [ "$w" -eq 176 ] && [ "$h" -eq 144 ] ;;
    cif) [ "$w" -eq 352 ] && [ "$h" -eq 288 ] ;;
    4cif) [ "$w" -eq 704 ] && [ "$h" -eq 576 ] ;;
    720p) [ "$h" -eq 720 ] ;;
    1080p) [ "$h" -eq 1080 ] ;;
    2160p) [ "$h" -eq 2160 ] ;;
    hd) [ "$h" -eq 720 ] || [ "$h" -eq 1080 ] ;;
    shared) [ "${M_SHARED[$n]}" != "-" ] ;;
  esac
}

selected=()
declare -A picked
pick() { [ -n "${picked[$1]:-}" ] || { picked[$1]=1; selected+=("$1"); }; }
for n in "${names[@]+"${names[@]}"}"; do
  [ -n "${M_FILE[$n]+x}" ] || die_usage "unknown clip '$n' (not in $manifest; see --list)"
  pick "$n"
done
for n in "${order[@]}"; do
  [ $all -eq 1 ] && pick "$n"
  for s in "${sets[@]+"${sets[@]}"}"; do in_set "$n" "$s" && pick "$n"; done
done

frame_bytes() { echo $(( $1 * $2 + 2 * (($1 + 1) / 2) * (($2 + 1) / 2) )); }

# verify FILE NAME: 0 if FILE is a complete y4m of the manifest's size; prints why not.
verify() {
  local f=$1 n=$2 header tok w="" h="" c="" size fb hl payload frames
  header=$(head -c 1024 "$f" 2>/dev/null | head -n 1 | tr -d '\0')
  if [ "${header:0:10}" != "YUV4MPEG2 " ]; then echo "not a y4m file"; return 1; fi
  for tok in $header; do
    case "$tok" in W*) w=${tok#W} ;; H*) h=${tok#H} ;; C*) c=${tok#C} ;; esac
  done
  if [ "$w" != "${M_W[$n]}" ] || [ "$h" != "${M_H[$n]}" ]; then
    echo "header says ${w}x${h}, manifest says ${M_W[$n]}x${M_H[$n]}"; return 1
  fi
  case "$c" in ""|420|420jpeg|420paldv|420mpeg2) ;; *) echo "colour space C$c is not 8-bit 4:2:0"; return 1 ;; esac
  size=$(stat -c %s "$f"); fb=$(frame_bytes "$w" "$h"); hl=$(( ${#header} + 1 ))
  payload=$(( size - hl )); frames=$(( payload / (fb + 6) ))
  if [ $(( payload % (fb + 6) )) -ne 0 ]; then
    echo "size $size is not the header plus whole frames (truncated?)"; return 1
  fi
  if [ "$frames" != "${M_FRAMES[$n]}" ]; then
    echo "warning: $frames frames, manifest says ${M_FRAMES[$n]} (manifest frame counts are best knowledge)" >&2
  fi
  return 0
}

local_file() {  # the complete local file of clip NAME, if any
  local n=$1 f
  for f in "$dest/${M_FILE[$n]}" "$dest/$n.y4m"; do [ -f "$f" ] && { echo "$f"; return 0; }; done
  return 1
}

if [ $list -eq 1 ]; then
  printf '%-28s %-10s %7s  %s\n' NAME SIZE FRAMES "LOCAL (in $dest)"
  for n in "${order[@]}"; do
    state="-"
    if f=$(local_file "$n"); then state=$(basename "$f"); elif [ -f "$dest/${M_FILE[$n]}.xz" ]; then state="${M_FILE[$n]}.xz"; fi
    [ -f "$dest/${M_FILE[$n]}.part" ] && state="partial ${M_FILE[$n]}.part"
    printf '%-28s %-10s %7s  %s\n' "$n" "${M_W[$n]}x${M_H[$n]}" "${M_FRAMES[$n]}" "$state"
  done
  exit 0
fi

[ ${#selected[@]} -gt 0 ] || die_usage "no clips selected (give names, --all or --set)"

# ------------------------------------------------------------------ what to fetch
todo=(); total=0
for n in "${selected[@]}"; do
  if [ $force -eq 0 ] && f=$(local_file "$n") && why=$(verify "$f" "$n" 2>/dev/null); then
    echo "download.sh: $n: already complete ($f)"
    continue
  fi
  todo+=("$n")
  total=$(( total + ${M_FRAMES[$n]} * ($(frame_bytes "${M_W[$n]}" "${M_H[$n]}") + 6) ))
done
[ ${#todo[@]} -gt 0 ] || { echo "download.sh: nothing to do"; exit 0; }
echo "download.sh: ${#todo[@]} clip(s), about $(( total / 1000000 )) MB, into $dest"
if [ $dry -eq 1 ]; then
  for n in "${todo[@]}"; do echo "  $n  $base_url/${M_FILE[$n]}"; done
  exit 0
fi

mkdir -p "$dest" 2>/dev/null || die "cannot create $dest (use --dest DIR or GPUEC_SEQUENCES)"
[ -w "$dest" ] || die "$dest is not writable (the shared folder is read-only: use --dest DIR or GPUEC_SEQUENCES)"

if command -v curl >/dev/null 2>&1; then tool=curl
elif command -v wget >/dev/null 2>&1; then tool=wget
else die "neither curl nor wget is installed"
fi

offline_help="Use the clips in the shared folder (gpuec-clip list: foreman_cif, foreman_qcif, suzie_cif)
and the synthetic clips (gpuec-clip get pan_1080p|pan_720p|noise_cif|checkerboard_cif -o OUT.y4m) instead."

# One short reachability check, so that an offline machine fails in seconds.
case "$base_url" in
  file://*) ;;
  *)
    if [ $tool = curl ]; then
      curl -sS -o /dev/null -I -L --connect-timeout "$timeout" --max-time $(( timeout * 3 )) "$base_url/" 2>/dev/null; rc=$?
    else
      wget -q --spider --tries=1 --timeout="$timeout" "$base_url/" 2>/dev/null; rc=$?
      [ $rc -eq 8 ] && rc=0  # server answered (an error page is still an answer)
    fi
    if [ $rc -ne 0 ]; then
      echo "download.sh: error: cannot reach $base_url (no network?)." >&2
      echo "$offline_help" >&2
      exit 2
    fi
    ;;
esac

fetch() {  # fetch URL PART: resumes PART
  if [ $tool = curl ]; then
    local progress=-sS; [ -t 2 ] && progress=--progress-bar
    curl -fL $progress --connect-timeout "$timeout" --retry 3 --retry-delay 2 -C - -o "$2" "$1"
  else
    local progress=-nv; [ -t 2 ] && progress="-q --show-progress"
    wget $progress -c --tries=3 --timeout="$timeout" -O "$2" "$1"
  fi
}

failed=()
for n in "${todo[@]}"; do
  url="$base_url/${M_FILE[$n]}"; out="$dest/${M_FILE[$n]}"; part="$out.part"
  [ $force -eq 1 ] && rm -f "$part"
  echo "download.sh: $n: $url"
  if ! fetch "$url" "$part"; then
    if [ -s "$part" ]; then
      echo "download.sh: $n: download failed (partial data kept in $part: run again to resume)" >&2
    else
      rm -f "$part"; echo "download.sh: $n: download failed" >&2
    fi
    failed+=("$n"); continue
  fi
  if ! why=$(verify "$part" "$n"); then
    echo "download.sh: $n: verification failed: $why (removing $part)" >&2
    rm -f "$part"; failed+=("$n"); continue
  fi
  mv -f "$part" "$out" || { failed+=("$n"); continue; }
  echo "download.sh: $n: ok ($out)"
done

if [ ${#failed[@]} -gt 0 ]; then
  echo "download.sh: error: failed: ${failed[*]}" >&2
  exit 2
fi
exit 0
