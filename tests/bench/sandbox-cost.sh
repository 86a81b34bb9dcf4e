#!/bin/sh
# Benchmark (not a test; run by hand): what the step sandbox costs, side by side in one run.
# Builds crossroot at BASE (default 5c8683b, the last commit before bubblewrap) in a temporary
# worktree, then, alternating the two binaries ROUNDS times (default 5), builds cold a toy
# target whose one stage has STEPS (default 40) steps that do nothing (`true`): the wall time
# per step is the sandbox's cost per step (namespaces, mounts, and for root the step user).
# Prints the median of each and their difference per step. Temporaries under $TMPDIR.
#
# Usage: tests/bench/sandbox-cost.sh [BASE]
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${1:-5c8683b}
ROUNDS=${ROUNDS:-5}
STEPS=${STEPS:-40}
T=$(mktemp -d "${TMPDIR:-/tmp}/crossroot-bench.XXXXXX")
trap 'git -C "$ROOT" worktree remove --force "$T/base" >/dev/null 2>&1; rm -rf "$T"' EXIT INT TERM
git -C "$ROOT" worktree add -q --detach "$T/base" "$BASE"
make -s -C "$T/base" crossroot >/dev/null
make -s -C "$ROOT" crossroot >/dev/null
P=$T/p
mkdir -p "$P/targets" "$P/stages" "$P/sources"
printf 'triple: aarch64-unknown-linux-musl\nqemu: qemu-aarch64-static\nstages: [noop]\n' >"$P/targets/toy.yaml"
{
	echo "name: noop"
	echo "steps:"
	i=0
	while [ $i -lt "$STEPS" ]; do echo "  - 'true $i'"; i=$((i + 1)); done
} >"$P/stages/noop.yaml"
# cold_ms BINARY: one cold build of the toy target, in milliseconds
cold_ms() {
	rm -rf "$T/w" "$T/c" "$T/o"
	start=$(date +%s%N)
	"$1" -C "$P" --work "$T/w" --cache "$T/c" --out "$T/o" build toy >/dev/null 2>&1
	end=$(date +%s%N)
	echo $(((end - start) / 1000000))
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
: >"$T/base.ms"
: >"$T/head.ms"
r=0
while [ $r -lt "$ROUNDS" ]; do
	cold_ms "$T/base/crossroot" >>"$T/base.ms"
	cold_ms "$ROOT/crossroot" >>"$T/head.ms"
	r=$((r + 1))
done
b=$(median <"$T/base.ms")
h=$(median <"$T/head.ms")
echo "cold build of a $STEPS-step no-op stage, median of $ROUNDS, as $(id -un):"
echo "  $BASE (hand-written namespaces): $b ms ($(echo "scale=1; $b / $STEPS" | bc) ms a step)"
echo "  HEAD (bubblewrap):           $h ms ($(echo "scale=1; $h / $STEPS" | bc) ms a step)"
echo "  the sandbox costs $(echo "scale=1; ($h - $b) / $STEPS" | bc) ms more a step"
