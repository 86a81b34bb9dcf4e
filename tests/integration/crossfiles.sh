#!/bin/sh
# The files that make a sysroot a cross compiler, on a toy sysroot: the pkg-config wrapper
# with staging directories (and never the host's .pc files), <target>-run (staging library
# paths, libtool wrapper scripts, no host LD_* variables), env.sh from dash and bash, and
# what libtool asks the compiler for its linker.
. "$(dirname "$0")/../lib/common.sh"
P=$T/p
new_project "$P"
cat >"$P/stages/second.yaml" <<'EOT'
name: second
steps:
  - >-
    mkdir -p ${destdir}/usr/lib/pkgconfig ${destdir}/usr/include &&
    printf 'prefix=/usr\nincludedir=\044{prefix}/include\nlibdir=/usr/lib\nName: z\nDescription: z\nVersion: 1.3\nCflags: -I\044{includedir}\nLibs: -L\044{libdir} -lz\n'
    >${destdir}/usr/lib/pkgconfig/z.pc
EOT
C="$CROSSROOT -C $P --work $T/work --out $T/sysroots"
run $C build toy
check "toy sysroot" 0 "sysroot toy"
S=$T/sysroots/toy
PC=$S/bin/toy-pkg-config

# a staging directory holding a library that needs the sysroot's z, installed with DESTDIR
ST=$T/staging
mkdir -p "$ST/usr/lib/pkgconfig" "$ST/usr/include/png"
printf 'prefix=/usr\nincludedir=${prefix}/include\nlibdir=${prefix}/lib\nName: png\nDescription: png\nVersion: 1.6\nRequires: z\nCflags: -I${includedir}/png\nLibs: -L${libdir} -lpng\n' >"$ST/usr/lib/pkgconfig/png.pc"

run env -u PKG_CONFIG_PATH -u PKG_CONFIG_LIBDIR -u PKG_CONFIG_SYSROOT_DIR "$PC" --cflags --libs z
check "the sysroot's .pc files, under the sysroot" 0 "-I$S/usr/include -L$S/usr/lib -lz"
run env PKG_CONFIG_PATH=/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/share/pkgconfig "$PC" --exists libcrypto
check "a host PKG_CONFIG_PATH is never searched" 1
run env PKG_CONFIG_LIBDIR=/usr/lib/x86_64-linux-gnu/pkgconfig "$PC" --exists libcrypto
check "nor a host PKG_CONFIG_LIBDIR" 1
run "$PC" --cflags nosuch
check "a missing package is pkg-config's exit status and message" 1 "nosuch"

run env CROSSROOT_STAGING="$ST" "$PC" --cflags --libs png
check "CROSSROOT_STAGING: a staged package's directories are its staging directory's, its sysroot dependency's the sysroot's" 0 \
	"-I$ST/usr/include/png -I$S/usr/include -L$ST/usr/lib -lpng -L$S/usr/lib -lz"
run env PKG_CONFIG_SYSROOT_DIR="$ST" PKG_CONFIG_LIBDIR="$ST/usr/lib/pkgconfig" "$PC" --cflags png
check "a PKG_CONFIG_SYSROOT_DIR and LIBDIR of the user's are a staging directory" 0 \
	"-I$ST/usr/include/png -I$S/usr/include"
run env PKG_CONFIG_PATH="$ST/usr/lib/pkgconfig/" "$PC" --cflags png
check "so is a PKG_CONFIG_PATH entry" 0 "-I$ST/usr/include/png"
assert "the staged package's own directory is not under the sysroot" sh -c "! grep -q '$S/usr/include/png' '$T/out'"
# each package's flags only, from its own tree: two staging directories, each with a .pc file
# and usr/include and usr/lib of its own (one a DESTDIR of a relocatable .pc file)
A=$T/stage-a B=$T/stage-b
mkdir -p "$A/usr/lib/pkgconfig" "$A/usr/include" "$B/usr/lib/pkgconfig" "$B/usr/include/bar"
printf 'prefix=/usr\nlibdir=${prefix}/lib\nName: foo\nDescription: foo\nVersion: 1\nRequires: z\nCflags: -I${prefix}/include -DFOO\nLibs: -L${libdir} -lfoo\n' >"$A/usr/lib/pkgconfig/foo.pc"
printf 'prefix=${pcfiledir}/../..\nName: bar\nDescription: bar\nVersion: 2\nCflags: -I/usr/include/bar\nLibs: -L${prefix}/lib -lbar -Wl,-rpath,${prefix}/lib\n' >"$B/usr/lib/pkgconfig/bar.pc"
run env CROSSROOT_STAGING="$A:$B" "$PC" --cflags --libs foo
check "two staging directories: a package's own tree's directories" 0 "-I$A/usr/include -DFOO -I$S/usr/include -L$A/usr/lib -lfoo -L$S/usr/lib -lz"
assert "  (never the other staging directory's)" sh -c "! grep -q '$B' '$T/out'"
run env CROSSROOT_STAGING="$A:$B" "$PC" --cflags --libs bar
check "  (and the other package's, a literal path and a relocatable prefix)" 0 \
	"-I$B/usr/include/bar -L$B/usr/lib/pkgconfig/../../lib -lbar -Wl,-rpath,$B/usr/lib/pkgconfig/../../lib"
