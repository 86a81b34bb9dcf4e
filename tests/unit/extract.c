/* Unit tests of extract: archives in every format, hostile ones, link escapes, a full disk
 * and decompression bombs. */
#define _GNU_SOURCE
#include "unit.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "extract.h"

enum entry_kind { REG, DIR_, SYMLINK, HARDLINK, CHARDEV, FIFO_ };
struct entry {
	const char *path;
	enum entry_kind kind;
	const char *data;       /* REG: contents; links: target */
	int mode;
};

static char *make_archive(const char *name, int format, int filter, const struct entry *e, size_t n)
{
	char *path = xasprintf("%s/%s", scratch, name);
	struct archive *a = archive_write_new();
	archive_write_set_format(a, format);
	if (filter == 'z')
		archive_write_add_filter_gzip(a);
	else if (filter == 'x')
		archive_write_add_filter_xz(a);
	archive_write_open_filename(a, path);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *ae = archive_entry_new();
		archive_entry_set_pathname(ae, e[i].path);
		archive_entry_set_mtime(ae, 1000000000, 0);
		int mode = e[i].mode ? e[i].mode : 0644;
		switch (e[i].kind) {
		case REG:
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_size(ae, (la_int64_t)strlen(e[i].data));
			break;
		case DIR_:
			archive_entry_set_filetype(ae, AE_IFDIR);
			mode = e[i].mode ? e[i].mode : 0755;
			break;
		case SYMLINK:
			archive_entry_set_filetype(ae, AE_IFLNK);
			archive_entry_set_symlink(ae, e[i].data);
			break;
		case HARDLINK:
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_hardlink(ae, e[i].data);
			break;
		case CHARDEV:
			archive_entry_set_filetype(ae, AE_IFCHR);
			archive_entry_set_rdev(ae, 0x0103);
			break;
		case FIFO_:
			archive_entry_set_filetype(ae, AE_IFIFO);
			break;
		}
		archive_entry_set_perm(ae, (mode_t)mode);
		archive_write_header(a, ae);
		if (e[i].kind == REG)
			archive_write_data(a, e[i].data, strlen(e[i].data));
		archive_entry_free(ae);
	}
	archive_write_close(a);
	archive_write_free(a);
	return path;
}

struct extract_call {
	struct extract_options o;
};

static int call_extract(void *arg)
{
	return extract_archive(&((struct extract_call *)arg)->o);
}

