#!/usr/bin/env python3
"""GUD-Canny quality on the BSDS500 subset (issue 5; docs/benchmarks.md, "GUD-Canny quality (BSDS500 subset)").

For every image of SHARED/images/bsds500_subset: the JPEG's luma as an 8-bit gray PGM (ffmpeg -pix_fmt gray:
the JPEG's own Y plane, JFIF full-range BT.601 luma, chroma dropped), then edge maps from
  dist-C0.03   gudcanny --step 0.03                (GUD-Canny, one Medina-Carnicer pair per 32-column strip)
  dist-C0.01   gudcanny --step 0.01
  frame-C0.03  gudcanny --frame-level --step 0.03  (Medina-Carnicer once for the whole image)
  frame-C0.01  gudcanny --frame-level --step 0.01
  edgedetect   ffmpeg -vf edgedetect               (FFmpeg's Canny, defaults: low 20/255, high 50/255, wires)
all with gudcanny's default sigma 1.0 (--sigma), each scored by canny-eval against every human annotation
(boundaries/ID_annotK_boundaries.pbm): precision, recall, F (BSDS matching, tolerance 0.0075 x diagonal) and
the thesis's MSE. Writes OUT/results.tsv (one row per image and method), OUT/summary.md (means and the
frame-level vs distributed comparison), OUT/sigma.tsv with --sigmas, and side-by-side PNGs for --examples
(original | human | dist-C0.03 | frame-C0.03 | edgedetect) into --examples-dir. edgedetect's output keeps
the gradient magnitude of its edge pixels: canny-eval and the PNGs count every nonzero pixel as an edge.

Needs: python3 (standard library only), ffmpeg, BUILD/tools/gudcanny and BUILD/tools/canny-eval.
"""
import argparse
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

METHODS = [  # name, gudcanny arguments (None: ffmpeg edgedetect)
    ("dist-C0.03", ["--step", "0.03"]),
    ("dist-C0.01", ["--step", "0.01"]),
    ("frame-C0.03", ["--frame-level", "--step", "0.03"]),
    ("frame-C0.01", ["--frame-level", "--step", "0.01"]),
    ("edgedetect", None),
]
EXAMPLE_METHODS = ["dist-C0.03", "frame-C0.03", "edgedetect"]


def die(msg):
    print(f"canny-quality: {msg}", file=sys.stderr)
    sys.exit(2)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die(f"command failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr.strip()}")
    return p.stdout


def read_pgm(path):
    """Binary PGM (P5, maxval 255, no comments: what ffmpeg and gudcanny write) -> (w, h, bytes)."""
    data = open(path, "rb").read()
    parts = data.split(maxsplit=4)
    if parts[0] != b"P5" or int(parts[3]) != 255:
        die(f"{path}: not an 8-bit P5 PGM")
    w, h = int(parts[1]), int(parts[2])
    return w, h, data[len(data) - w * h:]


def read_pbm(path):
    """Binary PBM (P4) -> (w, h, bytes of 0/1)."""
    data = open(path, "rb").read()
    parts = data.split(maxsplit=3)
    if parts[0] != b"P4":
        die(f"{path}: not a P4 PBM")
    w, h = int(parts[1]), int(parts[2])
    rb = (w + 7) // 8
    raw = data[len(data) - rb * h:]
    out = bytearray(w * h)
    for y in range(h):
        row = raw[y * rb:(y + 1) * rb]
        for x in range(w):
            out[y * w + x] = (row[x >> 3] >> (7 - (x & 7))) & 1
    return w, h, bytes(out)


