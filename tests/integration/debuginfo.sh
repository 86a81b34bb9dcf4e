#!/bin/sh
# `debug: split`: a stage's DWARF moves to usr/lib/debug (by build ID, else by path with a
# .gnu_debuglink), static archives and objects lose theirs, and gdb finds the split files
# through the debug-file-directory the <target>-gdb wrapper sets. Real ELF files from the
# host's compiler; gdb reads them.
. "$(dirname "$0")/../lib/common.sh"
P=$T/p
new_project "$P"
cat >"$P/stages/dbg.yaml" <<'EOT'
name: dbg
debug: split
steps:
  - printf 'int toy_answer(int x)\n{\n\treturn x * 6 + 1;\n}\n' > toy.c
  - printf 'int toy_answer(int);\nint main(void)\n{\n\treturn toy_answer(7) != 43;\n}\n' > main.c
  - ${host_cc} -g -O1 -fPIC -shared -Wl,--build-id=sha1 -Wl,-soname,libtoy.so.1 -o libtoy.so.1 toy.c
  - ${host_cc} -g -O1 -Wl,--build-id=none -o toyprog main.c libtoy.so.1
  - ${host_cc} -g -O1 -c -o toy.o toy.c && ${ar} rc libtoy.a toy.o
  - ${host_cc} -O1 -fPIC -shared -o libplain.so toy.c
  - mkdir -p ${destdir}/usr/lib ${destdir}/usr/bin
  - cp libtoy.so.1 libtoy.a toy.o libplain.so ${destdir}/usr/lib/ && cp toyprog ${destdir}/usr/bin/
  - ln -s libtoy.so.1 ${destdir}/usr/lib/libtoy.so && ln ${destdir}/usr/lib/libtoy.so.1 ${destdir}/usr/lib/libtoy-hardlink.so.1
EOT
printf 'triple: x86_64-unknown-linux-musl\nqemu: qemu-x86_64-static\nstages: [dbg]\n' >"$P/targets/dbg.yaml"
C="$CROSSROOT -C $P --work $T/work --out $T/sysroots"
READELF=/usr/lib/llvm-19/bin/llvm-readelf
sections() { "$READELF" -S -W "$1" 2>/dev/null; }

run $C build dbg
check "a debug: split stage builds" 0 "sysroot dbg"
S=$T/sysroots/dbg
ID=$("$READELF" -n "$S/usr/lib/libtoy.so.1" | sed -n 's/.*Build ID: *//p')
assert "the library keeps its build ID ($ID)" test -n "$ID"
DBG=$S/usr/lib/debug/.build-id/$(echo "$ID" | cut -c1-2)/$(echo "$ID" | cut -c3-).debug
assert "its DWARF is in usr/lib/debug/.build-id/xx/rest.debug" sh -c "$READELF -S -W $DBG | grep -q ' .debug_info'"
assert "the library has no DWARF left" sh -c "! $READELF -S -W $S/usr/lib/libtoy.so.1 | grep -q ' .debug_'"
assert "the library names its debug file (.gnu_debuglink)" sh -c "$READELF -S -W $S/usr/lib/libtoy.so.1 | grep -q ' .gnu_debuglink'"
assert "the library keeps its symbols" sh -c "/usr/lib/llvm-19/bin/llvm-nm -D $S/usr/lib/libtoy.so.1 | grep -q toy_answer"
assert "a hard link to it was split once, and is still one" sh -c "test \$(find $S/usr/lib/debug -name '*.debug' | wc -l) = 2 && cmp -s $S/usr/lib/libtoy.so.1 $S/usr/lib/libtoy-hardlink.so.1"
assert "a program without a build ID: usr/lib/debug/<path>.debug" sh -c "$READELF -S -W $S/usr/lib/debug/usr/bin/toyprog.debug | grep -q ' .debug_info'"
assert "the program has no DWARF left, and runs" sh -c "! $READELF -S -W $S/usr/bin/toyprog | grep -q ' .debug_' && LD_LIBRARY_PATH=$S/usr/lib $S/usr/bin/toyprog"
assert "the static archive lost its DWARF (as Debian strips it)" sh -c "! $READELF -S -W $S/usr/lib/libtoy.a | grep -q ' .debug_'"
assert "so did the object file" sh -c "! $READELF -S -W $S/usr/lib/toy.o | grep -q ' .debug_' && $READELF -s $S/usr/lib/toy.o | grep -q toy_answer"
assert "a file without DWARF is left as it was" sh -c "! $READELF -S -W $S/usr/lib/libplain.so | grep -q ' .gnu_debuglink'"
assert "the symbolic link is still one" test -L "$S/usr/lib/libtoy.so"
assert "the log says what was split" grep -q "split debug usr/lib/libtoy[a-z.-]*so.1 -> usr/lib/debug/.build-id/" "$T/work/logs/dbg/dbg.log"
run gdb-multiarch -nx -batch -iex "set debug-file-directory $S/usr/lib/debug" -ex "info line toy_answer" "$S/usr/lib/libtoy.so.1"
check "gdb finds the lines through the build ID" 0 'Line 3 of "toy.c"'
run gdb-multiarch -nx -batch -ex "info line toy_answer" "$S/usr/lib/libtoy.so.1"
assert "(without the debug directory it has none)" sh -c "! grep -q 'Line 3 of' $T/out"
assert "the gdb wrapper points gdb at the sysroot's debug files" grep -q "debug-file-directory" "$S/bin/dbg-gdb"

# the key: `debug: split` is part of it (a stage that adds it is rebuilt)
sed -i '/^debug: split$/d' "$P/stages/dbg.yaml"
run $C plan dbg
check "without debug: split the stage is another" 0 "dbg                      to build"
run $C build dbg
assert "and keeps its DWARF" sh -c "$READELF -S -W $T/sysroots/dbg/usr/lib/libtoy.so.1 | grep -q ' .debug_info' && test ! -e $T/sysroots/dbg/usr/lib/debug"
printf 'name: badbg\ndebug: yes\nsteps: [true]\n' >"$P/stages/badbg.yaml"
printf 'triple: x86_64-unknown-linux-musl\nqemu: q\nstages: [badbg]\n' >"$P/targets/badbg.yaml"
run $C plan badbg
check "debug takes split or keep" 2 "$P/stages/badbg.yaml:2:8: debug must be 'split' (into usr/lib/debug) or 'keep'"
finish
