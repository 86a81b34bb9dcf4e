#!/usr/bin/env python3
"""Benchmark (not a test; run by hand on an idle machine): a cold build with an earlier engine
and with this checkout's, alternately in one run, since this machine drifts by up to 20%
between sittings.

  tests/bench/all-before-after.py [BEFORE_COMMIT [TARGET...]]
      BEFORE_COMMIT  default 8c9fc19: the engine before the scheduler and stage cache modules
                     (5c8683b is the last one before sandboxed steps)
      TARGET...      default: --all
      ROUNDS=N       before/after pairs (default 1); the medians are compared

The earlier commit's project (engine, recipes, targets) is exported with `git archive` into a
scratch directory and built there. Each run gets a fresh work directory, stage cache and out
directory; downloads (and apt's indices) are hard-linked from the download cache
($CROSSROOT_CACHE or work/cache, fill it with `./crossroot fetch --all`) and the builds run
--offline, so the network does not count. Reports wall time, CPU time and utilisation =
CPU / (wall x cores) of each: CPU from a cgroup of the run when this runs as root on cgroup v1
(build steps run in a sandbox: a cgroup sees every process of it), else user + system of
crossroot and its waited children. `--all` takes about 35 minutes on 2 cores; scratch space
peaks at about 15 GB and is removed at the end.

With BENCH_KEEP_AFTER=DIR, the "after" run's stage results are moved into DIR (a stage cache
directory such as work/cache/stages) instead of removed, so the half hour also warms it."""
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BEFORE = sys.argv[1] if len(sys.argv) > 1 else "8c9fc19"
TARGETS = sys.argv[2:] or ["--all"]
ROUNDS = int(os.environ.get("ROUNDS", "1"))
CGROUP_CPU = "/sys/fs/cgroup/cpuacct"
CORES = os.cpu_count()
DOWNLOADS = os.path.join(os.environ.get("CROSSROOT_CACHE") or os.path.join(ROOT, "work", "cache"),
                         "downloads")


def timed(args, log):
    """Run args; (wall seconds, CPU seconds)."""
    group = None
    if os.geteuid() == 0 and os.path.isdir(CGROUP_CPU):
        group = os.path.join(CGROUP_CPU, "crossroot-bench-%d" % os.getpid())
        os.makedirs(group, exist_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    with open(log, "w") as out:
        def join():
            if group:
                with open(os.path.join(group, "tasks"), "w") as f:
                    f.write(str(os.getpid()))
        proc = subprocess.run(args, stdout=out, stderr=subprocess.STDOUT, preexec_fn=join)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if group:
        with open(os.path.join(group, "cpuacct.usage")) as f:
            cpu = int(f.read()) / 1e9
        os.rmdir(group)
    if proc.returncode != 0:
        with open(log) as f:
            print(f.read()[-4000:])
        sys.exit("benchmark run failed (exit %d): %s" % (proc.returncode, " ".join(args)))
    return wall, cpu


def cold_all(name, project, scratch):
    base = os.path.join(scratch, name)
    cache = os.path.join(base, "cache")
    for sub in ("downloads", "apt"):
        have = os.path.join(os.path.dirname(DOWNLOADS), sub)
        for top, dirs, files in os.walk(have):
            into = os.path.join(cache, sub, os.path.relpath(top, have))
            os.makedirs(into, exist_ok=True)
            for entry in files:
                if not os.path.islink(os.path.join(top, entry)):
                    os.link(os.path.join(top, entry), os.path.join(into, entry))
    log = os.path.join(scratch, name + ".log")
    wall, cpu = timed([os.path.join(project, "crossroot"), "-C", project, "--work",
                       os.path.join(base, "work"), "--cache", cache, "--out",
                       os.path.join(base, "sysroots"), "--offline", "build"] + TARGETS, log)
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
    return wall, cpu


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
        what = " ".join(TARGETS)
        print(f"== cold build {what} on {CORES} cores: {BEFORE} (before) and this checkout "
              f"(after), {ROUNDS} round(s), alternately")
        runs = {"before": [], "after": []}
        for _ in range(ROUNDS):
            runs["before"].append(cold_all("before", before, scratch))
            runs["after"].append(cold_all("after", ROOT, scratch))
        median = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v))
                  for k, v in runs.items()}
        print(f"after / before (medians): wall {median['after'][0] / median['before'][0]:.3f}, "
              f"CPU {median['after'][1] / median['before'][1]:.3f}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
