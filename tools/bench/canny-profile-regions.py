#!/usr/bin/env python3
"""Where a profiled kernel waits, from the SASS page that canny-ab-run.sh --profile keeps (ab/profile_NAME_SET_sass.csv:
ncu --page source --csv --print-source sass, a table a profiled launch): for each table, its stall samples by reason,
then its code cut at the block barriers and exits into regions, then the instructions with the most samples. A warp
waiting at a barrier is sampled on the instructions after it (stall reason "barrier"), so a region's barrier samples
are the wait at the barrier that starts it: the spread of the warps' work in the region before. A kernel's tables are
numbered in the file's order; a table without samples is left out.

usage: tools/bench/canny-profile-regions.py [--kernel SUB] [--top N] CSV...
  --kernel SUB  only the tables of kernels whose name contains SUB
  --top N       the N instructions with the most samples a table (default 8; 0: none)
Exit status: 0, 1 usage, 2 a file that cannot be read or holds no table (of SUB) with stall samples.
"""
import csv
import signal
import sys

# What ends a region: a block barrier (__syncthreads and its reductions, a cluster barrier's wait) or an exit.
ENDS = ("BAR.SYNC", "BAR.RED", "UCGABAR_WAIT", "EXIT")
SAMPLES = "Warp Stall Sampling (All Samples)"
EXECUTED = "Instructions Executed"


def tables(path):
    """[(kernel name, header, rows)]: the file's tables, in its order."""
    out = []
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    i = 0
    while i < len(rows):
        r = rows[i]
        if len(r) >= 2 and r[0] == "Kernel Name" and i + 1 < len(rows):
            name, header, body = r[1], rows[i + 1], []
            i += 2
            while i < len(rows) and not (rows[i] and rows[i][0] == "Kernel Name"):
                if len(rows[i]) == len(header):
                    body.append(rows[i])
                i += 1
            out.append((name, header, body))
        else:
            i += 1
    return out


def number(s):
    try:
        return int(float(s))
    except ValueError:
        return 0


def report(name, index, header, body, top):
    col = {h: k for k, h in enumerate(header)}
    if SAMPLES not in col or "Source" not in col or "Address" not in col:
        return False
    reasons = [h for h in header if h.startswith("stall_") and "(Not Issued)" not in h]
    samples = [number(r[col[SAMPLES]]) for r in body]
    executed = [number(r[col[EXECUTED]]) if EXECUTED in col else 0 for r in body]
    total = sum(samples)
    if total == 0:
        return False
    print(f"== {name}, table {index}: {total} samples, {sum(executed)} warp instructions")
    by = sorted(((sum(number(r[col[h]]) for r in body), h[len("stall_"):]) for h in reasons), reverse=True)
    print("   stalls: " + ", ".join(f"{reason} {100.0 * n / total:.1f} %" for n, reason in by[:6] if n))
    print("   regions (from, to, samples, of which at a barrier, warp instructions, what ends it):")
    barrier = col.get("stall_barrier")
    start, s, w, e = 0, 0, 0, 0
    for k, r in enumerate(body):
        s += samples[k]
        w += number(r[barrier]) if barrier is not None else 0
        e += executed[k]
        src = r[col["Source"]].strip()
        op = src.split()[1] if src.startswith("@") and len(src.split()) > 1 else (src.split() or [""])[0]
        if op.startswith(ENDS) or k == len(body) - 1:
            if s or e:
                a, b = body[start][col["Address"]], r[col["Address"]]
                print(f"     {a[-6:]}-{b[-6:]} {100.0 * s / total:5.1f} % {100.0 * w / total:5.1f} % {e:12d}  {src[:50]}")
            start, s, w, e = k + 1, 0, 0, 0
    if top > 0:
        print("   instructions:")
        for k in sorted(range(len(body)), key=lambda k: -samples[k])[:top]:
            if samples[k] == 0:
                break
            r = body[k]
            why = sorted(((number(r[col[h]]), h[len("stall_"):]) for h in reasons), reverse=True)[:2]
            whys = ", ".join(f"{reason} {n}" for n, reason in why if n)
            print(f"     {r[col['Address']][-6:]} {100.0 * samples[k] / total:5.1f} %  "
                  f"{r[col['Source']].strip()[:56]:56s} {whys}")
    return True


def main(argv):
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under head
    sub, top, paths = "", 8, []
    it = iter(argv)
    for a in it:
        if a in ("-h", "--help"):
            print(__doc__)
            return 0
        if a in ("--kernel", "--top"):
            v = next(it, None)
            if v is None or (a == "--top" and not v.isdigit()):
                print(f"canny-profile-regions: {a} needs {'SUB' if a == '--kernel' else 'a count'}", file=sys.stderr)
                return 1
            if a == "--kernel":
                sub = v
            else:
                top = int(v)
        elif a.startswith("-"):
            print(f"canny-profile-regions: unknown option {a}\n{__doc__}", file=sys.stderr)
            return 1
        else:
            paths.append(a)
    if not paths:
        print(__doc__, file=sys.stderr)
        return 1
    status = 0
    for path in paths:
        try:
            found = tables(path)
        except (OSError, UnicodeDecodeError, csv.Error) as e:
            print(f"canny-profile-regions: {path}: {e}", file=sys.stderr)
            status = 2
            continue
        seen, shown = {}, 0
        for name, header, body in found:
            seen[name] = seen.get(name, 0) + 1
            if sub in name and report(name, seen[name], header, body, top):
                shown += 1
        if shown == 0:
            print(f"canny-profile-regions: {path}: no table{' of ' + sub if sub else ''} with stall samples",
                  file=sys.stderr)
            status = 2
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
