#!/bin/sh
# Packages of a synthetic target: two cold builds in different work directories at different
# times, and a third restored from the stage cache, give the same bytes; the manifest names
# sources, patches, stages, the host LLVM and every file; the SPDX document parses; verify
# names a changed, added or removed file in a tree and in a package; unpacked elsewhere by
# another user it works; a file naming a build directory is refused; build --check passes,
# and fails naming the file a non-deterministic step writes; a build step cannot reach a
# server on 127.0.0.1 unless --allow-network.
. "$(dirname "$0")/../lib/common.sh"
unset SOURCE_DATE_EPOCH CROSSROOT_CACHE
export XDG_CONFIG_HOME=$T/xdg CROSSROOT_REMOTE_CACHE_CONFIG=
P=$T/p
new_project "$P"
make_tarball lib 1.0
SUM=$(sha256 "$T/www/lib-1.0.tar.gz")
cat >"$P/sources/lib.yaml" <<EOT
name: lib
version: "1.0"
origins:
  - url: file://$T/www/lib-1.0.tar.gz
    sha256: $SUM
EOT
mkdir -p "$P/patches/lib/1.0"
cat >"$P/patches/lib/1.0/0001-more.diff" <<'EOT'
--- a/data.txt
+++ b/data.txt
@@ -1 +1,2 @@
 lib 1.0 data
+patched
EOT
cat >"$P/stages/second.yaml" <<'EOT'
name: second
sources: [lib]
steps:
  - mkdir -p ${destdir}/usr/lib/pkgconfig ${destdir}/usr/include ${destdir}/usr/share/doc
  - cp ${src}/data.txt ${destdir}/usr/share/doc/lib.txt
  - echo 'int lib(void);' >${destdir}/usr/include/lib.h
  - printf 'runtime' >${destdir}/usr/lib/libc.so.1 && ln -s libc.so.1 ${destdir}/usr/lib/libc.so
  - printf '#!/bin/sh\necho tool\n' >${destdir}/usr/lib/tool && chmod 775 ${destdir}/usr/lib/tool
EOT
# two shared libraries built by CMake, one linked to the other in the build tree, with build
# IDs: the build tree's RPATH (the work directory's path) must not reach the build ID
cat >"$P/stages/sos.yaml" <<'EOT'
name: sos
steps:
  - |
    mkdir -p s
    echo 'int a(void) { return 1; }' >s/a.c
    echo 'int a(void); int b(void) { return a() + 1; }' >s/b.c
    printf 'cmake_minimum_required(VERSION 3.13)\nproject(so C)\nadd_library(a SHARED a.c)\nadd_library(b SHARED b.c)\ntarget_link_libraries(b a)\ninstall(TARGETS a b LIBRARY DESTINATION lib)\n' >s/CMakeLists.txt
  - >-
    cmake -S s -B b -G "Unix Makefiles" -DCMAKE_TOOLCHAIN_FILE=${cmake_toolchain}
    -DCMAKE_INSTALL_PREFIX=/usr -DCMAKE_TRY_COMPILE_TARGET_TYPE=STATIC_LIBRARY
    -DCMAKE_SHARED_LINKER_FLAGS="-nostdlib -fuse-ld=lld -Wl,--build-id=sha1"
  - make -C b && make -C b DESTDIR=${destdir} install
EOT
sed -i 's/^stages: \[second\]/stages: [second, sos]/' "$P/targets/toy.yaml"
(cd "$P" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -q -m toy \
	--date=@1700000000 && GIT_COMMITTER_DATE=@1700000000 git -c user.name=t -c user.email=t@t \
	commit -q --amend --no-edit --date=@1700000000)
EPOCH=$(git -C "$P" log -1 --format=%ct)

pkg() { ls "$1"/toy-*.tar.zst 2>/dev/null | head -n 1; }
run "$CROSSROOT" -C "$P" --work "$T/wa" --cache "$T/ca" --out "$T/oa" package toy -o "$T/pa" --xz
check "package after a cold build" 0 "package toy: $T/pa/toy-" ".tar.zst (" ".tar.xz (" \
	"SOURCE_DATE_EPOCH $EPOCH (the newest git commit of"
