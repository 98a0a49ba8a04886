#!/usr/bin/python3
"""Golden outputs: the bytes gpuec's programs write, pinned by SHA-256 against the previous main's binaries.

usage: golden.py --shared DIR --gvle PATH --gudcanny PATH --avc-reentropy PATH --x264 PATH --clip PATH
                 [--table outputs.tsv] [--regenerate] [--filter SUBSTR] [--jobs N] [--self-test]
       golden.py --shared DIR --bin-dir DIR --clip PATH ...   (DIR holds gvle, gudcanny, avc-reentropy, x264-patched:
                                                                 the layout of /work/baseline-9b2dcdf)

The cases (the same list for --regenerate and for the check, built here from the shared data):
  gvle      `gvle compress --backend cpu` of every file of corpus/canterbury (.xz files unpacked first; their
            content is checked against the corpus MANIFEST);
  gudcanny  edge maps of every image in images/ that is an image to detect edges in (standard/*.pgm, the
            colour PNGs and JPEGs as gray PGM through the system ffmpeg, photos/ likewise), with the default
            options, --frame-level --sigma 1.4 and --fixed 0.10,0.20 --sigma 2.0; --step 0.01 --sigma 0.5 on the
            512x512 standard images; frame 5 of each sequence (y4m). (The BSDS500 boundaries/ and groundTruth/ are
            annotations, not images: not run.)
  avc       `avc-reentropy --backend cpu` and `--backend auto` of every stream in conformance/ (made with the
            baseline's --backend cpu-frame, the same frame-coder path, which issue 15 renamed);
  x264      the patched x264 with --gpu-entropy cpu on six clip / option sets (sequences/ clips and gpuec-clip
            synthetic clips: I_PCM, level-overflow re-encodes, slices, sliced and frame threads, intra refresh).
outputs.tsv: case, tool, input (path relative to the shared folder, or clip:NAME:FRAMES), input_sha256 (of the
bytes the tool reads), options, output_sha256. The check re-runs every case with the given binaries and
compares; each mismatch is printed. Exit 0 all equal, 1 a mismatch (or a case missing from the table, or an
input whose bytes changed), 2 usage or setup error. --regenerate writes the table instead (from the binaries
given: the previous main's, /work/baseline-9b2dcdf). --self-test checks the check: it runs a few cases with one
option changed or one output byte flipped and passes only when exactly those cases are reported.
"""
import argparse
import concurrent.futures
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIELDS = ["case", "tool", "input", "input_sha256", "options", "output_sha256"]

CANNY_OPTIONS = [("default", []), ("frame-sigma1.4", ["--frame-level", "--sigma", "1.4"]),
                 ("fixed-sigma2.0", ["--fixed", "0.10,0.20", "--sigma", "2.0"])]
