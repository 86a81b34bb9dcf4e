#!/bin/sh
# A `resume: true` stage (a long LLVM build) goes on where a failed, interrupted or killed run
# stopped when its key did not change: its steps run again over the build directory the last
# run left. A changed recipe, or a stage without `resume`, starts from nothing. A long step's
# progress (ninja's [N/M]) is reported while it runs, also without a terminal.
. "$(dirname "$0")/../lib/common.sh"
P=$T/p
new_project "$P"
cat >"$P/targets/long.yaml" <<'EOT'
triple: aarch64-unknown-linux-musl
qemu: qemu-aarch64-static
stages: [slow]
EOT
# Each run adds a line to ${build}/runs; the first step fails the first time it runs in a
# build directory (no marker yet), so only a run that kept the directory gets past it.
write_stage() {
	cat >"$P/stages/slow.yaml" <<EOT
$1
steps:
  - echo run >> runs; if [ -f marker ]; then exit 0; fi; touch marker; exit 1
  - $2mkdir -p \${destdir}/usr/share && cp runs \${destdir}/usr/share/runs
EOT
}
W=$T/w
C="$CROSSROOT -C $P --work $W/work --cache $W/cache --out $W/out"

write_stage "resume: true" ""
run $C build long
check "first run fails in its first step" 1 "slow"
if grep -q 'slow.key' "$T/out"; then not_ok "a first run says nothing of the key record it has not made yet"; else ok "a first run says nothing of a key record"; fi
run $C build long
check "the rerun resumes in the build directory" 0 "resumed"
assert "the resumed run saw the first run's work (2 runs)" \
	test "$(wc -l <"$W/out/long/usr/share/runs")" = 2
run $C build long
check "then it is cached" 0
assert "a finished stage leaves no build directory nor key record" \
	sh -c "! ls -d '$W/work/build/long/slow' '$W/work/build/long/slow.key' 2>/dev/null"

# a changed recipe: a new key, so the directory of the failed run is not reused
rm -rf "$W"
write_stage "resume: true" ""
run $C build long
check "fails once more" 1
write_stage "resume: true" "true && "
run $C build long
check "a changed recipe starts over (and fails in its first step again)" 1
run $C build long
check "and resumes its own directory after that" 0 "resumed"

# without resume: every run starts from nothing (so this stage never gets past step 1)
rm -rf "$W"
write_stage "exclusive: false" ""
run $C build long
check "without resume, the first run fails" 1
run $C build long
check "and so does every rerun" 1
if grep -qF resumed "$T/out"; then not_ok "a stage without resume resumed"; else ok "no resume without resume: true"; fi

# kill -9 of the whole session in the middle of a step, then a resume
rm -rf "$W"
cat >"$P/stages/slow.yaml" <<'EOT'
resume: true
steps:
  - echo run >> runs; if [ -f marker ]; then exit 0; fi; touch marker; sleep 30
  - mkdir -p ${destdir}/usr/share && cp runs ${destdir}/usr/share/runs
EOT
setsid $C build long >"$T/killed.out" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -f "$W/work/build/long/slow/build/marker" ] && break; sleep 0.1; done
sid=$(ps -o sid= -p "$pid" 2>/dev/null | tr -d ' ')
[ -n "$sid" ] && pkill -KILL -s "$sid"
wait "$pid" 2>/dev/null
run $C --wait build long
check "after kill -9, the rerun resumes" 0 "resumed"
assert "and goes on from the killed run's work (2 runs)" \
	test "$(wc -l <"$W/out/long/usr/share/runs")" = 2

# progress: ninja's own count, reported every CROSSROOT_PROGRESS_SECONDS without a terminal
rm -rf "$W"
cat >"$P/stages/slow.yaml" <<'EOT'
steps:
  - echo '[17/40] Building CXX object a.o'; echo '[18/40] Building CXX object b.o'; sleep 3
  - mkdir -p ${destdir}/usr/share && touch ${destdir}/usr/share/done
EOT
export CROSSROOT_PROGRESS_SECONDS=1
run $C build long
unset CROSSROOT_PROGRESS_SECONDS
check "a long step's progress is reported while it runs" 0 "18/40"
finish