assert "  (never the first staging directory's, nor the sysroot's)" sh -c "! grep -q '$A\\|$S' '$T/out'"
run env CROSSROOT_STAGING="$A:$B" "$PC" --cflags z
check "a sysroot package: the sysroot's directories only" 0 "-I$S/usr/include"
assert "  (no staging directory's)" sh -c "! grep -q '$A\\|$B' '$T/out'"
run env CROSSROOT_STAGING="$A:$B" "$PC" --variable=prefix foo
check "a staged package's variables are in its staging directory" 0 "$A/usr"
run env CROSSROOT_STAGING="$A:$B" "$PC" --modversion foo bar
check "its other answers are pkg-config's" 0 "1" "2"
assert "no copy of a .pc file is left behind" sh -c "! ls '${TMPDIR:-/tmp}' | grep -q '^toy-pkg-config\.'"

mkdir -p "$T/abs/lib/pkgconfig" "$T/abs/include"
printf 'prefix=%s\nName: a\nDescription: a\nVersion: 1\nCflags: -I${prefix}/include\n' "$T/abs" >"$T/abs/lib/pkgconfig/a.pc"
run env CROSSROOT_STAGING="$T/abs" PKG_CONFIG_PATH="$T/abs/lib/pkgconfig" "$PC" --cflags a
check "a .pc file with an absolute staging prefix keeps it" 0 "-I$T/abs/include"

# <target>-run: the sysroot, staging library paths, libtool wrappers, no host LD_* variables
R=$S/bin/toy-run
if command -v qemu-aarch64-static >/dev/null; then
	run clang-19 --target=aarch64-linux-musl -ffreestanding -nostdlib -static -fuse-ld=lld -O1 \
		"$ROOT/tests/data/envprint-aarch64.c" -o "$T/envprint"
	check "a freestanding aarch64 program" 0
	run env LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu LD_PRELOAD=/host.so "$R" "$T/envprint" a 'b c'
	check "run: arguments pass, host LD_* do not" 0 "a" "b c"
	assert "no host library path or preload reaches the program" sh -c "! grep -q '^LD_PRELOAD\\|^LD_LIBRARY_PATH=.*x86_64' '$T/out'"
	run env LD_LIBRARY_PATH="/usr/lib/x86_64-linux-gnu:$T/bt/.libs:/lib64:/opt/x/lib" "$R" "$T/envprint"
	check "run: a build tree's library directories pass, the host's do not" 0 "LD_LIBRARY_PATH=$T/bt/.libs"
	assert "only those" grep -qx "LD_LIBRARY_PATH=$T/bt/.libs" "$T/out"
	run env CROSSROOT_STAGING="$ST" "$R" --staging "$T/two" "$T/envprint"
	check "run: staging library directories" 0 "LD_LIBRARY_PATH=$ST/usr/lib:$ST/lib:$T/two/usr/lib:$T/two/lib"
	mkdir -p "$T/lt/.libs"
	cp "$T/envprint" "$T/lt/.libs/prog"
	cat >"$T/lt/prog" <<EOT
#! /bin/sh
# prog - temporary wrapper script for .libs/prog
# Generated by libtool (GNU libtool) 2.4.7
    # Add our own library path to LD_LIBRARY_PATH
    LD_LIBRARY_PATH="$T/lt/.libs:$T/lib/.libs:\$LD_LIBRARY_PATH"
