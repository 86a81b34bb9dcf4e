#!/bin/sh
# The remote stage cache against a real nginx (WebDAV PUT, DELETE, MOVE) on 127.0.0.1: job A
# builds and pushes, job B pulls every stage and builds nothing; tampered data, a forged
# manifest signed by a trusted key, an unknown key, read-only mode (never a PUT), and a server
# killed in the middle of a pull all end in a warning and a local build, never a failed build
# or a partial cache entry. The stage keys do not depend on any remote cache setting.
. "$(dirname "$0")/../lib/common.sh"
if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then
	echo "remote-cache.sh: nginx is not installed (make deps); skipped"
	exit 0
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
export XDG_CONFIG_HOME=$T/xdg   # never the user's own configuration
unset CROSSROOT_REMOTE_CACHE_CONFIG

# --- nginx: one process (master_process off) so a kill -9 stops it dead ---
N=$T/nginx
mkdir -p "$N/www/cache" "$N/www/other" "$N/tmp"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
user=
[ "$(id -u)" = 0 ] && user="user root root;"
cat >"$N/nginx.conf" <<EOT
daemon off;
master_process off;
worker_processes 1;
pid $N/nginx.pid;
error_log $N/error.log;
$user
events { worker_connections 64; }
http {
	access_log $N/access.log;
	client_body_temp_path $N/tmp/body;
	proxy_temp_path $N/tmp/proxy;
	fastcgi_temp_path $N/tmp/fastcgi;
	uwsgi_temp_path $N/tmp/uwsgi;
	scgi_temp_path $N/tmp/scgi;
	server {
		listen 127.0.0.1:$PORT;
		root $N/www;
		location / {
			dav_methods PUT DELETE MOVE;
			create_full_put_path on;
			dav_access user:rw group:r all:r;
			client_max_body_size 0;
		}
		# the same entries, served slowly: a server can die in the middle of a pull
		location /slow/ {
			alias $N/www/cache/;
			limit_rate 16k;
		}
	}
}
EOT
NGINX_PID=
start_nginx() {
	"$NGINX" -p "$N/" -c "$N/nginx.conf" -e "$N/error.log" &
	NGINX_PID=$!
	for _ in $(seq 100); do
		curl -s -o /dev/null "http://127.0.0.1:$PORT/" && return 0
		sleep 0.05
	done
	echo "nginx did not start:"; cat "$N/error.log"; exit 1
}
stop_nginx() {
	[ -n "$NGINX_PID" ] && kill -9 "$NGINX_PID" 2>/dev/null && wait "$NGINX_PID" 2>/dev/null
	NGINX_PID=
}
cleanup_all() { stop_nginx; cleanup; }
trap cleanup_all EXIT
trap 'exit 1' INT TERM HUP PIPE   # through the EXIT trap: nginx never outlives the test
start_nginx
URL=http://127.0.0.1:$PORT/cache

# --- the toy project: 'first' installs a file, a link, an executable and 256 KiB of
# incompressible but reproducible bytes; 'second' depends on it ---
P=$T/p
new_project "$P"
make_tarball toy 1.0
cat >"$P/sources/toy.yaml" <<EOT
name: toy
version: "1.0"
origins:
  - url: file://$T/www/toy-1.0.tar.gz
    sha256: $(sha256 "$T/www/toy-1.0.tar.gz")
EOT
cat >"$P/stages/first.yaml" <<'EOT'
name: first
sources: [toy]
steps:
  - mkdir -p ${destdir}/usr/share/toy ${destdir}/usr/bin
  - cp ${src}/data.txt ${destdir}/usr/share/toy/first.txt
  - ln -s first.txt ${destdir}/usr/share/toy/link.txt
  - printf '#!/bin/sh\necho toy\n' >${destdir}/usr/bin/toy && chmod 755 ${destdir}/usr/bin/toy
  - openssl enc -aes-128-ctr -nosalt -K 00000000000000000000000000000000 -iv 00000000000000000000000000000000 </dev/zero 2>/dev/null | head -c 262144 >${destdir}/usr/share/toy/blob
