#!/bin/sh
# Power loss at 20 pseudo-random moments: a synthetic target is built, the whole process tree
# is killed with SIGKILL, and the rerun must succeed with a sysroot byte-identical to a clean
# build's. Also: Ctrl-C (SIGINT) stops the children and says what was left unfinished.
. "$(dirname "$0")/../lib/common.sh"
start_server
P=$T/p
new_project "$P"
for name in alpha beta; do make_tarball "$name" 1.0; done
for name in alpha beta; do
	cat >"$P/sources/$name.yaml" <<EOT
name: $name
version: "1.0"
origins:
  - url: $BASE/drip/$name-1.0.tar.gz
    sha256: $(sha256 "$T/www/$name-1.0.tar.gz")
EOT
done
# first (alpha) and side (beta) run in parallel; second needs both.
cat >"$P/stages/first.yaml" <<'EOT'
name: first
sources: [alpha]
steps:
  - mkdir -p ${destdir}/usr/share/a && cp ${src}/data.txt ${destdir}/usr/share/a/data.txt
  - sleep 0.3; for i in 1 2 3 4 5; do echo "line $i" >> ${destdir}/usr/share/a/lines; sleep 0.05; done
  - ln -s data.txt ${destdir}/usr/share/a/link && chmod 0600 ${destdir}/usr/share/a/lines
EOT
cat >"$P/stages/side.yaml" <<'EOT'
name: side
sources: [beta]
steps:
  - sleep 0.2; mkdir -p ${destdir}/usr/share/b && cp ${src}/data.txt ${destdir}/usr/share/b/
  - |
    printf 'all: x y\nx y:\n\tsleep 0.2; echo $@ > $@\n' > Makefile && make && cp x y ${destdir}/usr/share/b/
EOT
cat >"$P/stages/second.yaml" <<'EOT'
name: second
depends: [first, side]
steps:
  - sleep 0.2; cat ${sysroot}/usr/share/a/lines ${sysroot}/usr/share/b/x > combined
  - mkdir -p ${destdir}/usr/share/c && cp combined ${destdir}/usr/share/c/ && echo ${greeting} > ${destdir}/usr/share/c/greeting
EOT

snapshot() {
	(cd "$1" && find . -printf '%y %m %p %l\n' | LC_ALL=C sort && find . -type f -exec sha256sum {} + | LC_ALL=C sort)
}
W=$T/w
C="$CROSSROOT -C $P --work $W/work --cache $W/cache --out $W/out"

start=$(date +%s%N)
run $C build toy
end=$(date +%s%N)
check "clean build" 0 "sysroot toy" || { finish; exit 1; }
snapshot "$W/out/toy" >"$T/clean.snapshot"
clean_ms=$(( (end - start) / 1000000 ))
echo "    clean build: $clean_ms ms"

# 20 moments spread over the clean build's duration (fixed seed: reproducible)
delays=$(awk -v max="$clean_ms" 'BEGIN { srand(20261203); for (i = 0; i < 20; i++) printf "%.3f\n", rand() * max / 1000 }')
i=0
bad=0
for delay in $delays; do
	i=$((i + 1))
	rm -rf "$W"
	setsid $C build toy >"$T/killed.out" 2>&1 &
	pid=$!
	sleep "$delay"
	sid=$(ps -o sid= -p "$pid" 2>/dev/null | tr -d ' ')
	[ -n "$sid" ] && pkill -KILL -s "$sid"
	wait "$pid" 2>/dev/null
	run $C --wait build toy
	if [ "$STATUS" != 0 ]; then
		bad=$((bad + 1))
		not_ok "rerun after kill -9 at ${delay} s"
		sed 's/^/    | /' "$T/out" | tail -15
		continue
	fi
	snapshot "$W/out/toy" >"$T/rerun.snapshot"
	if ! cmp -s "$T/clean.snapshot" "$T/rerun.snapshot"; then
		bad=$((bad + 1))
		not_ok "sysroot after kill -9 at ${delay} s and a rerun differs from a clean build"
		diff "$T/clean.snapshot" "$T/rerun.snapshot" | head -10 | sed 's/^/    | /'
	fi
done
[ "$bad" = 0 ] && ok "20 kills with SIGKILL at pseudo-random moments: every rerun succeeded, identical sysroot"

# Ctrl-C: the running steps are stopped promptly and the unfinished work is named.
rm -rf "$W"
$C build toy >"$T/int.out" 2>&1 &
pid=$!
# once a stage runs (downloads come first, and take longer on a loaded machine)
for _ in $(seq 200); do grep -q '^build ' "$T/int.out" && break; sleep 0.05; done
sleep 0.2
kill -INT "$pid"
wait "$pid"
STATUS=$?
cp "$T/int.out" "$T/out"
check "SIGINT ends the run with status 130 and names what is unfinished" 130 "interrupted; left unfinished" "second (toy)"
assert "no step is left running after SIGINT" sh -c "! pgrep -f 'sleep 0.[23]' >/dev/null"
run $C build toy
check "the run after SIGINT completes" 0 "sysroot toy"
snapshot "$W/out/toy" >"$T/rerun.snapshot"
assert "and gives the clean sysroot" cmp -s "$T/clean.snapshot" "$T/rerun.snapshot"

# a sandbox a dead run left behind (a bwrap killed while it set up leaves its child waiting
# for good): the next build of the work directory that starts steps ends it (one with nothing
# to build does not look: it starts none)
if command -v bwrap >/dev/null; then
	mkdir -p "$W/work/build/toy/left"
	"$(command -v bwrap)" --unshare-pid --ro-bind / / --dev /dev --proc /proc --chdir "$W/work/build/toy/left" -- sleep 307 &
	left=$!
	sleep 0.3
	rm -rf "$W/out"
	run $C build toy
	check "a build with no step to run after a dead run's leftover sandbox" 0 "sysroot toy"
	assert "leaves it alone" kill -0 "$left"
	rm -rf "$W/cache/stages"
	run $C build toy
	check "a build after a dead run's leftover sandbox" 0 "sysroot toy"
	sleep 0.2
	assert "the leftover sandbox is gone" sh -c "! kill -0 $left 2>/dev/null && ! pgrep -f 'sleep 30[7]' >/dev/null"
	kill -9 "$left" 2>/dev/null
	# one that holds the work directory's lock, which steps inherit (seen after a kill -9 of a
	# run: its rerun with --wait waited for good), its crossroot dead
	mkdir -p "$W/work/build/toy/left2"
	dead=$(sh -c 'echo $$')
	sh -c "exec 9<>'$W/work/lock' && flock -x 9 && echo $dead >'$W/work/lock' &&
		exec '$(command -v bwrap)' --unshare-pid --ro-bind / / --dev /dev --proc /proc --chdir '$W/work/build/toy/left2' -- sleep 308" &
	left=$!
	sleep 0.3
	run $C build toy
	check "a build after a dead run's leftover sandbox that holds the lock" 0 "sysroot toy"
	sleep 0.2
	assert "that sandbox is gone" sh -c "! kill -0 $left 2>/dev/null && ! pgrep -f 'sleep 30[8]' >/dev/null"
	kill -9 "$left" 2>/dev/null
fi
finish
