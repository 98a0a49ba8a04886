#!/usr/bin/env python3
"""Plot GVLE encode throughput per Canterbury file, GPU kernel vs CPU encoder (docs/benchmarks.md).

usage: tools/bench/plot-gvle.py GPU.csv CPU.csv OUT.png
  GPU.csv  the CSV block printed by gvle-bench-gpu (columns file, gbps_<variant>..., copy_gbps)
  CPU.csv  file,bytes,cpu_encode_mbps (from `gvle bench`, encode column)
Needs matplotlib (Debian: python3-matplotlib).
"""
import csv
import sys


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 1
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(sys.argv[1]) as f:
        gpu = list(csv.DictReader(f))
    with open(sys.argv[2]) as f:
        cpu = {r["file"].split(".")[0]: float(r["cpu_encode_mbps"]) / 1000 for r in csv.DictReader(f)}
    # The default variant (first column) and the paper's kernel as published, if measured.
    variants = [k for k in gpu[0] if k.startswith("gbps_")]
    variants = [variants[0]] + [v for v in variants[1:] if v.endswith("-paper")]
    files = [r["file"] for r in gpu]
    x = range(len(files))
    fig, ax = plt.subplots(figsize=(11, 4.8))
    w = 0.8 / (len(variants) + 1)
    for i, v in enumerate(variants):
        label = "GPU " + v[5:] + (" (default)" if i == 0 else " (as published)")
        ax.bar([p + i * w for p in x], [float(r[v]) for r in gpu], w, label=label)
    ax.bar([p + len(variants) * w for p in x], [cpu.get(f.split(".")[0], 0) for f in files], w,
           label="CPU encode_ref, 1 thread", color="gray")
    copy = sum(float(r["copy_gbps"]) for r in gpu) / len(gpu)
    ax.axhline(copy, color="black", linestyle="--", linewidth=1, label="device copy %.0f GB/s" % copy)
    ax.axhline(1000, color="red", linestyle=":", linewidth=1, label="target 1 TB/s")
    ax.set_yscale("log")
    ax.set_ylabel("input GB/s (log)")
    ax.set_xticks([p + 0.4 for p in x])
    ax.set_xticklabels(files, rotation=30, ha="right")
    ax.set_title("GVLE encode throughput per Canterbury file (H200 kernel, data resident; CPU: dev VM)")
    ax.legend(fontsize=8, ncol=3, loc="center")
    fig.tight_layout()
    fig.savefig(sys.argv[3], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
