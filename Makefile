# crossroot: one POSIX-style Makefile. `make` builds ./crossroot, `make check` runs every test
# tier (unit, fuzz, integration, end to end), `make SAN=1` builds with ASan+UBSan, `make fuzz`
# fuzzes the recipe loader and the planner for 10 minutes.
VERSION = 0.1.0
CC = cc
PKGS = yaml-0.1 libcurl libcrypto libarchive jansson
# libcurl and libarchive are not linked: bootstrap/lazylib.c loads them on first use, so a run
# with nothing to fetch or unpack does not map them and the ~40 libraries they need
LINKED_PKGS = yaml-0.1 libcrypto jansson
WARN = -Wall -Wextra -Wshadow -Wmissing-prototypes -Wpedantic
OPT = -O2 -g
CFLAGS = -std=c17 $(OPT) $(WARN) -DCROSSROOT_VERSION='"$(VERSION)"' $$(pkg-config --cflags $(PKGS))
LDLIBS = $$(pkg-config --libs $(LINKED_PKGS)) -ldl
SAN_FLAGS = $$(if [ -n "$(SAN)" ]; then echo -fsanitize=address,undefined; fi)

MODULES = util lazylib yamlfile digest tree recipes apt fetch openpgp extract run toolchain crossfiles plan cache scheduler debuginfo build overlay sysroot searchpaths guest testrun binfmt sign remote remote_http package sbom launcher matrix
OBJS = $(MODULES:%=bootstrap/%.o)
HEADERS = $(MODULES:%=bootstrap/%.h)

all: crossroot

crossroot: $(OBJS) bootstrap/main.o
	$(CC) $(CFLAGS) $(SAN_FLAGS) -o $@ $(OBJS) bootstrap/main.o $(LDLIBS)

bootstrap/%.o: bootstrap/%.c $(HEADERS) Makefile
	$(CC) $(CFLAGS) $(SAN_FLAGS) -c -o $@ $<

# The unit tests: one file per module (tests/unit/<module>.c, TEST()s registered by unit.h),
# run in this order.
UNIT_TESTS = digest recipes plan scheduler extract fetch util searchpaths sign tree cache remote run apt package toolchain guest
UNIT_SOURCES = tests/unit/unit.c $(UNIT_TESTS:%=tests/unit/%.c)
# (the tests make archives with more of libarchive than the engine uses: linked with it)
tests/unit/run-unit: $(UNIT_SOURCES) tests/unit/unit.h $(OBJS)
	$(CC) $(CFLAGS) $(SAN_FLAGS) -Ibootstrap -o $@ $(UNIT_SOURCES) $(OBJS) $(LDLIBS) $$(pkg-config --libs libarchive)

# libFuzzer targets, with ASan and UBSan (clang only): the recipe loader, and variable
# expansion and planning (with a fake host LLVM).
FUZZ_CC = clang-19
FUZZ_MODULES = util lazylib yamlfile digest recipes
FUZZ_PLAN_MODULES = $(FUZZ_MODULES) tree run toolchain cache extract plan
tests/fuzz/fuzz-recipes: tests/fuzz/fuzz-recipes.c $(FUZZ_MODULES:%=bootstrap/%.c) $(HEADERS) Makefile
	$(FUZZ_CC) -std=c17 -g -O1 $(WARN) -fsanitize=fuzzer,address,undefined \
		-iquote bootstrap $$(pkg-config --cflags $(PKGS)) -o $@ tests/fuzz/fuzz-recipes.c \
		$(FUZZ_MODULES:%=bootstrap/%.c) $$(pkg-config --libs $(PKGS))

tests/fuzz/fuzz-plan: tests/fuzz/fuzz-plan.c $(FUZZ_PLAN_MODULES:%=bootstrap/%.c) $(HEADERS) Makefile
	$(FUZZ_CC) -std=c17 -g -O1 $(WARN) -fsanitize=fuzzer,address,undefined \
		-iquote bootstrap $$(pkg-config --cflags $(PKGS)) -o $@ tests/fuzz/fuzz-plan.c \
		$(FUZZ_PLAN_MODULES:%=bootstrap/%.c) $$(pkg-config --libs $(PKGS))

