#!/bin/sh
# Detached OpenPGP signatures, checked with gpgv against the keyring pinned in the repository:
# musl's real signature from Debian's source package passes; a tampered tarball (even one
# whose sha256 pin was changed to match it), an unknown key and a missing signature fail.
. "$(dirname "$0")/../lib/common.sh"
start_server
P=$T/p
new_project "$P"
ln -s "$ROOT/keys" "$P/keys"
CACHE=$T/cache
C="$CROSSROOT -C $P --work $T/work --cache $CACHE"
REAL=7d5b0b6062521e4627e099e4c9dc8248d32a30285e959b7eecaa780cf8cfd4a4

target() {   # target NAME: a target whose only stage uses source NAME
	printf 'name: %s\nsources: [%s]\nsteps: [true]\n' "$1" "$1" >"$P/stages/$1.yaml"
	printf 'triple: a-b-c\nqemu: q\nstages: [%s]\n' "$1" >"$P/targets/$1.yaml"
}

# The real thing: Debian's orig tarball and upstream's signature, located through apt, in the
# signed index of Debian 12 (bookworm), which lists musl 1.2.3-1 whatever release this host
# runs: the host's own apt sources with its release's name changed to bookworm (the same
# sources on a bookworm host), and a work directory of their own for apt's private state.
codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
mkdir -p "$T/bookworm-apt/sources.list.d"
for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] && sed "s/\\b$codename\\b/bookworm/g" "$f" >"$T/bookworm-apt/${f#/etc/apt/}"
done
cat >"$P/sources/real.yaml" <<EOT
name: real
version: 1.2.3
keyring: keys/musl.asc
origins:
  - apt: musl=1.2.3-1
    file: musl_1.2.3.orig.tar.gz
    signature: musl_1.2.3.orig.tar.gz.asc
    sha256: $REAL
EOT
target real
CROSSROOT_APT_SOURCES=$T/bookworm-apt run $CROSSROOT -C "$P" --work "$T/bookworm-work" --cache "$CACHE" fetch real
check "musl's signature from Debian's source package is good" 0 "good OpenPGP signature" "keys/musl.asc" "fetched real"
cp "$CACHE/downloads/$REAL" "$T/www/musl-1.2.3.tar.gz"
cp "$ROOT/tests/data/musl_1.2.3.orig.tar.gz.asc" "$T/www/musl-1.2.3.tar.gz.asc"
rm -rf "$CACHE"

# A tampered tarball whose pin was updated to match: only the signature can catch it.
python3 -c "
import sys; d = bytearray(open(sys.argv[1], 'rb').read()); d[5000] ^= 1
open(sys.argv[2], 'wb').write(d)" "$T/www/musl-1.2.3.tar.gz" "$T/www/tampered.tar.gz"
TAMPERED=$(sha256 "$T/www/tampered.tar.gz")
cat >"$P/sources/tampered.yaml" <<EOT
name: tampered
version: 1.2.3
keyring: keys/musl.asc
origins:
  - url: $BASE/ok/tampered.tar.gz
    signature: $BASE/ok/musl-1.2.3.tar.gz.asc
    sha256: $TAMPERED
EOT
target tampered
run $C fetch tampered
check "tampered tarball: BAD signature is an error" 3 "OpenPGP signature check failed for $BASE/ok/tampered.tar.gz" \
	"BAD signature" "the file was discarded" "every origin failed"
assert "tampered tarball: nothing in the cache" sh -c "[ ! -e $CACHE/downloads/$TAMPERED ] && [ -z \"\$(ls -A $CACHE/downloads/tmp)\" ]"

# The genuine tarball from loopback passes the same check.
sed -e "s|tampered.tar.gz|musl-1.2.3.tar.gz|; s|$TAMPERED|$REAL|; s|name: tampered|name: genuine|" \
	"$P/sources/tampered.yaml" >"$P/sources/genuine.yaml"
