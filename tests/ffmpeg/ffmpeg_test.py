#!/usr/bin/env python3
"""Tests of our ffmpeg (plugin/ffmpeg): the gudcanny filter and libx264's gpuec options.

usage: ffmpeg_test.py --ffmpeg OURS [--gudcanny TOOL] [--system-ffmpeg FFMPEG] [--ref-dir DIR]
                      [--work DIR] [--update] CASE

CASE (each one CTest test, tests/ffmpeg/CMakeLists.txt):
  framemd5     `-vf gudcanny=... -bitexact -f framemd5` on frames of foreman_qcif equals the stored
               references DIR/*.framemd5 (--update rewrites them), also with backend=cpu and cpu_threads 1
               and 3 (the same frames); gray and 4:4:4 inputs are made here
  tool         the filter's edge maps equal the gudcanny tool's (--gudcanny) on the same y4m frames, and
               the stored edges references are the md5 sums of the tool's maps
  roi          mode=roi changes the stream and lowers the QP of the region macroblocks (per-MB QPs from
               FFmpeg's `-debug qp`, --system-ffmpeg, when it prints them); with aq-mode 0, -qp,
               -preset ultrafast and -tune psnr the stream equals the one without the filter, and
               libx264 says that it ignores the regions
  gpu-entropy  mode=roi + baseline + gpu-entropy=cpu equals gpu-entropy=off byte for byte (frame and
               sliced threads), the stage says it ran, the stream decodes with -err_detect explode
  bad-params   a gpu-entropy / gpu-device value or key x264 refuses is fatal; other keys only warn
  bad-options  filter options out of range or unknown fail; valid ones work
  delay        the filter holds one frame (asynchronous detection): -frames:v N gives the first N frames of
               the whole run, a clip of one frame gives its frame, frames the timeline (enable=) disables
               pass unchanged and in order, for the three modes
  cuda         backend=cuda gives the reference bytes, and the cpu backend's frames in overlay and roi mode
               and with -frames:v; exit 77 (skipped) without a usable CUDA device
  containers   an mp4 (H.264 + AAC), a mkv (H.264 + Opus) and a mov (H.264 + AAC) made by our ffmpeg from
               lavfi sources: the edge maps of their video equal the stored container_edges.framemd5 (the
               same video in each); `-vf gudcanny=mode=roi -c:v libx264 -profile:v baseline -x264-params
               gpu-entropy=cpu -c:a copy` keeps every audio packet, gives the video bitstream of
               gpu-entropy=off byte for byte (compared as Annex B after h264_mp4toannexb), runs the stage,
               and decodes cleanly (-err_detect explode -xerror)
  build        what a user's ffmpeg has: -f lavfi -i testsrc2, demuxers, decoders, encoders, filters
               (drawtext, scale_cuda where built), -hwaccels lists cuda, hwupload_cuda, h264_cuvid
  outputs      a failed run leaves no output file and keeps the file it would have replaced (its bytes and
               mode), a successful one replaces it (mode kept) or creates it, through a symbolic link the
               target is replaced and the link stays, /dev/null and pipes are written in place, and no
               temporary file is left in the folder
  hw-errors    without a usable CUDA device: -hwaccel cuda, -init_hw_device cuda and hwupload_cuda into
               gudcanny fail with FFmpeg's hardware errors, exit != 0 and no output file is left
               (exit 77 on a machine with a CUDA device)
Clips: GPUEC_SEQUENCES or GPUEC_SHARED_DIR/sequences (default ../shared next to the repository;
foreman_qcif.y4m.xz, foreman_cif.y4m.xz); exit 77 when they are missing. Exit 0 pass, 1 fail, 2 usage.
"""
import argparse
import hashlib
import lzma
import os
import re
import subprocess
import sys
import tempfile

SKIP = 77
FRAMES = 5  # frames of each clip the tests use

# name -> (filter graph after the input, input variant); the references are ref-dir/NAME.framemd5
FRAMEMD5_CASES = {
    "edges": ("gudcanny", "420"),
    "edges_frame_step1_sigma07": ("gudcanny=strip=0:step=1:sigma=0.7", "420"),
    "overlay_sigma2": ("gudcanny=mode=overlay:sigma=2.0", "420"),
    "gray_edges": ("gudcanny", "gray"),
    "yuv444_edges": ("gudcanny=mode=edges:step=1", "444"),
    "yuv444_overlay": ("gudcanny=mode=overlay", "444"),
    "nv12_edges": ("format=nv12,gudcanny", "420"),
    "nv12_overlay_sigma2": ("format=nv12,gudcanny=mode=overlay:sigma=2.0", "420"),
}
# Cases whose frames, converted back to yuv420p (lossless from nv12), must equal another case's reference.
SAME_AS = {"nv12_edges": ("format=nv12,gudcanny,format=yuv420p", "edges"),
           "nv12_overlay_sigma2": ("format=nv12,gudcanny=mode=overlay:sigma=2.0,format=yuv420p", "overlay_sigma2")}

failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if not ok:
        failures.append(what)
    return ok


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kw)


def tail(text, n=15):
    return "\n".join(text.decode(errors="replace").splitlines()[-n:])


