#!/usr/bin/env python3
"""End-to-end conformance harness: stock x264 vs x264 with the gpuec entropy stage.

For every case of the acceptance matrix (tests/e2e/matrix.tsv) it
  1. obtains the clip with the clip tool (cached in WORK/clips, created atomically),
  2. encodes it with stock x264 and with patched x264 (+ --gpu-entropy BACKEND --dump-yuv),
     both passes for 2-pass cases, each encoder with its own stats file,
  3. compares the two streams (and pass-1 streams and stats files) byte for byte,
  4. decodes the patched stream with FFmpeg (-err_detect explode -xerror) and, with --jm, with JM's
     ldecod (the reference decoder), and compares each decoder's frames with x264's own
     reconstruction (--dump-yuv),
  5. checks the "gpu-entropy:" log lines of the patched encoder against the case's expectation
     (stage | fallback | reject).
Python 3 standard library only. See tests/e2e/conformance.md.

Exit status: 0 all cases passed, 1 a case failed (or --coverage found a gap), 2 usage/setup error.
"""

import argparse
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_MATRIX = os.path.join(HERE, "matrix.tsv")
EXPECTS = ("stage", "fallback", "reject")
BACKENDS = ("cpu", "cuda", "auto")
# Options the harness itself adds; a matrix case must not carry them.
HARNESS_OPTS = ("-o", "--output", "--dump-yuv", "--stats", "--gpu-entropy", "--frames",
                "--no-progress", "--pass", "-p")
BIG_FILE_SUFFIXES = (".264", ".yuv", ".stats", ".mbtree", ".temp", ".y4m")


class SetupError(Exception):
    """Usage or setup problem: exit status 2."""


# --------------------------------------------------------------------------------------------
# Matrix
# --------------------------------------------------------------------------------------------

class Case:
    def __init__(self, name, clip, frames, options, expect, lineno):
        self.name = name
        self.clip = clip
        self.frames = frames          # int or None (whole clip)
        self.options = options        # original string
        self.expect = expect
        self.lineno = lineno
        self.argv = shlex.split(options)

    @property
    def two_pass(self):
        return opt_value(self.argv, "--pass") == "2"

    @property
    def threads(self):
        v = opt_value(self.argv, "--threads")
        return int(v) if v and v.isdigit() else None


def opt_value(argv, name):
    """Value of the last `name VALUE` / `name=VALUE` in argv, or None."""
    val = None
    for i, a in enumerate(argv):
        if a == name and i + 1 < len(argv):
            val = argv[i + 1]
        elif a.startswith(name + "="):
            val = a[len(name) + 1:]
    return val


def has_opt(argv, name, value=None):
    if value is None:
        return name in argv or any(a.startswith(name + "=") for a in argv)
    return opt_value(argv, name) == value


def load_matrix(path):
    if not os.path.isfile(path):
        raise SetupError("matrix file not found: %s" % path)
    cases, seen, errors = [], {}, []
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\r\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cols = line.split("\t")
            if cols[0] == "name":          # header
                continue
            where = "%s:%d" % (path, lineno)
            if len(cols) != 5:
                errors.append("%s: expected 5 tab-separated columns, got %d" % (where, len(cols)))
                continue
            name, clip, frames, options, expect = (c.strip() for c in cols)
            if not re.match(r"^[A-Za-z0-9_.-]+$", name):
                errors.append("%s: bad case name %r" % (where, name))
            if name in seen:
                errors.append("%s: duplicate case name %r (first at line %d)" % (where, name, seen[name]))
            seen[name] = lineno
            if not re.match(r"^[A-Za-z0-9_.-]+$", clip):
                errors.append("%s: bad clip name %r" % (where, clip))
            if frames in ("-", ""):
                nframes = None
            elif frames.isdigit() and int(frames) > 0:
                nframes = int(frames)
            else:
                errors.append("%s: frames must be a positive integer or '-', got %r" % (where, frames))
                nframes = None
            if expect not in EXPECTS:
                errors.append("%s: expect must be one of %s, got %r" % (where, "|".join(EXPECTS), expect))
            try:
                c = Case(name, clip, nframes, options, expect, lineno)
            except ValueError as e:
                errors.append("%s: cannot parse options: %s" % (where, e))
                continue
            if c.threads is None:
                errors.append("%s: case %s has no explicit --threads N" % (where, name))
            if not has_opt(c.argv, "--profile", "baseline") and expect != "fallback":
                errors.append("%s: case %s lacks --profile baseline (only fallback cases may)" % (where, name))
            for a in c.argv:
                key = a.split("=", 1)[0]
                if key in HARNESS_OPTS and not (key == "--pass" and c.two_pass):
                    errors.append("%s: case %s: option %s is added by the harness" % (where, name, key))
            if (has_opt(c.argv, "--vbv-maxrate") or has_opt(c.argv, "--vbv-bufsize")) and (c.threads or 1) > 1:
                errors.append("%s: case %s: VBV with --threads > 1 is not deterministic in x264 (its VBV reads "
                              "the size estimates of frames/slices other threads are coding): use --threads 1"
                              % (where, name))
            if has_opt(c.argv, "--pass") and not c.two_pass:
                errors.append("%s: case %s: only '--pass 2' (meaning: run pass 1 then pass 2) is allowed"
                              % (where, name))
            cases.append(c)
    if errors:
        raise SetupError("invalid matrix:\n  " + "\n  ".join(errors))
    if not cases:
        raise SetupError("matrix %s has no cases" % path)
    return cases


# --------------------------------------------------------------------------------------------
# Coverage specification (the acceptance requirements, checked by --coverage)
# --------------------------------------------------------------------------------------------
# A factor is a list of (value label, predicate(case) -> bool). A case covers a value when the
# predicate is true. Every value must be covered, and every pair of values of two different
# factors must occur together in at least one stage case, except the pairs in EXCLUDED_PAIRS.

def _opt(name, value=None):
    return lambda c: has_opt(c.argv, name, value)


def _qp(n):
    return lambda c: has_opt(c.argv, "--qp", str(n)) and not _is_pcm(c)


def _is_pcm(c):
    return has_opt(c.argv, "--no-psy") and has_opt(c.argv, "--subme", "7") and not has_opt(c.argv, "--preset")


def _qp0(c):
    # --qp 0 with --profile baseline is refused by x264 (lossless needs High 4:4:4 Predictive).
    # --qp 1 is the lowest CQP that baseline accepts; its I/IDR slices are coded at QP 0
    # (1 - 6*log2(ipratio 1.40) -> clipped to 0), P slices at QP 1. See matrix.tsv.
    return (has_opt(c.argv, "--qp", "1") or has_opt(c.argv, "--qp", "0")) and not _is_pcm(c)


