#!/bin/sh
# The clang we build (stages/llvm.yaml) against the host's clang-19, compiling the same stage:
# aarch64-linux-musl's libcxx (host clang) and aarch64-linux-musl-llvm19's (our clang 19.1.7,
# same sources, same flags), rebuilt ROUNDS times each, alternately, in one run (this machine
# drifts by 20% over an hour). Prints wall seconds, CPU seconds and peak memory per build and
# the ratios of the medians. CPU and memory are a cgroup's (build steps run in a sandbox whose
# children `time` does not see: tests/bench/cgroup-run.sh), so this needs root and cgroup v1
# cpuacct+memory or v2. The peak is the cgroup's, page cache included.
# Both targets must be built already (the stages other than libcxx come from a copy of the
# stage cache). Usage: tests/bench/clang-speed.sh [ROUNDS] (default 2; a round is ~6 min here).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${1:-2}
STAGE=${STAGE:-libcxx}
HOST_TARGET=aarch64-linux-musl
BUILT_TARGET=aarch64-linux-musl-llvm19
C=$ROOT/crossroot
B=$(mktemp -d /tmp/clang-speed.XXXXXX)
trap 'rm -rf "$B"' EXIT
[ "$(id -u)" = 0 ] || { echo "clang-speed.sh: needs root (a cgroup measures CPU and memory)" >&2; exit 1; }

# key TARGET: the stage's key prefix as `crossroot plan` prints it (cached: built before)
key() {
	"$C" -C "$ROOT" plan "$1" | awk -v s="$STAGE" '$1 == s && $2 == "cached" { print $3 }'
}
for t in $HOST_TARGET $BUILT_TARGET; do
	[ -n "$(key $t)" ] || { echo "clang-speed.sh: build $t first ($STAGE is not cached)" >&2; exit 1; }
done

# measure NAME TARGET: one rebuild of STAGE in a scratch work directory and cache copy
measure() {
	name=$1 target=$2
	k=$(key "$target")
	rm -rf "$B/w"
	mkdir -p "$B/w"
	cp -a "$ROOT/work/cache/stages" "$B/w/stages-all"
	mkdir -p "$B/w/cache"
	mv "$B/w/stages-all" "$B/w/cache/stages"
	ln -s "$ROOT/work/cache/downloads" "$B/w/cache/downloads"
	[ -d "$ROOT/work/cache/apt" ] && ln -s "$ROOT/work/cache/apt" "$B/w/cache/apt"
	rm -rf "$B/w/cache/stages/$k"*
	"$ROOT/tests/bench/cgroup-run.sh" "$name" "$C" -C "$ROOT" --work "$B/w/work" \
		--cache "$B/w/cache" --out "$B/w/out" build "$target" >"$B/log" 2>"$B/measured" ||
		{ echo "clang-speed.sh: the build of $target failed:" >&2; tail "$B/log" >&2; exit 1; }
	# cgroup-run: NAME wall W s cpu C s peak P MiB
	set -- $(grep '^cgroup-run: ' "$B/measured")
	wall=$4 cpu_s=$7 peak=${10}
	grep -q "build   $STAGE ($target)" "$B/log" || { echo "clang-speed.sh: $STAGE of $target was not rebuilt:" >&2; tail "$B/log" >&2; exit 1; }
	echo "$name $wall $cpu_s $peak" >>"$B/results"
	printf '%-10s %-28s wall %7s s  cpu %7s s  peak %6s MiB\n' "$name" "$target" "$wall" "$cpu_s" "$peak"
}

echo "rebuilding $STAGE, $ROUNDS rounds, alternately (host clang-19 first, then ours)"
i=0
while [ $i -lt "$ROUNDS" ]; do
	measure host $HOST_TARGET
	measure built $BUILT_TARGET
	i=$((i + 1))
done
median() { awk -v n="$1" -v col="$2" '$1 == n { print $col }' "$B/results" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
hw=$(median host 2) bw=$(median built 2) hc=$(median host 3) bc=$(median built 3)
echo "medians: host clang-19 wall $hw s cpu $hc s; built clang wall $bw s cpu $bc s"
echo "built/host: wall $(echo "$bw $hw" | awk '{ printf "%.3f", $1 / $2 }'), cpu $(echo "$bc $hc" | awk '{ printf "%.3f", $1 / $2 }') (below 1: ours is faster)"
