#!/bin/sh
# Benchmark (not a test) of the fetch and extraction paths against the usual tools:
#   1. fetch + verify a ~150 MB file over loopback: crossroot vs `curl -o f URL && sha256sum f`
#   2. extract Debian's llvm-toolchain-19 orig tarball, whole and the runtimes subset:
#      crossroot (libarchive) vs `tar -xJf` (whole, and with the same subset)
# Needs the llvm tarball in the download cache (work/cache, after `crossroot fetch`).
. "$(dirname "$0")/../lib/common.sh"
LLVM=ae498f3bc58ae2d9f64ef5f0c035c4240152bf015a5b7738b15c22e93bdc97ce
SRC=${CROSSROOT_CACHE:-$ROOT/work/cache}/downloads/$LLVM
[ -f "$SRC" ] || { echo "no llvm tarball in the cache: run 'crossroot fetch aarch64-linux-musl' first"; exit 1; }
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc; }

start_server
head -c 150000000 /dev/urandom >"$T/www/big.bin"
SUM=$(sha256 "$T/www/big.bin")
P=$T/p
new_project "$P"
printf 'name: big\nversion: "1"\norigins:\n  - url: %s/ok/big.bin\n    sha256: %s\n' "$BASE" "$SUM" >"$P/sources/big.yaml"
printf 'name: big\nsources: [big]\nsteps: [true]\n' >"$P/stages/big.yaml"
printf 'triple: a-b-c\nqemu: q\nstages: [big]\n' >"$P/targets/big.yaml"
sync
a=$(now); $CROSSROOT -C "$P" --work "$T/w" --cache "$T/c1" fetch big >/dev/null; b=$(now)
ours=$(secs "$a" "$b")
a=$(now); curl -s -o "$T/big.curl" "$BASE/ok/big.bin" && sha256sum "$T/big.curl" >/dev/null; b=$(now)
theirs=$(secs "$a" "$b")
echo "fetch+verify 150 MB over loopback: crossroot ${ours} s, curl + sha256sum ${theirs} s, ratio $(echo "scale=2; $ours / $theirs" | bc)"
rm -f "$T/big.curl" "$T/www/big.bin"; rm -rf "$T/c1"

# extraction: the llvm-project source recipe (subset) and the same without the subset
mkdir -p "$T/c2/downloads"
ln "$SRC" "$T/c2/downloads/$LLVM" 2>/dev/null || cp "$SRC" "$T/c2/downloads/$LLVM"
ln -s "$ROOT/sources" "$P/sources-real"
sed -n '/^extract:/,$p' "$ROOT/sources/llvm-project.yaml" >"$T/subset.yaml"
for kind in whole subset; do
	{
		printf 'name: llvm%s\nversion: "19"\norigins:\n  - url: file:///nonexistent\n    sha256: %s\n' "$kind" "$LLVM"
		[ "$kind" = subset ] && cat "$T/subset.yaml"
	} >"$P/sources/llvm$kind.yaml"
	printf 'name: llvm%s\nsources: [llvm%s]\nsteps: [true]\n' "$kind" "$kind" >"$P/stages/llvm$kind.yaml"
	printf 'triple: a-b-c\nqemu: q\nstages: [llvm%s]\n' "$kind" >"$P/targets/llvm$kind.yaml"
	sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
	a=$(now); $CROSSROOT -C "$P" --work "$T/w$kind" --cache "$T/c2" --offline build "llvm$kind" >/dev/null; b=$(now)
	echo "extract llvm ($kind): crossroot $(secs "$a" "$b") s, $(du -sh "$T/w$kind/src" | cut -f1)"
	rm -rf "$T/w$kind"
done
mkdir -p "$T/tar"
sync; echo 3 >/proc/sys/vm/drop_caches 2>/dev/null
a=$(now); tar -C "$T/tar" -xJf "$SRC"; b=$(now)
echo "extract llvm (whole): tar -xJf $(secs "$a" "$b") s"
rm -rf "$T/tar"; mkdir -p "$T/tar"
top=llvm-toolchain-19_19.1.7
a=$(now); tar -C "$T/tar" -xJf "$SRC" --strip-components=1 --wildcards --wildcards-match-slash \
	--exclude='*/test/*' "$top/cmake/*" "$top/runtimes/*" "$top/llvm/cmake/*" "$top/llvm/utils/llvm-lit/*" \
	"$top/compiler-rt/*" "$top/libcxx/*" "$top/libcxxabi/*" "$top/libunwind/*"; b=$(now)
echo "extract llvm (subset): tar -xJf $(secs "$a" "$b") s"
a=$(now); xz -dc -T2 "$SRC" >/dev/null; b=$(now)
echo "for reference: xz -dc -T2 alone $(secs "$a" "$b") s; xz -dc -T1 alone: $( a=$(now); xz -dc -T1 "$SRC" >/dev/null; b=$(now); secs "$a" "$b") s"