CANNY_STEP1 = ("step0.01-sigma0.5", ["--step", "0.01", "--sigma", "0.5"])
X264_CASES = [
    ("foreman_qcif", 21, "--profile baseline --preset medium --qp 26 --threads 1"),
    ("foreman_cif", 21, "--profile baseline --preset ultrafast --qp 10 --slices 4 --threads 3"),
    ("suzie_cif", 24, "--profile baseline --crf 23 --slice-max-mbs 37 --sliced-threads --threads 3"),
    ("noise_cif", 10, "--profile baseline --no-psy --subme 7 --qp 12 --keyint 1 --threads 1"),
    ("checkerboard_cif", 10, "--profile baseline --preset ultrafast --qp 1 --threads 1"),
    ("pan_720p", 8, "--profile baseline --preset medium --qp 40 --intra-refresh --ref 5 --threads 3"),
]


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class Setup:
    """Inputs prepared once per run in a temporary folder (unpacked, converted)."""

    def __init__(self, shared, clip, tmp):
        self.shared, self.clip, self.tmp = shared, clip, tmp
        self.ffmpeg = shutil.which("ffmpeg")

    def unxz(self, rel):
        out = os.path.join(self.tmp, "in", rel[:-3].replace("/", "__"))
        if not os.path.exists(out):
            os.makedirs(os.path.dirname(out), exist_ok=True)
            with open(out + ".part", "wb") as f:
                subprocess.run(["xz", "-dc", os.path.join(self.shared, rel)], stdout=f, check=True)
            os.rename(out + ".part", out)
        return out

    def gray_pgm(self, rel):
        """An image gudcanny cannot read itself (colour PNG, JPEG) as gray PGM through the system ffmpeg."""
        out = os.path.join(self.tmp, "in", rel.replace("/", "__") + ".pgm")
        if not os.path.exists(out):
            if not self.ffmpeg:
                raise RuntimeError("no ffmpeg on the PATH to convert " + rel)
            os.makedirs(os.path.dirname(out), exist_ok=True)
            subprocess.run([self.ffmpeg, "-v", "error", "-nostdin", "-y", "-i", os.path.join(self.shared, rel),
                            "-frames:v", "1", "-pix_fmt", "gray", "-c:v", "pgm", "-f", "image2", out + ".part"],
                           check=True)
            os.rename(out + ".part", out)
        return out

    def clip_file(self, name, frames):
        out = os.path.join(self.tmp, "in", f"{name}-{frames}.y4m")
        if not os.path.exists(out):
            os.makedirs(os.path.dirname(out), exist_ok=True)
            env = dict(os.environ, GPUEC_SHARED_DIR=self.shared)
            p = subprocess.run([self.clip, "get", name, "-o", out + ".part", "--frames", str(frames)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if p.returncode != 0:
                raise RuntimeError(f"gpuec-clip get {name}: exit {p.returncode}: {p.stderr.decode(errors='replace')}")
            os.rename(out + ".part", out)
        return out


def corpus_manifest(shared):
    sums = {}
    path = os.path.join(shared, "corpus/canterbury/MANIFEST.tsv")
    with open(path) as f:
        head = f.readline().rstrip("\n").split("\t")
        for line in f:
            row = dict(zip(head, line.rstrip("\n").split("\t")))
            sums["corpus/canterbury/" + row["file"]] = row["sha256_original"]
    return sums


def make_cases(shared):
    """Every case: (case id, tool, input, options list). Sorted by id."""
    cases = []
    canterbury = os.path.join(shared, "corpus/canterbury")
    for name in sorted(os.listdir(canterbury)):
        if name == "MANIFEST.tsv":
            continue
        cases.append((f"gvle/{name}", "gvle", f"corpus/canterbury/{name}", ["compress", "--backend", "cpu"]))
    images = []
    for sub in ("standard", "bsds500_subset/images", "photos"):
        folder = os.path.join(shared, "images", sub)
        for name in sorted(os.listdir(folder)):
            if name.lower().endswith((".pgm", ".png", ".jpg", ".jpeg")):
                images.append(f"images/{sub}/{name}")
    for rel in images:
        sets = list(CANNY_OPTIONS)
        if rel.startswith("images/standard/") and "_512" in rel:
            sets.append(CANNY_STEP1)
        for opt_name, opts in sets:
            cases.append((f"gudcanny/{rel[len('images/'):]}/{opt_name}", "gudcanny", rel, opts))
    seqs = os.path.join(shared, "sequences")
    for name in sorted(os.listdir(seqs)):
        if name.endswith(".y4m.xz"):
            cases.append((f"gudcanny/sequences/{name}/frame5", "gudcanny", f"sequences/{name}", ["--frame", "5"]))
    conf = os.path.join(shared, "conformance")
    for name in sorted(os.listdir(conf)):
        if name.endswith((".264", ".h264", ".jsv", ".26l", ".avc")):
            for backend in ("cpu", "auto"):
                cases.append((f"avc-reentropy/{name}/{backend}", "avc-reentropy", f"conformance/{name}",
                              ["--backend", backend]))
    for i, (clip, frames, opts) in enumerate(X264_CASES):
        cases.append((f"x264/{i}-{clip}", "x264", f"clip:{clip}:{frames}",
                      ["--gpu-entropy", "cpu", "--no-progress"] + opts.split()))
    return sorted(cases)


def input_file(setup, rel):
    if rel.startswith("clip:"):
        _, name, frames = rel.split(":")
        return setup.clip_file(name, int(frames))
    if rel.endswith(".xz") and not rel.endswith(".y4m.xz"):
        return setup.unxz(rel)
    if rel.startswith("sequences/"):
        return setup.unxz(rel)  # gudcanny reads y4m; the .xz is unpacked here (same bytes for any tool version)
    if rel.startswith("images/") and not rel.lower().endswith(".pgm"):
        return setup.gray_pgm(rel)
    return os.path.join(setup.shared, rel)


def run_case(case, bins, setup, perturb=None):
    """Runs one case; returns (input_sha256, output_sha256) or raises RuntimeError with the tool's message."""
    cid, tool, rel, opts = case
    src = input_file(setup, rel)
    out = os.path.join(setup.tmp, "out", cid.replace("/", "__"))
    os.makedirs(os.path.dirname(out), exist_ok=True)
    opts = list(opts)
    if perturb == "option" and tool == "gudcanny":
        opts += ["--sigma", "1.1"]
    if perturb == "option" and tool == "x264":
        opts += ["--qp", "27"]
    if tool == "gvle":
        cmd = [bins["gvle"]] + opts + ["-f", "-o", out, src]
    elif tool == "gudcanny":
        cmd = [bins["gudcanny"], "-q"] + opts + [src, out]
    elif tool == "avc-reentropy":
        cmd = [bins["avc-reentropy"], "-q"] + opts + [src, out]
    else:
        cmd = [bins["x264"]] + opts + ["-o", out, src]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    if p.returncode != 0:
        raise RuntimeError(f"exit {p.returncode}: {' '.join(cmd)}\n{p.stderr.decode(errors='replace')[-2000:]}")
    if perturb == "byte":  # a tool that wrote one different byte
        with open(out, "r+b") as f:
            b = f.read(1)
            f.seek(0)
            f.write(bytes([(b[0] if b else 0) ^ 0x01]))
    result = (sha256_file(src), sha256_file(out))
    os.remove(out)
    return result


def read_table(path):
    rows = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            parts = line.rstrip("\n").split("\t")
            if parts[0] == "case":
                continue
            rows[parts[0]] = dict(zip(FIELDS, parts))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", required=True, help="the shared data folder (GPUEC_SHARED_DIR)")
    ap.add_argument("--bin-dir", help="folder with gvle, gudcanny, avc-reentropy, x264-patched")
    for t in ("gvle", "gudcanny", "avc-reentropy", "x264"):
        ap.add_argument("--" + t, help=f"the {t} binary")
    ap.add_argument("--clip", required=True, help="gpuec-clip (makes the synthetic x264 inputs)")
    ap.add_argument("--table", default=os.path.join(HERE, "outputs.tsv"))
    ap.add_argument("--regenerate", action="store_true", help="write the table from these binaries")
    ap.add_argument("--filter", action="append", default=[], help="only cases whose id contains this (repeatable)")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--self-test", action="store_true", help="check that changed outputs are caught")
    args = ap.parse_args()

    bins = {}
    names = {"gvle": "gvle", "gudcanny": "gudcanny", "avc-reentropy": "avc-reentropy", "x264": "x264-patched"}
    for t, file in names.items():
        path = getattr(args, t.replace("-", "_")) or (os.path.join(args.bin_dir, file) if args.bin_dir else None)
        if not path or not os.access(path, os.X_OK):
            print(f"golden: no {t} binary (--{t} or --bin-dir): {path}", file=sys.stderr)
            return 2
        bins[t] = os.path.abspath(path)
    shared = os.path.abspath(args.shared)
    if not os.path.isdir(os.path.join(shared, "corpus")):
        print(f"golden: {shared} is not the shared data folder", file=sys.stderr)
        return 2

    cases = make_cases(shared)
    if args.filter:
        cases = [c for c in cases if any(f in c[0] for f in args.filter)]
    perturbed = {}
    if args.self_test:
        # One case of each tool: gudcanny and x264 with one option changed, gvle and avc-reentropy with one output
        # byte flipped (their options do not change the bytes); plus an untouched case of each tool.
        picks = {}
        for c in cases:
            picks.setdefault(c[1], []).append(c)
        cases, perturbed = [], {}
        for tool, cs in sorted(picks.items()):
            cases += cs[:2]
            perturbed[cs[0][0]] = "option" if tool in ("gudcanny", "x264") else "byte"
    table = {} if args.regenerate else read_table(args.table)
    manifest = corpus_manifest(shared)

    failures, skipped = [], []
    results = {}
    with tempfile.TemporaryDirectory(prefix="gpuec-golden-") as tmp:
        setup = Setup(shared, os.path.abspath(args.clip), tmp)
        # Inputs first (one thread: the conversions share files), then the cases in parallel.
        for c in cases:
            try:
                input_file(setup, c[2])
            except (RuntimeError, subprocess.CalledProcessError) as e:
                skipped.append((c[0], f"input not available: {e}"))
        ready = [c for c in cases if c[0] not in dict(skipped)]
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futs = {pool.submit(run_case, c, bins, setup, perturbed.get(c[0])): c for c in ready}
            for fut in concurrent.futures.as_completed(futs):
                c = futs[fut]
                try:
                    results[c[0]] = fut.result()
                except RuntimeError as e:
                    failures.append((c[0], f"the tool failed: {e}"))

    if args.regenerate:
        if failures or skipped:
            for cid, why in failures + skipped:
                print(f"golden: {cid}: {why}", file=sys.stderr)
            print("golden: not written: every case must run", file=sys.stderr)
            return 1
        with open(args.table, "w") as f:
            f.write("# Golden outputs (tests/golden/golden.py --regenerate): SHA-256 of what each tool writes for each case;\n"
                    "# made with the previous main's binaries (9b2dcdf, /work/baseline-9b2dcdf) and gpuec-clip for the\n"
                    "# synthetic x264 inputs. input: relative to GPUEC_SHARED_DIR (clip:NAME:FRAMES = gpuec-clip get).\n")
            f.write("\t".join(FIELDS) + "\n")
            for cid, tool, rel, opts in cases:
                ish, osh = results[cid]
                f.write("\t".join([cid, tool, rel, ish, " ".join(opts), osh]) + "\n")
        print(f"golden: wrote {len(cases)} cases to {args.table}")
        return 0

    caught = set()
    ok = 0
    for cid, tool, rel, opts in cases:
        if cid not in results:
            continue
        ish, osh = results[cid]
        row = table.get(cid)
        if row is None:
            failures.append((cid, "not in the table (a new case: regenerate with the previous main's binaries)"))
            continue
        if row["options"] != " ".join(opts) or row["input"] != rel:
            failures.append((cid, f"the table's command differs: {row['input']} {row['options']}"))
            continue
        if rel in manifest and ish != manifest[rel]:
            failures.append((cid, f"input {rel}: its content does not match the corpus MANIFEST"))
            continue
        if ish != row["input_sha256"]:
            failures.append((cid, f"INPUT differs from the one pinned ({ish} != {row['input_sha256']}): "
                                  "the conversion (xz, ffmpeg, gpuec-clip) changed, not necessarily the tool"))
            continue
        if osh != row["output_sha256"]:
            caught.add(cid)
            failures.append((cid, f"OUTPUT differs: sha256 {osh}, pinned {row['output_sha256']} "
                                  f"({tool} {' '.join(opts)} on {rel})"))
            continue
        ok += 1
    if not args.filter and not args.self_test:
        for cid in sorted(set(table) - {c[0] for c in cases}):
            failures.append((cid, "in the table but no longer a case (shared data missing?)"))

    for cid, why in sorted(skipped):
        print(f"SKIP {cid}: {why}")
    for cid, why in sorted(failures):
        print(f"MISMATCH {cid}: {why}")
    print(f"golden: {len(cases)} cases, {ok} equal to the previous main, {len(failures)} mismatches, "
          f"{len(skipped)} skipped")
    if args.self_test:
        want = set(perturbed)
        missed = want - caught
        extra = {cid for cid, _ in failures} - want
        for cid in sorted(missed):
            print(f"FAIL self-test: the changed output of {cid} was not caught")
        for cid in sorted(extra):
            print(f"FAIL self-test: {cid} was reported but not changed")
        print(f"golden self-test: {len(want & caught)} of {len(want)} changed outputs caught, {len(extra)} spurious")
        return 0 if not missed and not extra and not skipped else 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
