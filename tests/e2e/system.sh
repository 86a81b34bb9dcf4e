#!/bin/sh
# End to end: the sysroot's programs on a real kernel. aarch64-linux-musl (from the shared
# cache, as aarch64-linux-musl.sh) and Debian's arm64 kernel under qemu-system-aarch64: a small
# program list in one boot through `crossroot test --system` (static and dynamic, a shared
# library found through its rpath, a program qemu-user cannot host, output that imitates the
# runner's frames, a program trying the console and the frame key), then `crossroot run
# --system` with arguments, output and exit status passed back, a timeout, and the error that
# names the package to install when qemu-system is missing. Three boots.
. "$(dirname "$0")/../lib/common.sh"
TARGET=aarch64-linux-musl
CACHE=${CROSSROOT_CACHE:-$ROOT/work/cache}
C="$CROSSROOT -C $ROOT --work $T/work --out $T/sysroots --cache $CACHE"
S=$T/sysroots/$TARGET
if ! command -v qemu-system-aarch64 >/dev/null; then
	echo "skip: qemu-system-aarch64 is not installed (Debian's qemu-system-arm; tools/install-deps)"
	exit 0
fi

run $C build $TARGET
check "crossroot build $TARGET" 0 "sysroot $TARGET: $S"

# a project of its own, whose tests/sysroot holds the programs of this boot
P=$T/proj
mkdir -p "$P/tests/sysroot"
for d in targets stages sources patches keys guest; do ln -s "$ROOT/$d" "$P/$d"; done
D=$P/tests/sysroot
printf '#include <stdio.h>\nint main(void){puts("hello");return 0;}\n' >"$D/hello.c"
echo hello >"$D/hello.expected"
printf '// exit: 3\n#include <stdio.h>\nint main(void){puts("three");return 3;}\n' >"$D/status.c"
echo three >"$D/status.expected"
printf '// not-run: qemu-user cannot (a stand-in)\n#include <stdio.h>\nint main(void){puts("ran on the kernel");return 0;}\n' >"$D/kernel_only.c"
echo "ran on the kernel" >"$D/kernel_only.expected"
printf '// link: dynamic\n// shared: withlib_lib.c\nint lib_value(void);\n#include <stdio.h>\nint main(void){printf("%%d\\n", lib_value());return 0;}\n' >"$D/withlib.c"
printf 'int lib_value(void){return 42;}\n' >"$D/withlib_lib.c"
echo 42 >"$D/withlib.expected"
# a program that prints frames of its own and tries where init's frames come from
cat >"$D/forge.c" <<'EOF'
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
static void try(const char *path, int flags)
{
	int fd = open(path, flags);
	printf("%s: %s\n", path, fd < 0 ? strerror(errno) : "opened");
	if (fd >= 0)
		close(fd);
}
int main(void)
{
	printf("@crossroot 00000000000000000000000000000000 9 exit 0 0\n");
	printf("@crossroot 00000000000000000000000000000000 9 done 0 0\n");
	fflush(stdout);
	try("/dev/console", O_WRONLY);
	try("/dev/ttyAMA0", O_WRONLY);
	try("/dev/kmsg", O_WRONLY);
	try("/crossroot/key", O_RDONLY);
	try("/crossroot/list", O_RDONLY);
	printf("uid %d\n", (int)getuid());
	return 0;
}
EOF
cat >"$D/forge.expected" <<'EOF'
@crossroot 00000000000000000000000000000000 9 exit 0 0
@crossroot 00000000000000000000000000000000 9 done 0 0
/dev/console: Permission denied
/dev/ttyAMA0: Permission denied
/dev/kmsg: Permission denied
/crossroot/key: Permission denied
/crossroot/list: Permission denied
uid 65534
EOF
start=$(date +%s)
run $CROSSROOT -C "$P" --work "$T/pwork" --out "$T/sysroots" --cache "$CACHE" test --system $TARGET \
	--table "$T/table.md"
took=$(($(date +%s) - start))
cat "$T/out"
check "test --system: every program in one boot, judged as under qemu-user" 0 \
	"ok   hello                        static (kernel)" \
	"ok   hello                        dynamic (kernel)" \
	"ok   status                       static (kernel)" \
	"ok   kernel_only                  dynamic (kernel)" \
	"ok   withlib                      dynamic (kernel)" \
	"ok   forge                        static (kernel)" \
	"ok   forge                        dynamic (kernel)" \
	"booting $TARGET for 9 programs: Linux 6.1.0-50-arm64 (linux-image-6.1.0-50-arm64-unsigned 6.1.176-1) under qemu-system-aarch64 $(qemu-system-aarch64 --version | sed -n '1s/.* version \([^ ]*\).*/\1/p') -M virt -cpu cortex-a53" \
	"10 passed, 0 failed"
echo "    (test --system of 9 programs: $took s with their builds)"
assert "the table says which runner gave the cells" \
	grep -q "| $TARGET | .* | Linux 6.1.0-50-arm64 (linux-image-6.1.0-50-arm64-unsigned 6.1.176-1) under qemu-system-aarch64" "$T/table.md"
assert "a cell that ran on the kernel says so" grep -q "^| hello | ok (kernel) |" "$T/table.md"

# a user's program: arguments in, output and status out
cat >"$T/args.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	struct utsname u;
	uname(&u);
	/* as root: the frame key is gone before any program starts */
	printf("key: %s\n", access("/crossroot/key", F_OK) == 0 ? "there" : strerror(errno));
	printf("%s on %s:", u.machine, u.sysname);
	for (int i = 1; i < argc; i++)
		printf(" [%s]", argv[i]);
	printf("\n");
	fprintf(stderr, "to stderr\n");
	return 7;
}
EOF
"$S/bin/$TARGET-clang" "$T/args.c" -o "$T/args"
start=$(date +%s)
(cd "$T" && CROSSROOT_RUN_AS_ROOT=1 $C run --system $TARGET ./args -x 'two words' '' \
	>"$T/run.out" 2>"$T/run.err")
STATUS=$?
took=$(($(date +%s) - start))
assert "run --system: the program's exit status" [ "$STATUS" = 7 ]
assert "run --system: its arguments and output" \
	grep -qxF "aarch64 on Linux: [-x] [two words] []" "$T/run.out"
assert "run --system: its stderr apart" grep -qxF "to stderr" "$T/run.err"
assert "run --system: the frame key is removed before the program starts (run as root)" \
	grep -qxF "key: No such file or directory" "$T/run.out"
echo "    (run --system, one boot of one program: $took s)"

printf '#include <unistd.h>\nint main(void){sleep(100);return 0;}\n' >"$T/sleeps.c"
"$S/bin/$TARGET-clang" -static "$T/sleeps.c" -o "$T/sleeps"
(cd "$T" && CROSSROOT_RUN_TIMEOUT=3 $C run --system $TARGET ./sleeps >"$T/out" 2>&1)
STATUS=$?
check "run --system: a program past its timeout is killed in the guest (124)" 124 \
	"'./sleeps' timed out after 3 s on the kernel"

(cd "$T" && PATH=/nonexistent $C run --system $TARGET ./args >"$T/out" 2>&1)
STATUS=$?
check "run --system without qemu-system: the package to install" 125 \
	"'qemu-system-aarch64' is not installed (in PATH): install Debian's package qemu-system-arm"

echo "system: $PASSED passed, $FAILED failed"
[ "$FAILED" = 0 ]
