#!/bin/sh
# The emulator as a stage (stages/qemu.yaml), with a fake qemu: a target's `emulator:` names a
# tools stage that provides qemu_user_dir; the sysroot ships it in toolchain/, its run wrapper
# runs it there (not the host's qemu in PATH), and no runtime stage's key holds it. A stage
# that provides no qemu_user_dir, or a target whose runner is not qemu-user, is refused.
. "$(dirname "$0")/../lib/common.sh"
P=$T/p
mkdir -p "$P/targets" "$P/stages" "$P/sources" "$T/src/fakeqemu-10.0.99/bin"
for q in qemu-aarch64-static qemu-system-aarch64; do
	printf '#!/bin/sh\n[ "$1" = --version ] && { echo "%s version 10.0.99 (fake)"; exit 0; }\necho "fake %s: $*"\n' \
		"$q" "$q" >"$T/src/fakeqemu-10.0.99/bin/$q"
	chmod +x "$T/src/fakeqemu-10.0.99/bin/$q"
done
tar -C "$T/src" -czf "$T/fakeqemu.tar.gz" fakeqemu-10.0.99
cat >"$P/sources/fakeqemu.yaml" <<EOT
name: fakeqemu
version: 10.0.99
origins:
  - url: file://$T/fakeqemu.tar.gz
    sha256: $(sha256 "$T/fakeqemu.tar.gz")
EOT
cat >"$P/stages/qemu.yaml" <<'EOT'
sources: [fakeqemu]
installs: tools
machine: []
provides:
  qemu_user_dir: bin
  qemu_system_dir: bin
steps:
  - mkdir -p ${destdir} && cp -r ${src}/bin ${destdir}/
EOT
cat >"$P/stages/plainfile.yaml" <<'EOT'
steps:
  - mkdir -p ${destdir}/usr/share && echo plain >${destdir}/usr/share/plain.txt
EOT
cat >"$P/targets/emu-a64.yaml" <<'EOT'
triple: aarch64-unknown-linux-musl
qemu: qemu-aarch64-static
qemu_cpu: cortex-a53
emulator: qemu
linux_arch: arm64
stages: [plainfile]
EOT
C="$CROSSROOT -C $P --work $T/work --out $T/sysroots"
run $C plan emu-a64
check "the emulator stage is in the target's plan" 0 "  qemu "
run $C build emu-a64
check "a target with an emulator stage builds" 0 "build   qemu (emu-a64)" "build   plainfile (emu-a64)"
S=$T/sysroots/emu-a64
assert "the sysroot ships the emulator in toolchain/" test -x "$S/toolchain/bin/qemu-aarch64-static"
assert "the run wrapper runs the stage's qemu" grep -q '"$d/toolchain/bin/qemu-aarch64-static" -cpu cortex-a53 -L "$d"' "$S/bin/emu-a64-run"
echo data >"$T/prog"
run env PATH=/usr/bin:/bin "$S/bin/emu-a64-run" "$T/prog" one two
check "and it runs there, not the host's in PATH" 0 "fake qemu-aarch64-static: -cpu cortex-a53 -L $S" "$T/prog one two"
key=$(grep -lx "emu-a64 plainfile" "$T"/work/cache/stages/*/owner | xargs dirname)
assert "no runtime stage's key holds the emulator" sh -c "! grep -q qemu '$key/inputs'"
# a session (binfmt_misc of a user namespace, Linux 6.7 and later) runs a target program
# through the run wrapper: the stage's qemu
if command -v clang-19 >/dev/null && $C exec emu-a64 -- true >/dev/null 2>&1; then
	clang-19 --target=aarch64-linux-musl -ffreestanding -nostdlib -static -fuse-ld=lld -O1 \
		"$ROOT/tests/data/envprint-aarch64.c" -o "$T/envprint"
	run $C exec emu-a64 -- "$T/envprint" session
	check "crossroot exec runs a target program under the stage's qemu" 0 \
		"fake qemu-aarch64-static: -cpu cortex-a53 -L $S" "$T/envprint session"
else
	echo "skip   crossroot exec (needs clang-19 and binfmt_misc in a user namespace)"
fi
mv "$S" "$T/moved"
run "$T/moved/bin/emu-a64-run" "$T/prog"
check "a moved sysroot runs its own emulator" 0 "fake qemu-aarch64-static: -cpu cortex-a53 -L $T/moved"

# refused: a stage that provides no qemu_user_dir, a runner that is not qemu-user
sed 's/^emulator: qemu$/emulator: plainfile/' "$P/targets/emu-a64.yaml" >"$P/targets/emu-bad.yaml"
run $C plan emu-bad
check "an emulator stage must provide qemu_user_dir" 2 "emulator stage 'plainfile' must say 'installs: tools' and provide qemu_user_dir"
cat >"$P/targets/emu-wasi.yaml" <<'EOT'
triple: wasm32-unknown-wasi
runner: wasi
emulator: qemu
stages: [plainfile]
EOT
run $C plan emu-wasi
check "emulator is for runner qemu-user" 2 "emulator is for runner qemu-user"
finish
