#!/usr/bin/env python3
"""Ratios from a canny-ab-run.sh call (tools/bench/canny-ab.sh): for every image and configuration, each variant's
range over the rounds and its median over the baseline's median (the first variant; --base TAG for another).

usage: tools/bench/canny-ab-compare.py [--plain] [--base TAG] LOGS
  LOGS     run.sh's ab-logs.tgz, or the ab folder in it
  --plain  the single call's time (gpu_us) instead of the GPU's own time in a stream of calls (queued_us)
Prints a markdown table; a variant whose output differed from the CPU twin in any round is marked MISMATCH
(expected only of variants run with test hooks that break the output). Exit status: 0, 1 usage, 2 no runs found.
"""
import os
import re
import statistics
import sys
import tarfile

ROW = re.compile(r"^(\S+)\s+(\d+x\d+)\s+(\S+ \S+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)\s+([\d.]+)(\s+MISMATCH)?\s*$")
NAME = re.compile(r"(?:^|/)bench_([A-Za-z0-9_-]+)_(\d+)_(\d+)\.txt$")


def files(path):
    """{name: text} of the bench logs and of variants.txt (the variants' tags, run.sh's order)."""
    out = {}
    if os.path.isdir(path):
        for f in sorted(os.listdir(path)):
            if NAME.search(f) or f == "variants.txt":
                out[f] = open(os.path.join(path, f)).read()
    else:
        with tarfile.open(path) as t:
            for m in t.getmembers():
                base = os.path.basename(m.name)
                if m.isfile() and (NAME.search(m.name) or base == "variants.txt"):
                    out[base] = t.extractfile(m).read().decode()
    return out


def main(argv):
    plain, base, args = False, None, []
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__)
            return 0
        if a == "--plain":
            plain = True
        elif a == "--base":
            base = next(it, None)
            if base is None:
                print("canny-ab-compare: --base needs a TAG", file=sys.stderr)
                return 1
        else:
            args.append(a)
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 1
    logs = files(args[0])
    tags = logs.pop("variants.txt", "").split()
    times, bad = {}, set()
    for name, text in sorted(logs.items()):
        tag = NAME.search(name).group(1)
        if tag not in tags:
            tags.append(tag)
        for line in text.splitlines():
            m = ROW.match(line)
            if not m:
                continue
            key = (m.group(1), m.group(2), m.group(3))
            times.setdefault(key, {}).setdefault(tag, []).append(float(m.group(4 if plain else 7)))
            if m.group(8):
                bad.add(tag)
    if not times:
        print(f"canny-ab-compare: no canny-bench-gpu rows in {args[0]}", file=sys.stderr)
        return 2
    tags = [t for t in tags if any(t in per for per in times.values())]
    base = base or tags[0]
    if base not in tags:
        print(f"canny-ab-compare: --base {base}: no such variant ({', '.join(tags)})", file=sys.stderr)
        return 1
    col = "gpu_us (single call)" if plain else "queued_us (GPU alone)"
    print(f"{col}: range over the rounds, (median / {base}'s median)\n")
    print("| image | size | config | " + " | ".join(t + (" MISMATCH" if t in bad else "") for t in tags) + " |")
    print("|---|---|---|" + "---|" * len(tags))
    for key, per in times.items():
        b = statistics.median(per[base]) if base in per else None
        cells = []
        for t in tags:
            v = per.get(t)
            if not v:
                cells.append("-")
                continue
            r = f" ({statistics.median(v) / b:.3f})" if b else ""
            cells.append(f"{min(v):.1f}-{max(v):.1f}{r}")
        print(f"| {key[0]} | {key[1]} | {key[2]} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