A=$(pkg "$T/pa")
NAME=$(basename "$A" .tar.zst)
sleep 1
run "$CROSSROOT" -C "$P" --work "$T/wb/deeper" --cache "$T/cb" --out "$T/ob" package toy -o "$T/pb"
check "a second cold build elsewhere, later" 0 "package toy:"
B=$(pkg "$T/pb")
assert "the same name (the inputs' hash)" test "$(basename "$B")" = "$NAME.tar.zst"
assert "the same sha256 from another work directory and time" test "$(sha256 "$A")" = "$(sha256 "$B")"
run "$CROSSROOT" -C "$P" --work "$T/wc" --cache "$T/ca" --out "$T/oc" package toy -o "$T/pc"
check "a build restored from the stage cache" 0 "package toy:"
assert "nothing was built for it" sh -c "! grep -q '^build ' '$T/out'"
assert "the same sha256 restored from the stage cache" test "$(sha256 "$(pkg "$T/pc")")" = "$(sha256 "$A")"
run env SOURCE_DATE_EPOCH=1234567 "$CROSSROOT" -C "$P" --work "$T/wa" --cache "$T/ca" --out "$T/oa" package toy -o "$T/pe"
check "SOURCE_DATE_EPOCH of the caller wins" 0 "SOURCE_DATE_EPOCH 1234567 (SOURCE_DATE_EPOCH of the caller)"
assert "and gives another package" test "$(sha256 "$(pkg "$T/pe")")" != "$(sha256 "$A")"

# the tar itself: sorted, owner 0 without names, one mtime, normalised modes, no pax noise
python3 - "$A" "$EPOCH" >"$T/tarcheck" 2>&1 <<'EOT'
import subprocess, sys, tarfile, io
data = subprocess.run(["zstd", "-dc", sys.argv[1]], capture_output=True, check=True).stdout
names = []
with tarfile.open(fileobj=io.BytesIO(data)) as t:
    for m in t.getmembers():
        names.append(m.name)
        assert m.uid == 0 and m.gid == 0 and m.uname == "" and m.gname == "", m.name
        assert m.mtime == int(sys.argv[2]), (m.name, m.mtime)
        assert not m.pax_headers, (m.name, m.pax_headers)
        want = 0o777 if m.issym() else 0o755 if m.isdir() or m.mode & 0o111 else 0o644
        assert m.mode == want, (m.name, oct(m.mode))
assert names == sorted(names), "not sorted"
assert names[0] == "toy" and all(n.startswith("toy/") for n in names[1:])
assert "toy/.crossroot-stamp" not in names and "toy/share/crossroot/meson-cross.ini" not in names
print("tar ok", len(names))
EOT
assert "entries sorted, owner 0 without names, mtime SOURCE_DATE_EPOCH, modes normalised, no pax headers" grep -q "tar ok" "$T/tarcheck"

M=$T/pa/$NAME.manifest
assert "the manifest beside equals the one inside" sh -c "zstd -dc '$A' | tar -xOf - toy/share/crossroot/package/manifest | cmp -s - '$M'"
assert "manifest: the source, its sha256 and origin" grep -qP "^source\tlib\t1.0\t$SUM\tfile://$T/www/lib-1.0.tar.gz$" "$M"
assert "manifest: the patch and its sha256" grep -qP "^patch\tlib/1.0/0001-more.diff\t$(sha256 "$P/patches/lib/1.0/0001-more.diff")$" "$M"
assert "manifest: the stage key and output" grep -qP '^stage\tsecond\t[0-9a-f]{64}\t[0-9a-f]{64}$' "$M"
assert "manifest: the host LLVM's identity" grep -qP '^host-llvm\t/usr/lib/llvm-19/bin\t[0-9a-f]{64}\t.*clang version' "$M"
assert "manifest: every file's sha256" grep -qP "^f\t644\t[0-9]+\t[0-9a-f]{64}\tusr/share/doc/lib.txt$" "$M"
assert "manifest: a link" grep -qP '^l\tlibc.so.1\tusr/lib/libc.so$' "$M"
assert "manifest: the executable mode normalised" grep -qP '^f\t755\t.*\tusr/lib/tool$' "$M"

