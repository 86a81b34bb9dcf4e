#!/usr/bin/env python3
"""Benchmark (not a test) of the engine on a real target.

  tests/bench/bench.py [TARGET]        (default aarch64-linux-musl)

Reports, for a cold build (fresh work directory and stage cache; downloads reused from
work/cache so the network does not blur the figure): wall time, CPU time (user + system of
crossroot and every child), CPU utilisation = CPU / (wall x cores), per-stage times and the
critical path crossroot prints; then the wall time of a no-op run (median of 10); then the
rebuild after one musl patch changed (in a scratch copy of the project)."""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import scratch as scratch_copy

TARGET = sys.argv[1] if len(sys.argv) > 1 else "aarch64-linux-musl"
CORES = os.cpu_count()


def timed(args, quiet=False):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        print(proc.stdout)
        sys.exit("benchmark run failed: " + " ".join(args))
    return wall, cpu, proc.stdout


def main():
    scratch = tempfile.mkdtemp(prefix="crossroot-bench.")
    try:
        # the project, with patches copied so that one can be changed
        project = scratch_copy.project(scratch)
        base = scratch_copy.crossroot(scratch, project, "cold")

        wall, cpu, out = timed(base + ["build", TARGET])
        print(f"== cold build of {TARGET} on {CORES} cores")
        for line in out.splitlines():
            if line.startswith(("  ", "critical path", "total")) or "stage times" in line:
                print(line)
        print(f"wall {wall:.1f} s, CPU {cpu:.1f} s, utilisation {cpu / (wall * CORES):.0%}")

        walls = [timed(base + ["build", TARGET])[0] for _ in range(10)]
        print(f"== no-op build: median {statistics.median(walls) * 1000:.0f} ms "
              f"(min {min(walls) * 1000:.0f}, max {max(walls) * 1000:.0f})")

        patch_dir = os.path.join(project, "patches", "musl", "1.2.3")
        patch = os.path.join(patch_dir, sorted(os.listdir(patch_dir))[0])
        with open(patch) as f:
            text = f.read()
        with open(patch, "w") as f:
            f.write(text.replace("Subject:", "X-Benchmark: touched\nSubject:", 1))
        plan = timed(base + ["plan", TARGET])[2]
        wall, cpu, out = timed(base + ["build", TARGET])
        print(f"== rebuild after changing {os.path.basename(patch)}")
        print(plan.rstrip())
        for line in out.splitlines():
            if line.startswith(("  ", "critical path")):
                print(line)
        print(f"wall {wall:.1f} s, CPU {cpu:.1f} s, utilisation {cpu / (wall * CORES):.0%}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


main()
