#!/bin/sh
# Bad input gets a clear error (file:line:column, a suggestion) and exit status 2.
. "$(dirname "$0")/../lib/common.sh"
P=$T/p
new_project "$P"
cat >"$P/stages/second.yaml" <<'EOT'
name: second
steps: [true]
EOT
C="$CROSSROOT -C $P --work $T/work"

run $C build nosuch
check "missing target file" 2 "unknown target 'nosuch'" "$P/targets/nosuch.yaml"

printf 'triple: aarch64-unknown-linux-musl\nqemu: [oops\nstages: [second]\n' >"$P/targets/bad.yaml"
run $C build bad
check "malformed YAML names file:line:column" 2 "$P/targets/bad.yaml:3:7:"

printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nstage: [second]\n' >"$P/targets/typo.yaml"
run $C build typo
check "unknown key suggests the closest" 2 \
	"$P/targets/typo.yaml:3:1: unknown key 'stage'; did you mean 'stages'?" \
	"missing required key 'stages'"

printf 'name: rootish\nchroot: yes please\nsteps: [true]\n' >"$P/stages/rootish.yaml"
printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nstages: [rootish]\n' >"$P/targets/rootish.yaml"
run $C build rootish
check "a stage's chroot: is true or false, at its line and column" 2 "$P/stages/rootish.yaml:2:9:" "chroot"

cat >"$P/stages/usesvar.yaml" <<'EOT'
name: usesvar
steps:
  - echo ${greeting}
  - echo ${no_such_variable}
EOT
printf 'triple: aarch64-unknown-linux-musl\nqemu: q\nstages: [usesvar]\nvars: {greeting: hi}\n' >"$P/targets/vars.yaml"
run $C plan vars
check "unknown variable in a step" 2 "$P/stages/usesvar.yaml:4:5: unknown variable '\${no_such_variable}'"

cat >"$P/stages/loop-a.yaml" <<'EOT'
name: loop-a
depends: [loop-b]
steps: [true]
EOT
cat >"$P/stages/loop-b.yaml" <<'EOT'
name: loop-b
depends: [loop-a]
steps: [true]
EOT
printf 'triple: a-b-c\nqemu: q\nstages: [loop-a]\n' >"$P/targets/cycle.yaml"
run $C plan cycle
check "dependency cycle" 2 "dependency cycle: loop-a -> loop-b -> loop-a"

# A stage that cannot be built for an architecture says so at plan time, nothing started;
# through a dependency too, and only for that architecture.
cat >"$P/stages/noarch.yaml" <<'EOT'
name: noarch
unsupported:
  s390x: no port to this architecture yet
  mips: neither
steps:
  - touch ${destdir}/started
EOT
cat >"$P/stages/above.yaml" <<'EOT'
name: above
depends: [noarch]
steps: [true]
EOT
printf 'triple: s390x-ibm-linux-musl\nqemu: q\nstages: [above]\n' >"$P/targets/zarch.yaml"
printf 'triple: mips64-unknown-linux-musl\nqemu: q\nstages: [above]\n' >"$P/targets/mips64.yaml"
run $C build zarch
check "unsupported architecture at plan time" 2 \
	"$P/stages/noarch.yaml:3:3: stage 'noarch' cannot be built for s390x-ibm-linux-musl (target zarch" \
	"no port to this architecture yet"
[ ! -e "$T/work/build/zarch" ] && ok "nothing started for the unsupported target" ||
	not_ok "nothing started for the unsupported target"
run $C plan mips64
check "an architecture that is only a prefix of a listed one is not matched" 0 "noarch"
printf 'name: badarch\nunsupported: {s390x-ibm: x}\nsteps: [true]\n' >"$P/stages/badarch.yaml"
printf 'triple: a-b-c\nqemu: q\nstages: [badarch]\n' >"$P/targets/badarch.yaml"
run $C plan badarch
check "unsupported names architectures" 2 "'s390x-ibm' is not an architecture"

run $CROSSROOT frobnicate x
check "unknown command" 2 "unknown command 'frobnicate'"
run $CROSSROOT build --jobs zero x
check "bad --jobs" 2 "--jobs needs a number"
# the GNU runtimes' keys, misused
cat >"$P/sources/half.yaml" <<'EOT'
name: half
version: "1"
origins:
  - url: http://127.0.0.1:9/half.tar.gz
    sha256: 0000000000000000000000000000000000000000000000000000000000000000
