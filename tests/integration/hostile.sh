#!/bin/sh
# Nothing lost, nothing escapes: a full disk while downloading or extracting is an error that
# names the file and leaves no temporary output, and hostile archives (a decompression bomb,
# escaping links) are refused with their reason. The full-disk cases mount a 2 MiB tmpfs and
# are skipped (and say so) where that is not permitted.
. "$(dirname "$0")/../lib/common.sh"
start_server
export CROSSROOT_RETRY_DELAY=0.1 CROSSROOT_STALL_SECONDS=2
P=$T/p
new_project "$P"
MOUNTS=
skip() { echo "skip   $*"; }

# small_tmpfs DIR: a 2 MiB file system at DIR (unmounted on exit); false if not permitted
small_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o size=2m tmpfs "$1" 2>/dev/null || return 1
	MOUNTS="$1 $MOUNTS"
}
# check_failed NAME PATTERN...: the last run failed (any status but 0) saying every pattern;
# which status an extraction failure gets is build.c's business
check_failed() {
	name=$1
	shift
	if [ "$STATUS" = 0 ]; then
		not_ok "$name: exit status 0, expected a failure"
		sed 's/^/    | /' "$T/out" | tail -25
		return 1
	fi
	check "$name" "$STATUS" "$@"
}
unmount_all() { for m in $MOUNTS; do umount "$m" 2>/dev/null; done; MOUNTS=; }
trap 'unmount_all; cleanup' EXIT

# source NAME FILE [MAX_SIZE]: a target NAME whose only stage uses $BASE/ok/FILE
source_of() {
	sum=$(sha256 "$T/www/$2")
	printf 'name: %s\nversion: "1"\norigins:\n  - url: %s/ok/%s\n    sha256: %s\n    max-size: %s\n' \
		"$1" "$BASE" "$2" "$sum" "${3:-64M}" >"$P/sources/$1.yaml"
	printf 'name: %s\nsources: [%s]\nsteps: [true]\n' "$1" "$1" >"$P/stages/$1.yaml"
	printf 'triple: a-b-c\nqemu: q\nstages: [%s]\n' "$1" >"$P/targets/$1.yaml"
}

# A download larger than the disk: ENOSPC names the part file, which is removed.
head -c 3000000 /dev/urandom >"$T/www/big.bin"
BIGSUM=$(sha256 "$T/www/big.bin")
source_of bigdownload big.bin
if small_tmpfs "$T/fullcache"; then
	run $CROSSROOT -C "$P" --work "$T/w1" --cache "$T/fullcache" fetch bigdownload
	check "download onto a full disk: an error naming the part file" 3 \
		"cannot write '$T/fullcache/downloads/tmp/$BIGSUM.part': No space left on device"
	assert "download onto a full disk: no part file left" \
		test -z "$(ls -A "$T/fullcache/downloads/tmp" 2>/dev/null)"
	assert "download onto a full disk: nothing in the cache" test ! -e "$T/fullcache/downloads/$BIGSUM"
	assert "download onto a full disk: not retried from another origin or attempt" \
		test "$(grep -c /ok/big.bin "$T/requests.log")" = 1
	unmount_all
else
	skip "download onto a full disk: cannot mount a tmpfs (needs root)"
fi

# An extraction larger than the disk: ENOSPC names the file, no tree claims to be complete.
mkdir -p "$T/tarball/fill-1"
head -c 3000000 /dev/urandom >"$T/tarball/fill-1/big.bin"
echo small >"$T/tarball/fill-1/small.txt"
tar -C "$T/tarball" -czf "$T/www/fill-1.tar.gz" fill-1
source_of fill fill-1.tar.gz
if small_tmpfs "$T/w2/src"; then
	run $CROSSROOT -C "$P" --work "$T/w2" --cache "$T/cache" build fill
	check_failed "extraction onto a full disk: an error naming the file" \
		"cannot write '$T/w2/src/fill-1-" "/big.bin': No space left on device"
	assert "extraction onto a full disk: no tree, no temporary directory left" \
		test -z "$(ls -A "$T/w2/src")"
	unmount_all
else
	skip "extraction onto a full disk: cannot mount a tmpfs (needs root)"
fi
# A decompression bomb: 100 MB of zeros in a few kilobytes of xz. The default bound follows
# the archive's own size (32 times, at least 64 MiB), so it is refused at the entry's header.
mkdir -p "$T/tarball/bomb-1"
truncate -s 100M "$T/tarball/bomb-1/zeros.bin"
XZ_OPT=-0 tar -C "$T/tarball" -cJf "$T/www/bomb-1.tar.xz" bomb-1
rm -rf "$T/tarball/bomb-1"
source_of bomb bomb-1.tar.xz
start=$(date +%s%N)
run $CROSSROOT -C "$P" --work "$T/w3" --cache "$T/cache" build bomb
ms=$(( ($(date +%s%N) - start) / 1000000 ))
check_failed "decompression bomb: refused by the default bound" \
	"entry 'bomb-1/zeros.bin' (104857600 bytes) takes the extracted size over 67108864 bytes"
assert "decompression bomb: refused quickly (${ms} ms)" test "$ms" -lt 3000
assert "decompression bomb: no tree, no temporary directory left" test -z "$(ls -A "$T/w3/src")"
# Escaping links through a chain (a -> ., then b -> a/a/a/../../..) in a tarball made by
# Python's tarfile: refused, nothing left. A refused archive is "a source could not be
# extracted": exit 3.
python3 - "$T/www/links-1.tar.gz" <<'EOT'
import io, sys, tarfile
with tarfile.open(sys.argv[1], "w:gz") as t:
    data = b"fine\n"
    f = tarfile.TarInfo("links-1/ok.txt"); f.size = len(data); t.addfile(f, io.BytesIO(data))
    for name, target in (("links-1/a", "."), ("links-1/b", "a/a/a/../../..")):
        l = tarfile.TarInfo(name); l.type = tarfile.SYMTYPE; l.linkname = target; t.addfile(l)
EOT
source_of links links-1.tar.gz
run $CROSSROOT -C "$P" --work "$T/w4" --cache "$T/cache" build links
check_failed "escaping link chain: refused" \
	"entry 'links-1/b' is a symbolic link to 'a/a/a/../../..', outside the extraction directory"
assert "escaping link chain: no tree, no temporary directory left" test -z "$(ls -A "$T/w4/src")"
if [ "$STATUS" = 3 ]; then ok "a refused archive exits 3"; else not_ok "a refused archive exits $STATUS, not 3"; fi
finish