EOT
	chmod +x "$T/lt/prog"
	run "$R" "$T/lt/prog" x
	check "run: a libtool wrapper runs its program with the build tree's libraries" 0 "x" \
		"LD_LIBRARY_PATH=$T/lt/.libs:$T/lib/.libs"
	printf '#!/bin/sh\necho host script "$@"\n' >"$T/script"
	chmod +x "$T/script"
	run "$R" "$T/script" y
	check "run: another script runs on the host" 0 "host script y"
	run "$R"
	check "run: usage" 2 "usage: toy-run"
	# a debugging session: qemu waits on a port, gdb-multiarch with the sysroot attaches
	if command -v gdb-multiarch >/dev/null; then
		clang-19 --target=aarch64-linux-musl -ffreestanding -nostdlib -static -fuse-ld=lld -O0 -g \
			"$ROOT/tests/data/envprint-aarch64.c" -o "$T/envprint-g"
		port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
		"$R" -g "$port" "$T/envprint-g" first >"$T/debuggee" 2>&1 &
		debuggee=$!
		wait_listen "$port"
		run timeout 60 "$S/bin/toy-gdb" -batch -ex "target remote 127.0.0.1:$port" -ex 'break put' \
			-ex continue -ex bt -ex 'print s' -ex 'show sysroot' -ex delete -ex continue "$T/envprint-g"
		check "gdb: breaks in the target program, its stack and variables" 0 \
			"Breakpoint 1, put" "in cmain" '"first"' "The current system root is \"$S\"" "exited normally"
		wait $debuggee
		assert "gdb: the program ran on to its end" grep -qx first "$T/debuggee"
		# the libcxx stage installs libc++'s printers there (the e2e test prints real containers);
		# like LLVM's, this one only imports gdb and then uses gdb.printing (gdb 16 no longer
		# imports that module at startup)
		mkdir -p "$S/usr/share/gdb/python/libcxx"
		cat >"$S/usr/share/gdb/python/libcxx/printers.py" <<'EOT'
import gdb
def register_libcxx_printer_loader():
    gdb.printing.RegexpCollectionPrettyPrinter("libcxx-test")
    print("libc++ printers from " + __file__)
EOT
		run timeout 60 "$S/bin/toy-gdb" -batch -ex 'show sysroot'
		check "gdb: loads libc++'s printers from the sysroot" 0 \
			"libc++ printers from $S/usr/share/gdb/python/libcxx/printers.py" "The current system root is \"$S\""
		rm -r "$S/usr/share/gdb"
	else
		echo "skip   <target>-gdb (no gdb-multiarch)"
	fi
	mkdir -p "$T/nogdb"
	for tool in readlink dirname basename; do ln -s "$(command -v $tool)" "$T/nogdb/$tool"; done
	run env PATH="$T/nogdb" "$S/bin/toy-gdb" --version
	check "gdb: a missing gdb-multiarch is said" 127 "apt-get install gdb-multiarch"
else
	echo "skip   <target>-run (no qemu-aarch64-static)"
fi

# the Meson cross file, as Meson reads it (1.0 and later): one constant for the sysroot, the
# exe wrapper, the host machine, and the sysroot's pkg-config for dependencies (Meson 1.0 reads
# the key `pkgconfig`, 1.3 and later `pkg-config`: the file has both); through `meson setup` of
# a project with no languages, which asks Meson itself (find_program takes a cross build's
# [binaries] entries)
if command -v meson >/dev/null; then
	mkdir -p "$T/mesonproject"
	cat >"$T/mesonproject/meson.build" <<'EOT'
project('crossfile-check')
message('cross=@0@ can_run=@1@'.format(meson.is_cross_build(), meson.can_run_host_binaries()))
message('machine=' + host_machine.system() + ' ' + host_machine.cpu_family() + ' ' + host_machine.endian())
message('sys_root=' + meson.get_external_property('sys_root'))
foreach b : ['c', 'cpp', 'ar', 'strip', 'pkg-config', 'exe_wrapper']
  message(b + '=' + find_program(b).full_path())
