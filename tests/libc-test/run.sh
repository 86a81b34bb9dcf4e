#!/bin/sh
# musl's own conformance suite, libc-test, against built musl sysroots, each beside its
# reference: the same test programs, compiled by the sysroot's clang with its headers, linked
# once with the sysroot's clang-built musl and once with gcc-built musl of the same version
# (tests/lib/reference-musl.sh: Debian's own where Debian has it), both run under the target's
# qemu-user (its run wrapper). A failure the reference does not have is the target's own: it
# must be listed, with its cause, in tests/libc-test/known (else this script fails); one the
# reference shares is the emulator's or the test's, and is counted only.
#
# Usage: tests/libc-test/run.sh TARGET... (make check-libc-test TARGETS="..."; root or not)
#   LIBC_TEST_GIT  where to clone libc-test from (default upstream's repository); the checkout
#                  must be the pinned commit LIBC_TEST_COMMIT, or the run stops: the commit hash
#                  is what verifies the source
#   LIBC_TEST_DIR  the builds (default work/libc-test): <target>/{ours,ref}/src/REPORT, the
#                  reference musl in <target>/musl, and <target>/summary
#   LIBC_TEST_TIMEOUT  seconds per test program (default 30: qemu-user on a loaded 2-core machine;
#                  libc-test's own default is 5)
#   LIBC_TEST_MEMORY  the runs' address space limit in KiB (default 8 GiB)
# Prints one line per target: programs, failures of each side, failures that are the target's
# own. Exit status: 0, or 1 if a target has a failure of its own not in tests/libc-test/known
# (or could not be built), 2 on a usage error.
# Takes 6 to 8 minutes per target here with a reference (478 programs compiled once, linked and
# run twice), 4 without (measured 2026-12-08, beside other work).
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
LIBC_TEST_COMMIT=f2bac7711bec93467b73bec1465579ea0b8d5071   # 2024-10-19, "functional: add mntent test"
GIT_URL=${LIBC_TEST_GIT:-https://git.musl-libc.org/git/libc-test}
W=${LIBC_TEST_DIR:-$ROOT/work/libc-test}
TIMEOUT=${LIBC_TEST_TIMEOUT:-30}
MEMORY=${LIBC_TEST_MEMORY:-8388608}
KNOWN=$ROOT/tests/libc-test/known
[ $# -gt 0 ] || { echo "usage: tests/libc-test/run.sh TARGET..." >&2; exit 2; }
for t; do
	[ -f "$ROOT/targets/$t.yaml" ] || { echo "$t: no targets/$t.yaml" >&2; exit 2; }
	[ -x "$ROOT/sysroots/$t/bin/$t-clang" ] || { echo "$t: not built (crossroot build $t)" >&2; exit 2; }
done
mkdir -p "$W"

# the source, at the pinned commit only
if [ ! -d "$W/git" ]; then
	git clone -q --bare "$GIT_URL" "$W/git.tmp" || { echo "cannot clone libc-test from $GIT_URL (LIBC_TEST_GIT)" >&2; exit 1; }
	mv "$W/git.tmp" "$W/git"
fi
[ "$(git -C "$W/git" rev-parse -q --verify "$LIBC_TEST_COMMIT^{commit}" 2>/dev/null)" = "$LIBC_TEST_COMMIT" ] ||
	{ echo "$W/git ($GIT_URL) has no commit $LIBC_TEST_COMMIT, the one this script pins" >&2; exit 1; }

. "$ROOT/tests/lib/reference-musl.sh"

# build_run TARGET SYSROOT DIR [FROM]: libc-test built by SYSROOT's clang and run by its run
# wrapper in DIR; the REPORT is DIR/src/src/REPORT. With FROM (an earlier build_run's DIR whose
# SYSROOT has the same compiler and headers) its objects are kept and only the programs are
# linked again, with SYSROOT's libraries
build_run() {
	rm -rf "$3"
	mkdir -p "$3"
	if [ -n "${4:-}" ]; then
		cp -a "$4/src" "$3/src"
		find "$3/src/src" \( -name '*.exe' -o -name '*.so' -o -name '*.err' -o -name REPORT \) \
			! -name '*.o.err' ! -name '*.lo.err' -exec rm -f {} +
	else
		mkdir "$3/src"
		git -C "$W/git" archive "$LIBC_TEST_COMMIT" | tar -x -C "$3/src"
	fi
	{
		cat "$3/src/config.mak.def"
		echo "CC = $2/bin/$1-clang"
		echo "AR = $2/bin/$1-ar"
		echo "RANLIB = $2/bin/$1-ranlib"
		echo "RUN_WRAP = $2/bin/$1-run"
		echo "RUN_TEST = \$(RUN_WRAP) \$(B)/common/runtest.exe -t $TIMEOUT -w '\$(RUN_WRAP)'"
	} >"$3/src/config.mak"
	# a program that allocates until it fails (the -oom tests) under qemu-user, which does not
	# apply the guest's resource limits to itself, would take the machine's memory: the run's
	# address space is bounded instead (LIBC_TEST_MEMORY, KiB; 32-bit guests reserve 4 GiB)
	(ulimit -v "$MEMORY" && cd "$3/src" && make -k -j"$(nproc)" >"$3/make.log" 2>&1) || true
	[ -s "$3/src/src/REPORT" ] || { echo "$1: libc-test wrote no REPORT; see $3/make.log" >&2; return 1; }
}

# failures REPORT: the names of the programs that failed to build or run, one per line
failures() {
	sed -n -e 's/^FAIL \(src\/[^ ]*\)\.exe .*/\1/p' -e 's/^BUILDERROR \(src\/[^ ]*\)\..*/\1/p' "$1" |
		sed 's|^src/||' | sort -u
}

# reference_root TARGET DIR: a copy of the sysroot (hard links) whose libc is the reference's
reference_root() {
	rm -rf "$2"
	cp -al "$ROOT/sysroots/$1" "$2"
	lib=$2/usr/lib
	for f in $REF_MUSL_FILES; do
		[ -e "$lib/$f" ] || { echo "$1: the sysroot has no usr/lib/$f" >&2; return 1; }
		rm -f "$lib/$f"
		cp "$W/$1/musl/$f" "$lib/$f"
	done
}

status=0
for t in "$@"; do
	echo "$t: building and running libc-test with its own musl" >&2
	build_run "$t" "$ROOT/sysroots/$t" "$W/$t/ours" || { status=1; continue; }
	failures "$W/$t/ours/src/src/REPORT" >"$W/$t/ours.fail"
	programs=$(find "$W/$t/ours/src/src" -name '*.exe' ! -name runtest.exe | wc -l)
	rm -rf "$W/$t/musl"
	if ref_musl "$t" "$W/$t/musl" "$W/apt"; then
		echo "$t: and with the reference, $REF_WHAT" >&2
		reference_root "$t" "$W/$t/root" || { status=1; continue; }
		build_run "$t" "$W/$t/root" "$W/$t/ref" "$W/$t/ours" || { status=1; continue; }
		failures "$W/$t/ref/src/src/REPORT" >"$W/$t/ref.fail"
		ref_n=$(wc -l <"$W/$t/ref.fail")
	else
		rc=$?
		[ $rc -eq 2 ] || { status=1; continue; }
		REF_WHAT="none (no gcc-built musl of the architecture)"
		: >"$W/$t/ref.fail"
		ref_n=-
	fi
	comm -23 "$W/$t/ours.fail" "$W/$t/ref.fail" >"$W/$t/own.fail"
	unlisted=$(while read -r name; do
		grep -Eq "^($t|\*) +$name( |$)" "$KNOWN" || echo "$name"
	done <"$W/$t/own.fail")
	{
		echo "target: $t"
		echo "libc-test: $LIBC_TEST_COMMIT"
		echo "reference: $REF_WHAT"
		echo "programs: $programs"
		echo "failed (ours): $(wc -l <"$W/$t/ours.fail")"
		echo "failed (reference): $ref_n"
		echo "failed only with ours: $(wc -l <"$W/$t/own.fail")" $(cat "$W/$t/own.fail")
		echo "failed only with the reference:" $(comm -13 "$W/$t/ours.fail" "$W/$t/ref.fail")
		echo "failed with both:" $(comm -12 "$W/$t/ours.fail" "$W/$t/ref.fail")
		echo "not in tests/libc-test/known:" $unlisted
	} >"$W/$t/summary"
	printf '%s: %s programs; failed: %s ours, %s reference, %s ours only%s\n' "$t" "$programs" \
		"$(wc -l <"$W/$t/ours.fail")" "$ref_n" "$(wc -l <"$W/$t/own.fail")" \
		"${unlisted:+ (not in tests/libc-test/known: $(echo $unlisted))}"
	[ -z "$unlisted" ] || status=1
done
exit $status
