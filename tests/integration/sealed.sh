#!/bin/sh
# Sealed steps: a build step reaches nothing but its own stage, and nothing it leaves behind
# makes crossroot act outside it. One hostile step per class (issue 30); each check failed
# before the sandbox and the descriptor-based walks. Run as the invoking user, and as root
# also as nobody (steps of an unprivileged crossroot are sealed the same way).
. "$(dirname "$0")/../lib/common.sh"

if ! command -v bwrap >/dev/null; then
	not_ok "bwrap is not installed (make deps): steps cannot be sealed"
	finish
	exit 1
fi

# sealed_checks LABEL [PREFIX...]: every class, with crossroot run through PREFIX
sealed_checks() {
	label=$1
	shift
	D=$T/$label
	P=$D/p
	mkdir -p "$D"
	new_project "$P"
	C="$* $CROSSROOT -C $P --work $D/work --cache $D/cache --out $D/sysroots"
	mkdir -p "$D/home/.config/crossroot" "$D/victim"
	echo "private key" >"$D/home/secret"
	# an LLVM in the hidden home: its prefix (bin/ and what is beside it) stays visible
	mkdir -p "$D/home/llvm/bin" "$D/home/llvm/lib"
	for tool in /usr/lib/llvm-19/bin/*; do ln -s "$tool" "$D/home/llvm/bin/"; done
	echo beside >"$D/home/llvm/lib/marker"
	echo "do not publish" >"$D/victim/data"
	KEY=$D/keys/cache.key
	mkdir -p "$D/keys"
	printf 'url = http://127.0.0.1:9/cache\nmode = read\nsigning-key = %s\n' "$KEY" >"$D/remote.conf"
	"$CROSSROOT" key generate "$KEY" >/dev/null 2>&1
	[ -n "$OWNER" ] && chown -R "$OWNER" "$D"
	chmod 4755 "$D/victim/data"
	target() { printf 'triple: aarch64-unknown-linux-musl\nqemu: qemu-aarch64-static\nstages: [%s]\n' "$2" >"$P/targets/$1.yaml"; }

	# --- a ${destdir} replaced by a link is refused, never walked, moved or published ---
	cat >"$P/stages/swap.yaml" <<EOT
name: swap
steps:
  - rmdir \${destdir} && ln -s $D/victim \${destdir}
EOT
	target swap swap
	run $C build swap
	check "$label: a destdir replaced by a link fails, naming the stage and the link" 1 \
		"left a link where a directory must be" "dest"
	assert "$label: the link's target keeps its set-id mode" test "$(stat -c %a "$D/victim/data")" = 4755
	assert "$label: nothing of it was published" sh -c "! grep -rqs 'do not publish' '$D/cache' '$D/sysroots'"

	# --- debug: split never writes through a usr/lib/debug link the step left ---
	cat >"$P/stages/dbglink.yaml" <<EOT
name: dbglink
debug: split
steps:
  - printf 'int main(void) { return 0; }\n' >m.c && \${host_cc} -g -o prog m.c
  - mkdir -p \${destdir}/usr/bin \${destdir}/usr/lib && cp prog \${destdir}/usr/bin/
  - ln -s $D/victim \${destdir}/usr/lib/debug
EOT
	target dbglink dbglink
	run $C build dbglink
	check "$label: debug: split through a usr/lib/debug link fails, naming it" 1 "usr/lib/debug"
	assert "$label: nothing was written through it" test "$(ls -A "$D/victim")" = data

	# --- secrets and shared state: HOME, the remote cache's key and configuration, the
	# project, the source trees, other stages ---
	cat >"$P/stages/snoop.yaml" <<EOT
name: snoop
steps:
  - >-
    mkdir -p \${destdir}/usr/share && {
    echo "home: \$HOME"; cat $D/home/secret 2>/dev/null || echo "no user home";
    echo "llvm prefix: \$(cat \${llvm_bin}/../lib/marker)";
    echo "key: [\$(cat $KEY 2>/dev/null)]"; echo "conf: [\$(cat $D/remote.conf 2>/dev/null)]";
    touch $P/intruder 2>/dev/null || echo "project read-only";
    touch \$HOME/mine && echo "own home writable";
    echo "caps: \$(grep CapEff /proc/self/status | tr -d '\t')";
    echo "processes: \$(ls /proc | grep -c '^[0-9]')";
    nsenter -t 1 -n true 2>/dev/null || echo "no nsenter";
    umount $D/work 2>/dev/null || echo "no umount";
    unshare -U true 2>/dev/null || echo "no user namespace";
    } >\${destdir}/usr/share/seen
  - setsid sh -c 'sleep 37.5' >/dev/null 2>&1 &
EOT
	target snoop snoop
	run env HOME="$D/home" CROSSROOT_LLVM_BIN="$D/home/llvm/bin" \
		CROSSROOT_REMOTE_CACHE_CONFIG="$D/remote.conf" $C build snoop
	check "$label: a step that looks for secrets builds" 0 "sysroot snoop"
	SEEN=$D/sysroots/snoop/usr/share/seen
	assert "$label: its HOME is its stage's own" grep -qx "home: $D/work/build/snoop/snoop/home" "$SEEN"
	assert "$label: the invoking user's home is hidden" grep -qx "no user home" "$SEEN"
	assert "$label: but not the prefix of an LLVM on the steps' PATH in it" grep -qx "llvm prefix: beside" "$SEEN"
	assert "$label: the signing key reads as empty" sh -c "test -s '$KEY' && grep -qx 'key: \[\]' '$SEEN'"
	assert "$label: the remote configuration reads as empty" grep -qx "conf: \[\]" "$SEEN"
	assert "$label: the project checkout is read-only" sh -c "grep -qx 'project read-only' '$SEEN' && test ! -e '$P/intruder'"
	assert "$label: its own HOME is writable" grep -qx "own home writable" "$SEEN"
	assert "$label: no capabilities" grep -qx "caps: CapEff:0000000000000000" "$SEEN"
	assert "$label: its own PID namespace (a few processes)" sh -c "test \$(sed -n 's/^processes: //p' '$SEEN') -lt 10"
	assert "$label: no way into another namespace or mount" sh -c "grep -qx 'no nsenter' '$SEEN' && grep -qx 'no umount' '$SEEN' && grep -qx 'no user namespace' '$SEEN'"
	assert "$label: a detached process ended with its step" sh -c "! pgrep -f 'sleep 37[.]5' >/dev/null"
	run $C build snoop
	check "$label: the next run is not locked out, and builds nothing" 0 "sysroot snoop"
	assert "$label: (nothing built)" sh -c "! grep -q '^build ' '$T/out'"

	# --- chroot: true (glibc's ldconfig -r): root of the step's own user namespace with
	# CAP_SYS_CHROOT alone; still no nested namespace, no way out, nothing else of the host ---
	cat >"$P/stages/rooted.yaml" <<EOT
name: rooted
chroot: true
steps:
  - >-
    mkdir -p \${destdir}/usr/share \${destdir}/root && {
    echo "uid: \$(id -u)";
    echo "caps: \$(grep CapEff /proc/self/status | tr -d '\t')";
    perl -e 'chroot(\$ARGV[0]) or die "\$!"; print "chroot works\\n"' \${destdir}/root;
    unshare -U true 2>/dev/null || echo "no user namespace";
    cat $D/home/secret 2>/dev/null || echo "no user home";
    touch $P/intruder 2>/dev/null || echo "project read-only";
    } >\${destdir}/usr/share/seen; rm -rf \${destdir}/root
EOT
	target rooted rooted
	run env HOME="$D/home" $C build rooted
	check "$label: a stage with chroot: true builds" 0 "sysroot rooted"
	RSEEN=$D/sysroots/rooted/usr/share/seen
	assert "$label: chroot: its steps are root of their own namespace" grep -qx "uid: 0" "$RSEEN"
	assert "$label: chroot: with CAP_SYS_CHROOT alone" grep -qx "caps: CapEff:0000000000040000" "$RSEEN"
	assert "$label: chroot: chroot(2) works" grep -qx "chroot works" "$RSEEN"
	assert "$label: chroot: still no nested user namespace, no home, read-only project" sh -c \
		"grep -qx 'no user namespace' '$RSEEN' && grep -qx 'no user home' '$RSEEN' && grep -qx 'project read-only' '$RSEEN' && test ! -e '$P/intruder'"

	# --- a tarball's 0700 directory and 0600 file: a step (another user, as root) reads them ---
	mkdir -p "$D/tarball/closed-1.0/inner"
	echo "closed data" >"$D/tarball/closed-1.0/inner/data"
	chmod 600 "$D/tarball/closed-1.0/inner/data"
	chmod 700 "$D/tarball/closed-1.0/inner" "$D/tarball/closed-1.0"
	tar -C "$D/tarball" -czf "$D/closed-1.0.tar.gz" closed-1.0
	printf 'name: closed\nversion: "1.0"\norigins:\n  - url: file://%s\n    sha256: %s\n' \
		"$D/closed-1.0.tar.gz" "$(sha256 "$D/closed-1.0.tar.gz")" >"$P/sources/closed.yaml"
	cat >"$P/stages/closed.yaml" <<'EOT'
name: closed
sources: [closed]
steps:
  - mkdir -p ${destdir}/usr/share && cat ${src}/inner/data >${destdir}/usr/share/closed
EOT
	target closed closed
	run $C build closed
	check "$label: a tarball's 0700 directory and 0600 file are read by the step" 0 "sysroot closed"
	assert "$label: (what it read)" grep -qx "closed data" "$D/sysroots/closed/usr/share/closed"

	# --- work directory, caches and output in a private (0700) directory of the caller's, not
	# under /tmp (which the sandbox replaces first): a checkout in root's home. As root, the
	# step user cannot walk there, and bwrap could not reach the hidden work directory to
	# mount on it. (The caller's own: nobody may not reach the checkout's work/.) ---
	if [ -z "$OWNER" ]; then
		mkdir -p "$ROOT/work"
		PRIV=$(mktemp -d "$ROOT/work/sealed-private.XXXXXX")
		run "$@" $CROSSROOT -C $P --work "$PRIV/work" --cache "$PRIV/cache" --out "$PRIV/sysroots" \
			build closed
		check "$label: a work directory in a private directory builds" 0 "sysroot closed"
		assert "$label: (and its step read the source)" \
			grep -qx "closed data" "$PRIV/sysroots/closed/usr/share/closed"
		# the remote cache's key and configuration in such a directory: the step user
		# cannot reach them, and bwrap could not reach them to mask them either
		PRIV=$(mktemp -d "$ROOT/work/sealed-key.XXXXXX")
		"$CROSSROOT" key generate "$PRIV/cache.key" >/dev/null 2>&1
		printf 'url = http://127.0.0.1:9/cache\nmode = read\nsigning-key = %s\n' "$PRIV/cache.key" \
			>"$PRIV/remote.conf"
		sed -i "s|$KEY|$PRIV/cache.key|; s|$D/remote.conf|$PRIV/remote.conf|" "$P/stages/snoop.yaml"
		run env HOME="$D/home" CROSSROOT_REMOTE_CACHE_CONFIG="$PRIV/remote.conf" \
			"$@" $CROSSROOT -C $P --work "$D/work" --cache "$D/cache" --out "$D/sysroots" build snoop
		check "$label: a signing key in a private directory: the step builds" 0 "sysroot snoop"
		assert "$label: (and reads neither the key nor the configuration)" \
			sh -c "grep -qx 'key: \[\]' '$SEEN' && grep -qx 'conf: \[\]' '$SEEN'"
		rm -rf "$PRIV"
	fi
}

OWNER=
sealed_checks self
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	chmod 755 "$T"
	OWNER=nobody:nogroup
	sealed_checks nobody setpriv --reuid=nobody --regid=nogroup --clear-groups
fi
finish