EOT
cat >"$P/stages/second.yaml" <<'EOT'
name: second
depends: [first]
steps:
  - test -f ${sysroot}/usr/share/toy/first.txt
  - mkdir -p ${destdir}/usr/share/toy && echo "${greeting} from ${target}" > ${destdir}/usr/share/toy/second.txt
EOT
job() {   # job NAME: crossroot with NAME's own work directory, cache and sysroots
	echo "$CROSSROOT -C $P --work $T/$1/work --out $T/$1/sysroots"
}
no_build() { ! grep -q 'build   ' "$T/out"; }
no_partial() { ! ls -a "$T/$1/work/cache/stages" | grep -q '^\.tmp-'; }
keys() { ls "$T/$1/work/cache/stages"; }

# --- keys ---
run "$CROSSROOT" key generate "$T/keys/a.key"
check "key generate writes a private key and prints the public key" 0 "ed25519:"
A_PUB=$(grep '^ed25519:' "$T/out")
assert "the private key is mode 0600" test "$(stat -c %a "$T/keys/a.key")" = 600
run "$CROSSROOT" key public "$T/keys/a.key"
check "key public prints the same public key" 0 "$A_PUB"
run "$CROSSROOT" key generate "$T/keys/a.key"
check "an existing key is never overwritten" 2 "already exists"
run "$CROSSROOT" key generate "$T/keys/d.key"
D_PUB=$(grep '^ed25519:' "$T/out")

# --- configuration errors are usage errors ---
printf 'url = %s\nmode = read-write\n' "$URL" >"$T/nokey.conf"
CROSSROOT_REMOTE_CACHE_CONFIG=$T/nokey.conf run $(job x) build toy
check "read-write without a signing key is refused" 2 "needs a key to sign with"
printf 'url = %s\ntrusted-key = ed25519:abc\n' "$URL" >"$T/badkey.conf"
CROSSROOT_REMOTE_CACHE_CONFIG=$T/badkey.conf run $(job x) build toy
check "a malformed trusted key names the file and line" 2 "badkey.conf:2: 'ed25519:abc' is not a public key"
run $(job x) build toy --remote-cache "$URL"
check "a remote cache without any trusted key is refused" 2 "has no trusted key"
run $(job x) build toy --remote-cache-mode read-write
check "a mode without a remote cache is refused" 2 "--remote-cache-mode needs a remote cache"
rm -rf "$T/x"

# --- job A builds and pushes (URL, mode and key from its configuration file) ---
cat >"$T/a.conf" <<EOT
# job A: pushes what it builds
url = $URL
mode = read-write
signing-key = keys/a.key
EOT
export CROSSROOT_REMOTE_CACHE_CONFIG=$T/a.conf
run $(job a) build toy
check "job A builds and pushes every stage" 0 "build   first (toy)" "build   second (toy)" \
	"pushed  first (toy) to the remote cache" "pushed  second (toy) to the remote cache"
