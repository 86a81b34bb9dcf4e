#!/bin/sh
# The seam between the compiler as a stage (stages/llvm.yaml) and the targets it builds, with
# a fake LLVM: a tools stage that provides llvm_bin and clang_resource_dir compiles the
# target's stages (${cc}, ${clang}, ${llvm_bin}, ${clang_resource_dir}, ${clang_version} and
# the binary tools are its), the sysroot's wrappers and clang config run it, a stage's own
# `extract:` takes part of its source, and one build serves targets of different machines.
. "$(dirname "$0")/../lib/common.sh"
P=$T/p
mkdir -p "$P/targets" "$P/stages" "$P/sources" "$T/src/fakellvm-21.1.8/bin" "$T/src/fakellvm-21.1.8/unused"

# --- the fake LLVM 21.1.8: clang and clang++ (toy compilers), llvm-size, a resource dir ---
write_toy_compiler "$T/src/fakellvm-21.1.8/bin/clang" "fake clang 21"
cp "$T/src/fakellvm-21.1.8/bin/clang" "$T/src/fakellvm-21.1.8/bin/clang++"
printf '#!/bin/sh\necho "fake llvm-size $*"\n' >"$T/src/fakellvm-21.1.8/bin/llvm-size"
chmod +x "$T/src/fakellvm-21.1.8/bin/llvm-size"
echo "not for the llvm stage" >"$T/src/fakellvm-21.1.8/unused/big.txt"
tar -C "$T/src" -czf "$T/fakellvm.tar.gz" fakellvm-21.1.8
cat >"$P/sources/fakellvm.yaml" <<EOT
name: fakellvm
version: 21.1.8
origins:
  - url: file://$T/fakellvm.tar.gz
    sha256: $(sha256 "$T/fakellvm.tar.gz")
EOT
cat >"$P/stages/llvm.yaml" <<'EOT'
name: llvm
sources: [fakellvm]
extract: [bin]
installs: tools
machine: []
provides:
  cc: bin/clang
  cxx: bin/clang++
  llvm_bin: bin
  clang_resource_dir: lib/clang/${major}
steps:
  - test ! -e ${src}/unused
  - mkdir -p ${destdir}/lib/clang/21/include && cp -r ${src}/bin ${destdir}/
EOT
# a runtime stage that records what it was given, compiles, and installs a builtins archive
# where clang looks for it (so the clang config names the resource directory)
cat >"$P/stages/probe.yaml" <<'EOT'
name: probe
steps:
  - >-
    printf 'cc=%s\nclang=%s\nllvm_bin=%s\nresource=%s\nversion=%s\nsize=%s\n' "${cc}" "${clang}"
    "${llvm_bin}" "${clang_resource_dir}" "${clang_version}" "${size}" >vars.txt
  - ${size} probe >size.txt
  # as CMake stages do (compiler-rt, libc++): the toolchain file names the stage's compilers
  - grep -q CMAKE_C_COMPILER ${cmake_toolchain}
  - echo 'int main(void) { return 0; }' >hello.c && ${cc} -c hello.c -o hello.o
  - >-
    mkdir -p ${destdir}/usr/share/probe ${destdir}/usr/lib/clang/${clang_version}/lib/${triple} &&
    cp vars.txt size.txt hello.o ${destdir}/usr/share/probe/ &&
    cp hello.o ${destdir}/usr/lib/clang/${clang_version}/lib/${triple}/libclang_rt.builtins.a
EOT
for t in seam-a64:aarch64-unknown-linux-musl:arm64 seam-rv:riscv64-unknown-linux-musl:riscv; do
	IFS=: read -r name triple arch <<EOT
$t
EOT
	cat >"$P/targets/$name.yaml" <<EOT
