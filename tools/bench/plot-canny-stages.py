#!/usr/bin/env python3
"""GUD-Canny GPU time per stage from Nsight Compute summaries (docs/benchmarks.md, "Issue 18, GPU kernels").

usage: tools/bench/plot-canny-stages.py NCUDIR [OUT.png]
  NCUDIR  the files ncu_<image>_<config>.txt written by tools/bench/canny-stages-ncu.sh
Prints a markdown table (microseconds per detect_edges_cuda call, per kernel: the kernel's mean duration
times its launches per call) and, with OUT.png, draws it as stacked bars. Needs matplotlib for the plot.
"""
import glob
import os
import re
import sys

STAGES = [  # (label, kernels); templates by their name (front_kernel<3>: front_kernel)
    ("smoothing + gradient + NMS", ["front_kernel"]),
    ("G + codes", ["codes_kernel"]),
    ("labelling + SM (strips)", ["strip_count_kernel", "strip_count_cluster_kernel", "strip_count_listed_kernel",
                                 "strip_count_redo_kernel", "strip_count_listed_cluster_kernel"]),
    ("labelling + SM (frame, strips joined)", ["frame_count_joined_kernel"]),
    ("labelling + SM (frame, split passes)", ["frame_split_label_kernel", "frame_split_merge_kernel",
                                              "frame_split_finish_kernel"]),
    ("map (strips)", ["strip_edges_kernel"]),
    ("histograms + pair + map (strips, labelling again)", ["strip_final_kernel"]),
    ("histograms + pair + map (strips, clusters)", ["select_map_cluster_kernel"]),
    ("labelling (tiles)", ["ccl_strip_local_kernel", "ccl_strip_border_kernel", "ccl_max_roots_kernel",
                           "ccl_resolve_roots_kernel", "ccl_tile_listed_kernel", "ccl_tile_redo_kernel"]),
    ("SM (tiles)", ["ccl_count_kernel"]),
    ("histograms + pair", ["select_kernel"]),
    ("map (tiles)", ["ccl_output_kernel", "fill_pairs_kernel"]),
]


def parse(path):
    txt = open(path).read()
    m = re.search(r"median of (\d+) after (\d+) warm-up", txt)
    if not m or "every GPU output equals the CPU twin" not in txt:
        raise SystemExit(f"{path}: not a complete canny-bench-gpu run under ncu")
    calls = int(m.group(1)) + int(m.group(2)) + 1  # + the call whose output is checked
    per_kernel = {}
    for km in re.finditer(r"::(\w+)(?:<[^>(]*>)?\(.*?Invocations (\d+)\n.*?gpu__time_duration.sum\s+(\w+)\s+([\d.]+)\s+"
                          r"([\d.]+)\s+([\d.]+)", txt, re.S):
        name, inv, unit, avg = km.group(1), int(km.group(2)), km.group(3), float(km.group(6))
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[unit]
        per_kernel[name] = per_kernel.get(name, 0.0) + avg * scale * inv / calls
    return per_kernel


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 1
    rows = []
    for path in sorted(glob.glob(os.path.join(sys.argv[1], "ncu_*.txt"))):
        tag = os.path.basename(path)[4:-4]
        img, cfg = re.match(r"(.*?)_((?:strip|frame)_C_0\.0\d)$", tag).groups()
        size = {"cameraman_256": "256x256", "barbara": "512x512", "synthetic_1920": "1920x1080",
                "synthetic_3840": "3840x2160"}.get(img, img)
        k = parse(path)
        known = {n for _, ks in STAGES for n in ks}
        unknown = set(k) - known
        if unknown:
            raise SystemExit(f"{path}: kernels not in STAGES: {sorted(unknown)}")
        stages = [sum(k.get(n, 0.0) for n in ks) for _, ks in STAGES]
        rows.append((size, cfg.replace("_", " ", 1), stages, sum(stages)))
    order = {"256x256": 0, "512x512": 1, "1920x1080": 2, "3840x2160": 3}
    corder = {"strip C_0.03": 0, "strip C_0.01": 1, "frame C_0.03": 2, "frame C_0.01": 3}
    rows.sort(key=lambda r: (order.get(r[0], 9), corder.get(r[1], 9)))
    used = [i for i in range(len(STAGES)) if any(r[2][i] > 0 for r in rows)]
    print("| size | config | " + " | ".join(STAGES[i][0] for i in used) + " | total µs |")
    print("|---|---|" + "---:|" * (len(used) + 1))
    for size, cfg, st, tot in rows:
        print(f"| {size} | {cfg} | " + " | ".join(f"{st[i]:.1f}" if st[i] else "-" for i in used) + f" | {tot:.1f} |")
    if len(sys.argv) == 3:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        sizes = [z for z in ["256x256", "512x512", "1920x1080", "3840x2160"] if any(r[0] == z for r in rows)]
        fig, axes = plt.subplots(1, len(sizes), figsize=(4.4 * len(sizes), 4.6), squeeze=False)
        colors = plt.get_cmap("tab10").colors
        for ax, size in zip(axes[0], sizes):
            sub = [r for r in rows if r[0] == size]
            bottom = [0.0] * len(sub)
            for j, i in enumerate(used):
                vals = [r[2][i] for r in sub]
                ax.bar([r[1] for r in sub], vals, bottom=bottom, color=colors[j % 10],
                       label=STAGES[i][0] if size == sizes[0] else None)
                bottom = [b + v for b, v in zip(bottom, vals)]
            for x, r in enumerate(sub):
                ax.text(x, r[3], f"{r[3]:.0f}", ha="center", va="bottom", fontsize=8)
            target = {"512x512": 36, "1920x1080": 140, "3840x2160": 430}.get(size)  # issue 18: strip C_0.03
            if target:
                ax.axhline(target, color="red", ls="--", lw=1)
                ax.text(-0.4, target * 1.03, f"target {target} µs (strip C_0.03)", color="red", fontsize=7)
            ax.set_ylim(0, 1.08 * max(r[3] for r in sub))  # room for the totals above the bars
            ax.set_title(size)
            ax.set_ylabel("µs per frame (sum of kernel times)")
            ax.tick_params(axis="x", labelsize=8)
        fig.legend(loc="lower center", ncol=4, fontsize=8)
        fig.suptitle("GUD-Canny on an H200: GPU time per stage (ncu, per detect_edges_cuda call)", fontsize=10)
        fig.tight_layout(rect=(0, 0.1, 1, 0.95))
        fig.savefig(sys.argv[2], dpi=110)
        print(f"wrote {sys.argv[2]}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