def sequences_dir():
    if os.environ.get("GPUEC_SEQUENCES"):
        return os.environ["GPUEC_SEQUENCES"]
    repo = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return os.path.join(os.environ.get("GPUEC_SHARED_DIR", os.path.join(repo, "..", "shared")), "sequences")


def read_y4m(path, frames):
    """Header fields and the first `frames` frames (bytes) of a 4:2:0 y4m(.xz)."""
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rb") as f:
        header = f.readline().decode().split()
        w = int(next(t[1:] for t in header if t.startswith("W")))
        h = int(next(t[1:] for t in header if t.startswith("H")))
        size = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
        out = []
        for _ in range(frames):
            line = f.readline()
            if not line.startswith(b"FRAME"):
                break
            out.append(f.read(size))
    return w, h, out


def write_y4m(path, w, h, frames, variant):
    """The frames as a 4:2:0 (as read), gray (Cmono) or 4:4:4 (chroma repeated 2x2) y4m."""
    cw, ch = (w + 1) // 2, (h + 1) // 2
    tag = {"420": "C420jpeg", "gray": "Cmono", "444": "C444"}[variant]
    with open(path, "wb") as f:
        f.write(f"YUV4MPEG2 W{w} H{h} F30000:1001 Ip A1:1 {tag}\n".encode())
        for fr in frames:
            f.write(b"FRAME\n")
            if variant == "420":
                f.write(fr)
                continue
            f.write(fr[: w * h])
            if variant == "444":
                for p in range(2):
                    plane = fr[w * h + p * cw * ch: w * h + (p + 1) * cw * ch]
                    for y in range(h):
                        row = plane[(y // 2) * cw: (y // 2 + 1) * cw]
                        f.write(bytes(row[x // 2] for x in range(w)))


class Env:
    def __init__(self, args):
        self.ffmpeg = args.ffmpeg
        self.args = args
        self.work = args.work
        os.makedirs(self.work, exist_ok=True)
        self.clips = {}

    def clip(self, name, variant="420"):
        key = (name, variant)
        if key not in self.clips:
            src = os.path.join(sequences_dir(), name + ".y4m.xz")
            if not os.path.isfile(src):
                print(f"skipped: {src} not found (set GPUEC_SHARED_DIR or GPUEC_SEQUENCES)")
                sys.exit(SKIP)
            w, h, frames = read_y4m(src, FRAMES)
            path = os.path.join(self.work, f"{name}_{variant}.y4m")
            write_y4m(path, w, h, frames, variant)
            self.clips[key] = (path, w, h)
        return self.clips[key]

    def ff(self, *args, ffmpeg=None):
        return run([ffmpeg or self.ffmpeg, "-hide_banner", "-nostdin", "-y"] + list(args))

    def path(self, name):
        return os.path.join(self.work, name)


def framemd5_of(env, graph, variant, extra=()):
    clip = env.clip("foreman_qcif", variant)[0]
    r = env.ff("-i", clip, "-vf", graph, *extra, "-bitexact", "-f", "framemd5", "-")
    return r


def case_framemd5(env):
    for name, (graph, variant) in FRAMEMD5_CASES.items():
        r = framemd5_of(env, graph, variant)
        if not check(r.returncode == 0, f"{name}: ffmpeg -vf {graph} runs"):
            print(tail(r.stderr))
            continue
        ref = os.path.join(env.args.ref_dir, name + ".framemd5")
        if env.args.update:
            with open(ref, "wb") as f:
                f.write(r.stdout)
            print(f"     wrote {ref}")
            continue
        if not check(os.path.isfile(ref), f"{name}: reference {ref} exists"):
            continue
        with open(ref, "rb") as f:
            want = f.read()
        lines = [l for l in r.stdout.decode().splitlines() if l and not l.startswith("#")]
        ok = check(r.stdout == want, f"{name}: -vf {graph} ({variant}, {len(lines)} frames) equals {os.path.basename(ref)}")
        if not ok:
            print("got:\n" + r.stdout.decode())
        if name in SAME_AS:
            graph2, other = SAME_AS[name]
            r2 = framemd5_of(env, graph2, variant)
            with open(os.path.join(env.args.ref_dir, other + ".framemd5"), "rb") as f:
                check(r2.returncode == 0 and md5_lines(r2.stdout) == md5_lines(f.read()),
                      f"{name}: -vf {graph2} gives the frames of {other}.framemd5 (nv12 in, the same edges)")
    # The cpu backend's thread count changes nothing (canny::CpuDetector, the CPU twin's bytes on any count).
    if not env.args.update:
        with open(os.path.join(env.args.ref_dir, "edges.framemd5"), "rb") as f:
            want = md5_lines(f.read())
        for graph in ("gudcanny=backend=cpu:cpu_threads=1", "gudcanny=backend=cpu:cpu_threads=3"):
            r = framemd5_of(env, graph, "420")
            check(r.returncode == 0 and md5_lines(r.stdout) == want, f"-vf {graph} gives the frames of edges.framemd5")


def case_tool(env):
    if not env.args.gudcanny:
        print("usage: --gudcanny TOOL needed")
        sys.exit(2)
    variants = [("gudcanny", []), ("gudcanny=strip=0", ["--frame-level"]), ("gudcanny=step=1", ["--step", "0.01"]),
                ("gudcanny=sigma=0.7", ["--sigma", "0.7"]),
                ("gudcanny=sigma=2:step=1:strip=0", ["--sigma", "2", "--step", "0.01", "--frame-level"])]
    for clip_name in ("foreman_cif", "foreman_qcif"):
        clip, w, h = env.clip(clip_name)
        frame_bytes = w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2)
        for graph, tool_args in variants:
            raw = env.path("edges.yuv")
            r = env.ff("-i", clip, "-vf", graph, "-f", "rawvideo", raw)
            if not check(r.returncode == 0, f"{clip_name}: ffmpeg -vf {graph}"):
                print(tail(r.stderr))
                continue
            data = open(raw, "rb").read()
            check(len(data) == FRAMES * frame_bytes, f"{clip_name}: {FRAMES} frames of {w}x{h} 4:2:0 out")
            for k in range(FRAMES):
                pgm = env.path("tool.pgm")
                t = run([env.args.gudcanny, "-q", *tool_args, "--frame", str(k), clip, pgm])
                if not check(t.returncode == 0, f"{clip_name} frame {k}: gudcanny {' '.join(tool_args)}"):
                    print(tail(t.stderr))
                    continue
                tool_map = open(pgm, "rb").read()[-w * h:]
                luma = data[k * frame_bytes: k * frame_bytes + w * h]
                chroma = data[k * frame_bytes + w * h: (k + 1) * frame_bytes]
                same = luma == tool_map
                detail = ""
                if not same:
                    i = next(i for i in range(w * h) if luma[i] != tool_map[i])
                    detail = f" (first difference at x {i % w} y {i // w}: filter {luma[i]}, tool {tool_map[i]})"
                check(same, f"{clip_name} frame {k}: -vf {graph} luma equals gudcanny {' '.join(tool_args)}{detail}")
                check(chroma == b"\x80" * len(chroma) and set(luma) <= {0, 255},
                      f"{clip_name} frame {k}: edges mode output is 0/255 luma, chroma 128")


    # The stored references of the edges cases against the tool's maps: md5 of the tool's luma (+ chroma 128).
    clip, w, h = env.clip("foreman_qcif")
    chroma = b"\x80" * (2 * ((w + 1) // 2) * ((h + 1) // 2))
    for ref_name, tool_args, with_chroma in (("edges", [], True), ("gray_edges", [], False),
                                             ("edges_frame_step1_sigma07",
                                              ["--frame-level", "--step", "0.01", "--sigma", "0.7"], True)):
        ref = os.path.join(env.args.ref_dir, ref_name + ".framemd5")
        want = [l.split(",")[-1].strip() for l in open(ref).read().splitlines() if l and not l.startswith("#")]
        got = []
        for k in range(FRAMES):
            pgm = env.path("tool.pgm")
            t = run([env.args.gudcanny, "-q", *tool_args, "--frame", str(k), clip, pgm])
            tool_map = open(pgm, "rb").read()[-w * h:] if t.returncode == 0 else b""
            got.append(hashlib.md5(tool_map + (chroma if with_chroma else b"")).hexdigest())
        check(got == want, f"{os.path.basename(ref)}: every frame's md5 is that of gudcanny {' '.join(tool_args)}'s map")


def encode(env, out, vf, *opts, threads="1"):
    clip = env.clip("foreman_qcif")[0]
    args = ["-i", clip]
    if vf:
        args += ["-vf", vf]
    args += ["-c:v", "libx264", "-threads", threads, *opts, "-f", "h264", out]
    return env.ff(*args)


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def qp_tables(ffmpeg, stream, mbw, mbh):
    """Per-frame MB QP tables from `-debug qp` (FFmpeg prints them at debug level), or None."""
    r = run([ffmpeg, "-hide_banner", "-nostdin", "-threads", "1", "-debug", "qp", "-loglevel", "debug",
             "-i", stream, "-f", "null", "-"])
    lines = r.stderr.decode(errors="replace").splitlines()
    tables, i = [], 0
    while i < len(lines):
        if "New frame, type:" in lines[i]:
            rows = []
            for line in lines[i + 1: i + 1 + mbh]:
                body = re.sub(r"^\[[^]]*\] ?", "", line).rstrip("\n")
                if len(body) != 2 * mbw or not re.fullmatch(r"[ 0-9]+", body):
                    break
                rows.append([int(body[2 * x: 2 * x + 2]) for x in range(mbw)])
            if len(rows) == mbh:
                tables.append(rows)
            i += mbh
        i += 1
    return tables or None


def roi_rects(stderr):
    """The regions showinfo printed, per frame: lists of (left, top, right, bottom)."""
    frames, cur = [], None
    for line in stderr.decode(errors="replace").splitlines():
        if "Regions Of Interest(ROI) information" in line:
            cur = []
            frames.append(cur)
        m = re.search(r"region: \((\d+), (\d+)\) -> \((\d+), (\d+)\), qp offset: (-?\d+)/(\d+)", line)
        if m and cur is not None:
            cur.append(tuple(int(v) for v in m.groups()))
    return frames


def case_roi(env):
    _, w, h = env.clip("foreman_qcif")
    mbw, mbh = (w + 15) // 16, (h + 15) // 16
    base, roi = env.path("base.264"), env.path("roi.264")
    r0 = encode(env, base, None)
    r1 = encode(env, roi, "gudcanny=mode=roi:density=0.05:qoffset=-0.2")
    if not (check(r0.returncode == 0, "encode without the filter") and
            check(r1.returncode == 0, "encode with gudcanny=mode=roi")):
        print(tail(r0.stderr), tail(r1.stderr))
        return
    check(digest(base) != digest(roi), "mode=roi with default AQ changes the stream")
    check(b"ROI side data ignored" not in r1.stderr, "no 'ROI ignored' warning with default AQ")

    # The regions themselves (showinfo after the filter) and the per-MB QPs of both streams.
    clip = env.clip("foreman_qcif")[0]
    s = env.ff("-i", clip, "-vf", "gudcanny=mode=roi:density=0.05:qoffset=-0.2,showinfo", "-f", "null", "-")
    rects = roi_rects(s.stderr)
    check(len(rects) == FRAMES and all(rects), f"showinfo sees regions on every frame ({[len(f) for f in rects]})")
    check(all(q[4:] == (-1, 5) for f in rects for q in f), "every region has qoffset -1/5")
    decoder = env.args.system_ffmpeg or env.ffmpeg
    qb, qr = qp_tables(decoder, base, mbw, mbh), qp_tables(decoder, roi, mbw, mbh)
    if not qb or not qr:
        print(f"note: {decoder} prints no per-MB QPs (-debug qp); per-MB check skipped")
    elif check(len(qb) == len(qr) == len(rects), f"QP tables of {len(qb)} frames"):
        lower = higher = n_in = 0
        d_in = d_out = 0
        n_out = 0
        for k, regions in enumerate(rects):
            mark = [[False] * mbw for _ in range(mbh)]
            for left, top, right, bottom, *_ in regions:
                for y in range(top // 16, (bottom + 15) // 16):
                    for x in range(left // 16, (right + 15) // 16):
                        mark[y][x] = True
            for y in range(mbh):
                for x in range(mbw):
                    d = qr[k][y][x] - qb[k][y][x]
                    if mark[y][x]:
                        n_in += 1
                        d_in += d
                    else:
                        n_out += 1
                        d_out += d
                    lower += d < 0
                    higher += d > 0
        check(lower + higher > 0, f"per-MB QPs differ ({lower} MBs lower, {higher} higher)")
        mean_in = d_in / max(n_in, 1)
        mean_out = d_out / max(n_out, 1)
        check(mean_in < 0 and mean_in < mean_out,
              f"region MBs get lower QPs: mean change {mean_in:+.2f} in {n_in} region MBs, {mean_out:+.2f} in {n_out} others")

    # Setups in which x264 ignores the regions: byte identity and one warning.
    for opts, why in ((["-x264-params", "aq-mode=0"], "adaptive quantization is off"),
                      (["-qp", "26"], "constant QP"),
                      (["-preset", "ultrafast"], "adaptive quantization is off"),
                      (["-tune", "psnr"], "adaptive quantization is off")):
        a, b = env.path("plain.264"), env.path("roi_ignored.264")
        ra = encode(env, a, None, *opts)
        rb = encode(env, b, "gudcanny=mode=roi", *opts)
        label = " ".join(opts)
        if check(ra.returncode == 0 and rb.returncode == 0, f"{label}: both encodes run"):
            check(digest(a) == digest(b), f"{label}: mode=roi gives the stream without the filter")
            msg = rb.stderr.decode(errors="replace")
            check(msg.count("ROI side data ignored") == 1 and why in msg,
                  f"{label}: libx264 warns once that it ignores ROI ({why})")
        else:
            print(tail(ra.stderr), tail(rb.stderr))


def case_gpu_entropy(env):
    for threads, extra in (("1", ""), ("2", ""), ("4", ":sliced-threads=1")):
        outs = {}
        for backend in ("off", "cpu"):
            out = env.path(f"ge_{backend}_{threads}.264")
            r = encode(env, out, "gudcanny=mode=roi", "-profile:v", "baseline",
                       "-x264-params", f"gpu-entropy={backend}{extra}", threads=threads)
            if not check(r.returncode == 0, f"threads {threads}{extra}: gpu-entropy={backend} encode runs"):
                print(tail(r.stderr))
                return
            outs[backend] = (out, r.stderr.decode(errors="replace"))
        label = f"threads {threads}{extra}"
        check(digest(outs["off"][0]) == digest(outs["cpu"][0]), f"{label}: gpu-entropy=cpu equals gpu-entropy=off")
        log = outs["cpu"][1]
        check("gpu-entropy: cpu stage on" in log, f"{label}: stderr shows 'gpu-entropy: cpu stage on'")
        m = re.search(r"gpu-entropy: cpu stage coded (\d+) slices, (\d+) macroblocks", log)
        check(bool(m) and int(m.group(1)) >= FRAMES, f"{label}: the stage coded the slices ({m.group(0) if m else 'no count line'})")
        check("stage is off" not in log, f"{label}: the stage was not turned off")
        check("gpu-entropy" not in outs["off"][1] or "stage on" not in outs["off"][1], f"{label}: off has no stage")
        for decoder, who in ((env.ffmpeg, "our ffmpeg"), (env.args.system_ffmpeg, "the system ffmpeg")):
            if not decoder:
                continue
            d = run([decoder, "-hide_banner", "-nostdin", "-err_detect", "explode", "-xerror", "-i", outs["cpu"][0],
                     "-f", "framemd5", "-"])
            frames = [l for l in d.stdout.decode().splitlines() if l and not l.startswith("#")]
            check(d.returncode == 0 and len(frames) == FRAMES,
                  f"{label}: {who} decodes {len(frames)} frames with -err_detect explode -xerror")


def case_bad_params(env):
    for params, want in (("gpu-entropy=bogus", "bad value 'bogus' for 'gpu-entropy'"),
                         ("gpu-device=-1", "bad value '-1' for 'gpu-device'"),
                         ("gpu-device=abc", "bad value 'abc' for 'gpu-device'"),
                         ("gpu-entropi=cpu", "no option 'gpu-entropi'")):
        r = encode(env, env.path("bad.264"), None, "-profile:v", "baseline", "-x264-params", params)
        msg = r.stderr.decode(errors="replace")
        check(r.returncode != 0 and want in msg, f"-x264-params {params}: exit {r.returncode}, says \"{want}\"")
        if want not in msg:
            print(tail(r.stderr))
    r = encode(env, env.path("warn.264"), None, "-x264-params", "no-such-key=1")
    check(r.returncode == 0 and b"Error parsing option 'no-such-key = 1'" in r.stderr,
          "-x264-params no-such-key=1: stock behaviour kept (a warning, exit 0)")


def case_bad_options(env):
    clip = env.clip("foreman_qcif")[0]
    for opts, want in (("sigma=5", "parameter 'sigma' out of range"), ("sigma=0.05", "parameter 'sigma' out of range"),
                       ("mode=foo", 'Unable to parse option value "foo"'), ("step=0", "parameter 'step' out of range"),
                       ("step=25", "parameter 'step' out of range"), ("density=2", "parameter 'density' out of range"),
                       ("density=-0.1", "parameter 'density' out of range"),
                       ("qoffset=-2", "parameter 'qoffset' out of range"),
                       ("qoffset=1.5", "parameter 'qoffset' out of range"),
                       ("backend=foo", 'Unable to parse option value "foo"'),
                       ("strip=maybe", 'Unable to parse option value "maybe" as boolean'),
                       ("device=-1", "parameter 'device' out of range"),
                       ("cpu_threads=-1", "parameter 'cpu_threads' out of range"),
                       ("cpu_threads=257", "parameter 'cpu_threads' out of range"), ("nosuchoption=1", "'nosuchoption' not found")):
        r = env.ff("-i", clip, "-frames:v", "1", "-vf", f"gudcanny={opts}", "-f", "null", "-")
        check(r.returncode != 0 and want.encode() in r.stderr, f"gudcanny={opts}: fails (exit {r.returncode}): {want}")
    for opts in ("backend=cpu:sigma=0.1:step=24:strip=0:mode=roi:density=1:qoffset=1",
                 "backend=auto:sigma=2:step=1:mode=overlay", "cpu:0:1.5:3:1:edges",
                 "vflip,gudcanny", "vflip,gudcanny=mode=overlay", "vflip,gudcanny=mode=roi"):
        graph = opts if "gudcanny" in opts else f"gudcanny={opts}"
        r = env.ff("-i", clip, "-frames:v", "1", "-vf", graph, "-f", "null", "-")
        check(r.returncode == 0, f"{graph}: runs")
        if r.returncode:
            print(tail(r.stderr))
    h = env.ff("-h", "filter=gudcanny")
    text = h.stdout.decode(errors="replace")
    check(all(o in text for o in ("backend", "device", "cpu_threads", "sigma", "step", "strip", "mode", "density", "qoffset",
                                   "aq-mode 0", "-qp")),
          "ffmpeg -h filter=gudcanny documents every option and when libx264 ignores ROI")


def md5_lines(stdout):
    """The per-frame lines of a framemd5 output (comments dropped)."""
    return [l for l in stdout.decode().splitlines() if l and not l.startswith("#")]


def case_delay(env):
    clip = env.clip("foreman_qcif")[0]
    one = env.path("one_frame.y4m")
    with open(clip, "rb") as f:
        header = f.readline()
        w, h = env.clip("foreman_qcif")[1:]
        frame = f.read(len(b"FRAME\n") + w * h + 2 * ((w + 1) // 2) * ((h + 1) // 2))
    with open(one, "wb") as f:
        f.write(header + frame)
    plain = md5_lines(env.ff("-i", clip, "-bitexact", "-f", "framemd5", "-").stdout)
    for graph in ("gudcanny", "gudcanny=mode=overlay", "gudcanny=mode=roi,showinfo", "vflip,gudcanny=mode=overlay"):
        full = env.ff("-i", clip, "-vf", graph, "-bitexact", "-f", "framemd5", "-")
        lines = md5_lines(full.stdout)
        if not check(full.returncode == 0 and len(lines) == FRAMES, f"{graph}: {len(lines)} frames of {FRAMES}"):
            print(tail(full.stderr))
            continue
        for n in range(1, FRAMES):
            r = env.ff("-i", clip, "-vf", graph, "-frames:v", str(n), "-bitexact", "-f", "framemd5", "-")
            check(r.returncode == 0 and md5_lines(r.stdout) == lines[:n],
                  f"{graph} -frames:v {n}: the first {n} frames of the whole run")
        r = env.ff("-i", one, "-vf", graph, "-bitexact", "-f", "framemd5", "-")
        check(r.returncode == 0 and md5_lines(r.stdout) == lines[:1], f"{graph}: a clip of one frame gives that frame")
        # Timeline: frames 1 and 3 filtered, the others as they came in (after vflip: the flipped frames).
        base = graph.split(",")[0] if not graph.startswith("vflip") else graph.split(",")[1]
        pre = "vflip," if graph.startswith("vflip") else ""
        unfiltered = plain if not pre else md5_lines(env.ff("-i", clip, "-vf", "vflip", "-bitexact", "-f", "framemd5",
                                                            "-").stdout)
        timed = f"{pre}{base}{':' if '=' in base else '='}enable='eq(n,1)+eq(n,3)'"
        t = env.ff("-i", clip, "-vf", timed, "-bitexact", "-f", "framemd5", "-")
        got = md5_lines(t.stdout)
        want = [lines[k] if k in (1, 3) else unfiltered[k] for k in range(FRAMES)]
        check(t.returncode == 0 and got == want, f"{timed}: frames 1 and 3 filtered, the others unchanged, in order")


def case_cuda(env):
    r = framemd5_of(env, "gudcanny=backend=cuda", "420")
    msg = r.stderr.decode(errors="replace")
    if r.returncode != 0 and "cuda backend not available" in msg:
        line = next(l for l in msg.splitlines() if "cuda backend not available" in l)
        print(f"skipped: {line.strip()}")
        sys.exit(SKIP)
    if not check(r.returncode == 0, "backend=cuda runs"):
        print(tail(r.stderr))
        return
    ref = os.path.join(env.args.ref_dir, "edges.framemd5")
    check(r.stdout == open(ref, "rb").read(), "backend=cuda equals the cpu reference edges.framemd5")
    o = framemd5_of(env, "gudcanny=backend=cuda:strip=0:step=1:sigma=0.7", "420")
    ref = os.path.join(env.args.ref_dir, "edges_frame_step1_sigma07.framemd5")
    check(o.returncode == 0 and o.stdout == open(ref, "rb").read(),
          "backend=cuda strip=0 step=1 sigma=0.7 equals its cpu reference")
    # Overlay (edges drawn from the pinned buffer), roi (regions, printed by showinfo), frame limits.
    clip = env.clip("foreman_cif")[0]
    for opts, extra in (("mode=overlay", []), ("mode=overlay:sigma=2", ["-frames:v", "2"]),
                        ("mode=edges", ["-frames:v", "1"]), ("mode=roi:density=0.05", [])):
        outs = {}
        for backend in ("cpu", "cuda"):
            graph = f"gudcanny=backend={backend}:{opts},showinfo"
            outs[backend] = env.ff("-i", clip, "-vf", graph, *extra, "-bitexact", "-f", "framemd5", "-")
        rois = {b: [l.split("] ", 1)[-1] for l in r.stderr.decode(errors="replace").splitlines() if "region:" in l]
                for b, r in outs.items()}
        check(all(r.returncode == 0 for r in outs.values()) and outs["cpu"].stdout == outs["cuda"].stdout and
              rois["cpu"] == rois["cuda"],
              f"foreman_cif {opts} {' '.join(extra)}: backend=cuda gives the cpu's frames "
              f"({len(md5_lines(outs['cuda'].stdout))}) and regions ({len(rois['cuda'])})")


# The containers of case_containers: extension -> audio encoder options. The video is the same in all.
CONTAINERS = {"mp4": ["-c:a", "aac", "-b:a", "96k"], "mkv": ["-c:a", "libopus", "-b:a", "64k"],
              "mov": ["-c:a", "aac", "-b:a", "96k"]}
BITEXACT = ["-fflags", "+bitexact", "-flags:v", "+bitexact", "-flags:a", "+bitexact"]


def make_container(env, ext):
    """A 2 s clip (testsrc2 320x240 at 25 fps, libx264; a 440 Hz sine, stereo 48 kHz) made from lavfi. x264's
    cpu-independent=1: its default SIMD picks (mbtree's float propagation, the x9 intra compares) differ between
    processors (AVX2 against AVX-512), and with them the decoded frames the stored edge maps are made from."""
    out = env.path(f"in.{ext}")
    r = env.ff("-f", "lavfi", "-i", "testsrc2=size=320x240:rate=25:duration=2", "-f", "lavfi",
               "-i", "sine=frequency=440:sample_rate=48000:duration=2", "-ac", "2", "-c:v", "libx264",
               "-preset", "veryfast", "-threads", "1", "-x264-params", "cpu-independent=1", "-pix_fmt", "yuv420p",
               *CONTAINERS[ext], *BITEXACT, out)
    return out if check(r.returncode == 0, f"{ext}: made from -f lavfi testsrc2 + sine") else print(tail(r.stderr))


def packets(env, path, stream):
    """framemd5 of the packets of one stream, copied (no decode): size and md5 of each packet."""
    r = env.ff("-i", path, "-map", f"0:{stream}", "-c", "copy", "-f", "framemd5", "-")
    return md5_lines(r.stdout) if r.returncode == 0 else None


def case_containers(env):
    ref = os.path.join(env.args.ref_dir, "container_edges.framemd5")
    for ext in CONTAINERS:
        src = make_container(env, ext)
        if not src:
            continue
        probe = env.ff("-i", src)
        text = probe.stderr.decode(errors="replace")
        check("Video: h264" in text and ("Audio: aac" in text if ext != "mkv" else "Audio: opus" in text),
              f"{ext}: ffmpeg -i shows the H.264 video and the {'Opus' if ext == 'mkv' else 'AAC'} audio")
        edges = env.ff("-i", src, "-map", "0:v", "-vf", "gudcanny", "-bitexact", "-f", "framemd5", "-")
        if env.args.update and ext == "mp4":
            with open(ref, "wb") as f:
                f.write(edges.stdout)
            print(f"     wrote {ref}")
        with open(ref, "rb") as f:
            want = md5_lines(f.read())
        check(edges.returncode == 0 and len(want) == 50 and md5_lines(edges.stdout) == want,
              f"{ext}: the edge maps of its 50 video frames equal container_edges.framemd5")
        streams = {}
        for backend in ("cpu", "off"):
            out = env.path(f"out_{backend}.{ext}")
            r = env.ff("-i", src, "-map", "0", "-vf", "gudcanny=mode=roi", "-c:v", "libx264", "-profile:v", "baseline",
                       "-threads", "1", "-x264-params", f"gpu-entropy={backend}", "-c:a", "copy", *BITEXACT, out)
            if not check(r.returncode == 0, f"{ext}: gudcanny=mode=roi + libx264 gpu-entropy={backend} + -c:a copy"):
                print(tail(r.stderr))
                break
            if backend == "cpu":
                check(b"gpu-entropy: cpu stage on" in r.stderr, f"{ext}: the cpu stage ran")
            annexb = env.path(f"out_{backend}_{ext}.264")
            a = env.ff("-i", out, "-map", "0:v", "-c", "copy", "-bsf:v", "h264_mp4toannexb", "-f", "h264", annexb)
            check(a.returncode == 0, f"{ext}: gpu-entropy={backend}: the video copied out as Annex B")
            streams[backend] = (out, digest(annexb) if a.returncode == 0 else None)
        if len(streams) < 2:
            continue
        out = streams["cpu"][0]
        check(streams["cpu"][1] is not None and streams["cpu"][1] == streams["off"][1],
              f"{ext}: the video bitstream with gpu-entropy=cpu equals gpu-entropy=off byte for byte")
        src_audio, out_audio = packets(env, src, "a"), packets(env, out, "a")
        check(bool(src_audio) and src_audio == out_audio,
              f"{ext}: -c:a copy keeps the {len(src_audio or [])} audio packets (size and md5 of each)")
        d = env.ff("-err_detect", "explode", "-xerror", "-i", out, "-map", "0", "-f", "framemd5", "-")
        video = [l for l in md5_lines(d.stdout) if l.startswith("0,")]
        check(d.returncode == 0 and len(video) == 50,
              f"{ext}: the output decodes cleanly with -err_detect explode -xerror ({len(video)} video frames)")


def listed(env, what):
    r = env.ff(f"-{what}")
    return r.stdout.decode(errors="replace")


def case_build(env):
    r = env.ff("-f", "lavfi", "-i", "testsrc2=size=160x120:rate=10:duration=0.5", "-f", "null", "-")
    check(r.returncode == 0 and b"frame=    5" in r.stderr.replace(b"\r", b"\n"), "-f lavfi -i testsrc2 gives 5 frames")
    hw = listed(env, "hwaccels").split()
    check("cuda" in hw, "-hwaccels lists cuda")
    wanted = {"demuxers": ["mov,mp4,m4a,3gp,3g2,mj2", "matroska,webm", "mpegts", "lavfi", "hls", "flv", "wav"],
              "muxers": ["mp4", "matroska", "mov", "mpegts", "hls", "webm", "framemd5"],
              "decoders": ["h264", "hevc", "libdav1d", "aac", "opus", "mp3float", "h264_cuvid", "hevc_cuvid", "vp9"],
              "encoders": ["libx264", "aac", "libopus", "libmp3lame", "flac", "mjpeg", "rawvideo"],
              "filters": ["gudcanny", "hwupload_cuda", "hwdownload", "scale", "drawtext", "edgedetect", "aresample",
                          "scale_cuda", "yadif_cuda"],
              "bsfs": ["h264_mp4toannexb", "aac_adtstoasc"], "protocols": ["file", "pipe", "tcp", "http"]}
    for what, names in wanted.items():
        text = listed(env, what)
        words = set(re.findall(r"[\w,.-]+", text))
        missing = [n for n in names if n not in words]
        check(not missing, f"-{what} lists {', '.join(names)}" + (f" (missing: {', '.join(missing)})" if missing else ""))


def case_hw_errors(env):
    r = env.ff("-init_hw_device", "cuda", "-f", "lavfi", "-i", "testsrc2=duration=0.2", "-f", "null", "-")
    if r.returncode == 0:
        print("skipped: a usable CUDA device is present (the GPU machine runs tools/scripts/gpu-ffmpeg-cuda.sh)")
        sys.exit(SKIP)
    src = make_container(env, "mp4")
    if not src:
        return
    for name, args in (("-hwaccel cuda -hwaccel_output_format cuda",
                        ["-hwaccel", "cuda", "-hwaccel_output_format", "cuda", "-i", src, "-vf",
                         "gudcanny,hwdownload,format=nv12"]),
                       ("-init_hw_device cuda + hwupload_cuda",
                        ["-init_hw_device", "cuda=gpu", "-filter_hw_device", "gpu", "-i", src, "-vf",
                         "format=yuv420p,hwupload_cuda,gudcanny,hwdownload,format=yuv420p"]),
                       ("hwupload_cuda (its own device)",
                        ["-i", src, "-vf", "format=yuv420p,hwupload_cuda,gudcanny,hwdownload,format=yuv420p"]),
                       ("gudcanny=backend=cuda on system frames", ["-i", src, "-vf", "gudcanny=backend=cuda"])):
        out = env.path("hw_error.mp4")
        if os.path.exists(out):
            os.unlink(out)
        r = env.ff(*args, "-c:v", "libx264", "-an", out)
        msg = r.stderr.decode(errors="replace")
        said = re.search(r"(Device creation failed|Cannot load libcuda|cuda backend not available|"
                         r"No device available|Failed setup for format cuda|cuInit)", msg)
        check(r.returncode != 0 and said is not None,
              f"{name} without a device: exit {r.returncode}, says \"{said.group(0) if said else tail(r.stderr, 2)}\"")
        check(not os.path.exists(out), f"{name} without a device: no output file left")


def case_outputs(env):
    clip = env.clip("foreman_qcif")[0]
    d = env.path("outputs")
    os.makedirs(d, exist_ok=True)
    old = os.path.join(d, "old.mp4")

    def leftovers():
        return sorted(n for n in os.listdir(d) if n.startswith("."))

    with open(old, "wb") as f:
        f.write(b"precious")
    os.chmod(old, 0o640)
    for why, vf in (("a filter that cannot start", "gudcanny=backend=cuda:device=99"),
                    ("an unknown filter option", "gudcanny=nosuch=1")):
        r = env.ff("-i", clip, "-vf", vf, "-c:v", "libx264", old)
        check(r.returncode != 0 and open(old, "rb").read() == b"precious" and os.stat(old).st_mode & 0o777 == 0o640,
              f"failed run ({why}): exit {r.returncode}, the existing file keeps its bytes and mode")
    r = env.ff("-i", clip, "-c:v", "libx264", "-t", "0.1", old)
    check(r.returncode == 0 and open(old, "rb").read(8) != b"precious" and os.stat(old).st_mode & 0o777 == 0o640,
          "successful run: the file is replaced, its mode kept")
    new = os.path.join(d, "new.mkv")
    r = env.ff("-i", clip, "-vf", "gudcanny=backend=cuda:device=99", new)
    check(r.returncode != 0 and not os.path.exists(new), "failed run: no new file")
    r = env.ff("-i", clip, "-t", "0.1", new)
    mask = os.umask(0)
    os.umask(mask)
    check(r.returncode == 0 and os.path.getsize(new) > 0 and os.stat(new).st_mode & 0o777 == 0o666 & ~mask,
          "successful run: a new file with mode 0666 & ~umask")
    link = os.path.join(d, "link.mkv")
    os.symlink("new.mkv", link)
    r = env.ff("-i", clip, "-t", "0.2", link)
    check(r.returncode == 0 and os.path.islink(link) and os.path.getsize(new) > 0,
          "through a symbolic link: the link stays, its target is replaced")
    r = env.ff("-i", clip, "-t", "0.1", "-f", "matroska", "/dev/null")
    check(r.returncode == 0 and os.path.exists("/dev/null") and not os.path.isfile("/dev/null"),
          "/dev/null is written in place (still a device)")
    r = env.ff("-i", clip, "-t", "0.1", "-f", "matroska", "-")
    check(r.returncode == 0 and r.stdout[:4] == b"\x1a\x45\xdf\xa3", "'-' writes to stdout")
    faststart = os.path.join(d, "fast.mp4")
    r = env.ff("-i", clip, "-c:v", "libx264", "-movflags", "+faststart", faststart)
    check(r.returncode == 0 and b"moov" in open(faststart, "rb").read(64),
          "-movflags +faststart (the muxer reopens its file) works, moov first")
    check(leftovers() == [], f"no temporary file left in the folder {leftovers()}")


CASES = {"framemd5": case_framemd5, "tool": case_tool, "roi": case_roi, "gpu-entropy": case_gpu_entropy,
         "bad-params": case_bad_params, "bad-options": case_bad_options, "delay": case_delay, "cuda": case_cuda,
         "containers": case_containers, "build": case_build, "hw-errors": case_hw_errors, "outputs": case_outputs}


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--ffmpeg", required=True)
    p.add_argument("--gudcanny")
    p.add_argument("--system-ffmpeg", default="")
    p.add_argument("--ref-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "ref"))
    p.add_argument("--work", help="keep the files here (default: a temporary folder, removed)")
    p.add_argument("--update", action="store_true", help="framemd5: rewrite the references")
    p.add_argument("case", choices=sorted(CASES))
    args = p.parse_args()
    if not os.access(args.ffmpeg, os.X_OK):
        print(f"{args.ffmpeg}: not an executable (build target ffmpeg_build)")
        return 1
    with tempfile.TemporaryDirectory(prefix="gpuec-ffmpeg-test-") as tmp:
        if not args.work:
            args.work = tmp
        CASES[args.case](Env(args))
    print(f"{len(failures)} failed" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