triple: $triple
qemu: qemu-aarch64-static
linux_arch: $arch
toolchain: [llvm]
stages: [probe]
EOT
done
C="$CROSSROOT -C $P --work $T/work --out $T/sysroots"
run $C build seam-a64
check "a target whose toolchain is an LLVM stage builds" 0 "build   llvm (seam-a64)" "build   probe (seam-a64)"
S=$T/sysroots/seam-a64
V=$S/usr/share/probe/vars.txt
tools=$T/work/build/seam-a64/probe/tools
assert "\${cc} is the stage's clang" grep -q "^cc=$tools/bin/clang --target=aarch64-unknown-linux-musl " "$V"
assert "\${cc} takes the sysroot's resource dir of the stage's clang version" grep -q "^cc=.* -resource-dir=$T/work/build/seam-a64/probe/sysroot/usr/lib/clang/21 " "$V"
assert "\${clang} is the stage's clang" grep -qx "clang=$tools/bin/clang" "$V"
assert "\${llvm_bin} is the stage's" grep -qx "llvm_bin=$tools/bin" "$V"
assert "\${clang_resource_dir} is the stage's, by its major version" grep -qx "resource=$tools/lib/clang/21" "$V"
assert "\${clang_version} is the stage's" grep -qx "version=21" "$V"
assert "a tool not provided by name comes from the stage's llvm_bin" grep -qx "size=$tools/bin/llvm-size" "$V"
assert "the stage ran its llvm-size" grep -qx "fake llvm-size probe" "$S/usr/share/probe/size.txt"
assert "the runtime stage was compiled by the stage's clang" grep -q "^compiled by fake clang 21: --target=aarch64-unknown-linux-musl" "$S/usr/share/probe/hello.o"
assert "the stage's own extract list left the rest of its source out" test ! -e "$T/work/build/seam-a64/llvm/dest/unused"
assert "the LLVM stage is shipped in toolchain/" test -x "$S/toolchain/bin/clang"
assert "the clang config names the stage clang's resource directory" grep -qx -- "-resource-dir=<CFGDIR>/../usr/lib/clang/21" "$S/bin/seam-a64.cfg"
assert "the clang wrapper runs the stage's clang" grep -q '"$d/../toolchain/bin/clang" --no-default-config' "$S/bin/seam-a64-clang"
assert "the size wrapper runs the stage's llvm-size" grep -q '"$d/../toolchain/bin/llvm-size"' "$S/bin/seam-a64-size"
"$S/bin/seam-a64-clang" -c x.c -o "$T/wrapped.o"
assert "the wrapper compiles with the stage's clang and the config" grep -q "compiled by fake clang 21: --no-default-config --config=$S/bin/seam-a64.cfg -c x.c" "$T/wrapped.o"
key=$(grep -lx "seam-a64 probe" "$T"/work/cache/stages/*/owner | xargs dirname)
assert "the runtime stage's key carries the LLVM stage, not the host compiler" sh -c "grep -q '^dep:llvm ' '$key/inputs' && ! grep -q '^compiler ' '$key/inputs'"

# one build of the LLVM stage serves a target of another machine
run $C build seam-rv
check "another target builds with the LLVM stage" 0 "build   probe (seam-rv)"
assert "and reuses its result: no target fact is in its key" sh -c "grep -Eq '^ +llvm \\(seam-rv\\) +cached\$' '$T/out' && ! grep -q 'build   llvm' '$T/out'"
assert "and compiles with it" grep -q "^compiled by fake clang 21: --target=riscv64-unknown-linux-musl" "$T/sysroots/seam-rv/usr/share/probe/hello.o"

# a host without the host LLVM: the targets a toolchain stage compiles build; a target that
# needs the host's clang stops at plan time naming its stage; the LLVM stage (host GCC, no
# host clang in its steps) keeps its key whether or not the host has a clang
cat >"$P/stages/hosty.yaml" <<'EOT'
installs: tools
steps:
  - mkdir -p ${destdir}/bin && echo "${host_gcc}" >${destdir}/bin/gcc-was
EOT
cat >"$P/targets/plain.yaml" <<'EOT'
triple: aarch64-unknown-linux-musl
qemu: qemu-aarch64-static
linux_arch: arm64
stages: [hosty, probe]
EOT
mkdir -p "$T/nollvm"
run $C plan plain
check "with the host LLVM, a plan of a target compiled by it works" 0
with_host=$(grep -E '^ +hosty ' "$T/out" | awk '{print $3, $4}')
CROSSROOT_LLVM_BIN=$T/nollvm run $C plan plain
check "without it, the target compiled by it stops at plan time" 2 "probe" "$T/nollvm"
CROSSROOT_LLVM_BIN=$T/nollvm run $C build --work "$T/work2" seam-rv
check "without it, a target whose toolchain is an LLVM stage builds" 0 "build   probe (seam-rv)"
assert "and compiles with that stage" grep -q "^compiled by fake clang 21: --target=riscv64-unknown-linux-musl" "$T/sysroots/seam-rv/usr/share/probe/hello.o"
cat >"$P/stages/plainfile.yaml" <<'EOT'
steps:
  - mkdir -p ${destdir}/usr/share && echo plain >${destdir}/usr/share/plain.txt
EOT
cat >"$P/targets/seam-pkg.yaml" <<'EOT'
triple: riscv64-unknown-linux-musl
qemu: qemu-riscv64-static
linux_arch: riscv
toolchain: [llvm]
stages: [plainfile]
EOT
CROSSROOT_LLVM_BIN=$T/nollvm run $C package --work "$T/work2" seam-pkg -o "$T/pkg"
check "without it, a target compiled by a toolchain stage is packaged" 0 "package seam-pkg:"
assert "its manifest says it needs no host LLVM" sh -c "grep -qPx 'host-llvm\tnone' '$T'/pkg/seam-pkg-*.manifest"
assert "its SBOM lists no host LLVM" sh -c "test -s '$T'/pkg/seam-pkg-*.spdx.json && ! grep -q 'SPDXRef-Package-host-llvm' '$T'/pkg/seam-pkg-*.spdx.json"
sed -i 's/stages: \[hosty, probe\]/stages: [hosty]/' "$P/targets/plain.yaml"
CROSSROOT_LLVM_BIN=$T/nollvm run $C plan plain
check "a tools stage built by the host GCC needs no host LLVM" 0
without_host=$(grep -E '^ +hosty ' "$T/out" | awk '{print $3, $4}')
assert "and has the same key with and without it ($with_host)" test "$with_host" = "$without_host"
finish
