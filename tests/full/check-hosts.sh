#!/bin/sh
# make check-hosts: the README's setup on each supported Debian release, from nothing. For each
# host in $HOSTS (default "bookworm trixie") it builds a minimal root with debootstrap (variant
# minbase) from the archive this machine's apt is configured with, puts a clean clone of this
# checkout's HEAD in it, installs what the README says to install first (make, git), and runs
# the README's two commands inside it (see in_root): `make deps main`, then `make deps check`.
#
# CHECK_HOSTS_DIR (default work/check-hosts) holds one root per host (DIR/HOST), its log
# (DIR/HOST.log, every command's output) and the clone (DIR/HOST/root/crossroot). An existing
# root is reused, and so is its clone's work/ (download and stage caches): the clone is reset
# to HEAD and cleaned but for work/, so a rerun is incremental. Arguments replace the two
# commands: `tests/full/check-hosts.sh 'make deps' 'make' 'tests/unit/run-unit'` runs those
# instead, each in the clone through `sh -c`. Needs root (debootstrap, namespaces, mounts).
# Prints one line per command and one summary line per host: pass or fail and the duration.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HOSTS=${HOSTS:-bookworm trixie}
DIR=${CHECK_HOSTS_DIR:-$ROOT/work/check-hosts}
[ "$(id -u)" = 0 ] || { echo "check-hosts: needs root (debootstrap, namespaces, mount)" >&2; exit 2; }
command -v debootstrap >/dev/null || { echo "check-hosts: debootstrap is missing (make deps)" >&2; exit 2; }

# archive_url: the first Debian archive of this machine's apt sources (one-line .list files or
# deb822 .sources stanzas), preferring one that serves the host's own release (not -security)
archive_url() {
	codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		case $f in
		*.sources)
			# one "URI SUITE..." line per enabled deb stanza
			awk 'function flush() { if (deb && enabled && uris != "") print uris "\t" suites; deb = 0; enabled = 1; uris = ""; suites = "" }
				BEGIN { enabled = 1 }
				/^[ \t]*$/ { flush(); next }
				/^#/ { next }
				tolower($1) == "types:" { for (i = 2; i <= NF; i++) if ($i == "deb") deb = 1 }
				tolower($1) == "enabled:" { enabled = (tolower($2) != "no") }
				tolower($1) == "uris:" { uris = $2 }
				tolower($1) == "suites:" { $1 = ""; suites = $0 }
				END { flush() }' "$f" ;;
		*)
			# deb [options] URI SUITE COMPONENT...
			sed -n 's/^[ \t]*deb[ \t]\+\(\[[^]]*\][ \t]\+\)\?\([^ \t]\+\)[ \t]\+\([^ \t]\+\).*/\2\t\3/p' "$f" ;;
		esac
	done | awk -F '\t' -v codename="$codename" '
		{ n = split($2, s, " "); for (i = 1; i <= n; i++) if (s[i] == codename) { print $1; found = 1; exit } }
		first == "" && $1 !~ /security/ { first = $1 }
		END { if (!found && first != "") print first }'
}

MIRROR=$(archive_url)
[ -n "$MIRROR" ] || { echo "check-hosts: no Debian archive in /etc/apt/sources.list*" >&2; exit 2; }
COMMIT=$(git -C "$ROOT" rev-parse HEAD) || exit 2
[ -z "$(git -C "$ROOT" status --porcelain --untracked-files=no)" ] ||
	echo "check-hosts: note: uncommitted changes are not tested (the clone is of HEAD, $COMMIT)"
