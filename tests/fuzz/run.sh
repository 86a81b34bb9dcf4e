#!/bin/sh
# Runs both libFuzzer targets for $FUZZ_SECONDS in all (default 20), half each: the recipe
# loader (tests/fuzz/fuzz-recipes.c) and variable expansion and planning
# (tests/fuzz/fuzz-plan.c), starting from seeds made of the project's own targets, stages and
# sources (and, for the planner, the hand-written inputs in tests/fuzz/plan-seeds/). A crash,
# an ASan/UBSan report or a leak fails the test; the input that caused it is kept in
# work/fuzz/ and the command to replay it is printed. `make fuzz` runs it for 10 minutes.
. "$(dirname "$0")/../lib/common.sh"
KEEP=$ROOT/work/fuzz
SECONDS_EACH=$(( ${FUZZ_SECONDS:-20} / 2 ))
[ "$SECONDS_EACH" -gt 0 ] || SECONDS_EACH=1
mkdir -p "$T/seeds" "$T/corpus" "$T/plan-seeds" "$T/plan-corpus" "$KEEP"

# recipe loader seed: a target naming stage "s", then a stage "s" naming source "s", then
# that source
i=0
for t in "$ROOT"/targets/*.yaml; do
	for st in "$ROOT"/stages/*.yaml; do
		src=$(sed -n 's/^sources: \[\([^],]*\).*/\1/p' "$st")
		[ -n "$src" ] || continue
		i=$((i + 1))
		{
			sed 's/^stages: .*/stages: [s]/' "$t"
			printf '\n%%%%\n'
			sed -e 's/^name: .*/name: s/' -e 's/^sources: .*/sources: [s]/' -e '/^depends:/d' "$st"
			printf '\n%%%%\n'
			sed 's/^name: .*/name: s/' "$ROOT/sources/$src.yaml"
		} >"$T/seeds/seed$i"
	done
done
assert "seeds from the project's recipes" test "$i" -gt 0

# planner seed: a target naming stage "a", stage "a" depending on stage "b" (the next stage
# of the project), both on source "s" (a's own source, without its signatures: the scratch
# project has no keys/)
j=0
set -- "$ROOT"/stages/*.yaml
first=$1
shift
set -- "$@" "$first"
for t in "$ROOT"/targets/*.yaml; do
	for st in "$ROOT"/stages/*.yaml; do
		src=$(sed -n 's/^sources: \[\([^],]*\).*/\1/p' "$st")
		[ -n "$src" ] || continue
		next=$1
		shift
		set -- "$@" "$next"
		j=$((j + 1))
		{
			sed 's/^stages: .*/stages: [a]/' "$t"
			printf '\n%%%%\n'
			sed -e 's/^name: .*/name: a/' -e 's/^sources: .*/sources: [s]/' \
				-e 's/^depends: .*/depends: [b]/' "$st"
			grep -q '^depends:' "$st" || printf 'depends: [b]\n'
			printf '\n%%%%\n'
			sed -e 's/^name: .*/name: b/' -e 's/^sources: .*/sources: [s]/' -e '/^depends:/d' "$next"
			printf '\n%%%%\n'
			sed -e 's/^name: .*/name: s/' -e '/^keyring:/d' -e '/^ *signature:/d' \
				"$ROOT/sources/$src.yaml"
		} >"$T/plan-seeds/seed$j"
	done
done
cp "$ROOT"/tests/fuzz/plan-seeds/* "$T/plan-seeds/"
assert "planner seeds from the project's recipes and tests/fuzz/plan-seeds" test "$j" -gt 0

# fuzz NAME FUZZER ARTIFACT_PREFIX CORPUS SEEDS: runs one target for $SECONDS_EACH
fuzz() {
	name=$1 fuzzer=$2 prefix=$3
	run "$fuzzer" -max_total_time="$SECONDS_EACH" -max_len=8192 -close_fd_mask=3 \
		-artifact_prefix="$KEEP/$prefix" "$4" "$5"
	runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$T/out")
	if check "$name: no crash, no sanitizer report, no leak" 0 "Done "; then
		echo "       $runs inputs in $SECONDS_EACH s"
	else
		crash=$(sed -n 's/.*Test unit written to //p' "$T/out" | tail -1)
		echo "    replay: $fuzzer ${crash:-$KEEP/$prefix<crash-file>}"
	fi
}
fuzz "fuzzing the recipe loader" "$ROOT/tests/fuzz/fuzz-recipes" "" \
	"$T/corpus" "$T/seeds"
fuzz "fuzzing variable expansion and planning" "$ROOT/tests/fuzz/fuzz-plan" "plan-" \
	"$T/plan-corpus" "$T/plan-seeds"
finish