S=$T/pa/$NAME.spdx.json
run python3 -m json.tool "$S"
check "the SPDX document is JSON" 0
python3 - "$S" "$SUM" >"$T/spdxcheck" 2>&1 <<'EOT'
import json, sys
d = json.load(open(sys.argv[1]))
for k in ["spdxVersion", "dataLicense", "SPDXID", "name", "documentNamespace", "creationInfo"]:
    assert k in d, k
assert d["spdxVersion"] == "SPDX-2.3" and d["dataLicense"] == "CC0-1.0" and d["SPDXID"] == "SPDXRef-DOCUMENT"
assert d["creationInfo"]["created"].endswith("Z") and d["creationInfo"]["creators"]
for p in d["packages"]:
    for k in ["name", "SPDXID", "downloadLocation"]:
        assert k in p, (p.get("name"), k)
ids = {p["SPDXID"]: p for p in d["packages"]}
sdk = ids["SPDXRef-Package-sdk"]
assert sdk["filesAnalyzed"] and len(sdk["packageVerificationCode"]["packageVerificationCodeValue"]) == 40
assert len(sdk["hasFiles"]) == len(d["files"]) > 10
for f in d["files"]:
    algs = {c["algorithm"] for c in f["checksums"]}
    assert {"SHA1", "SHA256"} <= algs and f["fileName"].startswith("./"), f
src = [p for p in d["packages"] if p["name"] == "lib"][0]
assert src["checksums"] == [{"algorithm": "SHA256", "checksumValue": sys.argv[2]}]
assert "0001-more.diff" in src["sourceInfo"]
rel = {(r["spdxElementId"], r["relationshipType"], r["relatedSpdxElement"]) for r in d["relationships"]}
assert ("SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Package-sdk") in rel
assert ("SPDXRef-Package-sdk", "GENERATED_FROM", src["SPDXID"]) in rel
print("spdx ok")
EOT
assert "SPDX 2.3 fields: document, packages, files with SHA1 and SHA256, relationships" grep -q "spdx ok" "$T/spdxcheck"
cat "$T/spdxcheck" | grep -v "spdx ok" | head -5

# verify: the package, and a tree unpacked from it
run "$CROSSROOT" verify "$A"
check "verify a package" 0 "verified $A"
run "$CROSSROOT" verify "$T/pa/$NAME.tar.xz"
check "verify the .tar.xz" 0 "verified"
U=$T/unpacked
mkdir -p "$U"
chmod 755 "$T"
tar -C "$U" -xf "$A"
run "$CROSSROOT" verify "$U/toy"
check "verify an unpacked tree" 0 "verified $U/toy"
printf X | dd of="$U/toy/usr/include/lib.h" bs=1 seek=2 conv=notrunc 2>/dev/null
run "$CROSSROOT" verify "$U/toy"
check "a changed byte is named" 5 "changed: usr/include/lib.h has" "1 difference"
tar -C "$U" -xf "$A" toy/usr/include/lib.h
echo extra >"$U/toy/usr/lib/added"
run "$CROSSROOT" verify "$U/toy"
check "an added file is named" 5 "extra:   usr/lib/added"
rm "$U/toy/usr/lib/added" "$U/toy/usr/lib/tool"
run "$CROSSROOT" verify "$U/toy"
check "a removed file is named" 5 "missing: usr/lib/tool"
mkdir -p "$T/tamper"
zstd -dc "$A" | tar -C "$T/tamper" -xf -
echo evil >>"$T/tamper/toy/usr/share/doc/lib.txt"
tar -C "$T/tamper" --sort=name --owner=0 --group=0 -cf - toy | zstd -q >"$T/tampered.tar.zst"
run "$CROSSROOT" verify "$T/tampered.tar.zst"
check "a changed file inside a package is named" 5 "changed: usr/share/doc/lib.txt"
# hostile members: a set-id file, a world-writable directory, a 1 GiB member (streamed, never
# held whole: the package is a few KB)
zstd -dc "$A" | tar -C "$T/tamper" -xf -
chmod 4755 "$T/tamper/toy/usr/lib/tool"
tar -C "$T/tamper" --sort=name --owner=0 --group=0 -cf - toy | zstd -q >"$T/setid.tar.zst"
run "$CROSSROOT" verify "$T/setid.tar.zst"
check "verify refuses a set-id member" 5 "has mode 4755"
zstd -dc "$A" | tar -C "$T/tamper" -xf -
chmod 777 "$T/tamper/toy/usr/lib"
tar -C "$T/tamper" --sort=name --owner=0 --group=0 -cf - toy | zstd -q >"$T/worldw.tar.zst"
run "$CROSSROOT" verify "$T/worldw.tar.zst"
check "verify refuses a world-writable directory" 5 "has mode 777"
chmod 755 "$T/tamper/toy/usr/lib"
python3 - "$T/big.tar" <<'PYEOF'
import sys, tarfile, io
class Zeros(io.RawIOBase):
    def __init__(self, n): self.left = n
    def readable(self): return True
    def readinto(self, b):
        n = min(len(b), self.left); b[:n] = bytes(n); self.left -= n; return n