target genuine
run $C fetch genuine
check "genuine tarball over loopback: good signature" 0 "good OpenPGP signature" "fetched genuine"

# A mirror serves the signature too, by file name: with an upstream that cannot be reached,
# the mirrored tarball is verified with the mirror's signature and kept.
mkdir -p "$T/mirror" "$T/halfmirror"
cp "$T/www/musl-1.2.3.tar.gz" "$T/www/musl-1.2.3.tar.gz.asc" "$T/mirror/"
cp "$T/www/musl-1.2.3.tar.gz" "$T/halfmirror/"
cat >"$P/sources/mirrorsig.yaml" <<EOT
name: mirrorsig
version: 1.2.3
keyring: keys/musl.asc
origins:
  - url: https://upstream.invalid/musl-1.2.3.tar.gz
    signature: https://upstream.invalid/musl-1.2.3.tar.gz.asc
    sha256: $REAL
EOT
target mirrorsig
rm -rf "$CACHE"
run $C --mirror "$T/mirror" fetch mirrorsig
check "mirror: the signature comes from the mirror" 0 \
	"good OpenPGP signature (file://$T/mirror/musl-1.2.3.tar.gz.asc" "fetched mirrorsig"
assert "mirror: the upstream was not asked" sh -c "! grep -q 'upstream.invalid' $T/out"
# A mirror without the signature: the origin's is asked (here it cannot be reached: error).
rm -rf "$CACHE"
run $C --mirror "$T/halfmirror" fetch mirrorsig
check "mirror without a signature: the origin's is asked" 3 "no signature from the mirror" \
	"cannot fetch signature https://upstream.invalid/musl-1.2.3.tar.gz.asc"
# ... and where the origin's signature can be reached, it is used.
sed -e "s|https://upstream.invalid/musl-1.2.3.tar.gz.asc|$BASE/ok/musl-1.2.3.tar.gz.asc|; s|name: mirrorsig|name: halfsig|" \
	"$P/sources/mirrorsig.yaml" >"$P/sources/halfsig.yaml"
target halfsig
rm -rf "$CACHE"
run $C --mirror "$T/halfmirror" fetch halfsig
check "mirror without a signature, origin's reachable: good" 0 "no signature from the mirror" \
	"good OpenPGP signature ($BASE/ok/musl-1.2.3.tar.gz.asc" "fetched halfsig"
# A mirror whose signature does not verify (a wrong key's) falls back too: never accepted.
printf 'not a signature\n' >"$T/halfmirror/musl-1.2.3.tar.gz.asc"
rm -rf "$CACHE"
run $C --mirror "$T/halfmirror" fetch halfsig
check "mirror with a bad signature: the origin's is used" 0 "no signature from the mirror" \
	"good OpenPGP signature ($BASE/ok/musl-1.2.3.tar.gz.asc" "fetched halfsig"

# Transient errors on the signature are retried like the file's own: 500, a reset, a stall,
# a truncated body.
for mode in 500once resetonce stallonce truncateonce; do
	rm -rf "$CACHE"
	sed -e "s|/ok/musl-1.2.3.tar.gz.asc|/$mode/musl-1.2.3.tar.gz.asc|; s|name: genuine|name: sig$mode|" \
		"$P/sources/genuine.yaml" >"$P/sources/sig$mode.yaml"
	target "sig$mode"
	CROSSROOT_RETRY_DELAY=0.1 CROSSROOT_STALL_SECONDS=1 run $C fetch "sig$mode"
	check "signature: $mode is retried" 0 "retrying" "good OpenPGP signature" "fetched sig$mode"
done

# A keyring without the signer's key.
rm -rf "$CACHE"
sed -e "s|keyring: keys/musl.asc|keyring: /usr/share/keyrings/debian-archive-keyring.gpg|; s|name: genuine|name: unknownkey|" \
	"$P/sources/genuine.yaml" >"$P/sources/unknownkey.yaml"
