#!/usr/bin/env python3
"""Where a process's main thread spends the time between two page marks of the desktop bench's launches.

The page's own marks (User Timing, `hermes:*`) say *when* things happen; `perf record -a` says *what* each thread
runs. Recorded with realtime timestamps, the two line up: the bench prints each launch's `performance.timeOrigin`
(epoch ms) with its marks. Usage (machine otherwise idle; see bench/README.md, "Profiling a launch"):

    HERMES_BENCH_PART=launch cargo xtask bench app > /tmp/launch.log 2>&1 &
    sleep 60   # until the bench binary is built and the first launch starts
    perf record -F 2000 -a -k CLOCK_REALTIME -o /tmp/launch.data -- sleep 25
    python3 bench/tools/window-perf.py /tmp/launch.data /tmp/launch.log start history-painted [--comm hermes-desktop]

Marks are named without `hermes:`; `nav` is the navigation start (0). Prints, per launch window and summed, the
main thread's CPU by library and its top symbols (system libraries without symbols show as `[unknown]`).
"""
import argparse
import collections
import re
import subprocess
import sys


def windows(log_path, start, end):
    out = []
    for line in open(log_path, errors="replace"):
        if "BENCH launch page marks" not in line or "origin=" not in line:
            continue
        marks = {"nav": 0.0}
        for kv in line.split("): ", 1)[1].split():
            k, _, v = kv.partition("=")
            try:
                marks[k] = float(v)
            except ValueError:
                pass
        origin = marks.pop("origin", None)
        if origin is None or start not in marks or end not in marks:
            continue
        out.append(((origin + marks[start]) / 1000.0, (origin + marks[end]) / 1000.0))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("perf_data")
    ap.add_argument("bench_log")
    ap.add_argument("start", help="first mark (without hermes:), or nav")
    ap.add_argument("end", help="second mark")
    ap.add_argument("--comm", default="WebKitWebProces", help="main thread's name (default: the web process)")
    ap.add_argument("--top", type=int, default=20)
    a = ap.parse_args()
    wins = windows(a.bench_log, a.start, a.end)
    if not wins:
        sys.exit(f"no launch in {a.bench_log} has both marks {a.start!r} and {a.end!r} (and an origin)")
    script = subprocess.run(
        ["perf", "script", "-i", a.perf_data, "-F", "comm,pid,tid,time,ip,sym,dso"],
        capture_output=True, text=True, errors="replace", check=True,
    ).stdout
    line_re = re.compile(r"\s*(\S.*?)\s+(\d+)/(\d+)\s+([\d.]+):\s+[0-9a-f]+\s+(.*?)\s+\((.*)\)\s*$")
    by_lib = collections.Counter()
    by_sym = collections.Counter()
    per_win = collections.Counter()
    stamps = []
    for line in script.splitlines():
        m = line_re.match(line)
        if not m:
            continue
        comm, pid, tid, t, sym, dso = m.groups()
        if comm != a.comm or pid != tid:
            continue
        t = float(t)
        stamps.append(t)
        for i, (s, e) in enumerate(wins):
            if s <= t <= e:
                lib = dso.rsplit("/", 1)[-1]
                by_lib[lib] += 1
                by_sym[(lib, sym)] += 1
                per_win[i] += 1
                break
    if not stamps:
        sys.exit(f"no samples of a {a.comm!r} main thread in {a.perf_data}")
    # samples → ms from the recorded frequency (perf script prints no rate; take it from the header)
    hdr = subprocess.run(["perf", "report", "-i", a.perf_data, "--header-only"], capture_output=True, text=True).stdout
    freq = re.search(r"sample_freq\D*(\d+)", hdr)
    hz = int(freq.group(1)) if freq else 1000
    ms = lambda n: n * 1000.0 / hz
    n = len(wins)
    print(f"{n} launch windows {a.start} → {a.end}: " + ", ".join(
        f"{(e - s) * 1000:.0f} ms wall / {ms(per_win[i]):.0f} ms CPU" for i, (s, e) in enumerate(wins)))
    print(f"{a.comm} main thread, CPU per launch by library:")
    for lib, c in by_lib.most_common(12):
        print(f"  {ms(c) / n:6.1f} ms  {lib}")
    print("top symbols:")
    for (lib, sym), c in by_sym.most_common(a.top):
        print(f"  {ms(c) / n:6.1f} ms  {lib[:28]:28}  {sym[:70]}")


if __name__ == "__main__":
    main()