with tarfile.open(sys.argv[1], "w") as t:
    m = tarfile.TarInfo("toy/share/crossroot/package/manifest"); text = b"crossroot-package 1\n"
    m.size = len(text); t.addfile(m, io.BytesIO(text))
    m = tarfile.TarInfo("toy/big"); m.size = 1 << 30; t.addfile(m, io.BufferedReader(Zeros(m.size)))
PYEOF
zstd -q --rm "$T/big.tar"
run "$CROSSROOT" verify "$T/big.tar.zst"
assert "a 1 GiB member in a $(stat -c %s "$T/big.tar.zst")-byte package is read, not held (exit $STATUS)" \
	test "$STATUS" = 5 -o "$STATUS" = 2
rm -f "$T/big.tar.zst"
run "$CROSSROOT" verify "$T/oa/toy"
check "a sysroot that is not a package says so" 2 "no package manifest in '$T/oa/toy'"
run "$CROSSROOT" verify "$T/nothing.tar.zst"
check "a missing package" 2 "$T/nothing.tar.zst"

# unpacked elsewhere, by another user: compilers, env.sh, the Meson cross file
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	N=$T/nobody
	mkdir -p "$N" && chown nobody "$N"
	AS="setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env"
	run $AS sh -c "cd '$N' && tar -xf '$A' && '$N/toy/bin/toy-clang' -ffreestanding -fsyntax-only -include lib.h -x c /dev/null && echo compiled"
	check "unpacked and used by nobody: the compiler finds the sysroot's header" 0 compiled
	run $AS "$CROSSROOT" verify "$N/toy"
	check "nobody verifies the unpacked tree" 0 verified
	run $AS "$N/toy/bin/toy-meson-cross"
	check "the Meson cross file names where it was unpacked" 0 "sysroot = '$N/toy'"
	run $AS bash -c ". '$N/toy/share/crossroot/env.sh' && echo \$CC"
	check "env.sh from bash finds the unpacked sysroot" 0 "$N/toy/bin/toy-clang"
	run $AS dash -c ". '$N/toy/share/crossroot/env.sh'"
	check "env.sh from dash asks for CROSSROOT_SYSROOT" 1 "set CROSSROOT_SYSROOT"
	run $AS env CROSSROOT_SYSROOT="$N/toy" dash -c ". '$N/toy/share/crossroot/env.sh' && echo \$CC"
	check "env.sh from dash with CROSSROOT_SYSROOT" 0 "$N/toy/bin/toy-clang"
else
	echo "package.sh: not root (or no user nobody): the unpack as another user is skipped"
fi