TEST(extract_good)
{
	const struct entry good[] = {
		{"pkg-1.0/", DIR_, NULL, 0},
		{"pkg-1.0/README", REG, "readme\n", 0},
		{"pkg-1.0/src/main.c", REG, "int main;\n", 0},
		{"pkg-1.0/src/link", SYMLINK, "main.c", 0},
		{"pkg-1.0/src/hard", HARDLINK, "pkg-1.0/src/main.c", 0},
		{"pkg-1.0/docs/manual.txt", REG, "manual\n", 0},
		{"pkg-1.0/tool.sh", REG, "#!/bin/sh\n", 0755},
	};
	const int formats[][2] = {{ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'z'},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'x'},
	                          {ARCHIVE_FORMAT_ZIP, 0}};
	for (int f = 0; f < 4; f++) {
		char name[32];
		snprintf(name, sizeof(name), "good%d.archive", f);
		char *archive = make_archive(name, formats[f][0], formats[f][1], good, 7);
		char *dest = xasprintf("%s/good%d", scratch, f);
		struct extract_options o = {.archive = archive, .dest = dest, .strip = 1};
		CHECK(extract_archive(&o) == 0);
		char *p = xasprintf("%s/src/main.c", dest);
		CHECK(file_has(p, "int main;\n"));
		free(p);
		p = xasprintf("%s/src/hard", dest);
		/* zip has no hard links */
		CHECK(formats[f][0] == ARCHIVE_FORMAT_ZIP || file_has(p, "int main;\n"));
		free(p);
		p = xasprintf("%s/tool.sh", dest);
		struct stat st;
		CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0755);
		free(p);
		/* the temp directory is gone */
		p = xasprintf("%s.tmp.%ld", dest, (long)getpid());
		CHECK(!path_exists(p));
		free(p);
		/* extracting onto an existing directory is refused: not the archive's fault */
		CHECK(extract_archive(&o) == EXTRACT_FAILED);
		free(dest);
		free(archive);
	}
	/* partial extraction with include and exclude patterns */
	char *archive = make_archive("partial.tar", ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0, good, 7);
	char *dest = xasprintf("%s/partial", scratch);
	struct strlist include = {0}, exclude = {0};
	strlist_add(&include, "src");
	strlist_add(&include, "*.txt");
	strlist_add(&exclude, "src/link");
	struct extract_options o = {.archive = archive, .dest = dest, .strip = 1, .include = &include,
	                            .exclude = &exclude};
	CHECK(extract_archive(&o) == 0);
	char *p = xasprintf("%s/src/main.c", dest);
	CHECK(path_exists(p));
	free(p);
	p = xasprintf("%s/docs/manual.txt", dest);
	CHECK(!path_exists(p));   /* "*.txt" does not cross '/' */
	free(p);
	p = xasprintf("%s/README", dest);
	CHECK(!path_exists(p));
	free(p);
	p = xasprintf("%s/src/link", dest);
	CHECK(!path_exists(p));
	free(p);
	strlist_release(&include);
	strlist_release(&exclude);
	free(dest);
	free(archive);
	CHECK(extract_path_matches("libcxx", "libcxx/src/a.cpp"));
	CHECK(extract_path_matches("arch/*/include/uapi", "arch/arm64/include/uapi/asm/x.h"));
	CHECK(!extract_path_matches("arch/*/include/uapi", "arch/arm64/include/asm/x.h"));
	CHECK(extract_path_matches("*/test", "libcxx/test/std/x.cpp"));
}

/* steps run as another user (nobody, as root) and only read source trees: whatever modes an
 * archive gives, every entry comes out readable by all, nothing writable by group or others,
 * no sticky bit; the owner's write and anyone's execute bits stay */
TEST(extract_modes)
{
	const struct entry entries[] = {
		{"m-1/", DIR_, NULL, 0700},
		{"m-1/private", REG, "secret\n", 0600},
		{"m-1/shared/", DIR_, NULL, 01777},
		{"m-1/shared/run", REG, "#!/bin/sh\n", 0710},
		{"m-1/shared/open", REG, "anyone\n", 0666},
		{"m-1/readonly", REG, "ro\n", 0400},
		{"m-1/closed/", DIR_, NULL, 0500},
		{"m-1/closed/inside", REG, "in\n", 0640},
		{"m-1/implied/file", REG, "implied\n", 0644},
		{"m-1/later/", DIR_, NULL, 0700},
	};
	const struct {
		const char *path;
		unsigned mode;
	} want[] = {
		{"", 0755}, {"private", 0644}, {"shared", 0755}, {"shared/run", 0755},
		{"shared/open", 0644}, {"readonly", 0444}, {"closed", 0755}, {"closed/inside", 0644},
		{"implied", 0755}, {"implied/file", 0644}, {"later", 0755},
	};
	char *archive = make_archive("modes.tar", ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0, entries,
	                             sizeof(entries) / sizeof(entries[0]));
	char *dest = xasprintf("%s/modes", scratch);
	struct extract_options o = {.archive = archive, .dest = dest, .strip = 1};
	CHECK(extract_archive(&o) == 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		char *p = xasprintf("%s/%s", dest, want[i].path);
		struct stat st;
		bool right = lstat(p, &st) == 0 && (st.st_mode & 07777) == want[i].mode;
		if (!right)
			fprintf(stderr, "extract_modes: '%s' has mode %o, expected %o\n", want[i].path,
			        (unsigned)(st.st_mode & 07777), want[i].mode);
		CHECK(right);
		free(p);
	}
	free(dest);
	free(archive);
}

