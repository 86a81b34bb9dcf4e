#!/bin/sh
# crossroot install: a DESTDIR tree laid over a toy sysroot through its overlay, seen by the
# compiler and pkg-config, kept across rebuilds and clean, recorded in packages (manifest,
# SBOM, name, build --check); never replacing what the stages installed, never reaching
# outside the sysroot; all or nothing.
. "$(dirname "$0")/../lib/common.sh"
P=$T/p
new_project "$P"
cat >"$P/stages/second.yaml" <<'EOT'
name: second
steps:
  - mkdir -p ${destdir}/usr/lib/pkgconfig ${destdir}/usr/include && echo runtime >${destdir}/usr/lib/libc.so
EOT
W=$T/work
C="$CROSSROOT -C $P --work $W --out $T/sysroots"
S=$T/sysroots/toy
OV=$W/overlays/toy

# a library installed with DESTDIR=$ST, as 'make install' leaves it
ST=$T/staging
mkdir -p "$ST/usr/lib/pkgconfig" "$ST/usr/include"
echo 'int z(void);' >"$ST/usr/include/z.h"
echo 'libz.so.1 bytes' >"$ST/usr/lib/libz.so.1.3"
ln -s libz.so.1.3 "$ST/usr/lib/libz.so.1"
ln -s /usr/lib/libz.so.1 "$ST/usr/lib/libz.so"
printf 'prefix=/usr\nName: z\nDescription: z\nVersion: 1.3\nCflags: -I${prefix}/include\nLibs: -L${prefix}/lib -lz\n' \
	>"$ST/usr/lib/pkgconfig/z.pc"

run $C install toy "$ST"
check "install before any build: kept for the next one" 0 "overlay of toy" "next 'crossroot build'"
assert "no sysroot made by install alone" test ! -e "$S"
run $C build toy
check "build" 0 "sysroot toy"
assert "the overlay's files are in the sysroot" test -f "$S/usr/include/z.h"
assert "an absolute link is made relative to the sysroot" test "$(readlink "$S/usr/lib/libz.so")" = ../../usr/lib/libz.so.1
assert "it resolves inside the sysroot" grep -q 'libz.so.1 bytes' "$S/usr/lib/libz.so"
run "$S/bin/toy-pkg-config" --cflags --libs z
check "pkg-config finds the installed package" 0 "-I$S/usr/include" "-L$S/usr/lib -lz"
run "$S/bin/toy-clang" -ffreestanding -fsyntax-only -include z.h -x c /dev/null
check "the compiler finds its header with no flag" 0

run $C build toy
check "nothing to do after it" 0 "sysroot toy"
assert "still there" test -f "$S/usr/include/z.h"
printf -- '  - echo changed >${destdir}/usr/lib/extra\n' >>"$P/stages/second.yaml"
run $C build toy
check "a stage rebuilt" 0 "sysroot toy"
assert "the overlay survives the rebuild" test -f "$S/usr/include/z.h" -a -f "$S/usr/lib/extra"
run $C clean toy
check "clean says the overlay stays" 0 "its overlay stays in $OV"
run $C build toy
check "rebuilt after clean" 0
assert "the overlay survives clean" test -f "$S/usr/lib/libz.so.1.3"

# a second install adds to the overlay, and reaches the built sysroot at once
mkdir -p "$T/two/usr/include"
echo 'int p(void);' >"$T/two/usr/include/png.h"
run $C install toy "$T/two"
check "a second install" 0 "overlay of toy"
assert "it is in the sysroot at once" test -f "$S/usr/include/png.h"
assert "the first one stays" test -f "$S/usr/include/z.h"
echo 'int z2(void);' >"$ST/usr/include/z.h"
run $C install toy "$ST"
check "installing again replaces the overlay's own files" 0
assert "with the new contents" grep -q z2 "$S/usr/include/z.h"

# a package records what the overlay put in: each file's and link's line (tree.h's), so its
# name (the inputs' hash) and SBOM change with the overlay; build --check builds it again with
# the same overlay
ZH=$(sha256 "$ST/usr/include/z.h")
run $C package toy -o "$T/pkg1"
check "a package of a sysroot with an overlay" 0 "package toy:"
M1=$(ls "$T"/pkg1/toy-*.manifest)
assert "its manifest records the overlay's file with its sha256" \
	grep -qP "^overlay\tf\t644\t$(stat -c %s "$ST/usr/include/z.h")\t$ZH\tusr/include/z.h$" "$M1"