A_FIRST=$(grep -lx "toy first" "$T"/a/work/cache/stages/*/owner | xargs dirname | xargs basename)
assert "the server holds data, manifest and signature of each stage" \
	test "$(ls "$N/www/cache" | grep -c -e '\.tar\.zst$' -e '\.manifest$' -e '\.sig$')" = 6
assert "no temporary upload is left on the server" sh -c "! ls '$N/www/cache' | grep -q part"
assert "the server's manifest is the local one" cmp -s "$N/www/cache/$A_FIRST.manifest" "$T/a/work/cache/stages/$A_FIRST/manifest"
assert "the data went up under a temporary name and was moved into place" \
	sh -c "grep -q '\"PUT /cache/$A_FIRST.tar.zst.part-' '$N/access.log' && grep -q '\"MOVE /cache/$A_FIRST.tar.zst.part-' '$N/access.log'"
assert "the signature was written last" sh -c "grep -E '\"(PUT|MOVE) /cache/$A_FIRST' '$N/access.log' | tail -1 | grep -q '$A_FIRST.sig'"
run "$CROSSROOT" -C "$P" --work "$T/a/work" --out "$T/a/sysroots" build toy
check "a rerun of A rebuilds and pushes nothing" 0 "sysroot toy"
assert "  (nothing pushed again)" sh -c "! grep -q pushed '$T/out'"

# --- job B: a fresh work directory and cache, read-only, trusting A's key ---
printf 'trusted-key = %s\n' "$A_PUB" >"$T/b.conf"
export CROSSROOT_REMOTE_CACHE_CONFIG=$T/b.conf
: >"$N/access.log"
run $(job b) build toy --remote-cache "$URL/"
check "job B pulls every stage" 0 "pulled  first (toy) from the remote cache" \
	"pulled  second (toy) from the remote cache" "sysroot toy"
assert "job B builds nothing" no_build
assert "job B fetches and extracts no source" sh -c "! grep -q -e '^extract' -e 'fetched toy' '$T/out'"
assert "job B's sysroot has the same stage files as A's" diff -r "$T/a/sysroots/toy/usr" "$T/b/sysroots/toy/usr"
assert "  (with the link and the mode)" sh -c "test -L '$T/b/sysroots/toy/usr/share/toy/link.txt' && test -x '$T/b/sysroots/toy/usr/bin/toy'"
assert "the stage keys are the same with and without a remote cache" test "$(keys a)" = "$(keys b)"
assert "the pulled results carry A's output ids" cmp -s "$T/a/work/cache/stages/$A_FIRST/output" "$T/b/work/cache/stages/$A_FIRST/output"
assert "read-only mode never writes to the server" sh -c "! grep -q -e '\"PUT ' -e '\"DELETE ' -e '\"MOVE ' '$N/access.log'"
run $(job b) plan toy
check "B's pulled results are ordinary local results (plan, no remote cache)" 0 \
	"first                    cached" "second                   cached"
run $(job b) build toy --remote-cache "$URL"
check "a rerun of B asks the server nothing" 0 "sysroot toy"
assert "  (no pull)" sh -c "! grep -q pulled '$T/out'"

# --- --pull-only: a CI job that must not compile ---
run $(job po) build --pull-only toy --remote-cache "$URL"
check "--pull-only pulls every stage" 0 "pulled  first (toy)" "pulled  second (toy)" "sysroot toy"
assert "  and builds nothing" no_build
cp "$P/stages/second.yaml" "$T/second.yaml.orig"
printf -- '  - echo changed >${destdir}/usr/share/toy/changed\n' >>"$P/stages/second.yaml"
run $(job po) build --pull-only toy --remote-cache "$URL"
check "--pull-only refuses a stage no cache has, naming it and its key" 1 \
	"--pull-only: second (toy) is in neither the stage cache nor the remote cache (key "
assert "  and builds nothing" no_build
cp "$T/second.yaml.orig" "$P/stages/second.yaml"
rm -rf "$T/po"
run $(job po) plan --pull-only toy
check "--pull-only is for build only" 2 "--pull-only is for 'crossroot build'"

# --- tampered data: one byte changed on the server ---
A_DATA=$(sha256 "$N/www/cache/$A_FIRST.tar.zst")
python3 - "$N/www/cache/$A_FIRST.tar.zst" <<'EOT'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
b[len(b) // 2] ^= 1
open(p, "wb").write(bytes(b))
EOT
run $(job c) build toy --remote-cache "$URL"
check "tampered data is refused with a warning naming the entry, and built here" 0 \
	"remote cache entry $URL/$A_FIRST refused: its data does not match its signature" \
	"build   first (toy)" "sysroot toy"
assert "  (nothing partial is left in the stage cache)" no_partial c
assert "  (the locally built result is whole)" test -f "$T/c/work/cache/stages/$A_FIRST/manifest"
rm -rf "$T/c"

# --- a forged entry signed by a trusted key: its data is not what its manifest says (a
# pusher whose own cache was damaged); the files are checked one by one ---
python3 - "$P" "$T/a/work/cache/stages/$A_FIRST/files" "$T/forged.tar" <<'EOT'
import io, os, sys, tarfile
files, out = sys.argv[2], sys.argv[3]
with tarfile.open(out, "w", format=tarfile.PAX_FORMAT) as t:
    for line in open(os.path.join(os.path.dirname(files), "manifest")).read().splitlines()[1:]:
        f = line.split("\t")
        info = tarfile.TarInfo(f[-1])
        if f[0] == "d":
            info.type, info.mode = tarfile.DIRTYPE, int(f[1], 8)
            t.addfile(info)
        elif f[0] == "l":
            info.type, info.linkname = tarfile.SYMTYPE, f[1]
            t.addfile(info)
        else:
            data = bytearray(open(os.path.join(files, f[-1]), "rb").read())
            if f[-1].endswith("first.txt"):
                data[0] ^= 0x20          # same size, other bytes
            info.mode, info.size = int(f[1], 8), len(data)
            t.addfile(info, io.BytesIO(bytes(data)))
EOT
size=$(stat -c %s "$T/forged.tar")
data_sha=$(sha256 "$T/forged.tar")
output=$(sha256 "$N/www/cache/$A_FIRST.manifest")
printf 'crossroot-remote-entry 1\nkey %s\noutput %s\ndata %s %s\n' "$A_FIRST" "$output" "$data_sha" "$size" >"$T/msg"
openssl pkeyutl -sign -rawin -inkey "$T/keys/a.key" -in "$T/msg" -out "$T/sig.bin"
cp "$T/forged.tar" "$N/www/cache/$A_FIRST.tar.zst"
printf 'crossroot-remote-signature 1\npublic-key %s\ndata %s %s\nsignature %s\n' "$A_PUB" "$data_sha" "$size" \
	"$(od -An -tx1 -v "$T/sig.bin" | tr -d ' \n')" >"$N/www/cache/$A_FIRST.sig"
run $(job c) build toy --remote-cache "$URL"
check "a signed entry whose files differ from its signed manifest is refused, and built here" 0 \
	"remote cache entry $URL/$A_FIRST refused: its files differ from its signed manifest" \
	"usr/share/toy/first.txt" "build   first (toy)"
assert "  (nothing partial is left in the stage cache)" no_partial c
rm -rf "$T/c"

# --- an unknown key: job D (its own key, not trusted by B) pushes to another directory ---
printf 'url = %s\nmode = read-write\nsigning-key = %s\n' "http://127.0.0.1:$PORT/other" "$T/keys/d.key" >"$T/d.conf"
CROSSROOT_REMOTE_CACHE_CONFIG=$T/d.conf run $(job d) build toy
check "job D pushes with its own key" 0 "pushed  first (toy)"
run $(job c) build toy --remote-cache "http://127.0.0.1:$PORT/other"
check "an entry signed by an unknown key is refused with a warning, and built here" 0 \
	"remote cache entry http://127.0.0.1:$PORT/other/$A_FIRST refused: it is signed by $D_PUB, which is not a trusted key" \
	"build   first (toy)" "build   second (toy)"
rm -rf "$T/c"

# --- read-write repairs what it refused: C builds and pushes over the bad entry, then a fresh
# reader pulls it ---
cat >"$T/c.conf" <<EOT
url = $URL
mode = read-write
signing-key = $T/keys/a.key
EOT
CROSSROOT_REMOTE_CACHE_CONFIG=$T/c.conf run $(job c) build toy
check "a read-write job replaces a refused entry with its own build" 0 "refused" "pushed  first (toy)"
assert "  (the same files give the same bytes: A's data again)" test "$(sha256 "$N/www/cache/$A_FIRST.tar.zst")" = "$A_DATA"
run $(job e) build toy --remote-cache "$URL"
check "the replaced entry is pulled" 0 "pulled  first (toy)" "pulled  second (toy)"
assert "  (nothing built)" no_build
rm -rf "$T/c" "$T/e"

# --- a dead server: a warning, a local build, and the remote cache is not asked again ---
run $(job f) build toy --remote-cache "http://127.0.0.1:1/cache"
check "a server that cannot be reached is a warning, never a failed build" 0 \
	"remote cache http://127.0.0.1:1/cache cannot be reached" "build   first (toy)" "build   second (toy)"
assert "  (one warning for the whole run)" test "$(grep -c 'cannot be reached' "$T/out")" = 1
rm -rf "$T/f"

# --- the server dies in the middle of a pull (a slow location, then kill -9) ---
"$CROSSROOT" -C "$P" --work "$T/g/work" --out "$T/g/sysroots" build toy \
	--remote-cache "http://127.0.0.1:$PORT/slow" >"$T/g.out" 2>&1 &
pid=$!
for _ in $(seq 200); do
	ls "$T"/g/work/cache/stages/.tmp-pull-*/data.tar.zst >/dev/null 2>&1 && break
	sleep 0.05
done
sleep 0.5
stop_nginx
wait $pid
STATUS=$?
cp "$T/g.out" "$T/out"
check "a server killed during a pull is a warning; the stage is built here" 0 \
	"cannot be reached (GET .tar.zst of entry http://127.0.0.1:$PORT/slow/$A_FIRST" "build   first (toy)" "build   second (toy)"
assert "  (no partial entry in B's stage cache)" no_partial g
run $(job g) plan toy
check "  (what was built is whole: the plan finds it cached)" 0 "first                    cached" "second                   cached"
start_nginx
assert "the server's entry is intact after the kill" test -s "$N/www/cache/$A_FIRST.sig"
run $(job h) build toy --remote-cache "$URL"
check "and a fresh job pulls it after the restart" 0 "pulled  first (toy)" "pulled  second (toy)"
assert "  (nothing built)" no_build
rm -rf "$T/h"

# --- limits per entry: a server trickling bytes (never stalled, never done) is given up after
# the configured timeout; an entry larger than max-entry-size is refused before its data ---
mkdir -p "$T/trickle/www"
cp "$N/www/cache/"* "$T/trickle/www/"
python3 "$ROOT/tests/lib/faultserver.py" "$T/trickle/www" "$T/trickle/port" &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$T/trickle/port" ] && break; sleep 0.05; done
TRICKLE=http://127.0.0.1:$(cat "$T/trickle/port")/trickle
printf 'url = %s\ntrusted-key = %s\ntimeout = 2\n' "$TRICKLE" "$A_PUB" >"$T/trickle.conf"
started=$(date +%s)
CROSSROOT_REMOTE_CACHE_CONFIG=$T/trickle.conf run $(job i) build toy
took=$(($(date +%s) - started))
check "a server trickling one byte at a time is given up after the timeout, naming the entry and the limit" 0 \
	"remote cache entry $TRICKLE/$A_FIRST" "timeout of 2 seconds" "build   first (toy)" "build   second (toy)"
assert "  (within seconds, not the minutes the entry would take: ${took}s)" test "$took" -lt 30
assert "  (and the remote cache is not asked again in this run)" test "$(grep -c 'timeout of 2 seconds' "$T/out")" = 1
assert "  (no partial entry)" no_partial i
rm -rf "$T/i"
printf 'url = %s\ntrusted-key = %s\nmax-entry-size = 100K\n' "$URL" "$A_PUB" >"$T/small.conf"
data_gets=$(grep -c "GET /cache/$A_FIRST.tar.zst" "$N/access.log")
CROSSROOT_REMOTE_CACHE_CONFIG=$T/small.conf run $(job i) build toy
check "an entry larger than max-entry-size is refused, naming the entry and the limit" 0 \
	"remote cache entry $URL/$A_FIRST refused" "max-entry-size of 102400 bytes" \
	"build   first (toy)" "pulled  second (toy)"
assert "  (its data was never asked for)" test "$(grep -c "GET /cache/$A_FIRST.tar.zst" "$N/access.log")" = "$data_gets"
rm -rf "$T/i"
printf 'url = %s\ntrusted-key = %s\ntimeout = soon\n' "$URL" "$A_PUB" >"$T/bad.conf"
CROSSROOT_REMOTE_CACHE_CONFIG=$T/bad.conf run $(job x) build toy
check "a timeout that is not a number of seconds names the file and line" 2 "bad.conf:3:"
printf 'url = %s\ntrusted-key = %s\nmax-entry-size = 4X\n' "$URL" "$A_PUB" >"$T/bad.conf"
CROSSROOT_REMOTE_CACHE_CONFIG=$T/bad.conf run $(job x) build toy
check "a max-entry-size that is not a size names the file and line" 2 "bad.conf:3:"

finish