if [ $# = 0 ]; then set -- 'make deps main' 'make deps check'; fi
mkdir -p "$DIR"

MOUNTED=
# stop_roots: kill what still runs inside the roots (an interrupted `make check` there would
# otherwise go on building, and hold its work directory, after this script is gone), then
# unmount them
stop_roots() {
	[ -n "$IN_ROOT_PID" ] && kill -KILL "$IN_ROOT_PID" 2>/dev/null   # its PID namespace dies with it
	for m in $MOUNTED; do umount -R "$m" 2>/dev/null || umount -R -l "$m"; done
	MOUNTED=
}
trap 'stop_roots' EXIT
trap 'stop_roots; exit 130' INT TERM

# duration SECONDS: "12m 5s"
duration() { echo "$(($1 / 60))m $(($1 % 60))s"; }

# in_root HOST COMMAND: COMMAND through sh -c inside the host's root with a clean environment,
# output appended to the host's log. Not a chroot: the kernel refuses a new user namespace to
# a chrooted process, and a chroot's / is no mount point, so neither the steps' sandbox nor a
# `crossroot exec` session could be made there. The command gets a mount namespace whose root
# is the Debian root itself (bound onto itself, then pivot_root) and a PID namespace with its
# own /proc, as on a machine; when the command's unshare is killed, everything in it dies.
IN_ROOT_PID=
in_root() {
	unshare --mount --pid --fork --kill-child --propagation private sh -c '
		r=$1; shift
		mount --rbind "$r" "$r" && cd "$r" && mkdir -p .check-hosts-old &&
			pivot_root . .check-hosts-old && mount -t proc proc /proc &&
			umount -l /.check-hosts-old && rmdir /.check-hosts-old && cd / && exec "$@"' in_root "$DIR/$1" \
		/usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb DEBIAN_FRONTEND=noninteractive \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		sh -c "$2" >>"$DIR/$1.log" 2>&1 </dev/null &
	IN_ROOT_PID=$!
	wait $IN_ROOT_PID   # (a signal interrupts `wait` at once; a foreground child would delay the trap)
	rc=$?
	IN_ROOT_PID=
	return $rc
}

# prepare HOST: the root (made once), mounts, apt's service policy, make and git, the clone
prepare() {
	r=$DIR/$1
	if [ ! -e "$r/.check-hosts-root" ]; then
		rm -rf "$r"
		echo "check-hosts: $1: debootstrap --variant=minbase $1 from $MIRROR"
		debootstrap --variant=minbase "$1" "$r" "$MIRROR" >>"$DIR/$1.log" 2>&1 || return 1
		# no package's service may start (nginx on port 80 would be this machine's)
		printf '#!/bin/sh\nexit 101\n' >"$r/usr/sbin/policy-rc.d" && chmod 755 "$r/usr/sbin/policy-rc.d" &&
			: >"$r/.check-hosts-root" || return 1
	fi
	cp /etc/resolv.conf "$r/etc/resolv.conf" 2>/dev/null
	for m in dev sys; do
		mountpoint -q "$r/$m" || { mount --rbind "/$m" "$r/$m" && mount --make-rslave "$r/$m"; } || return 1
		MOUNTED="$MOUNTED $r/$m"
	done
	# what the README installs before its commands
	in_root "$1" 'apt-get update -qq && apt-get install -y -qq --no-install-recommends make git' || return 1
	c=$r/root/crossroot
	if [ -d "$c/.git" ]; then
		git -C "$c" fetch -q "$ROOT" "$COMMIT" && git -C "$c" checkout -q -f --detach "$COMMIT" &&
			git -C "$c" clean -q -ffdx -e /work/ || return 1
	else
		git clone -q --no-hardlinks "$ROOT" "$c" && git -C "$c" checkout -q --detach "$COMMIT" || return 1
	fi
}

status=0
for host in $HOSTS; do
	start=$(date +%s)
	: >"$DIR/$host.log"
	result=pass
	if ! prepare "$host"; then
		result="fail (could not set up the root; see $DIR/$host.log)"
	else
		for cmd in "$@"; do
			t=$(date +%s)
			echo "==== $cmd" >>"$DIR/$host.log"
			if in_root "$host" "cd /root/crossroot && $cmd"; then
				echo "check-hosts: $host: ok     $cmd ($(duration $(($(date +%s) - t))))"
			else
				echo "check-hosts: $host: not ok $cmd ($(duration $(($(date +%s) - t)))); last lines of $DIR/$host.log:"
				tail -n 15 "$DIR/$host.log" | sed 's/^/    | /'
				result="fail ($cmd)"
			fi
		done
	fi
	stop_roots
	[ "$result" = pass ] || status=1
	echo "==== check-hosts: $host ($(. "$DIR/$host/etc/os-release" 2>/dev/null && echo "$PRETTY_NAME")): $result in $(duration $(($(date +%s) - start)))"
done
exit $status