TEST(extract_hostile)
{
	struct {
		const char *name;
		struct entry e;
		const char *message;
	} cases[] = {
		{"dotdot", {"pkg/../../evil", REG, "x", 0}, "entry 'pkg/../../evil' has a '..' component"},
		{"absolute", {"/tmp/crossroot-evil", REG, "x", 0}, "has an absolute path"},
		{"symlink-abs", {"pkg/etc", SYMLINK, "/etc", 0}, "is a symbolic link to '/etc', outside"},
		{"symlink-up", {"pkg/up", SYMLINK, "../../..", 0}, "is a symbolic link to '../../..'"},
		{"hardlink-out", {"pkg/h", HARDLINK, "/etc/passwd", 0}, "is a hard link to '/etc/passwd'"},
		{"device", {"pkg/null", CHARDEV, NULL, 0}, "entry 'pkg/null' is a device node"},
		{"fifo", {"pkg/fifo", FIFO_, NULL, 0}, "entry 'pkg/fifo' is a FIFO"},
		{"setuid", {"pkg/su", REG, "x", 04755}, "entry 'pkg/su' has set-user-ID"},
	};
	const int formats[][2] = {{ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'z'},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'x'},
	                          {ARCHIVE_FORMAT_ZIP, 0}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int f = 0; f < 4; f++) {
			/* zip cannot hold devices, FIFOs or hard links */
			if (formats[f][0] == ARCHIVE_FORMAT_ZIP &&
			    (cases[c].e.kind == CHARDEV || cases[c].e.kind == FIFO_ ||
			     cases[c].e.kind == HARDLINK))
				continue;
			struct entry e[] = {{"pkg/ok", REG, "fine\n", 0}, cases[c].e};
			char name[64];
			snprintf(name, sizeof(name), "hostile-%s-%d", cases[c].name, f);
			char *archive = make_archive(name, formats[f][0], formats[f][1], e, 2);
			struct extract_call call = {{.archive = archive, .strip = 1}};
			char *dest = xasprintf("%s/out-%s-%d", scratch, cases[c].name, f);
			call.o.dest = dest;
			int rc;
			char *err = capture_stderr(call_extract, &call, &rc);
			CHECK(rc == EXTRACT_REFUSED);   /* the archive's fault: exit 3, not 1 */
			if (!strstr(err, cases[c].message)) {
				unit_failures++;
				fprintf(stderr, "hostile archive %s (format %d): expected '%s' in:\n%s\n",
				        cases[c].name, f, cases[c].message, err);
			}
			CHECK(!path_exists(dest));
			free(err);
			free(dest);
			free(archive);
		}
	}
	CHECK(!path_exists("/tmp/crossroot-evil"));
	char *evil = xasprintf("%s/../evil", scratch);
	CHECK(!path_exists(evil));
	free(evil);
	/* limits */
	const struct entry many[] = {{"p/a", REG, "1", 0}, {"p/b", REG, "2", 0}, {"p/c", REG, "3", 0}};
	char *archive = make_archive("many.tar", ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0, many, 3);
	char *dest = xasprintf("%s/many", scratch);
	struct extract_call call = {{.archive = archive, .dest = dest, .strip = 1, .max_entries = 2}};
	int rc;
	char *err = capture_stderr(call_extract, &call, &rc);
	CHECK(rc == EXTRACT_REFUSED && strstr(err, "more than 2 entries"));
	free(err);
	call.o.max_entries = 0;
	call.o.max_bytes = 2;
	err = capture_stderr(call_extract, &call, &rc);
	CHECK(rc == EXTRACT_REFUSED && strstr(err, "takes the extracted size over 2 bytes"));
	CHECK(!path_exists(dest));
	free(err);
	free(dest);
	free(archive);
	/* a damaged archive */
	char *junk = xasprintf("%s/junk.tar.gz", scratch);
	write_text(junk, "\x1f\x8b this is not gzip data at all");
	dest = xasprintf("%s/junk", scratch);
	call.o = (struct extract_options){.archive = junk, .dest = dest, .strip = 1};
	err = capture_stderr(call_extract, &call, &rc);
	CHECK(rc == EXTRACT_REFUSED && !path_exists(dest));
	free(err);
	free(junk);
	free(dest);
}

