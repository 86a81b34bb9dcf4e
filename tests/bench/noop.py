#!/usr/bin/env python3
"""Benchmark (not a test): how long `crossroot build` and `crossroot plan` take when there is
nothing to do, the first thing a user waits for after the first build.

  tests/bench/noop.py [--runs N] [--before BINARY] [--project DIR] [TARGET...]
                                                          (default aarch64-linux-musl)

Uses the checkout's ./crossroot with its usual work directory, stage cache and sysroots
($CROSSROOT_CACHE and the other usual settings apply): the target must have been built there
once. One warm-up build makes sure the runs are no-ops (it says so if it had work to do). Then
N rounds (default 15) of `build TARGET...` and `plan TARGET...`, and prints the median, minimum
and maximum wall time and the median CPU time (user + system) of each.

--before BINARY runs another crossroot (an earlier commit's, built elsewhere) on the same
directories too, alternating with this one run by run, so that a machine's load disturbs both
alike; the stage keys of the two must be the same, or its runs are not no-ops. Run it on an
otherwise idle machine for figures to quote: the load average is printed first.

--project DIR plans and builds another checkout's recipes (its targets/, stages/, sources/;
-C DIR, sysroots in DIR/sysroots) with this checkout's work directory and caches: to compare
two engines on recipes both give the same keys for, when the recipes changed between them."""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
WORK = os.path.join(ROOT, "work")


def run(args, log):
    """Wall and CPU seconds (user + system, from wait4) of one run, which must succeed; its
    output goes to the file `log`."""
    start = time.monotonic()
    pid = os.posix_spawn(args[0], args, os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_CREAT |
                                        os.O_TRUNC, 0o644),
                                       (os.POSIX_SPAWN_DUP2, 1, 2)])
    _, status, usage = os.wait4(pid, 0)
    wall = time.monotonic() - start
    if status != 0:
        with open(log, errors="replace") as f:
            sys.stdout.write(f.read())
        sys.exit("benchmark run failed: " + " ".join(args))
    return wall, usage.ru_utime + usage.ru_stime


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--before", help="another crossroot binary, run alternately")
    ap.add_argument("--project", default=ROOT, help="the recipes to plan (-C)")
    ap.add_argument("--work", default=WORK, help="the work directory (default: the checkout's)")
    ap.add_argument("--cache", help="the caches (default: crossroot's, $CROSSROOT_CACHE or "
                    "WORK/cache)")
    ap.add_argument("targets", nargs="*", default=["aarch64-linux-musl"])
    a = ap.parse_args()
    binaries = [("this", os.path.join(ROOT, "crossroot"))]
    if a.before:
        binaries.insert(0, ("before", os.path.abspath(a.before)))
    with open("/proc/loadavg") as f:
        print(f"== {os.cpu_count()} cores, load average {' '.join(f.read().split()[:3])} "
              "(near 0 for figures to quote)")
    log = os.path.join(tempfile.mkdtemp(prefix="crossroot-noop."), "log")
    dirs = ["-C", a.project, "--work", a.work] + (["--cache", a.cache] if a.cache else [])
    for _, binary in binaries:
        run([binary] + dirs + ["build"] + a.targets, log)
        with open(log, errors="replace") as f:
            if any(line.startswith(("build   ", "extract ")) for line in f):
                print(f"   (the warm-up build of {binary} had work to do)")
    results = {(name, cmd): ([], []) for name, _ in binaries for cmd in ("build", "plan")}
    for _ in range(a.runs):
        for cmd in ("build", "plan"):
            for name, binary in binaries:
                wall, cpu = run([binary] + dirs + [cmd] + a.targets, log)
                results[(name, cmd)][0].append(wall)
                results[(name, cmd)][1].append(cpu)
    shutil.rmtree(os.path.dirname(log))
    print(f"== no-op runs of {' '.join(a.targets)}, {a.runs} each (wall: median, min, max; "
          "CPU: median)")
    for (name, cmd), (walls, cpus) in results.items():
        print(f"  {name:6} {cmd:5}  wall {statistics.median(walls) * 1000:6.1f} ms "
              f"(min {min(walls) * 1000:6.1f}, max {max(walls) * 1000:6.1f})   "
              f"CPU {statistics.median(cpus) * 1000:6.1f} ms")


if __name__ == "__main__":
    main()
