#!/bin/sh
# Runs a command in a cgroup of its own and prints, on standard error, one line:
#   cgroup-run: LABEL wall W s cpu C s peak P MiB
# CPU time and peak memory are the cgroup's, so they count every process of the command,
# build steps inside crossroot's sandbox included (which `time` does not see). Needs root and
# cgroup v1 (cpuacct and memory) or v2. Benchmarks source it or run it:
#   tests/bench/cgroup-run.sh LABEL COMMAND [ARGUMENT]...
# The command's exit status is returned.
set -eu
label=$1
shift
name=crossroot-bench-$$
if [ -d /sys/fs/cgroup/cpuacct ] && [ -d /sys/fs/cgroup/memory ]; then
	cpu=/sys/fs/cgroup/cpuacct/$name mem=/sys/fs/cgroup/memory/$name
	mkdir "$cpu" "$mem"
	trap 'rmdir "$cpu" "$mem" 2>/dev/null || :' EXIT
	start=$(date +%s.%N)
	rc=0
	sh -c 'echo $$ >"$1/tasks"; echo $$ >"$2/tasks"; shift 2; exec "$@"' sh "$cpu" "$mem" "$@" || rc=$?
	end=$(date +%s.%N)
	cpu_s=$(awk '{ printf "%.1f", $1 / 1e9 }' "$cpu/cpuacct.usage")
	peak=$(awk '{ printf "%.0f", $1 / 1048576 }' "$mem/memory.max_usage_in_bytes")
else
	cg=/sys/fs/cgroup/$name
	mkdir "$cg"
	trap 'rmdir "$cg" 2>/dev/null || :' EXIT
	start=$(date +%s.%N)
	rc=0
	sh -c 'echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$cg" "$@" || rc=$?
	end=$(date +%s.%N)
	cpu_s=$(awk '$1 == "usage_usec" { printf "%.1f", $2 / 1e6 }' "$cg/cpu.stat")
	peak=$(awk '{ printf "%.0f", $1 / 1048576 }' "$cg/memory.peak" 2>/dev/null || echo "?")
fi
wall=$(echo "$start $end" | awk '{ printf "%.1f", $2 - $1 }')
echo "cgroup-run: $label wall $wall s cpu $cpu_s s peak $peak MiB" >&2
exit $rc
