#!/bin/sh
# Fuzzes the recipe loader (tests/fuzz/fuzz-recipes.c) for $FUZZ_SECONDS (default 20),
# starting from seeds made of the project's own targets, stages and sources. A crash, an
# ASan/UBSan report or a leak fails the test; the input that caused it is kept in work/fuzz/
# and the command to replay it is printed. `make fuzz` runs it for 10 minutes.
. "$(dirname "$0")/../lib/common.sh"
FUZZER=$ROOT/tests/fuzz/fuzz-recipes
KEEP=$ROOT/work/fuzz
mkdir -p "$T/seeds" "$T/corpus" "$KEEP"

# seed: a target naming stage "s", then a stage "s" naming source "s", then that source
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

run "$FUZZER" -max_total_time="${FUZZ_SECONDS:-20}" -max_len=8192 -close_fd_mask=2 \
	-artifact_prefix="$KEEP/" "$T/corpus" "$T/seeds"
runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$T/out")
if check "fuzzing the recipe loader: no crash, no sanitizer report, no leak" 0 "Done "; then
	echo "       $runs inputs in ${FUZZ_SECONDS:-20} s"
else
	echo "    replay: $FUZZER $KEEP/<crash-file>"
fi
finish