target unknownkey
run $C fetch unknownkey
check "unknown key: error, not a warning" 3 "OpenPGP signature check failed" "No public key"
assert "unknown key: nothing in the cache" sh -c "[ ! -e $CACHE/downloads/$REAL ]"

# A signature that cannot be fetched.
sed -e "s|/ok/musl-1.2.3.tar.gz.asc|/404/musl-1.2.3.tar.gz.asc|; s|name: genuine|name: nosig|" \
	"$P/sources/genuine.yaml" >"$P/sources/nosig.yaml"
target nosig
run $C fetch nosig
check "missing signature: error" 3 "cannot fetch signature $BASE/404/musl-1.2.3.tar.gz.asc" "every origin failed"

# A keyring with an origin that has no signature is refused when the recipe loads.
printf 'name: unsigned\nversion: "1"\nkeyring: keys/musl.asc\norigins:\n  - url: %s/ok/x\n    sha256: %s\n' \
	"$BASE" "$REAL" >"$P/sources/unsigned.yaml"
target unsigned
run $C fetch unsigned
check "an origin without a signature beside a keyring is a recipe error" 2 \
	"$P/sources/unsigned.yaml:5:5: this source has a keyring, so every origin needs a 'signature'"
# A pool origin: a file of a Debian release apt's indices do not list, found under the pool of
# each archive the host's apt configuration names, in its order, its signature beside it.
# (the loopback server serves every path by its file name)
mkdir -p "$T/apt/sources.list.d"
cp "$T/www/musl-1.2.3.tar.gz" "$T/www/musl_1.2.3.orig.tar.gz"
cp "$T/www/musl-1.2.3.tar.gz.asc" "$T/www/musl_1.2.3.orig.tar.gz.asc"
printf 'deb [signed-by=/nonexistent] %s/404/ bookworm main\n' "$BASE" >"$T/apt/sources.list"
printf 'Types: deb-src\nURIs: %s/500always\nSuites: x\n\nTypes: deb\nURIs: %s/ok %s/404\nSuites: bookworm\nComponents: main\n' \
	"$BASE" "$BASE" "$BASE" >"$T/apt/sources.list.d/loopback.sources"
cat >"$P/sources/pooled.yaml" <<EOT
name: pooled
version: 1.2.3
keyring: keys/musl.asc
origins:
  - pool: main/m/musl/musl_1.2.3.orig.tar.gz
    signature: musl_1.2.3.orig.tar.gz.asc
    sha256: $REAL
EOT
target pooled
rm -rf "$CACHE"
CROSSROOT_APT_SOURCES=$T/apt run $C fetch pooled
check "pool origin: the first archive lacks it, the next has it and its signature" 0 \
	"cannot fetch $BASE/404/pool/main/m/musl/musl_1.2.3.orig.tar.gz" \
	"good OpenPGP signature ($BASE/ok/pool/main/m/musl/musl_1.2.3.orig.tar.gz.asc" \
	"fetched pooled"
assert "pool origin: deb-src entries are not archives to fetch from" sh -c "! grep -q 500always $T/out"
assert "pool origin: the verified file is cached" test "$(sha256 "$CACHE/downloads/$REAL")" = "$REAL"
# its signature is checked too: a signature from another file fails
rm -rf "$CACHE"
# (a binary signature whose last byte, inside the signature value, is changed)
gpg --dearmor <"$ROOT/tests/data/musl_1.2.3.orig.tar.gz.asc" >"$T/www/wrong.asc"
python3 -c "
import sys; d = bytearray(open(sys.argv[1], 'rb').read()); d[-1] ^= 1
open(sys.argv[1], 'wb').write(d)" "$T/www/wrong.asc"
sed -e "s|signature: musl_1.2.3.orig.tar.gz.asc|signature: wrong.asc|; s|name: pooled|name: poolbadsig|" \
	"$P/sources/pooled.yaml" >"$P/sources/poolbadsig.yaml"
