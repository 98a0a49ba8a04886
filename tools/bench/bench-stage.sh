#!/usr/bin/env bash
# Benchmark of issue 2: the CPU entropy stage against x264's own CAVLC residual writer, per frame, on the
# same frames. For every clip, QP and preset:
#   1. the patched x264 encodes with --gpu-entropy cpu and GPUEC_CAPTURE (the stage's inputs per slice);
#   2. N rounds of: the timed x264 (stock + plugin/x264/bench/*.patch) encodes the same way, its stream
#      must be byte-identical to the patched one, and it reports its residual writer's time per frame;
#      then gpuec-bench-stage replays the capture through the stage's C interface, call for call as the
#      patched x264 makes them (checking every slice's output against the capture), and reports the
#      stage's time per frame (median of R repeats after warm-up): every stage call of the frame, the
#      commits included; the commit column is the part of it spent in the macroblock loop.
# Per frame, each side's value is the median over the N rounds; the table gives the median and the mean
# of those over the frames, and their ratio. See docs/benchmarks.md.
set -euo pipefail

prog=bench-stage
build="" work="" keep=0 encodes=5 repeats=20
clips="foreman_cif:21 pan_720p:20"
qps="10 26 40"
presets="medium ultrafast"

usage() {
  cat <<USAGE
usage: bench-stage.sh --build-dir BUILD [--work DIR] [--keep] [--encodes N] [--repeats R]
                      [--clips "NAME:FRAMES ..."] [--qps "Q ..."] [--presets "P ..."]
  --build-dir BUILD  CMake build folder configured with -DGPUEC_BUILD_BENCH=ON and built
                     (targets x264_builds, gpuec-clip, gpuec-bench-stage)
  --work DIR         scratch folder for clips, captures, streams and logs (default: a new temp folder,
                     removed at the end unless --keep)
  --encodes N        rounds per configuration: timed x264 encodes, and gpuec-bench-stage runs
                     (default $encodes)
  --repeats R        gpuec-bench-stage repeats per frame and round (default $repeats)
  --clips, --qps, --presets   the matrix (default "$clips", "$qps", "$presets")
Prints a Markdown table on stdout; progress on stderr.
USAGE
}

here=$(cd "$(dirname "$0")" && pwd)
lib=$here/../scripts/lib.sh; [ -f "$lib" ] || lib=$here/lib.sh  # in a GPU bundle: beside this script
# shellcheck source=../scripts/lib.sh
. "$lib"
parse_options "--build-dir=build --work=work --keep=keep:1 --encodes=encodes --repeats=repeats --clips=clips
               --qps=qps --presets=presets" "$@"
[ -n "$build" ] || { usage >&2; exit 1; }
log() { echo "bench-stage: $*" >&2; }

patched="$build/plugin/x264/patched/x264"
timed="$build/plugin/x264/timed/x264"
clip_tool="$build/sequences/gpuec-clip"
bench="$build/tools/gpuec-bench-stage"
for f in "$patched" "$clip_tool" "$bench"; do [ -x "$f" ] || die "$f missing: build the project first"; done
[ -x "$timed" ] || die "$timed missing: configure with -DGPUEC_BUILD_BENCH=ON and build x264_builds"

scratch_dir "$keep"