def write_pgm(path, w, h, px):
    with open(path, "wb") as f:
        f.write(f"P5\n{w} {h}\n255\n".encode() + bytes(px))


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", default=os.environ.get("GPUEC_SHARED_DIR", os.path.join(REPO, "..", "shared")),
                    help="shared data folder (default: $GPUEC_SHARED_DIR, else REPO/../shared)")
    ap.add_argument("--build", default=os.path.join(REPO, "build"),
                    help="build folder with tools/gudcanny and tools/canny-eval (default: REPO/build)")
    ap.add_argument("--ffmpeg", default="ffmpeg", help="ffmpeg binary (default: ffmpeg from PATH)")
    ap.add_argument("--out", default=None, help="output folder (default: BUILD/canny-quality)")
    ap.add_argument("--sigma", default="1.0", help="gudcanny sigma for the main table (default 1.0)")
    ap.add_argument("--sigmas", default="", help="optional sweep, e.g. 0.5,1.0,1.5,2.0: mean P/R/F/MSE per sigma "
                    "for dist-C0.03 and frame-C0.03 into OUT/sigma.tsv")
    ap.add_argument("--tolerance", default=None, help="canny-eval --tolerance (default: its BSDS default 0.0075)")
    ap.add_argument("--examples", default="2018,36046",
                    help="comma-separated image ids for side-by-side PNGs ('' for none)")
    ap.add_argument("--examples-dir", default=None, help="where the PNGs go (default: OUT/examples)")
    ap.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1, help="parallel runs (default: cores)")
    a = ap.parse_args()

    data = os.path.join(a.shared, "images", "bsds500_subset")
    gudcanny = os.path.join(a.build, "tools", "gudcanny")
    evaluator = os.path.join(a.build, "tools", "canny-eval")
    out = a.out or os.path.join(a.build, "canny-quality")
    exdir = a.examples_dir or os.path.join(out, "examples")
    for p, what in [(data, "data folder (--shared)"), (gudcanny, "gudcanny (--build)"), (evaluator, "canny-eval (--build)")]:
        if not os.path.exists(p):
            die(f"{what} not found: {p}")
    try:
        run([a.ffmpeg, "-version"])
    except FileNotFoundError:
        die(f"ffmpeg not found: {a.ffmpeg} (--ffmpeg)")

    ids = sorted({f[:-4] for f in os.listdir(os.path.join(data, "images")) if f.endswith(".jpg")}, key=int)
    gts = {}
    for i in ids:
        ann = sorted((f for f in os.listdir(os.path.join(data, "boundaries")) if f.startswith(f"{i}_annot")),
                     key=lambda f: int(f.split("_annot")[1].split("_")[0]))
        if not ann:
            die(f"no boundaries/{i}_annot*_boundaries.pbm")
        gts[i] = [os.path.join(data, "boundaries", f) for f in ann]
    for d in ["gray", "edges", "eval"]:
        os.makedirs(os.path.join(out, d), exist_ok=True)
    tol = ["--tolerance", a.tolerance] if a.tolerance else []

    def gray(i):
        dst = os.path.join(out, "gray", f"{i}.pgm")
        run([a.ffmpeg, "-v", "error", "-y", "-i", os.path.join(data, "images", f"{i}.jpg"), "-pix_fmt", "gray",
             "-frames:v", "1", "-update", "1", dst])
        return dst

    def one(i, method, args, sigma):
        tag = method if sigma == a.sigma else f"{method}-s{sigma}"
        src = os.path.join(out, "gray", f"{i}.pgm")
        os.makedirs(os.path.join(out, "edges", tag), exist_ok=True)
        os.makedirs(os.path.join(out, "eval", tag), exist_ok=True)
        edge = os.path.join(out, "edges", tag, f"{i}.pgm")
        row = {"image": i, "method": tag, "sigma": sigma if args is not None else "-"}
        if args is None:
            run([a.ffmpeg, "-v", "error", "-y", "-i", src, "-vf", "edgedetect", "-pix_fmt", "gray",
                 "-frames:v", "1", "-update", "1", edge])
            row["fallback_strips"] = "-"
        else:
            js = os.path.join(out, "edges", tag, f"{i}.json")
            run([gudcanny, "-q", "--sigma", sigma, *args, "--json", js, src, edge])
            strips = json.load(open(js))["strips"]
            # in frame mode every strip holds the one pair: count it once
            row["fallback_strips"] = (f"{sum(not s['found'] for s in strips)}/{len(strips)}"
                                      if "--frame-level" not in args else ("0/1" if strips[0]["found"] else "1/1"))
            # the pairs of the full-width strips (the last strip may be narrower: 481 = 15 x 32 + 1)
            row["pairs"] = [f"{s['low']:.2f}-{s['high']:.2f}" for s in strips
                            if s["x1"] - s["x0"] == 32][:1 if "--frame-level" in args else None]
        ev = os.path.join(out, "eval", tag, f"{i}.json")
        run([evaluator, "-q", *tol, "--json", ev, edge, *gts[i]])
        j = json.load(open(ev))
        row.update({k: j[k] for k in ["precision", "recall", "f", "mse", "edges", "hits", "boundary", "boundary_hits",
                                      "tolerance_px", "width", "height"]})
        return row

    with ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        list(pool.map(gray, ids))
        jobs = [(i, m, args, a.sigma) for m, args in METHODS for i in ids]
        rows = list(pool.map(lambda t: one(*t), jobs))
        sweep = []
        if a.sigmas:
            for s in a.sigmas.split(","):
                sweep += list(pool.map(lambda t: one(*t),
                                       [(i, m, args, s) for m, args in METHODS[:4:2] for i in ids]))

    cols = ["image", "method", "sigma", "precision", "recall", "f", "mse", "edges", "hits", "boundary",
            "boundary_hits", "tolerance_px", "fallback_strips"]
    with open(os.path.join(out, "results.tsv"), "w") as f:
        f.write("\t".join(cols) + "\n")
        for r in rows:
            f.write("\t".join(str(r[c]) for c in cols) + "\n")

    names = [m for m, _ in METHODS]
    by = {(r["image"], r["method"]): r for r in rows}

    def stats(method_rows):
        pp = sum(r["hits"] for r in method_rows) / max(1, sum(r["edges"] for r in method_rows))
        rr = sum(r["boundary_hits"] for r in method_rows) / max(1, sum(r["boundary"] for r in method_rows))
        return {"P": mean([r["precision"] for r in method_rows]), "R": mean([r["recall"] for r in method_rows]),
                "F": mean([r["f"] for r in method_rows]), "MSE": mean([r["mse"] for r in method_rows]),
                "edges": mean([r["edges"] for r in method_rows]),
                "pooledF": 2 * pp * rr / (pp + rr) if pp + rr else 0.0, "pooledP": pp, "pooledR": rr}

    md = [f"BSDS500 subset: {len(ids)} images, {sum(len(g) for g in gts.values())} annotations; sigma {a.sigma}; "
          f"tolerance {rows[0]['tolerance_px']:.2f} px.", "",
          "| method | mean P | mean R | mean F | mean MSE | pooled P | pooled R | pooled F | mean edge px |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for m in names:
        s = stats([r for r in rows if r["method"] == m])
        md.append(f"| {m} | {s['P']:.3f} | {s['R']:.3f} | {s['F']:.3f} | {s['MSE']:.4f} | {s['pooledP']:.3f} | "
                  f"{s['pooledR']:.3f} | {s['pooledF']:.3f} | {s['edges']:.0f} |")
    # MSE of an all-zero map: the mean boundary density of the annotations
    empty_mse = mean([by[(i, names[0])]["boundary"] / len(gts[i]) /
                      (by[(i, names[0])]["width"] * by[(i, names[0])]["height"]) for i in ids])
    md.append(f"| (empty map) | 0 | 0 | 0 | {empty_mse:.4f} | 0 | 0 | 0 | 0 |")
    md += ["", "Pairs chosen by Medina-Carnicer (full-width strips; frame mode: the one pair per image), count:", ""]
    for m, args in METHODS:
        if args is not None:
            cnt = {}
            for r in rows:
                if r["method"] == m:
                    for q in r["pairs"]:
                        cnt[q] = cnt.get(q, 0) + 1
            top = sorted(cnt.items(), key=lambda kv: -kv[1])
            md.append(f"- {m}: " + ", ".join(f"({q}) x{c}" for q, c in top[:8]) + (" ..." if len(top) > 8 else ""))
    md += ["", "Distributed (per strip) against frame-level, same candidate set (the thesis's claim: not worse):", "",
           "| set | mean MSE frame | mean MSE dist | images dist MSE <= frame | mean F frame | mean F dist | "
           "images dist F >= frame |", "|---|---:|---:|---:|---:|---:|---:|"]
    for cs in ["C0.03", "C0.01"]:
        fr = [by[(i, f"frame-{cs}")] for i in ids]
        di = [by[(i, f"dist-{cs}")] for i in ids]
        md.append(f"| {cs} | {mean([r['mse'] for r in fr]):.4f} | {mean([r['mse'] for r in di]):.4f} | "
                  f"{sum(d['mse'] <= r['mse'] for d, r in zip(di, fr))}/{len(ids)} | "
                  f"{mean([r['f'] for r in fr]):.3f} | {mean([r['f'] for r in di]):.3f} | "
                  f"{sum(d['f'] >= r['f'] for d, r in zip(di, fr))}/{len(ids)} |")
    md += ["", "Per image F (MSE):", "", "| image | " + " | ".join(names) + " | fallback strips dist-C0.03 |",
           "|---|" + "---:|" * len(names) + "---:|"]
    for i in ids:
        md.append(f"| {i} | " + " | ".join(f"{by[(i, m)]['f']:.3f} ({by[(i, m)]['mse']:.4f})" for m in names) +
                  f" | {by[(i, 'dist-C0.03')]['fallback_strips']} |")
    if sweep:
        md += ["", "Sigma sweep (means over the images):", "", "| sigma | method | mean P | mean R | mean F | mean MSE |",
               "|---:|---|---:|---:|---:|---:|"]
        with open(os.path.join(out, "sigma.tsv"), "w") as f:
            f.write("sigma\tmethod\tP\tR\tF\tMSE\n")
            for s in a.sigmas.split(","):
                for m in ["dist-C0.03", "frame-C0.03"]:
                    rs = [r for r in sweep if r["sigma"] == s and r["method"].startswith(m)]
                    st = stats(rs)
                    f.write(f"{s}\t{m}\t{st['P']:.4f}\t{st['R']:.4f}\t{st['F']:.4f}\t{st['MSE']:.5f}\n")
                    md.append(f"| {s} | {m} | {st['P']:.3f} | {st['R']:.3f} | {st['F']:.3f} | {st['MSE']:.4f} |")
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write("\n".join(md) + "\n")

    # Side-by-side examples: gray original | human (darker = more annotators) | edge maps as black on white.
    ex = [e for e in a.examples.split(",") if e]
    if ex:
        os.makedirs(exdir, exist_ok=True)
    for i in ex:
        if i not in gts:
            die(f"--examples: no image {i}")
        maps = [read_pbm(g) for g in gts[i]]
        w, h = maps[0][0], maps[0][1]
        k = len(maps)
        human = bytes(255 - (255 * sum(m[2][p] for m in maps) + k - 1) // k for p in range(w * h))
        write_pgm(os.path.join(out, f"human_{i}.pgm"), w, h, human)
        panels = [os.path.join(out, "gray", f"{i}.pgm"), os.path.join(out, f"human_{i}.pgm")]
        for m in EXAMPLE_METHODS:
            ew, eh, px = read_pgm(os.path.join(out, "edges", m, f"{i}.pgm"))
            inv = os.path.join(out, f"inv_{m}_{i}.pgm")
            write_pgm(inv, ew, eh, bytes(0 if v else 255 for v in px))  # edgedetect writes magnitudes
            panels.append(inv)
        chain = "".join(f"[{n}]pad=iw+6:ih:0:0:color=gray[p{n}];" for n in range(len(panels) - 1))
        chain += "".join(f"[p{n}]" for n in range(len(panels) - 1)) + f"[{len(panels) - 1}]"
        chain += f"hstack=inputs={len(panels)},format=gray"
        cmd = [a.ffmpeg, "-v", "error", "-y"]
        for p in panels:
            cmd += ["-i", p]
        run(cmd + ["-filter_complex", chain, "-frames:v", "1", "-update", "1", "-compression_level", "9",
                   "-pred", "mixed", os.path.join(exdir, f"canny-bsds-{i}.png")])
    print("\n".join(md))
    print(f"\nwrote {out}/results.tsv, {out}/summary.md" + (f", {len(ex)} PNGs in {exdir}" if ex else ""))


if __name__ == "__main__":
    main()
