#!/usr/bin/env python3
"""Benchmark (not a test) of sharing work between machines, on a real target.

  tests/bench/remote-ccache.py [TARGET]      (default aarch64-linux-musl; about 25 min here)

With a real nginx (WebDAV) on 127.0.0.1 as the remote stage cache and a ccache directory of
its own, in a scratch copy of the project (downloads reused from work/cache):
  A  a cold build with --launcher ccache, pushing every stage (read-write): wall time, bytes
     uploaded (PUT request bodies in nginx's log);
  B  another cold work directory and stage cache, `build --pull-only`: wall time, bytes
     downloaded (GET response bodies), and that nothing was compiled;
  C  a patch to one musl source file (a new patch file, so musl and every stage above it get
     new keys): the rebuild without a launcher (in B's work directory) and with ccache (in
     A's, whose ccache saw the cold build), wall times and ccache's hits and misses."""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

import scratch as scratch_copy
from scratch import CROSSROOT, ROOT

TARGET = sys.argv[1] if len(sys.argv) > 1 else "aarch64-linux-musl"


def run(args, env=None, check=True):
    start = time.monotonic()
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env)
    wall = time.monotonic() - start
    if check and proc.returncode != 0:
        print(proc.stdout[-4000:])
        sys.exit("benchmark run failed: " + " ".join(args))
    return wall, proc.stdout


def nginx_bytes(log, method):
    """Sum of the byte counts nginx logged for `method` (request bodies for PUT, response
    bodies for GET), and the number of such requests."""
    total = count = 0
    with open(log) as f:
        for line in f:
            m, status, sent, received = line.split()
            if m == method and status.startswith("2"):
                total += int(received if method == "PUT" else sent)
                count += 1
    return total, count


def ccache_stats(env):
    out = subprocess.run(["ccache", "--print-stats"], env=env, stdout=subprocess.PIPE,
                         text=True).stdout
    stats = dict(line.split("\t", 1) for line in out.splitlines() if "\t" in line)
    hits = int(stats.get("direct_cache_hit", 0)) + int(stats.get("preprocessed_cache_hit", 0))
    return hits, int(stats.get("cache_miss", 0))


def stage_lines(out):
    return [line for line in out.splitlines()
            if line.startswith(("  ", "critical path", "total")) or "stage times" in line]


def mib(n):
    return f"{n / 1048576:.1f} MiB"


