/* package: one artifact per target to cache, ship, compare and audit. `crossroot package`
 * writes a built target's sysroot (drivers, clang config, wrappers, generated build-system
 * files, libraries and headers) as a deterministic tar with a manifest of what went in and of
 * every file, and an SPDX 2.3 document (sbom.h); `crossroot verify` checks a package or a tree
 * unpacked from one against its manifest; `crossroot build --check` builds again in a
 * temporary work directory and compares the two packages.
 *
 * Files beside each other in DIR (`-o`, default the current directory):
 *   <target>-<version>.tar.zst    (.tar.xz with --xz) every entry under "<target>/"
 *   <target>-<version>.manifest   the manifest, also in the package (below)
 *   <target>-<version>.spdx.json  the SPDX document, also in the package
 * <version> is the first 12 hex digits of the sha256 of the manifest's input lines (everything
 * before the first entry but the version line, the overlay's files included): the same
 * inputs, the same name.
 *
 * Determinism: entries sorted by path (byte order), a pax tar with no extended header unless a
 * name needs one, owner and group 0 with no names, no atime, ctime or xattrs, modes normalised
 * (0755 for directories and for files anyone may execute, 0644 for other files, 0777 links),
 * every mtime SOURCE_DATE_EPOCH, chosen in this order: $SOURCE_DATE_EPOCH of the caller; else
 * the newest commit time, in the project's git history, of the recipes and patches that went
 * in (target, stages, sources, patches, keyrings), when none of them has uncommitted changes;
 * else 1 (what build steps see). It changes only when what went in changes.
 *
 * What is packaged: the assembled sysroot (sysroots/<target>, built first as `build` would),
 * without its stamp, with the two generated files that name the sysroot's place replaced or
 * left out (crossfiles_package_text). A file that names the build's project, work or output
 * directory is an error naming it (the package would not work elsewhere); files that name the
 * host LLVM's directory are the wrappers (which check that the tool exists), and any other is
 * named in a warning. The package needs, on the machine it is unpacked on, the host LLVM it
 * was built with (its path and identity are in the manifest) and qemu-user for the run wrapper.
 *
 * Manifest format (UTF-8 text, tab separated, one record per line):
 *   crossroot-package 1
 *   target <name>                   triple <triple>        version <version>
 *   source-date-epoch <seconds> <how it was chosen>
 *   engine crossroot <version> <engine version>
 *   host-llvm <bin directory> <identity sha256> <clang --version, first line>, or
 *   host-llvm none (no stage was compiled by it and the wrappers run toolchain/'s LLVM)
 *   flags <the target's code generation flags, space separated> [static-only]
 *   source <name> <version> <sha256> <origin: URL, or apt:<package>=<version>/<file>>
 *   patch <source>/<version>/<file> <sha256>
 *   stage <name> <key> <output id>
 *   overlay d <mode> <path>         what `crossroot install` laid over the sysroot (its overlay,
 *   overlay f <mode> <size> <sha256> <path>   overlay.h), each entry as tree.h's manifest line
 *   overlay l <link target> <path>  (tree_scan of WORK/overlays/<target>), sorted by path
 *   d <mode> <path>                 then the entries, sorted by path, paths relative to the
 *   f <mode> <size> <sha256> <path> package's root: every entry but the manifest itself
 *   l <link target> <path>
 * The manifest is share/crossroot/package/manifest in the package, the SPDX document
 * share/crossroot/package/sbom.spdx.json (listed in the manifest as an entry). */
#ifndef CROSSROOT_PACKAGE_H
#define CROSSROOT_PACKAGE_H

#include <stdbool.h>

#include "digest.h"
#include "plan.h"
#include "tree.h"

#define PACKAGE_MANIFEST "share/crossroot/package/manifest"
#define PACKAGE_SBOM "share/crossroot/package/sbom.spdx.json"

struct package_entry {
	char kind;                  /* 'd' directory, 'f' file, 'l' symbolic link */
	unsigned mode;
	long long size;
	char sha256[DIGEST_HEX_LEN + 1];
	char sha1[41];              /* SPDX 2.3 requires it of every file */
	char *path;                 /* relative to the package's root */
	char *link;                 /* 'l': the link's target */
	char *from;                 /* 'f': the file its bytes are read from; NULL: `text` */
	char *text;
};

/* What went in and what comes out: the manifest's records. */
struct package_manifest {
	char *target, *triple, *version;
	long long epoch;
	char *epoch_how;
	char *host_bin, *host_identity, *host_clang;
	char *flags;
	struct strlist sources;     /* name, version, sha256, origin, name, ... */
	struct strlist patches;     /* path, sha256, ... */
	struct strlist stages;      /* name, key, output id, ... */
	struct tree_manifest overlay;   /* the overlay's entries (overlay_manifest) */
	struct package_entry *entries;
	size_t n, cap;
};

void package_manifest_release(struct package_manifest *m);

struct package_options {
	const char *dir;            /* where the package goes (made if missing) */
	bool xz;                    /* also .tar.xz */
};

/* Package target `t` of a plan that was just built (its sysroot assembled). On success
 * *written (may be NULL) is the .tar.zst's path (malloc'd). Returns 0, or -1 after error(). */
int package_write(const struct plan *p, const struct target *t, const struct package_options *o,
                  char **written);

/* Outcomes of package_verify and package_compare, for main's exit code. */
enum package_result {
	PACKAGE_SAME = 0,           /* every file as the manifest says / the packages are equal */
	PACKAGE_DIFFERS = 1,        /* each difference named on stderr */
	PACKAGE_UNREADABLE = -1,    /* not a package, or no manifest (error() says which) */
};

/* Check a package file (.tar.zst, .tar.xz) or a directory unpacked from one against the
 * manifest inside it: each missing, extra or changed file is named. A tree's modes are
 * compared by their execute bit (what the unpacking user's umask leaves). */
int package_verify(const char *path);

/* Compare two packages: equal bytes, or each file whose entry differs named (from their
 * manifests), and diffoscope's report on them where diffoscope is installed. */
int package_compare(const char *a, const char *b);

/* `crossroot build --check`: package `t` (just built), build it again cold in
 * WORK/check/<target>/ (its own work directory, stage cache and sysroots, no remote cache, the
 * download cache as its mirror) with another crossroot process, package that, and compare
 * (package_compare). Both builds are kept there when they differ, removed when equal. */
struct package_check {
	const char *self;           /* this program, for the second build */
	bool allow_network, verbose;
};
int package_check(const struct plan *p, const struct target *t, const struct package_check *c);

#endif