/* Links that lead outside only when resolved as the kernel would: through `.` and `//` in
 * entry names, through links extracted earlier (or later), through a hard link. Each archive
 * must be refused with its message, leaving nothing behind. */
TEST(extract_link_escapes)
{
	struct {
		const char *name;
		struct entry e[3];
		size_t n;
		bool tar_only;      /* zip holds no hard links */
		const char *message;
	} cases[] = {
		{"dot-slash", {{"pkg/./l", SYMLINK, "../escape", 0}}, 1, false,
		 "entry 'pkg/./l' is a symbolic link to '../escape', outside"},
		{"dot-slashes", {{"pkg/.///l", SYMLINK, "../../../etc", 0}}, 1, false,
		 "entry 'pkg/.///l' is a symbolic link to '../../../etc', outside"},
		{"double-slash", {{"pkg/d//l", SYMLINK, "../../escape", 0}}, 1, false,
		 "entry 'pkg/d//l' is a symbolic link to '../../escape', outside"},
		{"link-to-dot", {{"pkg/a", SYMLINK, ".", 0}, {"pkg/b", SYMLINK, "a/a/a/../../..", 0}}, 2,
		 false, "entry 'pkg/b' is a symbolic link to 'a/a/a/../../..', outside"},
		{"link-up", {{"pkg/sub/d", SYMLINK, "..", 0}, {"pkg/sub/l", SYMLINK, "d/../escape", 0}},
		 2, false, "entry 'pkg/sub/l' is a symbolic link to 'd/../escape', outside"},
		{"later-link", {{"pkg/d/b", SYMLINK, "c/../..", 0}, {"pkg/d/c", SYMLINK, "..", 0}}, 2,
		 false, "entry 'pkg/d/b' is a symbolic link to 'c/../..', outside"},
		{"write-through", {{"pkg/sub/", DIR_, NULL, 0}, {"pkg/d", SYMLINK, "sub", 0},
		                   {"pkg/d/f", REG, "x", 0}}, 3, false,
		 "entry 'pkg/d/f' would be written through the symbolic link 'pkg/d'"},
		{"dir-over-link", {{"pkg/sub/", DIR_, NULL, 0}, {"pkg/d", SYMLINK, "sub", 0},
		                   {"pkg/d/", DIR_, NULL, 0}}, 3, false,
		 "entry 'pkg/d/' would replace the symbolic link 'pkg/d'"},
		{"hardlink-through", {{"pkg/sub/f", REG, "x", 0}, {"pkg/d", SYMLINK, "sub", 0},
		                      {"pkg/h", HARDLINK, "pkg/d/f", 0}}, 3, true,
		 "entry 'pkg/h' is a hard link to 'pkg/d/f' through the symbolic link 'pkg/d'"},
		{"hardlink-to-link", {{"pkg/sub/deep/s", SYMLINK, "../x", 0},
		                      {"pkg/h", HARDLINK, "pkg/sub/deep/s", 0}}, 2, true,
		 "entry 'pkg/h' is a hard link to the symbolic link 'pkg/sub/deep/s' (to '../x'), "
		 "outside"},
	};
	const int formats[][2] = {{ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'x'},
	                          {ARCHIVE_FORMAT_ZIP, 0}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int f = 0; f < 3; f++) {
			if (formats[f][0] == ARCHIVE_FORMAT_ZIP && cases[c].tar_only)
				continue;
			struct entry e[4] = {{"pkg/ok", REG, "fine\n", 0}};
			memcpy(e + 1, cases[c].e, cases[c].n * sizeof(e[0]));
			char name[64];
			snprintf(name, sizeof(name), "escape-%s-%d", cases[c].name, f);
			char *archive = make_archive(name, formats[f][0], formats[f][1], e, cases[c].n + 1);
			char *dest = xasprintf("%s/out-%s-%d", scratch, cases[c].name, f);
			struct extract_call call = {{.archive = archive, .dest = dest, .strip = 1}};
			int rc;
			char *err = capture_stderr(call_extract, &call, &rc);
			CHECK(rc == EXTRACT_REFUSED);   /* the archive's fault: exit 3, not 1 */
			if (!strstr(err, cases[c].message)) {
				unit_failures++;
				fprintf(stderr, "escaping links %s (format %d): rc %d, expected '%s' in:\n%s\n",
				        cases[c].name, f, rc, cases[c].message, err);
			}
			CHECK(!path_exists(dest));
			char *tmp = xasprintf("%s.tmp.%ld", dest, (long)getpid());
			CHECK(!path_exists(tmp));
			free(tmp);
			free(err);
			free(dest);
			free(archive);
			if (rc == 0) {   /* the old code let it through: do not leave the links around */
				char *out = xasprintf("%s/out-%s-%d", scratch, cases[c].name, f);
				remove_tree(out);
				free(out);
			}
		}
	}
	/* what resolves inside is fine, however it is spelled */
	const struct entry inside[] = {
		{"pkg/sub/deep/f", REG, "x", 0},
		{"pkg/d", SYMLINK, "sub/deep", 0},
		{"pkg/sub/l", SYMLINK, "../d/../f2", 0},      /* lexically up, physically sub/f2 */
		{"pkg/.//sub//g", REG, "y", 0},
		{"pkg/sub/h", HARDLINK, "pkg/./sub//deep/f", 0},
		{"pkg/sub/deep/hl", HARDLINK, "pkg/d", 0},    /* a second link to sub/deep/sub/deep */
	};
	char *archive = make_archive("inside.tar", ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0, inside, 6);
	char *dest = xasprintf("%s/inside", scratch);
	struct extract_options o = {.archive = archive, .dest = dest, .strip = 1};
	CHECK(extract_archive(&o) == 0);
	char *p = xasprintf("%s/sub/g", dest);
	CHECK(file_has(p, "y"));
	free(p);
	p = xasprintf("%s/sub/h", dest);
	CHECK(file_has(p, "x"));
	free(p);
	char target[64] = "";
	p = xasprintf("%s/sub/deep/hl", dest);
	CHECK(readlink(p, target, sizeof(target) - 1) > 0 && strcmp(target, "sub/deep") == 0);
	free(p);
	free(dest);
	free(archive);
}