def _threads(n):
    return lambda c: has_opt(c.argv, "--threads", str(n)) and not has_opt(c.argv, "--sliced-threads")


CLIPS_REQUIRED = ["foreman_qcif", "foreman_cif", "suzie_cif", "noise_cif", "checkerboard_cif", "pan_720p"]

FACTORS = [
    ("clip", [(n, (lambda n: lambda c: c.clip == n)(n)) for n in CLIPS_REQUIRED]),
    ("ratecontrol", [
        ("qp0", _qp0),
        ("qp10", _qp(10)),
        ("qp26", _qp(26)),
        ("qp40", _qp(40)),
        ("qp51", _qp(51)),
        ("crf23", lambda c: has_opt(c.argv, "--crf", "23") and not has_opt(c.argv, "--vbv-maxrate")),
        ("2pass", lambda c: c.two_pass and has_opt(c.argv, "--bitrate")),
        ("qp12(pcm)", lambda c: _is_pcm(c) and has_opt(c.argv, "--qp", "12")),
    ]),
    ("preset", [
        ("ultrafast", _opt("--preset", "ultrafast")),
        ("medium", _opt("--preset", "medium")),
        ("veryslow", _opt("--preset", "veryslow")),
        ("pcm", lambda c: _is_pcm(c) and has_opt(c.argv, "--qp", "12")),
    ]),
    ("slicing", [
        ("slices1", _opt("--slices", "1")),
        ("slices4", _opt("--slices", "4")),
        ("slices9", _opt("--slices", "9")),
        ("slice-max-mbs37", _opt("--slice-max-mbs", "37")),
    ]),
    ("threads", [
        ("threads1", _threads(1)),
        ("threads3", _threads(3)),
        ("sliced-threads", lambda c: has_opt(c.argv, "--sliced-threads")
         and (c.threads or 1) > 1),
    ]),
    ("gop/ref", [
        ("intra-refresh", _opt("--intra-refresh")),
        ("keyint1", _opt("--keyint", "1")),
        ("ref1", _opt("--ref", "1")),
        ("ref5", _opt("--ref", "5")),
    ]),
]

# Pairs that are not required (meaningless or too slow), with the reason.
EXCLUDED_PAIRS = [
    ({"veryslow"}, {"pan_720p"}, "veryslow only on QCIF/CIF clips (CI time)"),
    ({"pcm"}, {"qp0", "qp10", "qp26", "qp40", "qp51", "crf23", "2pass"},
     "the I_PCM preset fixes its own rate control (--qp 12)"),
    ({"qp12(pcm)"}, {"ultrafast", "medium", "veryslow"}, "qp 12 belongs to the I_PCM preset"),
    ({"sliced-threads"}, {"slices1", "slices4", "slices9"},
     "with --sliced-threads x264 sets the slice count to the thread count (--slices ignored)"),
]

# Fallback requirements: (label, predicate) that must appear in at least one fallback case.
FALLBACK_REQUIRED = [
    ("vbv+crf", lambda c: has_opt(c.argv, "--vbv-maxrate", "500") and has_opt(c.argv, "--vbv-bufsize", "1000")
     and has_opt(c.argv, "--crf")),
    ("vbv+bitrate", lambda c: has_opt(c.argv, "--vbv-maxrate", "500") and has_opt(c.argv, "--vbv-bufsize", "1000")
     and has_opt(c.argv, "--bitrate")),
    ("slice-max-size1200", _opt("--slice-max-size", "1200")),
]


def pair_excluded(a, b):
    for s1, s2, _why in EXCLUDED_PAIRS:
        if (a in s1 and b in s2) or (a in s2 and b in s1):
            return True
    return False


def coverage(cases, out=sys.stdout):
    ok = True
    stage = [c for c in cases if c.expect == "stage"]
    fallback = [c for c in cases if c.expect == "fallback"]
    for c in cases:
        if (not has_opt(c.argv, "--profile", "baseline") and c.expect != "fallback") or c.threads is None:
            print("MISSING: case %s lacks --profile baseline or --threads" % c.name, file=out)
            ok = False
    hits = {}
    print("Values (stage cases covering each value):", file=out)
    for fname, values in FACTORS:
        for label, pred in values:
            hits[label] = {c.name for c in stage if pred(c)}
            n = len(hits[label])
            print("  %-12s %-18s %3d%s" % (fname, label, n, "" if n else "   <-- MISSING"), file=out)
            if not n:
                ok = False
    print("Fallback requirements:", file=out)
    for label, pred in FALLBACK_REQUIRED:
        names = [c.name for c in fallback if pred(c)]
        print("  %-20s %s" % (label, ", ".join(names) if names else "<-- MISSING"), file=out)
        if not names:
            ok = False
    print("Pairs (count of stage cases per pair; '-' = not required, '!' = required but missing):", file=out)
    total_req = total_cov = 0
    for i in range(len(FACTORS)):
        for j in range(i + 1, len(FACTORS)):
            fa, va = FACTORS[i]
            fb, vb = FACTORS[j]
            req = cov = 0
            missing = []
            rows = []
            for la, _ in va:
                cells = []
                for lb, _ in vb:
                    n = len(hits[la] & hits[lb])
                    if pair_excluded(la, lb):
                        cells.append("-" if n == 0 else str(n))
                        continue
                    req += 1
                    if n:
                        cov += 1
                        cells.append(str(n))
                    else:
                        cells.append("!")
                        missing.append("%s+%s" % (la, lb))
                rows.append((la, cells))
            total_req += req
            total_cov += cov
            print("  %s x %s: %d/%d required pairs covered" % (fa, fb, cov, req), file=out)
            w = max(4, max(len(lb) for lb, _ in vb))
            print("    %-18s %s" % ("", " ".join(lb.rjust(w) for lb, _ in vb)), file=out)
            for la, cells in rows:
                print("    %-18s %s" % (la, " ".join(c.rjust(w) for c in cells)), file=out)
            if missing:
                ok = False
                print("    MISSING: " + ", ".join(missing), file=out)
    print("Not required pairs:", file=out)
    for s1, s2, why in EXCLUDED_PAIRS:
        print("  %s x %s: %s" % ("|".join(sorted(s1)), "|".join(sorted(s2)), why), file=out)
    print("%d stage cases, %d fallback cases, %d other; %d/%d required pairs covered: %s"
          % (len(stage), len(fallback), len(cases) - len(stage) - len(fallback), total_cov, total_req,
             "COMPLETE" if ok else "INCOMPLETE"), file=out)
    return ok


