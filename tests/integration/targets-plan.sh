#!/bin/sh
# Every target file of the project loads and plans (recipes, dependencies, variables, keys),
# with nothing downloaded or built: CI cannot build them all, but none may be broken.
. "$(dirname "$0")/../lib/common.sh"
run $CROSSROOT -C "$ROOT" --work "$T/work" --cache "$T/cache" --out "$T/out-sysroots" plan --all
cat "$T/out"
check "plan --all" 0
for f in "$ROOT"/targets/*.yaml; do
	name=$(basename "$f" .yaml)
	assert "$name is planned" grep -qx "$name:" "$T/out"
done
assert "nothing was downloaded or built" sh -c "! ls '$T/cache/downloads' '$T/work/build' 2>/dev/null | grep -q ."
finish
