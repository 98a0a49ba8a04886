#!/usr/bin/env bash
# The GPU entropy stage on real frames against the CPU stage and x264's own residual writer, per frame
# (the issue's protocol; the paper's figures 15-17). For every clip (QCIF, CIF, 720p, 1080p, 2160p) and QP:
#   1. the patched x264 encodes with --gpu-entropy cpu --threads 1 and GPUEC_CAPTURE: the capture holds
#      every slice's records, skeleton and output (cavlc/capture.h);
#   2. the timed x264 (stock + plugin/x264/bench/*.patch), when present, encodes the same frames with the
#      same options N times; its stream must be byte-identical to the patched one; X264_RESIDUAL_TIMES gives
#      its residual writer's time per frame on one core (median over the N encodes);
#   3. cavlcu-bench-frames runs on all captures, alone on the machine: the GPU kernels with the data
#      resident, the stage's C API with its transfers, the CPU stage and the CPU twin on one core; it
#      checks every output against the capture and the CPU twin (tools/bench/bench_cavlcu_frames.cu).
# The encodes of step 1 and 2 run --jobs at a time (each on one core; the timed ones share the machine
# with other encodes, --jobs 1 for a quiet machine).
#
# Made for the GPU machine: from a bundle (tools/scripts/gpu-bundle.sh --tools-build BUILD ...; the script sits in
# the bundle and finds bin/, host/ and data/ there), or from a checkout with --build-dir (a CUDA build)
# and --tools-build (a build with x264; -DGPUEC_BUILD_BENCH=ON for the timed x264).
#
# OUT gets: frames.csv (one row per frame, cavlcu-bench-frames), x264_writer.csv (capture, frame,
# x264_writer_us), summary.txt (the benchmark's table per capture), table.md (per clip and QP, with
# x264's writer; needs python3), cavlcu.png (needs matplotlib; else run tools/bench/plot-cavlcu.py elsewhere),
# machine.txt, clips.txt and logs/. Captures, clips and streams go to a scratch folder (--work; removed at
# the end unless --keep): 2160p captures hold ~27 MB per frame.
set -euo pipefail

prog=bench-cavlcu
build="" tools_build="" work="" keep=0 cpu_only=""
clips="foreman_qcif|noise_qcif:10 foreman_cif|noise_cif:10 pan_720p:10 pan_1080p:10 noise_2160p:3"
qps="10 26 40" preset=medium encodes=3 repeats=30 warmup=5 cpu_repeats=10
jobs=$(( $(nproc) / 2 )); [ "$jobs" -ge 1 ] || jobs=1