# --------------------------------------------------------------------------------------------
# Helpers: files, y4m, streams
# --------------------------------------------------------------------------------------------

def first_diff(a, b):
    """Index of the first differing byte of two bytes objects (None if equal)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return None if len(a) == len(b) else n
    lo, hi = 0, n
    while hi - lo > 256:
        mid = (lo + hi) // 2
        if a[lo:mid] != b[lo:mid]:
            hi = mid
        else:
            lo = mid
    for i in range(lo, hi):
        if a[i] != b[i]:
            return i
    return hi


def compare_files(pa, pb, chunk=1 << 20):
    """Returns None if equal, else (offset, size_a, size_b)."""
    sa, sb = os.path.getsize(pa), os.path.getsize(pb)
    with open(pa, "rb") as fa, open(pb, "rb") as fb:
        pos = 0
        while True:
            a, b = fa.read(chunk), fb.read(chunk)
            if not a and not b:
                return None
            d = first_diff(a, b)
            if d is not None:
                return (pos + d, sa, sb)
            pos += len(a)


def y4m_info(path):
    """(width, height, frames, colorspace) of a 4:2:0 8-bit y4m file."""
    with open(path, "rb") as f:
        header = f.readline()
        if not header.startswith(b"YUV4MPEG2") or not header.endswith(b"\n"):
            raise ValueError("not a YUV4MPEG2 file")
        w = h = None
        cs = "420jpeg"
        for tok in header.split()[1:]:
            t = tok.decode("ascii", "replace")
            if t[0] == "W":
                w = int(t[1:])
            elif t[0] == "H":
                h = int(t[1:])
            elif t[0] == "C":
                cs = t[1:]
        if not w or not h:
            raise ValueError("y4m header without W/H")
        if not cs.startswith("420") or cs.startswith("420p"):
            raise ValueError("y4m colorspace C%s: the harness needs 4:2:0 8-bit" % cs)
        fsize = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
        total = os.path.getsize(path)
        frames = 0
        pos = len(header)
        while pos < total:
            f.seek(pos)
            line = f.readline(256)
            if not line.startswith(b"FRAME"):
                raise ValueError("bad FRAME marker at byte %d" % pos)
            pos += len(line) + fsize
            if pos > total:
                raise ValueError("truncated last frame")
            frames += 1
    return w, h, frames, cs


NAL_NAMES = {1: "non-IDR slice", 5: "IDR slice", 6: "SEI", 7: "SPS", 8: "PPS", 9: "AUD",
             10: "end of sequence", 11: "end of stream", 12: "filler"}


def _read_ue(data, bitpos):
    zeros = 0
    while True:
        byte = data[bitpos >> 3] if (bitpos >> 3) < len(data) else 1
        if (byte >> (7 - (bitpos & 7))) & 1:
            break
        zeros += 1
        bitpos += 1
        if zeros > 31:
            raise ValueError
    bitpos += 1
    val = 0
    for _ in range(zeros):
        byte = data[bitpos >> 3] if (bitpos >> 3) < len(data) else 0
        val = (val << 1) | ((byte >> (7 - (bitpos & 7))) & 1)
        bitpos += 1
    return (1 << zeros) - 1 + val


def locate_in_stream(path, offset):
    """Describe where a byte offset lies in an Annex-B H.264 stream."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return ""
    starts = []      # (start code position, payload position)
    i = data.find(b"\x00\x00\x01")
    while i >= 0:
        sc = i - 1 if i > 0 and data[i - 1] == 0 else i
        starts.append((sc, i + 3))
        i = data.find(b"\x00\x00\x01", i + 3)
    if not starts:
        return "not an Annex-B stream"
    frame = -1
    for k, (sc, p) in enumerate(starts):
        if p >= len(data):
            break
        ntype = data[p] & 0x1f
        first_mb = None
        if ntype in (1, 5):
            head = data[p + 1:p + 16].replace(b"\x00\x00\x03", b"\x00\x00")
            try:
                first_mb = _read_ue(head, 0)
            except (ValueError, IndexError):
                first_mb = None
            if first_mb == 0:
                frame += 1
        nxt = starts[k + 1][0] if k + 1 < len(starts) else len(data)
        if sc <= offset < nxt:
            what = "NAL #%d (%s, type %d)" % (k, NAL_NAMES.get(ntype, "type"), ntype)
            if ntype in (1, 5):
                what += ", frame %d in coding order, slice starting at MB %s" % (
                    max(frame, 0), "?" if first_mb is None else first_mb)
            if ntype == 6:
                what += " - x264's SEI holds the options string: do both builds print the same options?"
            return "%s, byte %d of %d in that NAL" % (what, offset - sc, nxt - sc)
    return "past the last NAL"


