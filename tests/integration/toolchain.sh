#!/bin/sh
# Toolchains are stages too: a target whose compiler is a tools stage (a tiny shell-script
# "compiler" built from a local tarball), and early cutoff (a dependency rebuilt with the same
# output leaves its users cached).
. "$(dirname "$0")/../lib/common.sh"
P=$T/p
mkdir -p "$P/targets" "$P/stages" "$P/sources" "$P/patches" "$T/src/fakecc-1" "$T/src/m-1"

# --- a shell-script compiler as a tools stage ---
write_toy_compiler "$T/src/fakecc-1/toycc" "fakecc v1"
tar -C "$T/src" -czf "$T/fakecc-1.tar.gz" fakecc-1
cat >"$P/sources/fakecc.yaml" <<EOT
name: fakecc
version: "1"
origins:
  - url: file://$T/fakecc-1.tar.gz
    sha256: $(sha256 "$T/fakecc-1.tar.gz")
EOT
cat >"$P/stages/fakecc.yaml" <<'EOT'
name: fakecc
sources: [fakecc]
installs: tools
provides:
  cc: bin/toycc
steps:
  - mkdir -p ${destdir}/bin && cp ${src}/toycc ${destdir}/bin/toycc
EOT
cat >"$P/stages/hello.yaml" <<'EOT'
name: hello
steps:
  - command -v toycc >found-on-path
  - echo 'int main(void) { return 0; }' >hello.c
  - mkdir -p ${destdir}/usr/lib && ${cc} -c hello.c -o ${destdir}/usr/lib/hello.o
EOT
cat >"$P/targets/fake.yaml" <<'EOT'
triple: aarch64-unknown-linux-musl
qemu: qemu-aarch64-static
toolchain: [fakecc]
stages: [hello]
EOT
C="$CROSSROOT -C $P --work $T/work --out $T/sysroots"
run $C build fake
check "a target whose compiler is a tools stage builds" 0 "build   fakecc (fake)" "build   hello (fake)"
assert "the stage compiled with the provided compiler" grep -q "compiled by fakecc v1: --sysroot=" "$T/sysroots/fake/usr/lib/hello.o"
assert "the tools stage is not in the sysroot proper" test ! -e "$T/sysroots/fake/bin/toycc"
assert "the toolchain is shipped beside it" test -x "$T/sysroots/fake/toolchain/bin/toycc"
"$T/sysroots/fake/bin/fake-clang" -c x.c -o "$T/wrapped.o"
assert "the wrapper runs the provided compiler with the sysroot" grep -q "compiled by fakecc v1: --sysroot=$T/sysroots/fake/bin/.. -c x.c" "$T/wrapped.o"
key_of() { grep -lx "$1" "$T"/work/cache/stages/*/owner | xargs -n1 dirname | xargs -n1 basename; }
hello_key=$(key_of "fake hello")
assert "hello's key carries the toolchain stage's output" grep -q "^dep:fakecc " "$T/work/cache/stages/$hello_key/inputs"
assert "hello's key does not carry the host compiler" sh -c "! grep -q '^compiler ' '$T/work/cache/stages/$hello_key/inputs'"

# a changed toolchain stage rebuilds what it compiled
sed -i 's/fakecc v1/fakecc v2/' "$T/src/fakecc-1/toycc"
mkdir -p "$P/patches/fakecc/1"
( cd "$T/src" && cp -r fakecc-1 a && sed -i 's/fakecc v2/fakecc v1/' a/toycc && diff -u a/toycc fakecc-1/toycc | sed 's|^--- a/|--- a/|; s|^+++ fakecc-1/|+++ b/|' >"$P/patches/fakecc/1/v2.patch"; rm -rf a )
run $C plan fake
check "plan: hello may rebuild because its toolchain changed" 0 "fakecc                   to build" "hello                    maybe    (may rebuild: depends on fakecc, which is to build)"
run $C build fake
check "the changed toolchain stage and its users rebuild" 0 "build   fakecc (fake)" "build   hello (fake)"
assert "hello is compiled by the new compiler" grep -q "compiled by fakecc v2" "$T/sysroots/fake/usr/lib/hello.o"
assert "hello's key changed with the toolchain" test "$(key_of 'fake hello' | wc -l)" = 2

# --- early cutoff: headers, a runtime built from them, a library, its user ---
printf 'int api(void);\n' >"$T/src/m-1/api.h"
printf 'int api(void) { return 1; }\n' >"$T/src/m-1/impl.c"
tar -C "$T/src" -czf "$T/m-1.tar.gz" m-1
cat >"$P/sources/m.yaml" <<EOT
name: m
version: "1"
origins:
  - url: file://$T/m-1.tar.gz
    sha256: $(sha256 "$T/m-1.tar.gz")
EOT
cat >"$P/stages/m-headers.yaml" <<'EOT'
name: m-headers
sources: [m]
steps:
  - mkdir -p ${destdir}/usr/include && cp ${src}/api.h ${destdir}/usr/include/
EOT
cat >"$P/stages/rt.yaml" <<'EOT'
name: rt
depends: [m-headers]
steps:
  - mkdir -p ${destdir}/usr/lib && sha256sum ${sysroot}/usr/include/api.h | cut -c1-64 >${destdir}/usr/lib/rt.txt
EOT
cat >"$P/stages/m.yaml" <<'EOT'
name: m
sources: [m]
depends: [m-headers, rt]
steps:
  - mkdir -p ${destdir}/usr/lib && cat ${src}/impl.c ${sysroot}/usr/lib/rt.txt >${destdir}/usr/lib/libm.txt
EOT
cat >"$P/stages/cxx.yaml" <<'EOT'
name: cxx
depends: [m]
steps:
  - mkdir -p ${destdir}/usr/lib && wc -c <${sysroot}/usr/lib/libm.txt >${destdir}/usr/lib/cxx.txt
EOT
cat >"$P/targets/cut.yaml" <<'EOT'
triple: aarch64-unknown-linux-musl
qemu: qemu-aarch64-static
stages: [cxx]
EOT
run $C build cut
check "the early-cutoff target builds" 0 "build   rt (cut)" "build   cxx (cut)"
mkdir -p "$P/patches/m/1"
cat >"$P/patches/m/1/impl.patch" <<'EOT'
--- a/impl.c
+++ b/impl.c
@@ -1 +1 @@
-int api(void) { return 1; }
+int api(void) { return 2; }
EOT
run $C plan cut
check "plan: a patch makes the header stage rebuild and its users maybe" 0 \
	"m-headers                to build" "rt                       maybe    (may rebuild: depends on m-headers, which is to build)"
run $C build cut
check "a patch that leaves the headers alone: headers rebuilt, same output" 0 \
	"build   m-headers (cut)" "cached  rt (cut): its dependencies' output did not change" "build   m (cut)" "build   cxx (cut)"
assert "rt was not rebuilt" sh -c "! grep -q 'build   rt' '$T/out'"
cat >"$P/patches/m/1/header.patch" <<'EOT'
--- a/api.h
+++ b/api.h
@@ -1 +1 @@
-int api(void);
+int api(int);
EOT
run $C build cut
check "a patch that changes an installed header rebuilds what uses it" 0 \
	"build   m-headers (cut)" "build   rt (cut)" "build   m (cut)"
cp "$P/stages/cxx.yaml" "$T/cxx.yaml"
printf '# a comment changes nothing\n' >>"$P/stages/cxx.yaml"
run $C plan cut
check "editing a comment in a recipe rebuilds nothing" 0 "cxx                      cached"
finish
