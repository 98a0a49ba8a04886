#!/usr/bin/env bash
# Tests of sequences/download.sh without network: argument errors, the offline message, and a
# resumed download with header verification from a file:// mirror.
set -u
script=${1:?usage: test_download.sh path/to/download.sh}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fails=0
check() {  # check DESCRIPTION EXPECTED_RC ACTUAL_RC
  if [ "$2" -eq "$3" ]; then echo "ok: $1"; else echo "FAIL: $1 (exit $3, expected $2)"; fails=$((fails + 1)); fi
}

"$script" --help >/dev/null; check "--help" 0 $?
"$script" >/dev/null 2>&1; check "no selection" 1 $?
"$script" --bogus >/dev/null 2>&1; check "unknown option" 1 $?
"$script" no_such_clip >/dev/null 2>&1; check "unknown clip" 1 $?
"$script" --set nonsense >/dev/null 2>&1; check "unknown set" 1 $?
"$script" --list --dest "$tmp/dl" | grep -q '^foreman_cif '; check "--list" 0 $?
"$script" --set small --dry-run --dest "$tmp/dl" | grep -q 'akiyo_qcif'; check "--set small --dry-run" 0 $?

# Offline: a closed local port stands for "no network"; must fail fast with the fallback advice.
start=$(date +%s)
msg=$(GPUEC_DERF_URL=http://127.0.0.1:9 "$script" --timeout 3 --dest "$tmp/dl" mobile_cif 2>&1); rc=$?
check "offline exit code" 2 $rc
echo "$msg" | grep -q 'synthetic clips'; check "offline message names the fallbacks" 0 $?
[ $(( $(date +%s) - start )) -le 10 ]; check "offline fails fast" 0 $?

# A file:// mirror: foreman_qcif (21 frames, real) and akiyo_cif (wrong size for its name).
mkdir -p "$tmp/mirror" "$tmp/dl"
y4m="$tmp/mirror/foreman_qcif.y4m"
printf 'YUV4MPEG2 W176 H144 F30000:1001 Ip A1:1 C420jpeg\n' > "$y4m"
for i in 1 2 3; do printf 'FRAME\n' >> "$y4m"; head -c 38016 /dev/urandom >> "$y4m"; done
cp "$y4m" "$tmp/mirror/akiyo_cif.y4m"
head -c 50000 "$y4m" > "$tmp/dl/foreman_qcif.y4m.part"   # an interrupted download
GPUEC_DERF_URL=file://$tmp/mirror "$script" --dest "$tmp/dl" foreman_qcif >/dev/null 2>&1
check "resumed download" 0 $?
cmp -s "$y4m" "$tmp/dl/foreman_qcif.y4m"; check "resumed file is complete" 0 $?
[ ! -e "$tmp/dl/foreman_qcif.y4m.part" ]; check "no .part left" 0 $?
GPUEC_DERF_URL=http://127.0.0.1:9 "$script" --dest "$tmp/dl" foreman_qcif >/dev/null 2>&1
check "complete clip is skipped without network" 0 $?
GPUEC_DERF_URL=file://$tmp/mirror "$script" --dest "$tmp/dl" akiyo_cif >/dev/null 2>&1
check "header size mismatch" 2 $?
[ ! -e "$tmp/dl/akiyo_cif.y4m" ] && [ ! -e "$tmp/dl/akiyo_cif.y4m.part" ]; check "mismatching file removed" 0 $?
GPUEC_DERF_URL=file://$tmp/mirror "$script" --dest "$tmp/dl" mobile_cif >/dev/null 2>&1
check "missing file on the server" 2 $?

[ $fails -eq 0 ] && echo "all download.sh tests passed"
exit $(( fails > 0 ))