endforeach
z = dependency('z', method: 'pkg-config')
message('z=' + z.version() + ' ' + z.get_variable(pkgconfig: 'includedir'))
EOT
	run meson setup --cross-file "$S/share/crossroot/meson-cross.ini" "$T/mesonproject" "$T/mesonbuild"
	check "Meson reads the cross file" 0 "cross=true can_run=true" "machine=linux aarch64 little" \
		"sys_root=$S" "c=$S/bin/toy-clang" "cpp=$S/bin/toy-clang++" "ar=$S/bin/toy-ar" \
		"strip=$S/bin/toy-strip" "pkg-config=$S/bin/toy-pkg-config" "exe_wrapper=$S/bin/toy-run" \
		"z=1.3 $S/usr/include"
else
	echo "skip   Meson cross file (no meson)"
fi

# lld as GNU ld: a version script may name a symbol the library does not define (zlib's
# does); -Wl,--no-undefined-version restores lld's strictness
printf 'int f(void) { return 1; }\n' >"$T/v.c"
printf 'V1 { global: f; not_here; local: *; };\n' >"$T/v.map"
run "$S/bin/toy-clang" -ffreestanding -nostdlib -shared -fPIC -Wl,--version-script="$T/v.map" "$T/v.c" -o "$T/v.so"
check "a version script naming an undefined symbol links" 0
run "$S/bin/toy-clang" -ffreestanding -nostdlib -shared -fPIC -Wl,--version-script="$T/v.map" \
	-Wl,--no-undefined-version "$T/v.c" -o "$T/v.so"
check "-Wl,--no-undefined-version makes it an error" 1 "not_here"
run "$S/bin/toy-clang" -Werror -ffreestanding -c "$T/v.c" -o "$T/v.o"
check "the linker option is no warning when compiling" 0

# env.sh: any POSIX shell; bin/ first on PATH; the whole autotools set
cat >"$T/env-test.sh" <<EOT
. "$S/share/crossroot/env.sh"
. "$S/share/crossroot/env.sh"
echo "CC=\$CC"
echo "LD=\$LD READELF=\$READELF OBJDUMP=\$OBJDUMP CPP=\$CPP"
echo "PATH=\$PATH"
echo "HOST=\$CROSSROOT_HOST"
echo "ld: \$(\$CC -print-prog-name=ld)"
EOT
for sh in dash bash; do
	command -v $sh >/dev/null || continue
	run env PATH=/usr/bin:/bin $sh "$T/env-test.sh"
	check "env.sh from $sh" 0 "CC=$S/bin/toy-clang" "LD=$S/bin/toy-ld READELF=$S/bin/toy-readelf" \
		"OBJDUMP=$S/bin/toy-objdump" "CPP=$S/bin/toy-cpp" "PATH=$S/bin:/usr/bin:/bin" \
		"HOST=aarch64-unknown-linux-musl" "ld: $S/bin/aarch64-unknown-linux-musl-ld"
done
mv "$S" "$T/moved"
run bash -c ". '$T/moved/share/crossroot/env.sh' && echo \"CC=\$CC\""
check "env.sh from bash follows a moved sysroot" 0 "CC=$T/moved/bin/toy-clang"
run bash -c ". '$T/moved/share/crossroot/env.sh' && \$PKG_CONFIG --cflags z"
check "the pkg-config wrapper follows it too" 0 "-I$T/moved/usr/include"

# driver_cflags are for users' programs: the drivers' configuration has them, no stage key does
printf 'driver_cflags: [-mlongcall]\ncflags: [-mcpu=cortex-a53]\n' >>"$P/targets/toy.yaml"
run $C build toy
check "cflags rebuild the stage" 0 "second" "sysroot toy"
printf 'driver_cflags: [-mlongcall, -fno-plt]\ncflags: [-mcpu=cortex-a53]\n' >"$T/tail"
sed -i '/^driver_cflags\|^cflags/d' "$P/targets/toy.yaml"
cat "$T/tail" >>"$P/targets/toy.yaml"
run $C plan toy
check "driver_cflags change no stage key" 0 "second                   cached"
run $C build toy
check "driver_cflags assemble the sysroot again" 0 "sysroot toy"
assert "driver_cflags come after the target's cflags in the clang configuration" \
	sh -c "grep -x -e -mcpu=cortex-a53 -e -mlongcall -e -fno-plt '$S/bin/toy.cfg' | tr '\n' ' ' | grep -qx -- '-mcpu=cortex-a53 -mlongcall -fno-plt '"
printf 'driver_cflags: ["-x;y"]\n' >>"$P/targets/toy.yaml"
run $C plan toy
check "a driver flag the shell would interpret is refused" 2 "toy.yaml" "-x;y"
finish