member: inner/half.tar.xz
EOT
cat >"$P/stages/usehalf.yaml" <<'EOT'
name: usehalf
sources: [half]
steps: [true]
EOT
printf 'triple: aarch64-unknown-linux-gnu\nqemu: q\nstages: [usehalf]\n' >"$P/targets/half.yaml"
run $C plan half
check "a member without its pin" 2 "$P/sources/half.yaml:6:9: 'member' and 'member-sha256' go together"

cat >"$P/stages/tooltc.yaml" <<'EOT'
name: tooltc
installs: tools
toolchain: [second]
steps: [true]
EOT
printf 'triple: aarch64-unknown-linux-gnu\nqemu: q\nstages: [tooltc]\n' >"$P/targets/tooltc.yaml"
run $C plan tooltc
check "a tools stage cannot name a toolchain" 2 "$P/stages/tooltc.yaml:3:12: a tools stage is built with the host clang"

printf 'triple: aarch64-unknown-linux-gnu\nqemu: q\nstages: [second]\nstage_toolchain: {second: second}\n' >"$P/targets/stc.yaml"
run $C plan stc
check "stage_toolchain must name a tools stage" 2 "toolchain stage 'second' must say 'installs: tools' (or say 'host' for the host clang)" "$P/targets/stc.yaml:4:18"

printf 'name: plaintools\ninstalls: tools\nsteps: [true]\n' >"$P/stages/plaintools.yaml"
printf 'triple: aarch64-unknown-linux-gnu\nqemu: q\nstages: [second]\nstage_toolchain: {nosuch: host}\n' >"$P/targets/stc2.yaml"
run $C plan stc2
check "stage_toolchain for a stage that does not exist" 2 "nosuch" "$P/targets/stc2.yaml:4:18"
printf 'triple: aarch64-unknown-linux-gnu\nqemu: q\nstages: [second]\nstage_toolchain: {plaintools: host}\n' >"$P/targets/stc3.yaml"
run $C plan stc3
check "stage_toolchain for a stage the target does not build" 2 "names stage 'plaintools', which target 'stc3' does not build" "$P/targets/stc3.yaml:4:18"
printf 'triple: aarch64-unknown-linux-gnu\nqemu: q\nstages: [plaintools]\nstage_toolchain: {plaintools: host}\n' >"$P/targets/stc4.yaml"
run $C plan stc4
check "stage_toolchain for a tools stage" 2 "names stage 'plaintools', a tools stage" "$P/targets/stc4.yaml:4:18"

printf 'triple: aarch64-unknown-linux-gnu\nqemu: q\nstages: [second]\nsubstitute: {second: nosuch}\n' >"$P/targets/subst.yaml"
run $C plan subst
check "a substitute that does not exist" 2 "nosuch" "$P/targets/subst.yaml:4:13"

# a qemu value a shell would interpret: refused where it is written, before any wrapper is
printf 'triple: aarch64-unknown-linux-musl\nqemu: "qemu-aarch64-static; touch %s/pwned"\nstages: [second]\n' "$T" >"$P/targets/hostileqemu.yaml"
run $C build hostileqemu
check "a qemu value with shell syntax names file:line:column" 2 "$P/targets/hostileqemu.yaml:2:7:" "qemu"
assert "  (nothing ran it)" test ! -e "$T/pwned"
printf 'triple: aarch64-unknown-linux-musl\nqemu: $(touch %s/pwned)\nstages: [second]\n' "$T" >"$P/targets/hostileqemu.yaml"
run $C plan hostileqemu
check "  (and \$(...) in it)" 2 "$P/targets/hostileqemu.yaml:2:7:"
rm "$P/targets/hostileqemu.yaml"

# a compiler launcher found in a PATH directory a shell would split
mkdir -p "$T/bin dir;x"
printf '#!/bin/sh\nexit 0\n' >"$T/bin dir;x/ccache"
chmod 755 "$T/bin dir;x/ccache"
run env PATH="$T/bin dir;x:$PATH" $C --launcher ccache build toy
check "a launcher whose path holds shell syntax is refused, naming it" 2 "$T/bin dir;x/ccache"

finish