def describe_yuv_diff(pa, pb, w, h):
    """Compare two raw yuv420p files frame by frame. Returns None or a description."""
    cw, ch = (w + 1) // 2, (h + 1) // 2
    planes = (("Y", w, h, 16), ("U", cw, ch, 8), ("V", cw, ch, 8))
    fsize = w * h + 2 * cw * ch
    sa, sb = os.path.getsize(pa), os.path.getsize(pb)
    first = None
    ndiff = 0
    with open(pa, "rb") as fa, open(pb, "rb") as fb:
        frame = 0
        while True:
            a, b = fa.read(fsize), fb.read(fsize)
            if len(a) < fsize or len(b) < fsize:
                break
            if a != b:
                ndiff += 1
                if first is None:
                    base = 0
                    for pname, pw, ph, mbsz in planes:
                        n = pw * ph
                        d = first_diff(a[base:base + n], b[base:base + n])
                        if d is not None:
                            x, y = d % pw, d // pw
                            first = ("frame %d plane %s at x=%d y=%d (MB %d,%d; MB address %d): decoded %d, "
                                     "dump-yuv %d" % (frame, pname, x, y, x // mbsz, y // mbsz,
                                                      (y // mbsz) * ((w + 15) // 16) + x // mbsz,
                                                      a[base + d], b[base + d]))
                            break
                        base += n
            frame += 1
    msgs = []
    if sa != sb:
        msgs.append("decoded %s vs dump-yuv %s frames" % (_frames(sa, fsize), _frames(sb, fsize)))
    if first:
        msgs.append("first differing %s; %d frame(s) differ" % (first, ndiff))
    return "; ".join(msgs) if msgs else None


def _frames(size, fsize):
    return ("%d" % (size // fsize)) if size % fsize == 0 else ("%.2f (size %d not a multiple of the frame size)"
                                                              % (size / fsize, size))


def recon_diff(dec, recon, w, h, nframes):
    """Why the decoded yuv420p file DEC is not x264's reconstruction RECON of the clip's NFRAMES frames; None
    when it is."""
    if not os.path.isfile(recon):
        return "patched x264 wrote no --dump-yuv file"
    if not os.path.isfile(dec):
        return "the decoder wrote no frames"
    dd = describe_yuv_diff(dec, recon, w, h)
    if dd:
        return "decoded frames differ from --dump-yuv: " + dd
    fsize = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
    if os.path.getsize(dec) != nframes * fsize:
        return "decoded %s frames, the clip has %d" % (_frames(os.path.getsize(dec), fsize), nframes)
    return None


def jm_command(jm, stream, out):
    """JM's ldecod decoding the Annex-B STREAM into OUT (cropped 4:2:0, display order), with the decoder.cfg
    beside the program when there is one (JM's bin/ and BUILD/tools/jm/ keep it there) and the settings that
    matter given on the command line. ldecod writes log.dec and dataDec.txt into its working folder."""
    cfg = os.path.join(os.path.dirname(jm), "decoder.cfg")
    argv = [jm] + (["-d", cfg] if os.path.isfile(cfg) else [])
    for setting in ("InputFile=" + stream, "OutputFile=" + out, "RefFile=/nonexistent", "WriteUV=1", "FileFormat=0",
                    "ConcealMode=0", "DecFrmNum=0", "Silent=1"):
        argv += ["-p", setting]
    return argv


# --------------------------------------------------------------------------------------------
# Logs
# --------------------------------------------------------------------------------------------

LOG_RE = re.compile(r"^x264 \[(\w+)\]: (.*?)\s*$")
GPU_PREFIX = "gpu-entropy: "
ON_RE = re.compile(r"^(cpu|cuda) stage on\b")
CODED_RE = re.compile(r"^(cpu|cuda) stage coded (\d+) slices?, (\d+) macroblocks?\b")
FALLBACK_RE = re.compile(r"^(.+); the stage is off, x264 writes the stream itself$")
CUDA_FAILED_RE = re.compile(r"^the cuda backend failed \((.+)\); the cpu backend codes from here on")
MEMORY_RE = re.compile(r"^cuda stage memory: [0-9.]+ MiB device, [0-9.]+ MiB pinned per stage, \d+ stages$")
AUTO_OFF_RE = re.compile(r"^auto: (.+); the stage is off, x264 writes the stream itself$")


def log_lines(text):
    """x264 log lines as (level, message); progress output with \\r is split off."""
    out = []
    for line in re.split(r"[\r\n]+", text):
        m = LOG_RE.match(line.strip())
        if m:
            out.append((m.group(1), m.group(2)))
    return out


def check_stage_log(text, expect, backend, fail_at=None, wait_open=True):
    """Returns (errors, info) for one patched run. fail_at: GPUEC_CUDA_FAIL_AT_FRAME was set (cuda backend
    expected on, exactly one warning that it failed and the CPU took over, the closing line may name either)."""
    lines = log_lines(text)
    gpu = [(lvl, msg[len(GPU_PREFIX):]) for lvl, msg in lines if msg.startswith(GPU_PREFIX)]
    on = [(lvl, ON_RE.match(m)) for lvl, m in gpu if ON_RE.match(m)]
    coded = [(lvl, CODED_RE.match(m)) for lvl, m in gpu if CODED_RE.match(m)]
    fb = [(lvl, m) for lvl, m in gpu if FALLBACK_RE.match(m)]
    errs = []
    info = ""
    want = None if backend == "auto" else backend
    if expect == "stage" and fail_at is not None:
        failed = [(lvl, m) for lvl, m in gpu if CUDA_FAILED_RE.match(m)]
        if len(failed) != 1:
            errs.append("GPUEC_CUDA_FAIL_AT_FRAME=%d: expected exactly one 'gpu-entropy: the cuda backend failed (...)'"
                        " line, found %d" % (fail_at, len(failed)))
        for lvl, m in failed:
            if lvl != "warning":
                errs.append("'%s' logged at level %s, expected warning" % (m, lvl))
        if len(on) != 1 or on[0][1].group(1) != "cuda":
            errs.append("GPUEC_CUDA_FAIL_AT_FRAME: expected one 'gpu-entropy: cuda stage on' line")
        if len(coded) != 1:
            errs.append("expected one 'gpu-entropy: <backend> stage coded N slices' line, found %d" % len(coded))
        others = [m for lvl, m in gpu
                  if not (ON_RE.match(m) or CODED_RE.match(m) or CUDA_FAILED_RE.match(m) or MEMORY_RE.match(m))]
        if others:
            errs.append("unexpected gpu-entropy lines: %s" % others)
        if len(failed) == 1:
            info = "cuda, fell back to cpu: %s" % CUDA_FAILED_RE.match(failed[0][1]).group(1)
        return errs, info
    auto_off = [(lvl, m) for lvl, m in gpu if AUTO_OFF_RE.match(m)]
    if expect == "stage" and backend == "auto" and auto_off:
        # auto without a usable GPU at open: x264's own writer, said in one info line, nothing else
        if len(auto_off) != 1 or auto_off[0][0] != "info" or len(gpu) != 1:
            errs.append("auto without a GPU: expected exactly one info line 'gpu-entropy: auto: <reason>; the stage"
                        " is off, x264 writes the stream itself' and no other gpu-entropy line,"
                        " found %s" % gpu)
        return errs, "auto: stage off (%s)" % AUTO_OFF_RE.match(auto_off[0][1]).group(1)
    if expect == "stage":
        if fb:
            errs.append("unexpected fallback: 'gpu-entropy: %s'" % fb[0][1])
        if len(on) != 1:
            errs.append("expected one 'gpu-entropy: %s stage on' line, found %d" % (want or "<backend>", len(on)))
        if len(coded) != 1:
            errs.append("expected one 'gpu-entropy: %s stage coded N slices, M macroblocks' line, found %d"
                        % (want or "<backend>", len(coded)))
        for lvl, m in on + coded:
            if want and m.group(1) != want:
                errs.append("backend %s in '%s', expected %s" % (m.group(1), m.group(0), want))
            if lvl != "info":
                errs.append("'%s' logged at level %s, expected info" % (m.group(0), lvl))
        if len(coded) == 1:
            m = coded[0][1]
            if int(m.group(2)) <= 0:
                errs.append("stage coded %s slices (must be > 0)" % m.group(2))
            info = "%s stage %s slices, %s MBs" % (m.group(1), m.group(2), m.group(3))
            memory = [mm for lvl, mm in gpu if MEMORY_RE.match(mm)]
            # cuda: one line; with the context made in the background, none when the CPU coded every part
            if len(memory) not in ((1,) if m.group(1) == "cuda" and wait_open else (0, 1) if m.group(1) == "cuda" else (0,)):
                errs.append("%s stage: expected %s 'gpu-entropy: cuda stage memory: ...' line, found %s"
                            % (m.group(1), "one" if m.group(1) == "cuda" else "no", memory))
    elif expect == "fallback":
        if len(fb) != 1:
            errs.append("expected exactly one 'gpu-entropy: <reason>; the stage is off, x264 writes the stream itself' line, found %d"
                        % len(fb))
        for lvl, m in fb:
            if lvl != "warning":
                errs.append("fallback line logged at level %s, expected warning" % lvl)
        if coded:
            errs.append("fallback case, but the stage coded: '%s'" % coded[0][1].group(0))
        if on:
            errs.append("fallback case, but the stage was switched on: '%s'" % on[0][1].group(0))
        if len(fb) == 1:
            info = "fallback: %s" % FALLBACK_RE.match(fb[0][1]).group(1)
    elif expect == "reject":
        if coded:
            errs.append("rejected option set, but the stage coded: '%s'" % coded[0][1].group(0))
    return errs, info


def warnings_of(text):
    return [m for lvl, m in log_lines(text) if lvl == "warning" and not m.startswith(GPU_PREFIX)]


def errors_of(text):
    return [m for lvl, m in log_lines(text) if lvl == "error"]


# --------------------------------------------------------------------------------------------
# Running
# --------------------------------------------------------------------------------------------

class Runner:
    def __init__(self, args):
        self.args = args
        self.verbose = args.verbose

    def run(self, argv, log_path, cmdfile, timeout, env=None, cwd=None, out_path=None):
        """Run a command, stderr (and stdout, unless out_path is given) to log_path, with `env` (a dict) added to
        the environment, in the folder `cwd` (default: the harness's). Returns (rc, stderr text)."""
        line = " ".join("%s=%s" % (k, shlex.quote(v)) for k, v in (env or {}).items()) + (" " if env else "")
        line += shlex.join(argv)
        if out_path:
            line += " > " + shlex.quote(os.path.basename(out_path))
        with open(cmdfile, "a") as cf:
            cf.write(line + " 2> " + shlex.quote(os.path.basename(log_path)) + "\n")
        if self.verbose:
            print("  + " + line, flush=True)
        with open(log_path, "wb") as lf, open(out_path or os.devnull, "wb") as of:
            try:
                p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=of if out_path else lf,
                                   stderr=lf if out_path else subprocess.STDOUT,
                                   timeout=timeout, env=dict(os.environ, **env) if env else None, cwd=cwd)
                rc = p.returncode
            except subprocess.TimeoutExpired:
                rc = "timeout after %ds" % timeout
            except OSError as e:
                rc = "cannot run: %s" % e
        with open(log_path, "rb") as lf:
            text = lf.read().decode("utf-8", "replace")
        return rc, text


def get_clip(args, runner, case, case_dir, cmdfile):
    """Path of the cached clip, created atomically (temp file + rename) under a lock."""
    cache = args.clip_cache or os.path.join(args.work, "clips")
    os.makedirs(cache, exist_ok=True)
    base = case.clip + (".f%d" % case.frames if case.frames else "")
    final = os.path.join(cache, base + ".y4m")
    if os.path.isfile(final):
        return final, None
    lock_path = os.path.join(cache, "." + base + ".lock")
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)        # a second harness waits here, then finds the file
        try:
            if os.path.isfile(final):
                return final, None
            tmp = os.path.join(cache, ".%s.%d.tmp.y4m" % (base, os.getpid()))
            argv = [args.clip_tool, "get", case.clip, "-o", tmp]
            if case.frames:
                argv += ["--frames", str(case.frames)]
            rc, text = runner.run(argv, os.path.join(case_dir, "clip.log"), cmdfile, args.timeout)
            if rc != 0 or not os.path.isfile(tmp):
                _unlink(tmp)
                return None, "clip tool failed (exit %s) for %s: %s" % (rc, case.clip, _tail(text))
            try:
                y4m_info(tmp)
            except (ValueError, OSError) as e:
                _unlink(tmp)
                return None, "clip tool produced an unusable file for %s: %s" % (case.clip, e)
            os.replace(tmp, final)
            return final, None
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _unlink(p):
    try:
        os.unlink(p)
    except OSError:
        pass


