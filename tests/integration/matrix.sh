#!/bin/sh
# crossroot matrix: one CI job per target. The `inputs` digest is the same in any work
# directory whatever its caches hold, and changes when a recipe that goes into the target
# changes; stage keys appear once known; the GitHub and GitLab forms are what those CI systems
# parse; the project's own targets all appear.
. "$(dirname "$0")/../lib/common.sh"
P=$T/p
new_project "$P"
cp "$P/targets/toy.yaml" "$P/targets/toy2.yaml"
sed -i 's/greeting: hello/greeting: bonjour/' "$P/targets/toy2.yaml"
cat >"$P/stages/first.yaml" <<'EOT'
name: first
steps:
  - mkdir -p ${destdir}/usr/share && echo first >${destdir}/usr/share/first
EOT
cat >"$P/stages/second.yaml" <<'EOT'
name: second
depends: [first]
steps:
  - mkdir -p ${destdir}/usr/share && echo "${greeting}" >${destdir}/usr/share/second
EOT
m() {   # m WORK ARGS...: crossroot matrix in work directory WORK
	w=$1
	shift
	run $CROSSROOT -C "$P" --work "$T/$w" --out "$T/out-$w" matrix "$@"
}
field() {   # field FILE TARGET KEY: a target's value in a JSON matrix
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([t for t in d["targets"] if t["target"]==sys.argv[2]][0][sys.argv[3]])' "$@"
}
m w1 toy toy2
check "matrix (json is the default)" 0
cp "$T/out" "$T/cold.json"
assert "it is JSON with both targets" python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [t["target"] for t in d["targets"]] == ["toy", "toy2"]' "$T/cold.json"
assert "stages in dependency order: first's key known, second's not (it waits for first's output)" python3 -c '
import json,sys
s = json.load(open(sys.argv[1]))["targets"][0]["stages"]
assert [x["stage"] for x in s] == ["first", "second"], s
assert len(s[0]["key"]) == 64 and s[0]["state"] == "to build", s
assert s[1]["key"] is None and s[1]["state"] == "may rebuild", s' "$T/cold.json"
assert "the two targets differ in inputs (their vars differ)" test "$(field "$T/cold.json" toy inputs)" != "$(field "$T/cold.json" toy2 inputs)"
run $CROSSROOT -C "$P" --work "$T/w1" --out "$T/out-w1" build toy
check "build toy" 0
m w1 toy toy2
cp "$T/out" "$T/warm.json"
assert "after the build both keys are known and cached" python3 -c '
import json,sys
s = json.load(open(sys.argv[1]))["targets"][0]["stages"]
assert all(len(x["key"]) == 64 and x["state"] == "cached" for x in s), s' "$T/warm.json"
assert "inputs do not depend on what the caches hold" test "$(field "$T/warm.json" toy inputs)" = "$(field "$T/cold.json" toy inputs)"
m other/place toy
assert "nor on the work directory's path" test "$(field "$T/out" toy inputs)" = "$(field "$T/cold.json" toy inputs)"
echo '  - echo more >>${destdir}/usr/share/first' >>"$P/stages/first.yaml"
m w1 toy toy2
assert "a changed recipe changes the inputs of every target using it" sh -c "
	test '$(field "$T/out" toy inputs)' != '$(field "$T/cold.json" toy inputs)' &&
	test '$(field "$T/out" toy2 inputs)' != '$(field "$T/cold.json" toy2 inputs)'"

m w1 --format github toy toy2
check "github format" 0
assert "one line of JSON: a strategy.matrix with include" python3 -c '
import json,sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
d = json.loads(lines[0])
assert [sorted(x) for x in d["include"]] == [["inputs", "target"]] * 2, d
assert [x["target"] for x in d["include"]] == ["toy", "toy2"], d' "$T/out"
m w1 --format gitlab toy toy2
check "gitlab format" 0
assert "a child pipeline: one job per target extending .crossroot-target" python3 -c '
import yaml,sys
d = yaml.safe_load(open(sys.argv[1]))
assert d["include"] == [{"local": "docs/ci/gitlab-target.yml"}], d
for t in ("toy", "toy2"):
    assert d[t]["extends"] == ".crossroot-target" and d[t]["variables"]["CROSSROOT_TARGET"] == t, d
    assert len(d[t]["variables"]["CROSSROOT_INPUTS"]) == 64, d' "$T/out"
assert "the template it includes exists" test -f "$ROOT/docs/ci/gitlab-target.yml"
# target names YAML 1.1 or 1.2 would read as something else: booleans, numbers, null (a name
# holds only letters, digits and ._+-, so ': ' and '#' cannot reach it)
NAMES='yes 1e3 null on 0x1F 1_000 +1 2.5 1.0e+3'
for name in $NAMES; do cp "$P/targets/toy.yaml" "$P/targets/$name.yaml"; done
m w1 --format gitlab $NAMES
check "gitlab format with names YAML would misread" 0
assert "every name round-trips, as job and as CROSSROOT_TARGET" python3 -c '
import yaml,sys
d = yaml.safe_load(open(sys.argv[1]))
names = sys.argv[2].split()
assert sorted(k for k in d if k != "include") == sorted(names), d
for t in names:
    assert d[t]["extends"] == ".crossroot-target" and d[t]["variables"]["CROSSROOT_TARGET"] == t, d' "$T/out" "$NAMES"
cp "$P/targets/toy.yaml" "$P/targets/include.yaml"
m w1 --format gitlab include
check "a target named as a GitLab keyword is refused, naming it" 2 "include"
for name in $NAMES include; do rm "$P/targets/$name.yaml"; done
m w1 --format yaml toy
check "an unknown format" 2 "unknown matrix format 'yaml' (formats: json, github, gitlab)"
run $CROSSROOT -C "$P" --work "$T/w1" --format json plan toy
check "--format is for matrix only" 2 "--format is for 'crossroot matrix'"

run $CROSSROOT -C "$ROOT" --work "$T/project" --cache "$T/project-cache" --out "$T/project-out" matrix --format github --all
check "the project's own targets" 0
assert "every target file is a job" python3 -c '
import json,sys,os
d = json.loads(open(sys.argv[1]).read())
names = sorted(f[:-5] for f in os.listdir(sys.argv[2]) if f.endswith(".yaml"))
assert sorted(x["target"] for x in d["include"]) == names, (d, names)' "$T/out" "$ROOT/targets"
finish