# the host LLVM is what a package needs: a missing one is said, not "not found"
mkdir -p "$T/llvm"
for f in /usr/lib/llvm-19/bin/*; do ln -s "$f" "$T/llvm/"; done
run env CROSSROOT_LLVM_BIN="$T/llvm" "$CROSSROOT" -C "$P" --work "$T/wl" --cache "$T/ca" --out "$T/ol" package toy -o "$T/pl"
check "a package with another LLVM directory" 0 "package toy:"
mkdir -p "$T/ul" && tar -C "$T/ul" -xf "$(pkg "$T/pl")"
rm -r "$T/llvm"
run "$T/ul/toy/bin/toy-clang" --version
check "its missing compiler is named" 127 "toy-clang: this sysroot compiles with the host's LLVM 19, and $T/llvm/clang is missing"

# a file that names a directory of the build would not work elsewhere: refused
P2=$T/p2
new_project "$P2"   # sets P
P=$T/p
cat >"$P2/stages/second.yaml" <<'EOT'
name: second
steps:
  - mkdir -p ${destdir}/usr/lib && echo "prefix=${destdir}" >${destdir}/usr/lib/leaky.pc
EOT
run "$CROSSROOT" -C "$P2" --work "$T/w2" --out "$T/o2" package toy -o "$T/p2out"
check "a file naming the build's directory is refused" 1 "usr/lib/leaky.pc' names '$T/w2'"
assert "and no package is written" test -z "$(pkg "$T/p2out")"

# build --check: the same bytes again, cold; a step that writes the time is named
run "$CROSSROOT" -C "$P" --work "$T/wa" --cache "$T/ca" --out "$T/oa" build --check toy
check "build --check of a deterministic target" 0 "reproducible:" "$(sha256 "$A")"
assert "its temporary builds are removed" test ! -e "$T/wa/check/toy"
cat >>"$P/stages/second.yaml" <<'EOT'
  - date +%N >${destdir}/usr/share/doc/built-at
EOT
run "$CROSSROOT" -C "$P" --work "$T/wa" --cache "$T/ca" --out "$T/oa" build --check toy
check "build --check of a step that writes the time" 5 "changed: usr/share/doc/built-at" "not reproducible"
if command -v diffoscope >/dev/null; then
	check "diffoscope's report names the file" 5 "diffoscope's report:" "├── toy/usr/share/doc/built-at"
else
	check "without diffoscope the byte comparison is said" 5 "(diffoscope is not installed"
fi
assert "both builds are kept for a look" test -d "$T/wa/check/toy/work"

# build steps have no network: a server on 127.0.0.1 the test started cannot be reached
python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1] + ".tmp", "w").write(str(s.getsockname()[1]))
import os; os.rename(sys.argv[1] + ".tmp", sys.argv[1])
while True:
    c, _ = s.accept(); c.sendall(b"hello from the host\n"); c.close()
' "$T/port" &
SERVER_PID=$!
for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
PORT=$(cat "$T/port")
P3=$T/p3
new_project "$P3"
cat >"$P3/stages/second.yaml" <<EOT
name: second
steps:
  - mkdir -p \${destdir}/usr/share
  - python3 -c "import socket; print(socket.create_connection(('127.0.0.1', $PORT), 5).recv(99).decode())" >\${destdir}/usr/share/got
EOT
run "$CROSSROOT" -C "$P3" --work "$T/w3" --out "$T/o3" build toy
if grep -q "build steps keep the host's network" "$T/out"; then
	echo "package.sh: no network namespace can be made here: the isolation check is skipped"
	assert "that is said once" test "$(grep -c "keep the host's network" "$T/out")" = 1
else
	check "a step cannot connect to the host's 127.0.0.1" 1 "ConnectionRefusedError" \
		"(build steps have no network: a step that downloads or connects anywhere fails"
fi
run "$CROSSROOT" -C "$P3" --work "$T/w3" --out "$T/o3" --allow-network build toy
check "the same step with --allow-network" 0 "sysroot toy"
assert "it got the server's answer" grep -q "hello from the host" "$T/o3/toy/usr/share/got"

# build steps see their own stage and declared sources only: the work directory (other trees,
# other stages, logs), the download and stage caches and the sysroots are hidden, read-only
P5=$T/p5
new_project "$P5"
P=$T/p
cp "$P/sources/lib.yaml" "$P5/sources/"
printf 'name: other\nsteps:\n  - mkdir -p ${destdir}/usr/share && echo other >${destdir}/usr/share/other\n' >"$P5/stages/other.yaml"
cat >"$P5/stages/second.yaml" <<EOT
name: second
sources: [lib]
depends: [other]
steps:
  - >-
    mkdir -p \${destdir}/usr/share && {
    cat \${src}/data.txt; echo "sysroot: \$(ls \${sysroot}/usr/share)";
    echo "work: \$(ls $T/w5 | tr '\\n' ' ')"; echo "src: \$(ls $T/w5/src | tr '\\n' ' ')";
    echo "build: \$(ls $T/w5/build/toy | tr '\\n' ' ')"; echo "cache: \$(find $T/c5 ! -type d | wc -l)";
    echo "out: \$(ls -A $T/o5 | wc -l)"; touch $T/w5/intruder 2>/dev/null || echo "work is read-only";
    } >\${destdir}/usr/share/seen
EOT
mkdir -p "$T/o5/old" "$T/w5/src/secret-1.0"
run "$CROSSROOT" -C "$P5" --work "$T/w5" --cache "$T/c5" --out "$T/o5" build toy
check "a build whose step looks around" 0 "sysroot toy"
if ! grep -q "see its whole file system" "$T/out"; then
	TREE=$(basename "$(readlink "$T/w5/build/toy/second/src" 2>/dev/null || ls -d "$T"/w5/src/lib-1.0-*[!t])")
	assert "the step read its declared tree" grep -qx "lib 1.0 data" "$T/o5/toy/usr/share/seen"
	assert "and its dependency's output in its private sysroot" grep -qx "sysroot: other" "$T/o5/toy/usr/share/seen"
	assert "it saw of the work directory only the way to its stage and its tree (HOME is in its stage)" \
		grep -qx "work: build src " "$T/o5/toy/usr/share/seen"
	assert "no other tree (secret-1.0), only its own ($TREE)" grep -qx "src: $TREE " "$T/o5/toy/usr/share/seen"
	assert "no other stage's directory" grep -qx "build: second " "$T/o5/toy/usr/share/seen"
	assert "an empty download and stage cache" grep -qx "cache: 0" "$T/o5/toy/usr/share/seen"
	assert "no sysroots" grep -qx "out: 0" "$T/o5/toy/usr/share/seen"
	assert "and could not write there" grep -qx "work is read-only" "$T/o5/toy/usr/share/seen"
	assert "nothing reached the real work directory" test ! -e "$T/w5/intruder"
fi
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
	mkdir -p "$T/w4" "$T/o4" && chown nobody "$T/w4" "$T/o4"
	chmod -R a+rX "$P3"
	run setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env "$CROSSROOT" -C "$P3" --work "$T/w4" --out "$T/o4" build toy
	if grep -q "build steps keep the host's network" "$T/out"; then
		echo "package.sh: no user namespace for nobody here: its isolation check is skipped"
	else
		check "not root: a user namespace isolates the step too" 1 "ConnectionRefusedError"
		# and hides the work directory: the same look around as above, as nobody
		rm -rf "$T/w5" "$T/c5" "$T/o5" && mkdir -p "$T/w5/src/secret-1.0" "$T/c5" "$T/o5/old"
		chown -R nobody "$T/w5" "$T/c5" "$T/o5" && chmod -R a+rX "$P5" "$T/www"
		run setpriv --reuid=nobody --regid=nogroup --clear-groups --reset-env "$CROSSROOT" -C "$P5" \
			--work "$T/w5" --cache "$T/c5" --out "$T/o5" build toy
		check "as nobody, a build whose step looks around" 0 "sysroot toy"
		assert "in its user namespace it saw only its stage and its tree" \
			sh -c "grep -qx 'work: build src ' '$T/o5/toy/usr/share/seen' &&
				grep -qx 'build: second ' '$T/o5/toy/usr/share/seen' &&
				grep -qx 'cache: 0' '$T/o5/toy/usr/share/seen' && grep -qx 'out: 0' '$T/o5/toy/usr/share/seen' &&
				grep -qx 'work is read-only' '$T/o5/toy/usr/share/seen'"
	fi
fi
finish