check: crossroot tests/unit/run-unit tests/fuzz/fuzz-recipes tests/fuzz/fuzz-plan
	tests/run-all

fuzz: tests/fuzz/fuzz-recipes tests/fuzz/fuzz-plan
	FUZZ_SECONDS=600 tests/fuzz/run.sh

# Every target built and tested for real, with file/readelf checks (slow: 6 to 7 hours cold on
# 2 cores, the GNU targets 170 min of it, plus about 2.5 hours for each LLVM version the *-llvm*
# targets build from source (19.1.7, 21.1.8, 22.1.8); about 25 min when every stage is cached).
check-all: crossroot
	tests/full/all-targets.sh

# The GNU runtimes (glibc, libgcc, libstdc++, GNU libatomic; binutils and GCC as stages) on
# their targets, and glibc with the LLVM runtimes and sanitizers on aarch64 and x86_64, built
# and tested (slow: ~170 min cold on 2 cores, 4 min when cached).
check-gnu: crossroot
	tests/full/gnu-targets.sh

# The compiler as a stage: clang, lld and the LLVM tools built from source for the host
# (stages/llvm.yaml), and targets whose runtimes they compile, built and run under qemu
# (`crossroot build` then `crossroot test` for each of LLVM_TARGETS). The default list:
# aarch64-linux-musl with LLVM 19.1.7 and with 21.1.8 (the same expected output as
# aarch64-linux-musl), and the LLVM 21 variants that drop an LLVM 19 workaround (README, "What
# LLVM 21 fixes"): mipsel (musl built by clang, no GCC), armv7-rpi2 (libm without wrong-signed
# zeros), powerpc (musl built by clang, no -mlongcall), aarch64_be on ARMv8.0 and s390x
# (compiler-rt's own builtins). Slow: each llvm stage is about 4,000 Ninja steps and 5
# CPU-hours (2.5 hours or more on 2 idle cores; never measured in one uninterrupted run); with
# ccache warm (CROSSROOT_LAUNCHER=ccache) an llvm stage takes 3.5 to 5 minutes, and each
# target's runtimes 2 to 4 minutes more, its tests about a minute under qemu: the whole list
# about 35 minutes then. One llvm build per version serves every target of that version.
# As root it runs as on a host without clang, lld or LLVM packages (tools/without-host-llvm:
# the host's LLVM hidden in a mount namespace): only the host's GCC builds the compiler.
LLVM_TARGETS ?= aarch64-linux-musl-llvm19 aarch64-linux-musl-llvm21 mipsel-linux-musl-llvm21 \
	armv7-rpi2-linux-musleabihf-llvm21 powerpc-linux-musl-llvm21 aarch64_be-linux-musl-llvm21 \
	s390x-linux-musl-llvm21
check-llvm: crossroot
	$$( [ "$$(id -u)" = 0 ] && echo tools/without-host-llvm ) sh -ec 'for t in $(LLVM_TARGETS); do \
		./crossroot build $$t; ./crossroot test $$t; done'

# The emulator as a stage: QEMU 10.0.13 built from source for the host (stages/qemu.yaml, every
# user-mode emulator targets/*.yaml names and guest.c's system emulators; about 3,400 Ninja
# steps), then aarch64-linux-musl-qemu10 (aarch64-linux-musl's runtimes, `emulator: qemu`)
# built and tested under it, on qemu-user and on the kernel (--system). Slow: see README,
# "The emulator as a stage".
QEMU_TARGETS ?= aarch64-linux-musl-qemu10
check-qemu: crossroot
	sh -ec 'for t in $(QEMU_TARGETS); do ./crossroot build $$t; ./crossroot test $$t; \
		./crossroot test --system $$t; done'

# Real projects from Debian bookworm's source archive (zlib, xz-utils, fribidi, fmt with
# googletest, libpng over a staged zlib; then pcre2 with its JIT, expat, zstd, libffi through
# DejaGnu and jsoncpp, whose harnesses run target programs themselves) cross-built for
# aarch64-linux-musl with nothing but the sysroot's generated files, and each project's own test
# suite run under qemu: the last five unchanged inside `crossroot exec`, as root and again as
# the user nobody (tests/projects/run.sh; about 2 hours here beside other builds, the five in
# sessions about 90 min of it, measured one by one, zstd's playTests.sh the longest; plus the
# sysroot if it is not built yet; needs meson: make deps; the sessions need Linux 6.7 or later).
check-projects: crossroot
	tests/projects/run.sh