/* A .tar.xz of one file of `size` zero bytes: a few kilobytes that expand to anything. */
static char *make_bomb(const char *name, long long size)
{
	char *path = xasprintf("%s/%s", scratch, name);
	struct archive *a = archive_write_new();
	archive_write_set_format(a, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
	archive_write_add_filter_xz(a);
	archive_write_set_filter_option(a, "xz", "compression-level", "0");
	archive_write_open_filename(a, path);
	struct archive_entry *ae = archive_entry_new();
	archive_entry_set_pathname(ae, "pkg/zeros.bin");
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, 0644);
	archive_entry_set_size(ae, size);
	archive_write_header(a, ae);
	static char zeros[1 << 20];
	for (long long left = size; left > 0; left -= (long long)sizeof(zeros))
		archive_write_data(a, zeros, left < (long long)sizeof(zeros) ? (size_t)left : sizeof(zeros));
	archive_entry_free(ae);
	archive_write_close(a);
	archive_write_free(a);
	return path;
}

/* A tiny archive that expands to 100 MB is refused before it is decompressed, by default
 * (the bound follows the archive's own size) and with an explicit low limit. */
TEST(extract_bomb)
{
	char *bomb = make_bomb("bomb.tar.xz", 100LL << 20);
	struct stat st;
	CHECK(stat(bomb, &st) == 0 && st.st_size < 100000);
	char *dest = xasprintf("%s/bomb", scratch);
	struct extract_call call = {{.archive = bomb, .dest = dest, .strip = 1}};
	for (int explicit = 0; explicit < 2; explicit++) {
		call.o.max_bytes = explicit ? 1 << 20 : 0;
		double start = now_seconds();
		int rc;
		char *err = capture_stderr(call_extract, &call, &rc);
		double took = now_seconds() - start;
		CHECK(rc == EXTRACT_REFUSED);
		char *expected = xasprintf("entry 'pkg/zeros.bin' (104857600 bytes) takes the extracted "
		                           "size over %lld bytes", explicit ? 1LL << 20 :
		                           EXTRACT_MIN_BYTES);
		if (!strstr(err, expected) || !(took < 0.5)) {
			unit_failures++;
			fprintf(stderr, "bomb (%s limit): rc %d in %.2f s, expected '%s' in:\n%s\n",
			        explicit ? "explicit" : "default", rc, took, expected, err);
		}
		CHECK(!path_exists(dest));
		remove_tree(dest);
		free(expected);
		free(err);
	}
	free(dest);
	free(bomb);
}