usage() {
  cat <<USAGE
usage: bench-cavlcu.sh [options] OUT
  --build-dir BUILD    CUDA build: BUILD/tools/cavlcu-bench-frames (default: the bundle this script is in)
  --tools-build DIR    build with x264 and gpuec-clip: DIR/plugin/x264/{patched,timed}/x264,
                       DIR/sequences/gpuec-clip (default: BUILD; in a bundle: its host/ folder)
  --clips "SPEC ..."   NAME[|FALLBACK...]:FRAMES, gpuec-clip names; the first NAME that gpuec-clip can write
                       is used (default "$clips")
  --qps "Q ..."        (default "$qps")
  --preset P           x264 preset (default $preset); always --profile baseline --threads 1
  --encodes N          timed x264 encodes per clip and QP, 0: none (default $encodes)
  --repeats R          cavlcu-bench-frames timed runs per frame (default $repeats) after --warmup W ($warmup)
  --cpu-repeats C      its CPU runs per frame (default $cpu_repeats)
  --jobs J             encodes at once (default $jobs: half the cores)
  --work DIR           scratch folder (default: a new folder in \${TMPDIR:-/tmp})
  --keep               keep the scratch folder
  --cpu-only           no GPU here: cavlcu-bench-frames --cpu-only (GPU columns nan), to try the script
Exit: 0 done, 1 usage, 2 a program missing or failing, 3 a stream or output that differs.
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../scripts/lib.sh; [ -f "$lib" ] || lib=$here/lib.sh  # in a GPU bundle: beside this script
# shellcheck source=../scripts/lib.sh
. "$lib"
parse_options "--build-dir=build --tools-build=tools_build --clips=clips --qps=qps --preset=preset --encodes=encodes
               --repeats=repeats --warmup=warmup --cpu-repeats=cpu_repeats --jobs=jobs --work=work --keep=keep:1
               --cpu-only=cpu_only:--cpu-only ARGS" "$@"
[ ${#ARGS[@]} -le 1 ] || { echo "bench-cavlcu: more than one OUT" >&2; exit 1; }
[ ${#ARGS[@]} -eq 1 ] || { usage >&2; exit 1; }
out=${ARGS[0]}
log() { echo "bench-cavlcu: [$(date +%T)] $*" >&2; }

clip_env=()
if [ -n "$build" ]; then
  bench="$build/tools/cavlcu-bench-frames"
  tb=${tools_build:-$build}
  patched="$tb/plugin/x264/patched/x264" timed="$tb/plugin/x264/timed/x264" clip_tool="$tb/sequences/gpuec-clip"
elif [ -x "$here/bin/cavlcu-bench-frames" ]; then  # a bundle (tools/scripts/gpu-bundle.sh)
  bench="$here/bin/cavlcu-bench-frames"
  if [ -n "$tools_build" ]; then
    patched="$tools_build/plugin/x264/patched/x264" timed="$tools_build/plugin/x264/timed/x264"
    clip_tool="$tools_build/sequences/gpuec-clip"
  else
    patched="$here/host/x264-patched" timed="$here/host/x264-timed" clip_tool="$here/host/gpuec-clip"
    clip_env=(env "LD_LIBRARY_PATH=$here/host/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
  fi
  # The bundle's --data (gpuec-clip's clips folder data/sequences, photos in data/images/photos, data/photos or data/) unless
  # the environment names other folders.
  if [ -d "$here/data/sequences" ]; then export GPUEC_SEQUENCES=${GPUEC_SEQUENCES:-$here/data/sequences}; fi
  if [ -d "$here/data/images/photos" ]; then export GPUEC_IMAGES=${GPUEC_IMAGES:-$here/data/images}
  elif [ -d "$here/data" ]; then export GPUEC_IMAGES=${GPUEC_IMAGES:-$here/data}; fi
else
  die "no --build-dir, and $here is not a GPU bundle with bin/cavlcu-bench-frames" 1
fi
for f in "$bench" "$patched" "$clip_tool"; do [ -x "$f" ] || die "$f missing"; done
if [ "$encodes" -gt 0 ] && [ ! -x "$timed" ]; then
  log "warning: no timed x264 ($timed): x264's writer times are not measured"
  encodes=0
fi

mkdir -p "$out/logs"
out=$(cd "$out" && pwd)
logs="$out/logs"
scratch_dir "$keep"

{
  echo "date: $(date -u +%FT%TZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
  nvidia-smi -L 2>/dev/null || echo "gpu: nvidia-smi failed"
  echo "x264: $preset, --profile baseline --threads 1, QPs $qps; timed encodes $encodes, $jobs at once"
  echo "cavlcu-bench-frames: --repeats $repeats --warmup $warmup --cpu-repeats $cpu_repeats"
} >"$out/machine.txt"
cat "$out/machine.txt" >&2

# ---- clips ----
: >"$out/clips.txt"
cfgs=() job_list=""
for spec in $clips; do
  names=${spec%%:*} frames=${spec##*:}
  [[ "$frames" =~ ^[0-9]+$ ]] || die "bad clip spec '$spec' (NAME[|FALLBACK]:FRAMES)" 1
  clip=""
  for name in ${names//|/ }; do
    y4m="$work/$name.f$frames.y4m"
    if [ -s "$y4m" ] || "${clip_env[@]}" "$clip_tool" get "$name" -o "$y4m" --frames "$frames" \
         >>"$logs/clips.log" 2>&1; then
      clip=$name
      break
    fi
    log "gpuec-clip cannot write $name (see logs/clips.log); trying the next name"
  done
  [ -n "$clip" ] || die "no clip of '$names' could be made (logs/clips.log)"
  size=$(head -c 200 "$y4m" | head -1 | tr ' ' '\n' | sed -n 's/^W//p;s/^H//p' | paste -sd x)
  echo "$clip $size $frames frames (asked: $names)" | tee -a "$out/clips.txt" >&2
  pixels=$(( ${size%x*} * ${size#*x} ))
  for qp in $qps; do
    cfg="$clip-qp$qp"
    cfgs+=("$cfg")
    weight=$(( pixels * frames * (60 - qp) / 256 ))  # the longest encodes first
    job_list+="$weight patched $cfg 0 $qp $y4m"$'\n'
    for k in $(seq 1 "$encodes"); do job_list+="$weight timed $cfg $k $qp $y4m"$'\n'; done
  done
done

# ---- encodes ----
encode() {  # KIND CFG ROUND QP Y4M
  local kind=$1 cfg=$2 k=$3 qp=$4 y4m=$5
  local opts=(--profile baseline --preset "$preset" --threads 1 --qp "$qp" --no-progress)
  if [ "$kind" = patched ]; then
    rm -f "$work/$cfg.cap"
    GPUEC_CAPTURE="$work/$cfg.cap" "$patched" "${opts[@]}" --gpu-entropy cpu -o "$work/$cfg.patched.264" "$y4m" \
      >"$logs/$cfg.patched.log" 2>&1 || { echo "$cfg: patched x264 failed (logs/$cfg.patched.log)"; return 1; }
    grep -q "gpu-entropy: cpu stage on" "$logs/$cfg.patched.log" ||
      { echo "$cfg: the stage did not run (logs/$cfg.patched.log)"; return 1; }
  else
    X264_RESIDUAL_TIMES="$work/$cfg.times.$k" "$timed" "${opts[@]}" -o "$work/$cfg.timed.$k.264" "$y4m" \
      >"$logs/$cfg.timed.$k.log" 2>&1 || { echo "$cfg: timed x264 failed (logs/$cfg.timed.$k.log)"; return 1; }
  fi
}
n_jobs=$(grep -c . <<<"$job_list")
log "$n_jobs encodes, $jobs at once"
failed=0 running=0
while read -r _ kind cfg k qp y4m; do
  if [ "$running" -ge "$jobs" ]; then
    wait -n || failed=1
    running=$((running - 1))
  fi
  encode "$kind" "$cfg" "$k" "$qp" "$y4m" </dev/null >>"$logs/encode-errors.txt" 2>&1 &
  running=$((running + 1))
done < <(grep . <<<"$job_list" | sort -k1,1nr)
while [ "$running" -gt 0 ]; do
  wait -n || failed=1
  running=$((running - 1))
done
[ "$failed" = 0 ] || { cat "$logs/encode-errors.txt" >&2; die "an encode failed"; }
log "encodes done"
for cfg in "${cfgs[@]}"; do
  for k in $(seq 1 "$encodes"); do
    cmp -s "$work/$cfg.patched.264" "$work/$cfg.timed.$k.264" ||
      die "$cfg: the timed x264's stream $k differs from the patched x264's (not the same frames)" 3
    rm -f "$work/$cfg.timed.$k.264"
  done
done

# ---- x264's writer: per frame, the median over the timed encodes (ticks at each encode's TSC rate) ----
echo "capture,frame,type,x264_writer_us,timed_mbs,encodes" >"$out/x264_writer.csv"
if [ "$encodes" -gt 0 ]; then
  for cfg in "${cfgs[@]}"; do
    files=()
    for k in $(seq 1 "$encodes"); do files+=("$work/$cfg.times.$k"); cp "$work/$cfg.times.$k" "$logs/"; done
    awk -v cfg="$cfg" '
      FNR == 1 { file++ }
      $1 == "tsc_hz" { hz[file] = $2 }
      $1 == "frame" { ticks[file, $2] = $4; type[$2] = $3; mbs[$2] = $5; if ($2 + 1 > n) n = $2 + 1 }
      END {
        for (f = 0; f < n; f++) {
          m = 0
          for (i = 1; i <= file; i++) if (((i, f) in ticks) && hz[i] > 0) v[++m] = ticks[i, f] / hz[i] * 1e6
          for (i = 2; i <= m; i++) { x = v[i]; for (j = i - 1; j >= 1 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
          med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
          printf "%s,%d,%s,%.2f,%d,%d\n", cfg, f, type[f], med, mbs[f], m
        }
      }' "${files[@]}" >>"$out/x264_writer.csv"
  done
fi

# ---- the GPU benchmark, alone ----
caps=()
for cfg in "${cfgs[@]}"; do caps+=("$work/$cfg.cap"); done
log "cavlcu-bench-frames on ${#caps[@]} captures"
set +e
"$bench" ${cpu_only:+"$cpu_only"} --repeats "$repeats" --warmup "$warmup" --cpu-repeats "$cpu_repeats" \
  --csv "$out/frames.csv" "${caps[@]}" \
  >"$out/summary.txt" 2>"$logs/cavlcu-bench-frames.log"
rc=$?
set -e
cat "$out/summary.txt"
if [ "$rc" -ne 0 ]; then
  tail -5 "$logs/cavlcu-bench-frames.log" >&2
  die "cavlcu-bench-frames failed (exit $rc; logs/cavlcu-bench-frames.log)" "$([ "$rc" = 1 ] && echo 3 || echo 2)"
fi

# The same frames: x264 timed as many frames as the capture holds.
if [ "$encodes" -gt 0 ]; then
  for cfg in "${cfgs[@]}"; do
    a=$(grep -c "^$cfg," "$out/frames.csv") b=$(grep -c "^$cfg," "$out/x264_writer.csv")
    [ "$a" = "$b" ] || log "warning: $cfg: $a frames in the capture, $b timed by x264"
  done
fi

# ---- table and plot ----
if command -v python3 >/dev/null; then
  python3 "$here/plot-cavlcu.py" "$out/frames.csv" "$out/x264_writer.csv" --table >"$out/table.md" &&
    cat "$out/table.md"
  if python3 -c 'import matplotlib' 2>/dev/null; then
    python3 "$here/plot-cavlcu.py" "$out/frames.csv" "$out/x264_writer.csv" -o "$out/cavlcu.png" ||
      log "warning: the plot failed"
  else
    log "no matplotlib here: plot later with" \
        "tools/bench/plot-cavlcu.py $out/frames.csv $out/x264_writer.csv -o cavlcu.png"
  fi
fi
log "done: $out$([ "$keep" = 1 ] && echo "; captures and clips in $work")"