# Reproducibility of aarch64-linux-musl for real (tests/full/repro.sh; two full cold builds,
# so about twice `make main`'s cold time): two cold builds in different work directories give
# packages with the same sha256, as does a build restored from the stage cache; the package,
# unpacked elsewhere by the user nobody, is verified and builds hello.c and hello.cpp (dynamic
# and static) that run under qemu. Needs root (setpriv). Prints both sha256 sums, the zstd and
# xz sizes and the times. REPRO_DIR (default work/repro) holds the builds.
check-repro: crossroot
	tests/full/repro.sh $(DEFAULT_TARGET)

# The libm references: gcc-built musl of the sysroots' version, per architecture: the host's
# musl-gcc, Debian's musl-dev of other architectures, or musl built here by a Debian cross gcc
# (tests/lib/reference-musl.sh; the cross gccs: see the script's messages). Regenerate only
# when the program or the musl version changes. TARGETS="..." for some (default: every target
# with a reference and a built sysroot).
libm-reference:
	tests/sysroot/libm-reference.sh $(TARGETS)

# musl's libc-test against built musl sysroots, each beside gcc-built musl of its version
# (tests/libc-test/run.sh): failures the reference does not share must be listed with their
# cause in tests/libc-test/known. About 6 to 8 min per target here (measured 2026-12-08,
# beside other work). TARGETS="..." (default: the
# musl targets with a reference); LIBC_TEST_GIT=URL-or-path for a mirror of libc-test's git.
LIBC_TEST_TARGETS = x86_64-linux-musl aarch64-linux-musl armv7-rpi2-linux-musleabihf \
	armv6-rpi1-linux-musleabihf riscv64-linux-musl i686-linux-musl s390x-linux-musl \
	powerpc64le-linux-musl powerpc64-linux-musl aarch64_be-linux-musl
check-libc-test:
	tests/libc-test/run.sh $(or $(TARGETS),$(LIBC_TEST_TARGETS))

# The glibc targets' expected files from Debian's libc6 of each architecture (sysroots built).
glibc-reference:
	tests/sysroot/glibc-reference.sh

# The README's setup on each supported Debian release, from nothing (tests/full/check-hosts.sh;
# root): a minimal debootstrap root of Debian 12 (bookworm) and of Debian 13 (trixie) from the
# archive this machine's apt uses, a clean clone of HEAD in each, then `make deps main` and
# `make deps check` inside it (a mount and PID namespace whose root it is: the steps' sandbox
# and exec's sessions work there as on a machine); one summary line per host. Slow: per host
# about 3 min for a new root, then `make deps main` (4 min 28 s on bookworm, 4 min 27 s on
# trixie, measured 2026-12-07) and `make deps check` (7 min 49 s and 7 min 58 s after main: the
# stage cache is warm by then), so about 30 minutes for both hosts with new roots.
# HOSTS=trixie (or bookworm) for one; CHECK_HOSTS_DIR (default work/check-hosts) holds the
# roots, which a rerun reuses (and their clones' caches: a rerun is incremental).
check-hosts:
	tests/full/check-hosts.sh

# Install the Debian packages crossroot needs (root or sudo).
deps:
	tools/install-deps

# The main job: build the default target's sysroot and run its programs under qemu.
DEFAULT_TARGET = aarch64-linux-musl
main: crossroot
	./crossroot build $(DEFAULT_TARGET)
	./crossroot test $(DEFAULT_TARGET)

clean:
	rm -f crossroot bootstrap/*.o tests/unit/run-unit tests/fuzz/fuzz-recipes tests/fuzz/fuzz-plan

.PHONY: all check check-all check-gnu check-hosts check-libc-test check-llvm check-qemu glibc-reference check-projects check-repro clean deps fuzz libm-reference main
