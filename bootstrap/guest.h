/* guest: run a target's programs on a real Linux kernel booted under qemu-system, the runner
 * behind `crossroot test --system` and `crossroot run --system`. One boot runs a whole list of
 * programs; the results come back over the serial console.
 *
 * The machine of each Linux architecture (guest.c's table; a target is covered when its
 * linux_arch is there): which qemu-system binary and Debian package give it, the board (-M),
 * the console device, and the kernel: a Debian binary package pinned in sources/<id>.yaml (a
 * `deb:` origin: located through apt's signed Packages index, whose sha256 must equal the pin;
 * the same file's `pool:` origin after it left the index), fetched into the download cache
 * like every source, and its image unpacked once into WORK/guest/kernel-<sha256>/.
 *
 * The initramfs (newc cpio, written here with libarchive, uncompressed: the kernel unpacks it
 * faster than it could decompress it under emulation), built for each boot in WORK/guest/
 * <target>/initramfs.cpio:
 *   /init                     guest/init.c compiled static by the target's own clang
 *   /crossroot/key            the frame key (32 hex digits, random per boot, mode 0400)
 *   /crossroot/list           the programs (format below)
 *   /dev/console              the character device 5:1, for the kernel's first console
 *   SYSROOT/lib, SYSROOT/etc  the sysroot's runtime at its own host path: lib/, lib64/, etc/
 *                             whole, and of usr/lib/ the shared objects, gconv/ and locale/;
 *   /lib, /etc, /usr/lib ...  links to those, so the loader and the libraries are found where
 *                             the programs ask for them and /proc/self/maps names the sysroot
 *   each `include` path       at its own host path (the test scratch: programs and the
 *                             libraries their rpath names); directories mode 1777
 * /crossroot/list: NUL-terminated fields, "crossroot-list 1", then per program its id (0, 1,
 * ...), timeout in seconds, uid, working directory, argc, argv..., envc, env...; then "end".
 *
 * Frames (guest/init.c writes them; nothing else on the console is trusted): one a line,
 * "@crossroot KEY SEQ KIND ID DATA". The key is fresh for each boot and never seen by a
 * program (init reads and removes it before the first one starts, and programs run as
 * nobody), SEQ must count up from 0 with no gap, out/err DATA is hex: a program's output
 * cannot end a line early, forge another program's result or end the list. A boot fails as a
 * whole (every result says why) when the guest is silent, a frame is missing or malformed,
 * or the list is not done in time. */
#ifndef CROSSROOT_GUEST_H
#define CROSSROOT_GUEST_H

#include <stdbool.h>

#include "fetch.h"
#include "plan.h"
#include "recipes.h"

struct guest_machine;

struct guest {
	const struct guest_machine *machine;
	const struct target *target;
	char *sysroot;
	char *dir;                  /* WORK/guest/<target>: init, initramfs, console log */
	char *qemu;                 /* the qemu-system binary: found in PATH, or the target's
	                               emulator stage's (in the sysroot's toolchain/) */
	char *qemu_version;         /* what it says of itself ("10.0.13"), for reports */
	char *kernel;               /* the kernel image, unpacked */
	char *kernel_name;          /* "linux-image-6.1.0-50-arm64-unsigned 6.1.176-1" */
	char *kernel_sha256;        /* of the .deb */
	char *init;                 /* the guest's init, built by the sysroot */
	int memory_mb, cpus;
	long boot_seconds;          /* for the kernel to reach /init and report (default 180) */
};

struct guest_program {
	struct strlist argv;        /* argv[0]: the program's absolute path in the guest */
	struct strlist env;         /* NAME=value, exactly */
	char *cwd;                  /* absolute; created in the guest if missing */
	long timeout;               /* seconds, enforced by init */
	bool root;                  /* run as root instead of nobody (65534) */
};

struct guest_result {
	bool ran;                   /* an exit or timeout frame came */
	int status;                 /* the guest's wait status (Linux's encoding) */
	bool timed_out;             /* killed by init after `timeout` seconds */
	char *error;                /* why it has no result (could not start, the boot failed) */
	struct buf out, err;
};

/* Called with each piece of a program's output as it arrives (fd 1 or 2), for streaming. */
typedef void (*guest_output_fn)(void *arg, size_t program, int fd, const char *data, size_t n);

/* The id of the source (sources/<id>.yaml) of the kernel that boots target `t`, or NULL when
 * no machine covers its Linux architecture: what `crossroot prune` must keep. */
const char *guest_kernel_source(const struct target *t);

/* Everything a boot needs for target `t`: its machine, the qemu binary (missing: the error
 * names the Debian package to install), the kernel (fetched, verified, unpacked) and the init
 * (compiled with the sysroot). Returns 0, or -1 after error(). */
int guest_prepare(struct guest *g, const struct dirs *dirs, struct recipes *r,
                  const struct target *t, const struct fetch_options *fo);
void guest_release(struct guest *g);

/* One line for reports: "Linux 6.1.0-50-arm64 (linux-image-... 6.1.176-1) under
 * qemu-system-aarch64 7.2.22 -M virt -cpu cortex-a53" (the binary's version as it says it;
 * "of the stage qemu" after it when the target's emulator stage's ran). Borrowed. */
const char *guest_describe(const struct guest *g);

/* The version a qemu binary (a path, or a name found in PATH) says it is: the word after
 * "version" in the first line of its --version ("7.2.22", "10.0.13"), or "(version unknown)"
 * when it does not run or says no such thing. Never NULL; the caller frees it. */
char *guest_qemu_version(const char *qemu);

/* Boot once and run `n` programs in order, with `include` (absolute host paths: files or
 * directories) in the guest at the same paths. results[i] are filled (release them with
 * guest_result_release). Returns 0 when the boot ran the list to its end, -1 after error()
 * naming why it did not (then every result without a frame says so too). */
int guest_run(struct guest *g, const struct guest_program *programs, size_t n,
              const struct strlist *include, struct guest_result *results,
              guest_output_fn on_output, void *arg);
void guest_program_release(struct guest_program *p);

/* The console's reader, which guest_run feeds line by line (and unit tests without a boot).
 * A line that is not a frame of this boot's key is kept in `noise` (its last 4 to 8 KiB: the
 * kernel's messages, for a failure's text) and changes nothing; a frame out of sequence, of an
 * unknown kind, naming no program of the list, or with malformed hex sets `failure`, after
 * which nothing more is read. */
struct guest_frames {
	struct guest_result *results;   /* n results, zeroed by the caller */
	size_t n;
	const char *key;
	unsigned long seq;          /* the next frame's */
	bool booted, done;          /* the boot frame came; the done frame came */
	char *failure;              /* why the boot as a whole failed, or NULL */
	guest_output_fn on_output;  /* may be NULL */
	void *arg;
	struct buf noise;
};
/* One line of the console, without its newline (a '\r' before it is dropped); `line` is
 * written to. */
void guest_frames_line(struct guest_frames *f, char *line);
void guest_result_release(struct guest_result *r);

#endif