def _tail(text, n=3):
    lines = [l for l in re.split(r"[\r\n]+", text) if l.strip()]
    return " | ".join(lines[-n:]) if lines else "(no output)"


def run_case(args, runner, case):
    """Returns (ok, reason, details list)."""
    case_dir = os.path.join(args.work, case.name)
    if os.path.isdir(case_dir):
        shutil.rmtree(case_dir)
    os.makedirs(case_dir)
    cmdfile = os.path.join(case_dir, "commands.sh")
    with open(cmdfile, "w") as cf:
        cf.write("# commands run by conformance.py for case %s (cwd %s)\n" % (case.name, case_dir))
    fails = []
    notes = []

    clip, err = get_clip(args, runner, case, case_dir, cmdfile)
    if err:
        return False, err, []
    try:
        w, h, nframes, _cs = y4m_info(clip)
    except (ValueError, OSError) as e:
        return False, "cached clip %s unusable: %s" % (clip, e), []
    mbs = ((w + 15) // 16) * ((h + 15) // 16)
    notes.append("%s %dx%d, %d frames" % (case.clip, w, h, nframes))

    def p(name):
        return os.path.join(case_dir, name)

    if args.stage_opt is not None:
        stage_argv = shlex.split(args.stage_opt)
    else:
        stage_argv = ["--gpu-entropy", args.backend]
    base = [a for a in case.argv]
    passes = [1, 2] if case.two_pass else [None]
    stage_infos = []

    for ps in passes:
        opts = list(base)
        tag = ""
        if ps is not None:
            opts = _set_pass(opts, ps)
            tag = ".pass%d" % ps
        final = ps in (None, 2)
        stock_out, ours_out = p("stock%s.264" % ("" if final else tag)), p("ours%s.264" % ("" if final else tag))
        stock_cmd = [args.stock, "--no-progress"] + opts
        ours_cmd = [args.patched, "--no-progress"] + opts + stage_argv
        if ps is not None:
            stock_cmd += ["--stats", p("stock.stats")]
            ours_cmd += ["--stats", p("ours.stats")]
        if final and case.expect != "reject":
            ours_cmd += ["--dump-yuv", p("recon.yuv")]
        stock_cmd += ["-o", stock_out, clip]
        ours_cmd += ["-o", ours_out, clip]
        src, stext = runner.run(stock_cmd, p("stock%s.log" % tag), cmdfile, args.timeout)
        ours_env = {"GPUEC_CUDA_FAIL_AT_FRAME": str(args.fail_at_frame)} if args.fail_at_frame is not None else {}
        if args.cuda_open == "wait":  # every frame part on the GPU, not on the CPU while the context is made
            ours_env["GPUEC_CUDA_WAIT_AT_OPEN"] = "1"
        ours_env = ours_env or None
        orc, otext = runner.run(ours_cmd, p("ours%s.log" % tag), cmdfile, args.timeout, ours_env)
        label = "pass %d: " % ps if ps else ""

        if case.expect == "reject":
            if src == 0:
                fails.append("%sstock x264 accepted an option set the case expects to be rejected" % label)
            if orc == 0:
                fails.append("%spatched x264 accepted an option set the case expects to be rejected" % label)
            if errors_of(stext) != errors_of(otext):
                fails.append("%serror lines differ: stock %s, patched %s" % (label, errors_of(stext), errors_of(otext)))
            errs, _ = ([], "") if args.stage_opt is not None else check_stage_log(otext, "reject", args.backend)
            fails += [label + e for e in errs]
            notes.append("both rejected: %s" % ("; ".join(errors_of(stext)) or "(no error line)"))
            break

        if src != 0:
            fails.append("%sstock x264 failed (exit %s): %s" % (label, src, _tail(stext)))
        if orc != 0:
            fails.append("%spatched x264 failed (exit %s): %s" % (label, orc, _tail(otext)))
        if src != 0 or orc != 0:
            break
        for gl in [m for _, m in log_lines(stext) if m.startswith(GPU_PREFIX)]:
            fails.append("%sstock x264 printed '%s': is --stock really the stock build?" % (label, gl))
            break
        if errors_of(otext):
            fails.append("%spatched x264 logged errors: %s" % (label, "; ".join(errors_of(otext))))
        sw, ow = warnings_of(stext), warnings_of(otext)
        if sw != ow:
            fails.append("%swarnings differ from stock: stock %s, patched %s" % (label, sw, ow))

        d = compare_files(stock_out, ours_out)
        if d is not None:
            off, sa, sb = d
            fails.append("%sstream differs from stock at byte %d (sizes: stock %d, patched %d; %s)"
                         % (label, off, sa, sb, locate_in_stream(stock_out, off)))
            # Is stock x264 itself deterministic for this option set? Run it once more.
            rerun_out = p("stock%s.rerun.264" % tag)
            rerun_cmd = [rerun_out if a == stock_out else a for a in stock_cmd]
            rrc, _ = runner.run(rerun_cmd, p("stock%s.rerun.log" % tag), cmdfile, args.timeout)
            if rrc == 0:
                rd = compare_files(stock_out, rerun_out)
                if rd is not None:
                    fails.append("NOTE: stock x264 run twice gave different streams (first difference at byte %d):"
                                 " x264 is not deterministic with these options, the comparison is meaningless"
                                 % rd[0])
                else:
                    fails.append("(stock x264 run twice gave identical streams: the difference is the patched build's)")
        if ps == 1:
            for suffix in (".stats", ".stats.mbtree"):
                a, b = p("stock" + suffix), p("ours" + suffix)
                ea, eb = os.path.isfile(a), os.path.isfile(b)
                if ea != eb:
                    fails.append("pass 1: %s exists only for %s" % (suffix, "stock" if ea else "patched"))
                elif ea:
                    dd = compare_files(a, b)
                    if dd is not None:
                        fails.append("pass 1: stats file %s differs at byte %d (sizes: stock %d, patched %d)"
                                     % (suffix, dd[0], dd[1], dd[2]))
                        fails += _stats_line_hint(a, b, suffix)
            if not os.path.isfile(p("stock.stats")):
                fails.append("pass 1: stock x264 wrote no stats file")

        if args.stage_opt is None:
            errs, info = check_stage_log(otext, case.expect, args.backend, args.fail_at_frame, args.cuda_open == "wait")
            fails += [label + e for e in errs]
            if info:
                stage_infos.append(label + info)
        if final:
            size = os.path.getsize(ours_out)
            notes.append("%d bytes" % size)

    encoded = case.expect != "reject" and not any("x264 failed" in f for f in fails)
    if encoded and args.decode_later:
        # No decoder on this machine: keep the stream and the reconstruction's frame digests for
        # --check-decodes on a machine that has FFmpeg.
        if not os.path.isfile(p("recon.yuv")):
            fails.append("patched x264 wrote no --dump-yuv file")
        else:
            fsize = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
            os.makedirs(args.decode_later, exist_ok=True)
            shutil.copyfile(p("ours.264"), os.path.join(args.decode_later, case.name + ".264"))
            with open(p("recon.yuv"), "rb") as f, open(os.path.join(args.decode_later, case.name + ".recon.md5"), "w") as out:
                out.write("%d %d %d\n" % (w, h, nframes))
                while True:
                    fr = f.read(fsize)
                    if len(fr) < fsize:
                        break
                    out.write(hashlib.md5(fr).hexdigest() + "\n")
            notes.append("decode deferred (--decode-later)")
    elif encoded:
        # Decode the patched stream and compare with x264's own reconstruction.
        dec = p("dec.yuv")
        fcmd = [args.ffmpeg, "-nostdin", "-hide_banner", "-v", "error", "-err_detect", "explode", "-xerror",
                "-f", "h264", "-i", p("ours.264"), "-f", "rawvideo", "-pix_fmt", "yuv420p",
                "-fps_mode", "passthrough", "-y", dec]
        frc, ftext = runner.run(fcmd, p("ffmpeg.log"), cmdfile, args.timeout)
        if frc != 0:
            fails.append("FFmpeg rejected the patched stream (exit %s): %s" % (frc, _tail(ftext)))
        elif ftext.strip():
            fails.append("FFmpeg reported: %s" % _tail(ftext))
        else:
            why = recon_diff(dec, p("recon.yuv"), w, h, nframes)
            if why:
                fails.append(why)

    if encoded and args.jm:
        # The reference decoder (issue 16) must give x264's reconstruction too. Its exit status alone proves
        # little: ldecod exits 0 on some damaged streams (a flipped bit, a cut at a slice's end).
        jdec = p("jm.yuv")
        jrc, jtext = runner.run(jm_command(args.jm, p("ours.264"), jdec), p("jm.log"), cmdfile, args.timeout,
                                cwd=case_dir, out_path=p("jm.out"))  # its errors: stderr, jm.log
        why = "exit %s: %s" % (jrc, _tail(jtext)) if jrc != 0 else recon_diff(jdec, p("recon.yuv"), w, h, nframes)
        if why:
            fails.append("JM failed on the patched stream: %s" % why)
        else:
            notes.append("JM equals --dump-yuv")

    if encoded and args.reentropy:
        # Compressed-domain re-entropy (issue 6): parsing the patched stream and coding its residual again
        # gives it back byte for byte.
        rcmd = [args.reentropy, "--check", "-q", "--backend", args.reentropy_backend, p("ours.264"), p("reentropy.264")]
        rrc, rtext = runner.run(rcmd, p("reentropy.log"), cmdfile, args.timeout)
        if rrc == 2 and case.expect == "fallback" and "unsupported:" in rtext:
            # A fallback case outside baseline CAVLC (CABAC, weighted prediction, ...): refused, as it must be.
            notes.append("re-entropy refused the non-baseline stream")
        elif rrc != 0:
            fails.append("avc-reentropy %s (exit %s): %s" % ("output differs" if rrc == 3 else "failed", rrc, _tail(rtext)))
        else:
            notes.append("re-entropy identical")

    if args.stage_opt is not None:
        notes.append("log checks skipped (--stage-opt)")
    notes = stage_infos + notes
    if fails:
        return False, fails[0], fails[1:] + ["(%s)" % ", ".join(notes), "logs and commands: %s" % case_dir]
    if not args.keep:
        for fn in os.listdir(case_dir):
            if fn.endswith(BIG_FILE_SUFFIXES):
                _unlink(os.path.join(case_dir, fn))
    return True, ", ".join(notes), []


def frames_md5_diff(decoded, fsize, want, nframes):
    """Why the frames of DECODED (bytes) are not the reconstruction's, given as the MD5s WANT; None when they are."""
    got = [hashlib.md5(decoded[i:i + fsize]).hexdigest() for i in range(0, len(decoded) - fsize + 1, fsize)]
    if len(got) != nframes or len(want) != nframes:
        return "decoded %d frames, reconstruction has %d, the clip %d" % (len(got), len(want), nframes)
    bad = [i for i in range(nframes) if got[i] != want[i]]
    if bad:
        return "decoded frame %d differs from --dump-yuv (%d frames differ)" % (bad[0], len(bad))
    return None


def check_decodes(args):
    """--check-decodes DIR: decode every DIR/<case>.264 kept by --decode-later with FFmpeg (errors are
    fatal) and, with --jm, with JM, and compare each frame with the reconstruction's digest."""
    try:
        ffmpeg = _need_exe(args.ffmpeg or "ffmpeg", "--ffmpeg")
        jm = os.path.abspath(_need_exe(args.jm, "--jm")) if args.jm else None
    except SetupError as e:
        print("conformance.py: error: %s" % e, file=sys.stderr)
        return 2
    d = args.check_decodes
    names = sorted(f[:-4] for f in os.listdir(d) if f.endswith(".264"))
    if not names:
        print("conformance.py: error: no .264 files in %s" % d, file=sys.stderr)
        return 2
    passed = failed = 0
    for name in names:
        why = None
        try:
            with open(os.path.join(d, name + ".recon.md5")) as f:
                w, h, nframes = (int(v) for v in f.readline().split())
                want = [line.strip() for line in f if line.strip()]
        except (OSError, ValueError) as e:
            want, why = [], "no usable %s.recon.md5: %s" % (name, e)
        if why is None:
            r = subprocess.run([ffmpeg, "-nostdin", "-hide_banner", "-v", "error", "-err_detect", "explode", "-xerror",
                                "-f", "h264", "-i", os.path.join(d, name + ".264"), "-f", "rawvideo", "-pix_fmt",
                                "yuv420p", "-fps_mode", "passthrough", "-"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=args.timeout)
            fsize = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
            if r.returncode != 0 or r.stderr.strip():
                why = "FFmpeg rejected the stream (exit %d): %s" % (r.returncode, _tail(r.stderr.decode("utf-8", "replace")))
            else:
                why = frames_md5_diff(r.stdout, fsize, want, nframes)
        if why is None and jm:
            why = check_decode_jm(jm, os.path.join(os.path.abspath(d), name + ".264"), fsize, want, nframes, args.timeout)
        print("%s %s: %s" % ("FAIL" if why else "PASS", name,
                             why or "decoder-clean, equals --dump-yuv" + (" (FFmpeg and JM)" if jm else "")), flush=True)
        if why:
            failed += 1
        else:
            passed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


def check_decode_jm(jm, stream, fsize, want, nframes, timeout):
    """--check-decodes with --jm: why JM's decode of STREAM is not the reconstruction (None when it is)."""
    with tempfile.TemporaryDirectory(prefix="gpuec-jm.") as tmp:
        out = os.path.join(tmp, "jm.yuv")
        try:
            r = subprocess.run(jm_command(jm, stream, out), cwd=tmp, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=timeout)
        except subprocess.TimeoutExpired:
            return "JM timed out after %d s" % timeout
        if r.returncode != 0:
            return "JM failed (exit %d): %s" % (r.returncode, _tail(r.stderr.decode("utf-8", "replace")))
        decoded = b""
        if os.path.isfile(out):
            with open(out, "rb") as f:
                decoded = f.read()
        why = frames_md5_diff(decoded, fsize, want, nframes)
    return "JM: " + why if why else None


def _set_pass(argv, n):
    out = []
    skip = False
    for i, a in enumerate(argv):
        if skip:
            skip = False
            continue
        if a in ("--pass", "-p"):
            out += ["--pass", str(n)]
            skip = True
        elif a.startswith("--pass="):
            out.append("--pass=%d" % n)
        else:
            out.append(a)
    return out


def _stats_line_hint(a, b, suffix):
    """Detail lines showing the first differing line of two x264 stats files."""
    if suffix != ".stats":
        return []
    try:
        with open(a, encoding="latin-1") as fa, open(b, encoding="latin-1") as fb:
            for n, (la, lb) in enumerate(zip(fa, fb), 1):
                if la != lb:
                    return ["  stats line %d, stock:   %s" % (n, la.strip()[:300]),
                            "  stats line %d, patched: %s" % (n, lb.strip()[:300])]
    except OSError:
        pass
    return []


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------

def positive_int(text):
    """argparse type: a whole number >= 1."""
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError("not a whole number: %r" % text)
    if v < 1:
        raise argparse.ArgumentTypeError("must be at least 1, not %d" % v)
    return v


def parse_args(argv):
    ap = argparse.ArgumentParser(
        description="Conformance harness: stock x264 vs x264 with --gpu-entropy (see tests/e2e/conformance.md).")
    ap.add_argument("--stock", help="stock x264 binary")
    ap.add_argument("--patched", help="patched x264 binary (knows --gpu-entropy)")
    ap.add_argument("--clip-tool", help="clip tool (gpuec-clip): 'TOOL get NAME -o OUT.y4m [--frames N]'")
    ap.add_argument("--work", help="work folder: WORK/clips (clip cache), WORK/<case>/ (logs)")
    ap.add_argument("--matrix", default=DEFAULT_MATRIX, help="matrix TSV (default: %(default)s)")
    ap.add_argument("--case", action="append", default=[], metavar="NAME",
                    help="run only this case (repeatable; default: all cases)")
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    ap.add_argument("--coverage", action="store_true",
                    help="check that the matrix covers every required value and pair, and exit")
    ap.add_argument("--keep", action="store_true", help="keep streams/yuv/stats of passing cases")
    ap.add_argument("--ffmpeg", default=None, help="ffmpeg binary (default: ffmpeg on PATH)")
    ap.add_argument("--backend", default="cpu", choices=BACKENDS, help="--gpu-entropy backend (default: cpu)")
    ap.add_argument("--jm", default=None, metavar="LDECOD",
                    help="also decode every patched stream with JM's ldecod (the reference decoder; its decoder.cfg is "
                         "used when it lies beside it) and require x264's reconstruction (issue 16)")
    ap.add_argument("--reentropy", default=None, metavar="AVC_REENTROPY",
                    help="also check that avc-reentropy (issue 6) gives the patched stream back byte for byte")
    ap.add_argument("--reentropy-backend", default="cpu", choices=["cpu", "cuda", "auto"],
                    help="avc-reentropy's --backend (default: cpu)")
    ap.add_argument("--decode-later", metavar="DIR",
                    help="for a machine without FFmpeg: instead of decoding, keep each patched stream as DIR/CASE.264 "
                         "and the MD5 of every --dump-yuv frame as DIR/CASE.recon.md5, for --check-decodes")
    ap.add_argument("--check-decodes", metavar="DIR",
                    help="only decode the streams --decode-later kept in DIR with FFmpeg (-err_detect explode -xerror) "
                         "and compare every frame with the reconstruction's MD5; nothing else is run")
    ap.add_argument("--cuda-open", choices=["wait", "background"], default="wait",
                    help="with --backend cuda or auto: wait (default) sets GPUEC_CUDA_WAIT_AT_OPEN=1 for the patched "
                         "encoder, so that every frame part runs on the GPU; background leaves it unset (x264's "
                         "default: the CPU codes while the CUDA context is created)")
    ap.add_argument("--fail-at-frame", type=int, metavar="N",
                    help="with --backend cuda: set GPUEC_CUDA_FAIL_AT_FRAME=N for the patched encoder, so that the cuda "
                         "backend fails on purpose at its N-th frame part (from 0); stage cases then also require "
                         "exactly one warning that the CPU took over (the stream must still be identical)")
    ap.add_argument("--clip-cache", default=None, help="clip cache folder (default: WORK/clips)")
    ap.add_argument("--timeout", type=positive_int, default=600, help="limit per command in seconds (default: 600)")
    ap.add_argument("--stage-opt", default=None, metavar="STR",
                    help="DEVELOPMENT ONLY: options given to the patched encoder instead of "
                         "'--gpu-entropy BACKEND' (e.g. '' to test with two stock binaries); "
                         "skips the log checks")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every command line run")
    args = ap.parse_args(argv)
    if args.check_decodes:
        return args
    if args.fail_at_frame is not None and (args.backend != "cuda" or args.fail_at_frame < 0):
        ap.error("--fail-at-frame needs --backend cuda and N >= 0")
    return args


def _need_exe(path, what):
    if not path:
        raise SetupError("%s is required" % what)
    full = shutil.which(path)
    if not full:
        raise SetupError("%s not found or not executable: %s" % (what, path))
    return full


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.check_decodes:
        return check_decodes(args)
    try:
        cases = load_matrix(args.matrix)
        if args.list:
            print("%-34s %-17s %6s %-8s %s" % ("name", "clip", "frames", "expect", "options"))
            for c in cases:
                print("%-34s %-17s %6s %-8s %s" % (c.name, c.clip, c.frames or "-", c.expect, c.options))
            print("%d cases" % len(cases))
            return 0
        if args.coverage:
            return 0 if coverage(cases) else 1
        byname = {c.name: c for c in cases}
        unknown = [n for n in args.case if n not in byname]
        if unknown:
            raise SetupError("unknown case(s): %s (see --list)" % ", ".join(unknown))
        selected = [byname[n] for n in dict.fromkeys(args.case)] if args.case else cases
        args.stock = _need_exe(args.stock, "--stock")
        args.patched = _need_exe(args.patched, "--patched")
        args.clip_tool = _need_exe(args.clip_tool, "--clip-tool")
        if args.reentropy:
            args.reentropy = _need_exe(args.reentropy, "--reentropy")
        if args.jm:
            args.jm = os.path.abspath(_need_exe(args.jm, "--jm"))  # ldecod runs in the case's folder
        if args.decode_later:
            args.decode_later = os.path.abspath(args.decode_later)
        else:
            args.ffmpeg = _need_exe(args.ffmpeg or "ffmpeg", "--ffmpeg")
        if not args.work:
            raise SetupError("--work is required")
        args.work = os.path.abspath(args.work)
        os.makedirs(args.work, exist_ok=True)
        if args.clip_cache:
            args.clip_cache = os.path.abspath(args.clip_cache)
    except (SetupError, OSError) as e:
        print("conformance.py: error: %s" % e, file=sys.stderr)
        return 2

    if args.stage_opt is not None:
        print("NOTE: --stage-opt %r: development mode, patched encoder runs without --gpu-entropy checks"
              % args.stage_opt, flush=True)
    runner = Runner(args)
    passed = failed = 0
    t_all = time.monotonic()
    for c in selected:
        t0 = time.monotonic()
        if args.verbose:
            print("case %s: %s [%s]" % (c.name, c.options, c.expect), flush=True)
        try:
            ok, reason, details = run_case(args, runner, c)
        except Exception as e:      # a harness bug must not hide the other cases
            ok, reason, details = False, "harness error: %r" % e, []
        dt = time.monotonic() - t0
        print("%s %s: %s (%.1f s)" % ("PASS" if ok else "FAIL", c.name, reason, dt), flush=True)
        for d in details:
            print("     " + d, flush=True)
        if ok:
            passed += 1
        else:
            failed += 1
    if len(selected) > 1:
        print("total %.1f s" % (time.monotonic() - t_all))
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