/* A 2 MiB tmpfs at `dir`, for running out of space on purpose; false (with a skip message)
 * where mounting is not permitted. */
static bool mount_small_tmpfs(const char *dir, const char *test)
{
	mkdir_p(dir, 0755);
	if (mount("tmpfs", dir, "tmpfs", 0, "size=2m") == 0)
		return true;
	printf("unit: skipped %s: cannot mount a tmpfs (%s; needs root)\n", test, strerror(errno));
	return false;
}

/* A full disk is an error naming the file, not a tree of zero-filled files reported done,
 * and it leaves neither the destination nor the temporary directory. */
TEST(extract_no_space)
{
	char *full = xasprintf("%s/full", scratch);
	if (!mount_small_tmpfs(full, "the full-disk extraction test")) {
		free(full);
		return;
	}
	size_t size = 3 << 20;
	char *big = xmalloc(size + 1);
	memset(big, 'a', size);
	big[size] = '\0';
	const struct entry e[] = {{"pkg/small.txt", REG, "small\n", 0}, {"pkg/big.bin", REG, big, 0},
	                          {"pkg/after.txt", REG, "after\n", 0}};
	const int formats[][2] = {{ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'x'},
	                          {ARCHIVE_FORMAT_ZIP, 0}};
	for (int f = 0; f < 3; f++) {
		char name[32];
		snprintf(name, sizeof(name), "nospace-%d", f);
		char *archive = make_archive(name, formats[f][0], formats[f][1], e, 3);
		char *dest = xasprintf("%s/tree-%d", full, f);
		struct extract_call call = {{.archive = archive, .dest = dest, .strip = 1}};
		int rc;
		char *err = capture_stderr(call_extract, &call, &rc);
		char *expected = xasprintf("cannot write '%s/big.bin': No space left on device", dest);
		CHECK(rc == EXTRACT_FAILED);   /* the machine's fault, not the archive's */
		if (!strstr(err, expected)) {
			unit_failures++;
			fprintf(stderr, "full disk (format %d): rc %d, expected '%s' in:\n%s\n", f, rc,
			        expected, err);
		}
		CHECK(!path_exists(dest));
		struct strlist left = {0};
		list_dir(full, &left);
		CHECK(left.n == 0);   /* no temporary directory either */
		strlist_release(&left);
		remove_tree(dest);
		free(expected);
		free(err);
		free(dest);
		free(archive);
	}
	free(big);
	CHECK(umount(full) == 0);
	free(full);
}