def main():
    for tool in ("nginx", "ccache"):
        if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
            sys.exit(f"remote-ccache.py: {tool} is not installed (make deps)")
    scratch = tempfile.mkdtemp(prefix="crossroot-bench.")
    nginx = None
    try:
        project = scratch_copy.project(scratch)

        def fresh(name):
            return scratch_copy.crossroot(scratch, project, name)

        # nginx: WebDAV PUT/MOVE/DELETE, a log line per request with both byte counts
        n = os.path.join(scratch, "nginx")
        os.makedirs(os.path.join(n, "www", "cache"))
        os.makedirs(os.path.join(n, "tmp"))
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        user = "user root root;" if os.getuid() == 0 else ""
        with open(os.path.join(n, "nginx.conf"), "w") as f:
            f.write(f"""daemon off; master_process off; worker_processes 1; pid {n}/nginx.pid;
error_log {n}/error.log; {user}
events {{ worker_connections 64; }}
http {{
  log_format bytes '$request_method $status $body_bytes_sent $request_length';
  access_log {n}/access.log bytes;
  client_body_temp_path {n}/tmp/body; proxy_temp_path {n}/tmp/proxy;
  fastcgi_temp_path {n}/tmp/fastcgi; uwsgi_temp_path {n}/tmp/uwsgi; scgi_temp_path {n}/tmp/scgi;
  server {{
    listen 127.0.0.1:{port}; root {n}/www;
    location / {{ dav_methods PUT DELETE MOVE; create_full_put_path on;
                 dav_access user:rw group:r all:r; client_max_body_size 0; }}
  }}
}}
""")
        binary = shutil.which("nginx") or "/usr/sbin/nginx"
        nginx = subprocess.Popen([binary, "-p", n + "/", "-c", os.path.join(n, "nginx.conf"),
                                  "-e", os.path.join(n, "error.log")])
        time.sleep(0.5)
        url = f"http://127.0.0.1:{port}/cache"

        env = dict(os.environ)
        env["XDG_CONFIG_HOME"] = os.path.join(scratch, "config")
        env["CCACHE_DIR"] = os.path.join(scratch, "ccache")
        env.pop("CROSSROOT_REMOTE_CACHE_CONFIG", None)
        env.pop("CROSSROOT_LAUNCHER", None)
        conf_dir = os.path.join(env["XDG_CONFIG_HOME"], "crossroot")
        os.makedirs(conf_dir)
        run([CROSSROOT, "key", "generate", os.path.join(conf_dir, "bench.key")], env)
        with open(os.path.join(conf_dir, "remote-cache"), "w") as f:
            f.write(f"url = {url}\nsigning-key = bench.key\n")
        log = os.path.join(n, "access.log")

        a = fresh("a")
        wall, out = run(a + ["--launcher", "ccache", "--remote-cache-mode", "read-write",
                             "build", TARGET], env)
        up, puts = nginx_bytes(log, "PUT")
        hits, misses = ccache_stats(env)
        print(f"== A: cold build of {TARGET} with ccache, pushing every stage")
        print("\n".join(stage_lines(out)))
        print(f"wall {wall:.1f} s; uploaded {mib(up)} in {puts} PUTs; ccache {misses} misses")

        open(log, "w").close()
        b = fresh("b")
        wall, out = run(b + ["build", "--pull-only", TARGET], env)
        down, gets = nginx_bytes(log, "GET")
        built = len(re.findall(r"^build   ", out, re.M))
        print(f"== B: cold work directory, build --pull-only")
        print(f"wall {wall:.1f} s; downloaded {mib(down)} in {gets} GETs; stages built: {built}")

        # C: a patch to one musl source file, taken from A's extracted tree
        version_dir = sorted(os.listdir(os.path.join(project, "patches", "musl")))[-1]
        tree = [d for d in os.listdir(os.path.join(scratch, "a", "work", "src"))
                if d.startswith(f"musl-{version_dir}-") and not d.endswith(".manifest")][0]
        rel = "src/string/strlen.c"
        with open(os.path.join(scratch, "a", "work", "src", tree, rel)) as f:
            lines = f.read().splitlines()
        patch = (f"--- a/{rel}\n+++ b/{rel}\n@@ -{len(lines)},1 +{len(lines)},2 @@\n"
                 f" {lines[-1]}\n+int __crossroot_bench_marker = 1;\n")
        with open(os.path.join(project, "patches", "musl", version_dir, "9999-bench.diff"),
                  "w") as f:
            f.write(patch)
        env_plain = dict(env)
        del env_plain["XDG_CONFIG_HOME"]   # no remote cache for the rebuilds
        env_plain["CROSSROOT_REMOTE_CACHE_CONFIG"] = ""
        wall_plain, out = run(b + ["build", TARGET], env_plain)
        rebuilt = len(re.findall(r"^build   ", out, re.M))
        print(f"== C: rebuild after a patch to musl's {rel} ({rebuilt} stages rebuilt)")
        print(f"without a launcher: wall {wall_plain:.1f} s")
        h0, m0 = ccache_stats(env)
        wall_cc, out = run(a + ["--launcher", "ccache", "build", TARGET], env_plain)
        h1, m1 = ccache_stats(env)
        print(f"with ccache (warm from A): wall {wall_cc:.1f} s, {m1 - m0} compiles missed, "
              f"{h1 - h0} from ccache ({wall_plain / wall_cc:.1f}x)")
        print("\n".join(stage_lines(out)))
        same = subprocess.run(["diff", "-r", "--no-dereference",
                               os.path.join(scratch, "a", "sysroots", TARGET, "usr"),
                               os.path.join(scratch, "b", "sysroots", TARGET, "usr")],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        print("the two rebuilt sysroots are " +
              ("the same" if same.returncode == 0 else "DIFFERENT:\n" + same.stdout[:2000]))
    finally:
        if nginx:
            nginx.send_signal(signal.SIGKILL)
            nginx.wait()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