target poolbadsig
CROSSROOT_APT_SOURCES=$T/apt run $C fetch poolbadsig
check "pool origin: a bad signature fails" 3 "OpenPGP signature check failed" "every origin failed"
assert "pool origin: a bad signature leaves nothing in the cache" sh -c "[ ! -e $CACHE/downloads/$REAL ]"
# no archive configured: said, with the origin's place in the recipe
rm -rf "$CACHE"
printf '# nothing\n' >"$T/apt/sources.list"
rm -f "$T/apt/sources.list.d/loopback.sources"
CROSSROOT_APT_SOURCES=$T/apt run $C fetch pooled
check "pool origin without an archive: said where" 3 \
	"$P/sources/pooled.yaml:5:5: the Debian archive's pool/main/m/musl/musl_1.2.3.orig.tar.gz: the host's apt configuration names no http, https or file archive" \
	"every origin failed"
# Debian's file names may hold a '~' (an upstream version before its release)
cp "$T/www/musl_1.2.3.orig.tar.gz" "$T/www/musl_1.2.3~rc1.orig.tar.gz"
cp "$T/www/musl_1.2.3.orig.tar.gz.asc" "$T/www/musl_1.2.3~rc1.orig.tar.gz.asc"
printf 'Types: deb\nURIs: %s/ok\nSuites: bookworm\nComponents: main\n' "$BASE" >"$T/apt/sources.list.d/loopback.sources"
sed -e "s|musl_1.2.3.orig|musl_1.2.3~rc1.orig|g; s|name: pooled|name: pooltilde|" \
	"$P/sources/pooled.yaml" >"$P/sources/pooltilde.yaml"
target pooltilde
CROSSROOT_APT_SOURCES=$T/apt run $C fetch pooltilde
check "pool origin: a file name with a '~' is fetched and verified" 0 "good OpenPGP signature" \
	"fetched pooltilde"
rm -f "$T/apt/sources.list.d/loopback.sources"
# a path that leaves the pool is a recipe error
sed -e "s|pool: main/m/musl/musl_1.2.3.orig.tar.gz|pool: main/../../etc/passwd|; s|name: pooled|name: poolescape|" \
	"$P/sources/pooled.yaml" >"$P/sources/poolescape.yaml"
target poolescape
run $C fetch poolescape
check "pool origin: a path out of the pool is refused" 2 "poolescape.yaml:5:11: pool must be a path under the archive's pool/"
# The real archive: musl 1.2.5 (not in bookworm's indices) from the pool of the host's archive.
run $C fetch -C "$ROOT" --work "$T/realwork" loongarch64-linux-musl
check "the project's musl 1.2.5 comes from the pool of the host's archive" 0 \
	"pool/main/m/musl/musl_1.2.5.orig.tar.gz.asc, keyring" "fetched musl 1.2.5"
# A Debian revision that left the index (here one that never was): the pool still has the file.
cat >"$P/sources/gone.yaml" <<EOT
name: gone
version: 1.2.3
keyring: keys/musl.asc
origins:
  - apt: musl=1.2.3-99
    file: musl_1.2.3.orig.tar.gz
    signature: musl_1.2.3.orig.tar.gz.asc
    sha256: $REAL
  - pool: main/m/musl/musl_1.2.3.orig.tar.gz
    signature: musl_1.2.3.orig.tar.gz.asc
    sha256: $REAL
EOT
target gone
rm -rf "$CACHE"
run $C fetch gone
check "a revision gone from the index: a warning, then the pool's file" 0 \
	"warning: apt cannot find Debian source package musl=1.2.3-99" "pool/main/m/musl/musl_1.2.3.orig.tar.gz.asc, keyring" "fetched gone"
assert "(no error line on the way: every message is a warning)" sh -c "! grep '^crossroot: ' $T/out | grep -qv '^crossroot: warning: '"
finish
