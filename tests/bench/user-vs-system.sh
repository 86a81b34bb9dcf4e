#!/bin/sh
# The same tests/sysroot programs under qemu-user and on a kernel booted under qemu-system,
# side by side in one run (this machine drifts by 20% over an hour): for each TARGET,
# `crossroot test TARGET` then `crossroot test --system TARGET`, ROUNDS times alternately.
# Prints per run the wall seconds of the whole command (the programs' builds included, the
# same work in both), the passed/failed/skipped counts, and for --system the boot's own time
# (qemu's start to init's last frame: "the boot of TARGET ran N programs in ..."). The
# sysroots must be built; the kernels are fetched on first use.
# Usage: tests/bench/user-vs-system.sh [ROUNDS] TARGET... (default 1 round; about 5 to 10
# minutes a target and runner here, most of it the programs' builds).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
C=$ROOT/crossroot
ROUNDS=1
case ${1:-} in
[0-9]*) ROUNDS=$1; shift ;;
esac
[ $# -gt 0 ] || { echo "usage: tests/bench/user-vs-system.sh [ROUNDS] TARGET..." >&2; exit 2; }
LOG=$(mktemp /tmp/user-vs-system.XXXXXX)
trap 'rm -f "$LOG"' EXIT

# one TARGET RUNNER(user|system): a test run, its time and counts as a row
one() {
	start=$(date +%s.%N)
	if [ "$2" = system ]; then set -- "$1" "$2" --system; else set -- "$1" "$2"; fi
	rc=0
	"$C" -C "$ROOT" ${CROSSROOT_BENCH_OPTIONS:-} test ${3:-} "$1" >"$LOG" 2>&1 || rc=$?
	end=$(date +%s.%N)
	counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOG" | tail -n 1)
	boot=$(sed -n 's/.*the boot of .* ran [0-9]* programs in \(.*\)/\1/p' "$LOG" | tail -n 1)
	printf '%-30s %-7s %7.1f s  exit %d  %s%s\n' "$1" "$2" "$(echo "$end - $start" | bc)" "$rc" \
		"$counts" "${boot:+  (boot $boot)}"
}

printf '%-30s %-7s %9s\n' target runner wall
for r in $(seq "$ROUNDS"); do
	for t in "$@"; do
		one "$t" user
		one "$t" system
	done
done