# Median and mean of the numbers on stdin, one per line: prints "MEDIAN MEAN".
stats() {
  sort -g | awk '{ v[NR] = $1; s += $1 }
    END { if (NR == 0) { print "nan nan"; exit }
          m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.2f %.2f\n", m, s / NR }'
}
# Column COL of $rows reduced to one value per frame: the median over the rounds, in frame order.
per_frame_median() {
  awk -v c="$1" '{ print $1, $c }' <<<"$rows" | sort -k1,1n -k2,2g | awk '
    function out() { print (n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2); n = 0 }
    NR > 1 && $1 != f { out() }
    { f = $1; v[++n] = $2 }
    END { if (n) out() }'
}
# Value of key=... in a "summary" or "memcpy" line.
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

log "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cores"
memcpy_line=$("$bench" --memcpy --size 64 --repeats 30)
mem_gbs=$(field gb_per_s_median "$memcpy_line")
log "$memcpy_line"

echo "memcpy (64 MiB, median of 30): $mem_gbs GB/s copied."
echo
echo "| clip | QP | preset | frames | MB/frame with residual | x264 writer µs/frame median | mean | stage µs/frame median | mean | stage/x264 median | mean | of which commit µs/frame mean | stage input KiB/frame | memcpy µs/frame | timer overhead µs/frame |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"

for spec in $clips; do
  name=${spec%%:*} frames=${spec##*:}
  y4m="$work/$name.y4m"
  [ -s "$y4m" ] || "$clip_tool" get "$name" -o "$y4m" --frames "$frames" >&2 ||
    die "gpuec-clip get $name failed"
  for preset in $presets; do
    for qp in $qps; do
      cfg="$name-$preset-qp$qp"
      opts=(--profile baseline --preset "$preset" --threads 1 --qp "$qp")
      log "$cfg: patched x264 with capture"
      rm -f "$work/$cfg.cap"
      GPUEC_CAPTURE="$work/$cfg.cap" "$patched" "${opts[@]}" --gpu-entropy cpu -o "$work/$cfg.patched.264" \
        "$y4m" >"$work/$cfg.patched.log" 2>&1 ||
        { cat "$work/$cfg.patched.log" >&2; die "$cfg: patched x264 failed"; }
      grep -q "gpu-entropy: cpu stage on" "$work/$cfg.patched.log" ||
        die "$cfg: the stage did not run (see $work/$cfg.patched.log)"
      for k in $(seq 1 "$encodes"); do
        # Rounds alternate the two sides, so that both sample the same spells of machine noise.
        log "$cfg: round $k of $encodes: timed x264, then gpuec-bench-stage"
        X264_RESIDUAL_TIMES="$work/$cfg.times.$k" "$timed" "${opts[@]}" -o "$work/$cfg.timed.264" "$y4m" \
          >"$work/$cfg.timed.log" 2>&1 || { cat "$work/$cfg.timed.log" >&2; die "$cfg: timed x264 failed"; }
        cmp -s "$work/$cfg.patched.264" "$work/$cfg.timed.264" ||
          die "$cfg: the timed x264's stream differs from the patched x264's (not the same frames)"
        "$bench" "$work/$cfg.cap" --repeats "$repeats" >"$work/$cfg.bench.$k" ||
          die "$cfg: gpuec-bench-stage failed"
        n_x264=$(grep -c '^frame' "$work/$cfg.times.$k") n_stage=$(grep -c '^frame' "$work/$cfg.bench.$k")
        [ "$n_x264" = "$n_stage" ] || die "$cfg: $n_x264 frames timed in x264, $n_stage in the capture"
      done
      [ "$keep" = 1 ] || rm -f "$work/$cfg.cap"  # 720p: ~3 MB per frame

      # One row per frame and round:
      #   frame round x264_us x264_timed_mbs timer_overhead_us stage_us commit_us residual_mbs input_bytes
      # (x264's ticks converted with the TSC rate measured in the same encode).
      rows=$(for k in $(seq 1 "$encodes"); do
        awk -v k="$k" 'FNR == 1 { file++ }
          file == 1 && $1 == "tsc_hz" { hz = $2 }
          file == 1 && $1 == "timer_overhead_ticks" { ovh = $2 }
          file == 1 && $1 == "frame" { t[$2] = $4; m[$2] = $5 }
          file == 2 && $1 == "frame" { printf "%d %d %.4f %d %.4f %s %s %s %s\n", $2, k, t[$2] / hz * 1e6,
                                         m[$2], m[$2] * ovh / hz * 1e6, $8, $9, $6, $7 }' \
          "$work/$cfg.times.$k" "$work/$cfg.bench.$k"
      done)
      nframes=$(grep -c '^frame' "$work/$cfg.bench.1")
      # The same frames: x264 timed exactly the macroblocks that have residual in the capture.
      mismatch=$(awk '$4 != $8 { print $1 "(" $4 "/" $8 ")" }' <<<"$rows" | sort -u | tr '\n' ' ')
      [ -z "$mismatch" ] ||
        log "$cfg: warning: macroblocks with residual, x264/capture, differ in frames: $mismatch" \
            "(a level-overflow re-encode is timed twice by x264)"
      read -r x_median x_mean <<<"$(per_frame_median 3 | stats)"
      read -r s_median s_mean <<<"$(per_frame_median 6 | stats)"
      read -r _ c_mean <<<"$(per_frame_median 7 | stats)"
      read -r _ ovh_mean <<<"$(per_frame_median 5 | stats)"
      read -r _ coded_mean <<<"$(per_frame_median 8 | stats)"
      read -r _ input <<<"$(per_frame_median 9 | stats)"
      awk -v name="$name" -v qp="$qp" -v preset="$preset" -v nf="$nframes" -v coded="$coded_mean" \
          -v xm="$x_median" -v xa="$x_mean" -v sm="$s_median" -v sa="$s_mean" -v ca="$c_mean" \
          -v in_b="$input" -v gbs="$mem_gbs" -v ovh="$ovh_mean" 'BEGIN {
        printf "| %s | %s | %s | %d | %.0f | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %.1f | %.0f | %.1f | %.2f |\n",
          name, qp, preset, nf, coded, xm, xa, sm, sa, sm / xm, sa / xa, ca, in_b / 1024, in_b / (gbs * 1e3),
          ovh }'
    done
  done
done
log "done; logs, captures and per-frame numbers in $work$([ "$keep" = 1 ] || echo ' (removed: use --keep)')"
