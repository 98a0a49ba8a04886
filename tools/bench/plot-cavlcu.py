#!/usr/bin/env python3
"""Entropy stage time per frame against QP, per clip: GPU stage, GPU stage with transfers, CPU stage and
x264's own residual writer (the paper's figures 15-17), from tools/bench/bench-cavlcu.sh's output.

usage: tools/bench/plot-cavlcu.py FRAMES.csv [X264.csv] -o OUT.png
       tools/bench/plot-cavlcu.py FRAMES.csv [X264.csv] --table
  FRAMES.csv  cavlcu-bench-frames --csv (one row per frame; capture names CLIP-qpQP)
  X264.csv    bench-cavlcu.sh's x264_writer.csv (capture, frame, x264_writer_us); may be left out
  -o OUT.png  the figure: one panel per clip, median over the frames of each per-frame median, log y
  --table     a Markdown table per clip and QP on stdout instead (needs no matplotlib)
Plotting needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import re
import statistics
import sys

STAGE = "gpu_encode_hosttc_us"  # what the stage runs (encode_frame_cuda kTwoPass, host TotalCoeff records)

SERIES = [  # column, label, style
    (STAGE, "GPU stage, data on the GPU (code + scan + pack)", dict(color="tab:green", marker="o")),
    ("stage_xfer_us", "GPU stage with transfers (stage C API)", dict(color="tab:blue", marker="s")),
    ("cpu_stage_us", "CPU stage, one core", dict(color="tab:red", marker="^")),
    ("x264_writer_us", "x264's residual writer, one core", dict(color="black", marker="x", linestyle="--")),
]


def median(v):
    v = [x for x in v if x == x]  # drop nan (--cpu-only runs)
    return statistics.median(v) if v else float("nan")


def load(frames_csv, x264_csv):
    """{(clip, qp): {column: median over frames}} plus the clips in first-seen order."""
    rows = {}
    with open(frames_csv) as f:
        for r in csv.DictReader(f):
            rows.setdefault(r["capture"], []).append(r)
    writer = {}
    if x264_csv:
        with open(x264_csv) as f:
            for r in csv.DictReader(f):
                writer.setdefault(r["capture"], []).append(float(r["x264_writer_us"]))
    table, clips = {}, []
    for cap, rs in rows.items():
        m = re.match(r"^(.*)-qp(\d+)$", cap)
        clip, qp = (m.group(1), int(m.group(2))) if m else (cap, 0)
        if clip not in clips:
            clips.append(clip)
        cols = {k: median([float(r[k]) for r in rs]) for k in rs[0] if k.endswith("_us") or k.endswith("_bytes")
                or k in ("mbs", "coded_mbs", "mb_width", "mb_height", "slices")}
        cols["frames"] = len(rs)
        for k in ("gpu_encode_us", "gpu_encode_twopass_us", STAGE):  # CSVs of older versions
            if k not in cols:
                cols[k] = float("nan")
        if cols[STAGE] != cols[STAGE]:  # the stage's path of that version
            cols[STAGE] = cols["gpu_encode_twopass_us"] if cols["gpu_encode_twopass_us"] == cols["gpu_encode_twopass_us"] \
                else cols["gpu_stage_us"]
        cols["x264_writer_us"] = median(writer.get(cap, []))
        table[(clip, qp)] = cols
    return table, clips


def print_table(table, clips, link_gbs=55.0):
    print("| clip | QP | frames | MBs | coded MBs | GPU code µs | GPU stage µs | with GPU count µs "
          "| code + assemble µs | code + assemble, two-pass µs | encode fused µs | with transfers µs | CPU stage µs "
          "| CPU twin µs | x264 writer µs | CPU/GPU stage | x264/GPU stage | x264/with transfers | H2D KiB "
          "| D2H KiB | at %.0f GB/s µs |" % link_gbs)
    print("|---|" + "---:|" * 20)
    for clip in clips:
        for qp in sorted(q for c, q in table if c == clip):
            c = table[(clip, qp)]
            ratio = lambda a, b: c[a] / c[b] if c[b] > 0 else float("nan")
            print("| %s | %d | %d | %.0f | %.0f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f | %.1f "
                  "| %.1f | %.1f | %.1f | %.2f | %.0f | %.0f | %.1f |" % (
                      clip, qp, c["frames"], c["mbs"], c["coded_mbs"], c["gpu_code_twopass_us"], c[STAGE],
                      c["gpu_encode_twopass_us"], c["gpu_stage_us"], c["gpu_stage_twopass_us"], c["gpu_encode_us"], c["stage_xfer_us"],
                      c["cpu_stage_us"], c["cpu_twin_us"], c["x264_writer_us"], ratio("cpu_stage_us", STAGE),
                      ratio("x264_writer_us", STAGE), ratio("x264_writer_us", "stage_xfer_us"),
                      c["h2d_bytes"] / 1024, c["d2h_bytes"] / 1024,
                      (c["h2d_bytes"] + c["d2h_bytes"]) / (link_gbs * 1e3)))
    print()
    print("Medians over the frames of per-frame medians, CUDA events for the GPU columns (data on the GPU). GPU code: "
          "code_frame_cuda two-pass. GPU stage: encode_frame_cuda two-pass with the TotalCoeff records from the host "
          "(the stage's commit check has them): code, scan, emit chained by programmatic dependent launch, no memset; "
          "what the stage runs. With GPU count: the same with the count kernel first. code + assemble: code_frame_cuda fused + "
          "assemble_frame_cuda (memsets, separate launches); two-pass: the same with the two-pass coder. encode "
          "fused: encode_frame_cuda kFused (coding and scan in one kernel). With transfers: gpuec_frame_submit + "
          "gpuec_frame_complete (host clock). CPU stage: encode_slice_ref; x264 writer: the timed x264's residual "
          "writer (X264_RESIDUAL_TIMES).")


def plot(table, clips, out_png):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(clips), figsize=(3.6 * len(clips), 4.2), squeeze=False)
    for ax, clip in zip(axes[0], clips):
        qps = sorted(q for c, q in table if c == clip)
        first = table[(clip, qps[0])]
        for col, label, style in SERIES:
            y = [table[(clip, q)][col] for q in qps]
            if all(v != v for v in y):  # not measured (no timed x264, --cpu-only)
                continue
            ax.plot(qps, y, label=label, **style)
        ax.set_yscale("log")
        ax.set_xticks(qps)
        ax.set_xlabel("QP")
        ax.set_title("%s (%dx%d MBs, %d frames)" % (clip, first["mb_width"], first["mb_height"], first["frames"]),
                     fontsize=9)
        ax.grid(True, which="both", linewidth=0.3)
    axes[0][0].set_ylabel("µs per frame (log)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8)
    fig.suptitle("CAVLC entropy stage per frame, x264 --profile baseline --threads 1 (median over frames)",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0.07, 1, 0.95))
    fig.savefig(out_png, dpi=110)


def main(argv):
    args, out_png, table_mode = [], None, False
    i = 0
    while i < len(argv):
        if argv[i] == "-o" and i + 1 < len(argv):
            out_png = argv[i + 1]
            i += 2
            continue
        if argv[i] == "--table":
            table_mode = True
        elif argv[i] in ("-h", "--help"):
            print(__doc__)
            return 0
        elif argv[i].startswith("-"):
            print(__doc__, file=sys.stderr)
            return 1
        else:
            args.append(argv[i])
        i += 1
    if not 1 <= len(args) <= 2 or (out_png is None) == (not table_mode):
        print(__doc__, file=sys.stderr)
        return 1
    table, clips = load(args[0], args[1] if len(args) == 2 else None)
    if not clips:
        print("plot-cavlcu: no rows in %s" % args[0], file=sys.stderr)
        return 1
    if table_mode:
        print_table(table, clips)
    else:
        plot(table, clips, out_png)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
