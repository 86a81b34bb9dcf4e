# Shared helpers for crossroot's shell tests: a scratch directory removed on exit, a loopback
# fault-injecting HTTP server, a synthetic project, and assertions that report "ok"/"not ok".
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CROSSROOT=${CROSSROOT:-$ROOT/crossroot}
T=$(mktemp -d /tmp/crossroot-test.XXXXXX)
SERVER_PID=
PASSED=0
FAILED=0

cleanup() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT

ok() { PASSED=$((PASSED + 1)); echo "ok     $*"; }
not_ok() { FAILED=$((FAILED + 1)); echo "not ok $*"; }

# run CMD...: runs it, output in $T/out (stdout+stderr), status in $STATUS
run() {
	"$@" >"$T/out" 2>&1
	STATUS=$?
}

# check NAME EXPECTED_STATUS [PATTERN...]: the last run ended with that status and its
# output contains every pattern (fixed strings)
check() {
	name=$1 want=$2
	shift 2
	if [ "$STATUS" != "$want" ]; then
		not_ok "$name: exit status $STATUS, expected $want"
		sed 's/^/    | /' "$T/out" | tail -25
		return 1
	fi
	for pattern in "$@"; do
		if ! grep -qF -- "$pattern" "$T/out"; then
			not_ok "$name: output lacks '$pattern'"
			sed 's/^/    | /' "$T/out" | tail -25
			return 1
		fi
	done
	ok "$name"
}

# assert NAME COMMAND...: passes when the command succeeds
assert() {
	name=$1
	shift
	if "$@"; then ok "$name"; else not_ok "$name"; fi
}

# start_server: serves $T/www on 127.0.0.1:$PORT with fault modes (see faultserver.py)
start_server() {
	mkdir -p "$T/www"
	python3 "$ROOT/tests/lib/faultserver.py" "$T/www" "$T/port" &
	SERVER_PID=$!
	for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
	PORT=$(cat "$T/port")
	BASE=http://127.0.0.1:$PORT
}

sha256() { sha256sum "$1" | cut -d' ' -f1; }

# make_tarball NAME VERSION: $T/www/NAME-VERSION.tar.gz holding NAME-VERSION/{data.txt,Makefile}
make_tarball() {
	d=$T/tarball/$1-$2
	mkdir -p "$d"
	echo "$1 $2 data" >"$d/data.txt"
	printf 'all:\n\tcp data.txt out.txt\n' >"$d/Makefile"
	mkdir -p "$T/www"
	tar -C "$T/tarball" -czf "$T/www/$1-$2.tar.gz" "$1-$2"
}

# write_toy_compiler FILE NAME: a shell-script "compiler" that writes "compiled by NAME: <its
# arguments>" into its -o file, for tests of tools stages
write_toy_compiler() {
	mkdir -p "$(dirname "$1")"
	cat >"$1" <<EOT
#!/bin/sh
out=
for a in "\$@"; do [ "\$prev" = -o ] && out=\$a; prev=\$a; done
echo "compiled by $2: \$*" >"\$out"
EOT
	chmod +x "$1"
}

# new_project DIR: a project with one target "toy" and stages on loopback sources
new_project() {
	P=$1
	mkdir -p "$P/targets" "$P/stages" "$P/sources" "$P/patches"
	cat >"$P/targets/toy.yaml" <<EOT
triple: aarch64-unknown-linux-musl
qemu: qemu-aarch64-static
stages: [second]
vars:
  greeting: hello
EOT
}

finish() {
	echo "$(basename "$0"): $PASSED passed, $FAILED failed"
	[ "$FAILED" = 0 ]
}

# wait_listen PORT: until something listens on 127.0.0.1:PORT (or any address), at most 10 s.
# Reads /proc/net/tcp: a probe connection would be taken by the listener (qemu's gdb stub
# accepts one debugger only).
wait_listen() {
	hex=$(printf '%04X' "$1")
	for _ in $(seq 200); do
		awk -v p=":$hex" '$2 ~ p"$" && $4 == "0A" { found = 1 } END { exit !found }' /proc/net/tcp && return 0
		sleep 0.05
	done
	return 1
}