assert "and the overlay's link, as laid over the sysroot" \
	grep -qP '^overlay\tl\t../../usr/lib/libz.so.1\tusr/lib/libz.so$' "$M1"
assert "and nothing of the stages as overlay" sh -c "! grep -q '^overlay.*usr/lib/libc.so$' '$M1'"
python3 - "$(ls "$T"/pkg1/toy-*.spdx.json)" "$ZH" >"$T/spdx" 2>&1 <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
ids = {p["SPDXID"]: p for p in d["packages"]}
overlay = ids["SPDXRef-Package-overlay"]
files = {f["SPDXID"]: f for f in d["files"]}
mine = [files[i] for i in overlay["hasFiles"]]
names = sorted(f["fileName"] for f in mine)
assert "./usr/include/z.h" in names and "./usr/lib/libc.so" not in names, names
z = [f for f in mine if f["fileName"] == "./usr/include/z.h"][0]
assert {"algorithm": "SHA256", "checksumValue": sys.argv[2]} in z["checksums"], z
rel = {(r["spdxElementId"], r["relationshipType"], r["relatedSpdxElement"]) for r in d["relationships"]}
assert ("SPDXRef-Package-sdk", "CONTAINS", "SPDXRef-Package-overlay") in rel, rel
print("overlay in spdx ok")
PYEOF
assert "its SPDX document has the overlay as a package of its files" grep -q "overlay in spdx ok" "$T/spdx"
grep -v "spdx ok" "$T/spdx" | tail -3
echo 'int z3(void); /* longer */' >"$ST/usr/include/z.h"
run $C install toy "$ST"
run $C package toy -o "$T/pkg2"
check "a package after the overlay changed" 0 "package toy:"
M2=$(ls "$T"/pkg2/toy-*.manifest)
assert "it has another name" test "$(basename "$M1")" != "$(basename "$M2")"
assert "and records the new sha256" grep -qP "^overlay\tf\t644\t$(stat -c %s "$ST/usr/include/z.h")\t$(sha256 "$ST/usr/include/z.h")\tusr/include/z.h$" "$M2"
run $C build --check toy
check "build --check with an overlay: the second build has it too" 0 "reproducible:"

# refused: each leaves overlay and sysroot as they were
before=$(cd "$OV" && find . | sort | md5sum)
mkdir -p "$T/bad1/usr/lib"
echo mine >"$T/bad1/usr/lib/libc.so"
echo fine >"$T/bad1/usr/lib/fine.a"
run $C install toy "$T/bad1"
check "a file the stages installed is never replaced" 2 "'usr/lib/libc.so' is already in the sysroot" "nothing installed"
assert "the runtime is untouched" grep -qx runtime "$S/usr/lib/libc.so"
assert "nothing of the refused tree went in" test ! -e "$S/usr/lib/fine.a"
mkdir -p "$T/bad2/usr/lib"
ln -s ../../../../etc/passwd "$T/bad2/usr/lib/libx.so"
ln -s ../lib/../../.. "$T/bad2/usr/lib/sneaky"
run $C install toy "$T/bad2"
check "links that climb out of the sysroot are refused" 2 "'usr/lib/libx.so' points to '../../../../etc/passwd', outside" \
	"'usr/lib/sneaky' points to"
mkdir -p "$T/bad3/bin" "$T/bad3/usr/lib"
echo x >"$T/bad3/bin/toy-clang"
mkfifo "$T/bad3/usr/lib/fifo"
run $C install toy "$T/bad3"
check "crossroot's own places and special files are refused" 2 "'bin/toy-clang' is in the sysroot's own 'bin'" \
	"neither a file, a link nor a directory"
run $C install toy "$T/nosuch"
check "a missing directory" 2 "is not a directory"
run $C install toy
check "usage" 2 "usage: crossroot install TARGET DIR"
assert "the overlay is unchanged by every refusal" test "$(cd "$OV" && find . | sort | md5sum)" = "$before"

# a stage that starts installing a path the overlay has: an error naming it, not a silent winner
printf -- '  - echo stage >${destdir}/usr/include/png.h\n' >>"$P/stages/second.yaml"
run $C build toy
check "a stage now installing an overlay's path is an error naming it" 1 "overlays/toy/usr/include/png.h' is also installed by the target's stages"
finish
