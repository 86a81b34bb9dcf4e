#!/usr/bin/env python3
"""Benchmark (not a test; run by hand on an idle machine): a cold `build --all` with an
earlier engine and with this checkout's, one after the other in one run, since this machine
drifts by up to 20% between sittings.

  tests/bench/all-before-after.py [BEFORE_COMMIT]     (default 8c9fc19: the engine before
                                                       the scheduler and stage cache modules)

The earlier commit's project (engine, recipes, targets) is exported with `git archive` into a
scratch directory and built there. Each run gets a fresh work directory, stage cache and out
directory; downloads are hard-linked from the download cache ($CROSSROOT_CACHE or
work/cache, fill it with `./crossroot fetch --all`) and the builds run --offline, so the
network does not count. Reports wall time, CPU time (user + system of crossroot and every
child) and utilisation = CPU / (wall x cores) of each. Takes about 35 minutes on 2 cores;
scratch space peaks at about 15 GB and is removed at the end.

With BENCH_KEEP_AFTER=DIR, the "after" run's stage results are moved into DIR (a stage cache
directory such as work/cache/stages) instead of removed, so the half hour also warms it."""
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BEFORE = sys.argv[1] if len(sys.argv) > 1 else "8c9fc19"
CORES = os.cpu_count()
DOWNLOADS = os.path.join(os.environ.get("CROSSROOT_CACHE") or os.path.join(ROOT, "work", "cache"),
                         "downloads")


def timed(args, log):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with open(log, "w") as out:
        proc = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode != 0:
        with open(log) as f:
            print(f.read()[-4000:])
        sys.exit("benchmark run failed (exit %d): %s" % (proc.returncode, " ".join(args)))
    return wall, cpu


def cold_all(name, project, scratch):
    base = os.path.join(scratch, name)
    cache = os.path.join(base, "cache")
    os.makedirs(os.path.join(cache, "downloads"))
    for entry in os.listdir(DOWNLOADS):
        src = os.path.join(DOWNLOADS, entry)
        if os.path.isfile(src):
            os.link(src, os.path.join(cache, "downloads", entry))
    log = os.path.join(scratch, name + ".log")
    wall, cpu = timed([os.path.join(project, "crossroot"), "-C", project, "--work",
                       os.path.join(base, "work"), "--cache", cache, "--out",
                       os.path.join(base, "sysroots"), "--offline", "build", "--all"], log)
    print(f"{name:7} wall {wall / 60:5.1f} min ({wall:.0f} s)   CPU {cpu / 60:5.1f} min   "
          f"utilisation {100 * cpu / (wall * CORES):3.0f}%", flush=True)
    with open(log) as f:
        tail = [line.rstrip() for line in f if "critical path" in line]
    for line in tail:
        print("        " + line)
    keep = os.environ.get("BENCH_KEEP_AFTER")
    if keep and name == "after":
        os.makedirs(keep, exist_ok=True)
        stages = os.path.join(cache, "stages")
        for entry in os.listdir(stages):
            if not entry.startswith(".") and not os.path.exists(os.path.join(keep, entry)):
                os.rename(os.path.join(stages, entry), os.path.join(keep, entry))
    shutil.rmtree(base)
    return wall


def main():
    if not os.path.isdir(DOWNLOADS) or not os.listdir(DOWNLOADS):
        sys.exit(f"no downloads in {DOWNLOADS}: run './crossroot fetch --all' first")
    print(f"load average before: {os.getloadavg()[0]:.2f} (run on an idle machine)")
    scratch = tempfile.mkdtemp(prefix="crossroot-bench-all.")
    try:
        before = os.path.join(scratch, "before-project")
        os.makedirs(before)
        archive = subprocess.run(["git", "-C", ROOT, "archive", BEFORE], check=True,
                                 stdout=subprocess.PIPE).stdout
        subprocess.run(["tar", "-x", "-C", before], input=archive, check=True)
        subprocess.run(["make", "-s", "-C", before, "crossroot"], check=True)
        subprocess.run(["make", "-s", "-C", ROOT, "crossroot"], check=True)
        print(f"== cold build --all on {CORES} cores: {BEFORE} (before) and this checkout (after)")
        wall_before = cold_all("before", before, scratch)
        wall_after = cold_all("after", ROOT, scratch)
        print(f"after / before: {wall_after / wall_before:.2f}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
