#!/bin/sh
# The fetcher against a misbehaving loopback server: one case per fault mode, each asserting
# the fallback or the clear error, and that no unverified byte reached the download cache.
. "$(dirname "$0")/../lib/common.sh"
start_server
export CROSSROOT_RETRY_DELAY=0.1 CROSSROOT_STALL_SECONDS=1
P=$T/p
new_project "$P"
# a 300 kB file, so truncation and resumption have something to work with
head -c 300000 /dev/urandom >"$T/www/blob.bin"
SUM=$(sha256 "$T/www/blob.bin")
CACHE=$T/cache
C="$CROSSROOT -C $P --work $T/work --cache $CACHE"

# case NAME ORIGIN_URL... : a target NAME fetching blob.bin from those origins in order
case_project() {
	name=$1
	shift
	{
		printf 'name: %s\nversion: "1"\norigins:\n' "$name"
		for url in "$@"; do printf '  - url: %s\n    sha256: %s\n    max-size: 1M\n' "$url" "$SUM"; done
	} >"$P/sources/$name.yaml"
	printf 'name: %s\nsources: [%s]\nsteps: [true]\n' "$name" "$name" >"$P/stages/$name.yaml"
	printf 'triple: a-b-c\nqemu: q\nstages: [%s]\n' "$name" >"$P/targets/$name.yaml"
	rm -rf "$CACHE" "$T/requests.log"
	: >"$T/requests.log"
}
cached_ok() { test "$(sha256 "$CACHE/downloads/$SUM" 2>/dev/null)" = "$SUM"; }
clean_cache() {   # nothing but verified files: no leftovers, no unverified file
	for f in "$CACHE"/downloads/*; do
		[ -d "$f" ] && continue
		[ "$(basename "$f")" = "$(sha256 "$f")" ] || return 1
	done
	[ -z "$(ls -A "$CACHE/downloads/tmp" 2>/dev/null)" ]
}
requests() { grep -c "$1" "$T/requests.log"; }

case_project notfound "$BASE/404/blob.bin" "$BASE/ok/blob.bin"
run $C fetch notfound
check "404: next origin at once" 0 "404" "trying the next origin" "fetched notfound"
assert "404: asked once, not retried" test "$(requests /404/)" = 1
assert "404: verified file cached" cached_ok

# credentials in a URL never reach a message (warnings, errors, the YAML's own lines)
case_project secret "http://someone:hunter2@127.0.0.1:$PORT/404/blob.bin" "http://tok3n@127.0.0.1:$PORT/ok/blob.bin"
run $C fetch secret
check "a URL's password and token are hidden in messages" 0 "someone:***@127.0.0.1" "fetched secret"
assert "  (neither the password nor the token is printed)" sh -c "! grep -q -e hunter2 -e tok3n '$T/out'"
printf '  - url: http://someone:hunter2@127.0.0.1/x\n    sha256: %s\n    nonsense: 1\n' "$SUM" >>"$P/sources/secret.yaml"
run $C fetch secret
check "  (a YAML error quoting a line with a password hides it)" 2 "nonsense"
assert "  (the password is not printed)" sh -c "! grep -q hunter2 '$T/out'"

case_project err500 "$BASE/500once/blob.bin"
run $C fetch err500
check "500 then success: retried with backoff" 0 "returned error: 500" "retrying in 0.1 s" "fetched err500"
assert "500: two requests" test "$(requests /500once/)" = 2

case_project err500always "$BASE/500always/blob.bin"
run $C fetch err500always
check "500 forever: clear error after the retries" 3 "(attempt 4 of 4)" "every origin failed" "nothing was stored"
assert "500 forever: cache holds nothing" sh -c "[ ! -e $CACHE/downloads/$SUM ]"
assert "500 forever: no temporary files left" clean_cache

case_project flip "$BASE/flip/blob.bin" "$BASE/ok/blob.bin"
run $C fetch flip
check "flipped bytes: hash mismatch, next origin at once" 0 "sha256 mismatch for $BASE/flip/blob.bin: expected $SUM" \
	"the file was discarded" "fetched flip"
assert "flipped bytes: asked once" test "$(requests /flip/)" = 1
assert "flipped bytes: only the verified file is cached" clean_cache

case_project flipped "$BASE/flip/blob.bin"
run $C fetch flipped
check "flipped bytes, no other origin: error" 3 "sha256 mismatch" "every origin failed"
assert "flipped bytes: nothing cached" sh -c "[ ! -e $CACHE/downloads/$SUM ] && [ -z \"\$(ls -A $CACHE/downloads/tmp)\" ]"

case_project truncateonce "$BASE/truncateonce/blob.bin"
run $C fetch truncateonce
check "truncated body: retried, resumed with a Range request" 0 "retrying" "resuming" "(resumed)"
assert "truncated body: the retry asked for a range" grep -q "/truncateonce/blob.bin bytes=150000-" "$T/requests.log"
assert "truncated body: verified" cached_ok

case_project truncnorange "$BASE/truncnorange/blob.bin"
run $C fetch truncnorange
check "no range support: restarted cleanly" 0 "fetched truncnorange"
assert "no range support: verified" cached_ok
assert "no range support: clean cache" clean_cache

case_project truncate "$BASE/truncate/blob.bin" "$BASE/ok/blob.bin"
run $C fetch truncate
check "always truncated: next origin after the retries" 0 "trying the next origin" "fetched truncate"
assert "always truncated: verified" cached_ok
assert "always truncated: clean cache" clean_cache

case_project wronglength "$BASE/wronglength/blob.bin" "$BASE/ok/blob.bin"
run $C fetch wronglength
check "wrong Content-Length: the short body is resumed, then verified" 0 \
	"$BASE/wronglength/blob.bin: " "resuming" "fetched wronglength"
assert "wrong Content-Length: the retry asked for the rest (Range)" grep -q "^GET /wronglength/blob.bin bytes=" "$T/requests.log"
assert "wrong Content-Length: clean cache" clean_cache

case_project reset "$BASE/reset/blob.bin" "$BASE/ok/blob.bin"
run $C fetch reset
check "connection reset: retried, then next origin" 0 "retrying" "fetched reset"
assert "connection reset: clean cache" clean_cache

case_project stall "$BASE/stall/blob.bin" "$BASE/ok/blob.bin"
start=$(date +%s)
run $C fetch stall
end=$(date +%s)
check "stalled transfer: low-speed timeout, then next origin" 0 "cannot fetch $BASE/stall/blob.bin: " \
	"trying the next origin" "fetched stall"
assert "stalled transfer: gave up within 15 s ($((end - start)) s)" test $((end - start)) -lt 15
assert "stalled transfer: clean cache" clean_cache

case_project drip "$BASE/drip/blob.bin"
run $C fetch drip
check "slow drip: completes" 0 "fetched drip"
assert "slow drip: verified" cached_ok

case_project loop "$BASE/loop/blob.bin" "$BASE/redirect/blob.bin"
run $C fetch loop
check "redirect loop: bounded, next origin; one redirect is fine" 0 \
	"cannot fetch $BASE/loop/blob.bin: " "trying the next origin" "fetched loop"
assert "redirect loop: given up after 8 redirects ($(requests /loop/) requests)" test "$(requests /loop/)" -le 9

case_project endless "$BASE/endless/blob.bin" "$BASE/ok/blob.bin"
run $C fetch endless
check "endless body: stopped at max-size, next origin" 0 "larger than its max-size" "fetched endless"
assert "endless body: clean cache" clean_cache

# Interrupted in the middle: the next run re-hashes the part and resumes it.
case_project resume "$BASE/drip/blob.bin"
$C fetch resume >"$T/killed.out" 2>&1 &
pid=$!
sleep 1.5
kill -KILL "$pid"
wait "$pid" 2>/dev/null
assert "killed download left a part to resume" sh -c "[ -s $CACHE/downloads/tmp/$SUM.part ]"
sed -i "s|/drip/|/ok/|" "$P/sources/resume.yaml"
run $C fetch resume
check "next run resumes the part" 0 "(resumed)"
assert "resumed download asked for the rest only" grep -q "/ok/blob.bin bytes=[1-9]" "$T/requests.log"
assert "resumed file verified" cached_ok

# flip_byte FILE OFFSET: change one byte in place (same size)
flip_byte() {
	python3 -c "
import sys; f = open(sys.argv[1], 'r+b'); f.seek(int(sys.argv[2])); b = f.read(1)
f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0x55]))" "$1" "$2"
}

# A run killed between the last byte and the rename leaves a complete part: the next run
# re-hashes it and stores it without asking any server.
case_project completepart "$BASE/ok/blob.bin"
mkdir -p "$CACHE/downloads/tmp"
cp "$T/www/blob.bin" "$CACHE/downloads/tmp/$SUM.part"
run $C fetch completepart
check "complete part from a killed run: stored" 0 "fetched completepart" "complete"
assert "complete part: no request at all" test "$(requests /ok/)" = 0
assert "complete part: verified" cached_ok
assert "complete part: clean cache" clean_cache

# A part as long as the file but wrong: the range request gets 416 (nothing left to send);
# the part does not match, so the download starts over from the first byte.
case_project badpart "$BASE/ok/blob.bin"
mkdir -p "$CACHE/downloads/tmp"
cp "$T/www/blob.bin" "$CACHE/downloads/tmp/$SUM.part"
flip_byte "$CACHE/downloads/tmp/$SUM.part" 1000
run $C fetch badpart
check "full-length wrong part: 416, started over" 0 "starting over" "fetched badpart"
assert "full-length wrong part: asked for the rest first" grep -q "/ok/blob.bin bytes=300000-" "$T/requests.log"
assert "full-length wrong part: then for the whole file" grep -q "/ok/blob.bin -$" "$T/requests.log"
assert "full-length wrong part: verified" cached_ok
assert "full-length wrong part: clean cache" clean_cache

# A cached file changed after it was verified (same size, its mtime even put back): its stat
# data no longer match what was recorded when it was verified, so it is hashed again, found
# bad, removed with a warning naming it, and fetched again.
case_project changed "$BASE/ok/blob.bin"
run $C fetch changed
touch -r "$CACHE/downloads/$SUM" "$T/times"
run $C fetch changed
check "unchanged cached file: used as it is" 0
assert "unchanged cached file: not fetched again" test "$(requests /ok/)" = 1
flip_byte "$CACHE/downloads/$SUM" 1000
touch -r "$T/times" "$CACHE/downloads/$SUM"
run $C fetch changed
check "changed cached file: noticed, removed, fetched again" 0 \
	"download cache file '$CACHE/downloads/$SUM'" "fetching it again" "fetched changed"
assert "changed cached file: fetched twice in all" test "$(requests /ok/)" = 2
assert "changed cached file: verified again" cached_ok
flip_byte "$CACHE/downloads/$SUM" 1000
run $C --offline fetch changed
check "changed cached file, --offline: an error, not the bad file" 3 \
	"download cache file '$CACHE/downloads/$SUM'" "is not in the download cache"

# Two crossroot processes fetching the same file into one cache.
case_project shared "$BASE/drip/blob.bin"
$CROSSROOT -C "$P" --work "$T/w1" --cache "$CACHE" fetch shared >"$T/a.out" 2>&1 &
a=$!
$CROSSROOT -C "$P" --work "$T/w2" --cache "$CACHE" fetch shared >"$T/b.out" 2>&1 &
b=$!
wait $a; sa=$?
wait $b; sb=$?
assert "two concurrent fetches both succeed" test "$sa$sb" = 00
assert "the shared file is intact" cached_ok
assert "the shared cache is clean" clean_cache
assert "the file was downloaded once" test "$(requests /drip/)" = 1

# Mirrors: a local directory (by sha256 name) and an HTTP mirror (by file name) come first.
case_project mirrored "$BASE/404/blob.bin"
mkdir -p "$T/mirror"
cp "$T/www/blob.bin" "$T/mirror/$SUM"
run $C --mirror "$T/mirror" fetch mirrored
check "local directory mirror by sha256" 0 "fetched mirrored" "file://$T/mirror/$SUM"
assert "the origin was not asked" test "$(requests /404/)" = 0
case_project mirrored2 "https://example.invalid/dist/blob.bin"
printf '# mirrors for the test\n%s/ok  # by file name\n' "$BASE" >"$T/mirrors"
CROSSROOT_MIRRORS=$T/mirrors run $C fetch mirrored2
check "HTTP mirror from the mirror file, by file name" 0 "fetched mirrored2" "$BASE/ok/blob.bin"

# TLS: verification is always on. A self-signed loopback server is refused (no request gets
# through the handshake) and the next origin serves; with its certificate as the CA bundle
# ($CROSSROOT_CA_BUNDLE, for private mirrors) the same server is trusted.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$T/tls.key" -out "$T/tls.crt" 2>/dev/null
mkdir -p "$T/tls/www" && cp "$T/www/blob.bin" "$T/tls/www/"
python3 "$ROOT/tests/lib/faultserver.py" "$T/tls/www" "$T/tls/port" "$T/tls.crt" "$T/tls.key" &
TLS_PID=$!
for _ in $(seq 100); do [ -s "$T/tls/port" ] && break; sleep 0.05; done
TLS=https://127.0.0.1:$(cat "$T/tls/port")
case_project tls "$TLS/ok/blob.bin" "$BASE/redirect/blob.bin"
run $C fetch tls
check "TLS: an untrusted certificate is refused, next origin" 0 "cannot fetch $TLS/ok/blob.bin: " \
	"trying the next origin" "fetched tls"
assert "TLS: no request passed the failed handshake" test ! -s "$T/tls/requests.log"
assert "TLS: the file came from the next origin" test "$(requests /redirect/)" = 1
case_project tls2 "$TLS/ok/blob.bin"
CROSSROOT_CA_BUNDLE=$T/tls.crt run $C fetch tls2
check "TLS: trusted through \$CROSSROOT_CA_BUNDLE" 0 "fetched tls2"
assert "TLS: fetched over https and verified" cached_ok
kill "$TLS_PID"

# --offline: the cache alone, failing clearly when something is missing.
make_tarball toy 1.0
TOYSUM=$(sha256 "$T/www/toy-1.0.tar.gz")
case_project offline "$BASE/ok/toy-1.0.tar.gz"
sed -i "s/$SUM/$TOYSUM/" "$P/sources/offline.yaml"
run $C --offline fetch offline
check "--offline with an empty cache fails clearly" 3 "is not in the download cache" "--offline forbids fetching it"
assert "--offline touched no server" test "$(requests /ok/)" = 0
run $C fetch offline
run $C --offline build offline
check "--offline builds from the cache" 0 "sysroot offline"
finish
