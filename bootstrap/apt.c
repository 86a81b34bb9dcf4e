/* apt: Debian source package files located through a private copy of the host's apt sources.
 * See apt.h. */
#define _GNU_SOURCE
#include "apt.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run.h"
#include "util.h"

/* One-line sources (sources.list, *.list): each "deb " line, as it is (`as` "deb ") or as
 * its "deb-src " twin; other lines are left out. */
static void deb_lines(const char *text, struct buf *out, const char *as)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		while (n && (*line == ' ' || *line == '\t'))
			line++, n--;
		if (n > 4 && strncmp(line, "deb ", 4) == 0) {
			buf_puts(out, as);
			buf_add(out, line + 4, n - 4);
			buf_puts(out, "\n");
		}
		line = end ? end + 1 : NULL;
	}
}

static void convert_list(const char *text, struct buf *out)
{
	deb_lines(text, out, "deb-src ");
}

/* deb822 sources (*.sources): stanzas with "Types: ... deb ..." become "Types: deb-src". */
static void convert_deb822(const char *text, struct buf *out)
{
	struct buf stanza = {0};
	bool has_deb = false, disabled = false;
	for (const char *line = text;; ) {
		const char *end = line ? strchr(line, '\n') : NULL;
		size_t n = line ? (end ? (size_t)(end - line) : strlen(line)) : 0;
		bool blank = !line || n == 0 || strspn(line, " \t") == n;
		if (blank) {
			if (has_deb && !disabled && stanza.len) {
				buf_puts(out, stanza.s);
				buf_puts(out, "\n");
			}
			buf_release(&stanza);
			has_deb = disabled = false;
			if (!line || !*line || !end)
				break;
		} else if (*line != '#') {
			if (strncasecmp(line, "Types:", 6) == 0) {
				char *types = xstrndup(line + 6, n - 6);
				for (char *t = strtok(types, " \t"); t; t = strtok(NULL, " \t"))
					if (strcmp(t, "deb") == 0)
						has_deb = true;
				free(types);
				buf_puts(&stanza, "Types: deb-src\n");
			} else {
				if (strncasecmp(line, "Enabled:", 8) == 0 && strstr(line, "no"))
					disabled = true;
				buf_add(&stanza, line, n);
				buf_puts(&stanza, "\n");
			}
		}
		line = end ? end + 1 : NULL;
	}
	buf_release(&stanza);
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static const char *apt_etc(void)
{
	const char *dir = getenv("CROSSROOT_APT_SOURCES");
	return dir && *dir ? dir : "/etc/apt";
}

/* Hand each of the host's sources files to `one_line` (sources.list, *.list) or `deb822`
 * (*.sources). */
static void read_sources(void (*one_line)(const char *, struct buf *),
                         void (*deb822)(const char *, struct buf *), struct buf *a, struct buf *b)
{
	char *list = path_join(apt_etc(), "sources.list");
	char *text = path_exists(list) ? read_file(list, NULL) : NULL;
	if (text)
		one_line(text, a);
	free(text);
	free(list);
	char *parts = path_join(apt_etc(), "sources.list.d");
	struct strlist names = {0};
	list_dir(parts, &names);
	strlist_sort(&names);
	for (size_t i = 0; i < names.n; i++) {
		char *path = path_join(parts, names.v[i]);
		if (has_suffix(names.v[i], ".list") || has_suffix(names.v[i], ".sources")) {
			text = read_file(path, NULL);
			if (text && has_suffix(names.v[i], ".list"))
				one_line(text, a);
			else if (text)
				deb822(text, b);
			free(text);
		}
		free(path);
	}
	strlist_release(&names);
	free(parts);
}

/* Binary packages: the host's "deb" lines and stanzas as they are (deb-src ones left out). */
static void copy_list(const char *text, struct buf *out)
{
	deb_lines(text, out, "deb ");
}

static void copy_deb822(const char *text, struct buf *out)
{
	struct buf converted = {0};
	convert_deb822(text, &converted);   /* the enabled stanzas with deb, as deb-src */
	char *back = str_replace_all(converted.s ? converted.s : "", "Types: deb-src\n",
	                             "Types: deb\n");
	buf_puts(out, back);
	free(back);
	buf_release(&converted);
}

/* Write DIR/sources/crossroot.list and .sources from the system's configuration: deb-src
 * twins of its deb entries, or (binary) the deb entries themselves. */
static int write_sources(const char *dir, bool binary)
{
	struct buf list = {0}, deb822 = {0};
	read_sources(binary ? copy_list : convert_list, binary ? copy_deb822 : convert_deb822, &list,
	             &deb822);
	int rc = -1;
	char *parts = path_join(dir, "sources");
	char *a = path_join(parts, "crossroot.list");
	char *b = path_join(parts, "crossroot.sources");
	if (list.len == 0 && deb822.len == 0) {
		error("the host's apt configuration (%s/sources.list*) lists no 'deb' source "
		      "to derive deb-src entries from", apt_etc());
	} else if (mkdir_p(parts, 0755) == 0 &&
	           write_file_atomic(a, list.s ? list.s : "", list.len, 0644) == 0 &&
	           write_file_atomic(b, deb822.s ? deb822.s : "", deb822.len, 0644) == 0) {
		rc = 0;
	}
	free(a);
	free(b);
	free(parts);
	buf_release(&list);
	buf_release(&deb822);
	return rc;
}

/* The foreign architecture a binary state directory knows, or NULL (source packages). */
static const char *state_arch;

static void apt_options(const char *dir, struct strlist *argv)
{
	if (state_arch) {
		strlist_take(argv, xasprintf("-oAPT::Architectures::=%s", state_arch));
	}
	strlist_take(argv, xasprintf("-oDir::Etc::SourceList=/dev/null"));
	strlist_take(argv, xasprintf("-oDir::Etc::SourceParts=%s/sources", dir));
	strlist_take(argv, xasprintf("-oDir::State::Lists=%s/lists", dir));
	strlist_take(argv, xasprintf("-oDir::Cache=%s/cache", dir));
	strlist_take(argv, xasprintf("-oDebug::NoLocking=1"));
	strlist_take(argv, xasprintf("-oAPT::Sandbox::User=root"));
	strlist_take(argv, xasprintf("-qq"));
}

static int apt_run(const char *dir, const char *const args[], struct buf *out, struct buf *err)
{
	struct strlist argv = {0};
	strlist_add(&argv, "apt-get");
	apt_options(dir, &argv);
	for (size_t i = 0; args[i]; i++)
		strlist_add(&argv, args[i]);
	strlist_take(&argv, NULL);
	int status = run_capture(argv.v, out, err);
	strlist_release(&argv);
	return status;
}

static int apt_update(const char *dir)
{
	if (state_arch)
		info("apt: reading the %s package indices (private copy of the host's sources)",
		     state_arch);
	else
		info("apt: reading source package indices (private deb-src copy of the host's sources)");
	char *lists = xasprintf("%s/lists/partial", dir);
	char *cache = xasprintf("%s/cache/archives/partial", dir);
	int rc = mkdir_p(lists, 0755) | mkdir_p(cache, 0755);
	free(lists);
	free(cache);
	if (rc < 0 || write_sources(dir, state_arch != NULL) < 0)
		return -1;
	struct buf out = {0}, err = {0};
	const char *args[] = {"update", NULL};
	int status = apt_run(dir, args, &out, &err);
	if (status != 0) {
		char how[96];
		error("apt-get update (private %s sources in '%s') %s:\n%s", state_arch ? "deb" : "deb-src", dir,
		      status < 0 ? "could not run" : run_describe(status, how), err.s ? err.s : "");
		rc = -1;
	}
	buf_release(&out);
	buf_release(&err);
	return rc;
}

/* Parse "'URL' NAME SIZE SHA256:HEX" lines; returns 0 when `file` was found. */
static int find_in_uris(const char *text, const char *file, char **url, char *sha256)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		char *l = end ? xstrndup(line, (size_t)(end - line)) : xstrdup(line);
		line = end ? end + 1 : NULL;
		char u[4096], name[1024], hash[200];
		long long size;
		if (sscanf(l, "'%4095[^']' %1023s %lld %199s", u, name, &size, hash) == 4 &&
		    strcmp(name, file) == 0 && strncmp(hash, "SHA256:", 7) == 0) {
			*url = xstrdup(u);
			snprintf(sha256, DIGEST_HEX_LEN + 1, "%.64s", hash + 7);
			free(l);
			return 0;
		}
		free(l);
	}
	return -1;
}

/* Both kinds: `arch` NULL asks `apt-get source` for `file` of a source package, else
 * `apt-get download` for the binary package of that architecture. */
static int locate(const char *state_dir, const char *package, const char *arch,
                  const char *version, const char *file, char **url,
                  char sha256[DIGEST_HEX_LEN + 1])
{
	state_arch = arch;
	if (mkdir_p(state_dir, 0755) < 0)
		return -1;
	/* apt runs without its own locks: ours keeps concurrent crossroot runs apart. */
	char *lock_path = path_join(state_dir, "lock");
	int lock = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	free(lock_path);
	if (lock < 0 || flock(lock, LOCK_EX) < 0) {
		error("cannot lock the apt state in '%s':", state_dir);
		if (lock >= 0)
			close(lock);
		return -1;
	}
	char *marker = path_join(state_dir, "lists/updated");
	bool fresh = false;
	int rc = -1;
	if (!path_exists(marker)) {
		if (apt_update(state_dir) < 0 || write_file_atomic(marker, "", 0, 0644) < 0)
			goto out;
		fresh = true;
	}
	char *spec = arch ? xasprintf("%s:%s=%s", package, arch, version)
	                  : xasprintf("%s=%s", package, version);
	for (;;) {
		struct buf out = {0}, err = {0};
		const char *source_args[] = {"source", "--print-uris", "--download-only", spec, NULL};
		const char *binary_args[] = {"download", "--print-uris", spec, NULL};
		const char *const *args = arch ? binary_args : source_args;
		int status = apt_run(state_dir, args, &out, &err);
		if (status == 0 && find_in_uris(out.s, file, url, sha256) == 0)
			rc = 0;
		else if (fresh) {
			if (status == 0)
				warn("Debian %s package %s has no file '%s'", arch ? "binary" : "source", spec,
				     file);
			else
				warn("apt cannot find Debian %s package %s: %s", arch ? "binary" : "source",
				     spec, err.s ? err.s : "no output");
		}
		buf_release(&out);
		buf_release(&err);
		if (rc == 0 || fresh)
			break;
		/* The indices may predate the version we want: refresh once and ask again. */
		if (apt_update(state_dir) < 0)
			break;
		fresh = true;
	}
	free(spec);
out:
	free(marker);
	close(lock);
	state_arch = NULL;
	return rc;
}

int apt_locate(const char *state_dir, const char *package, const char *version,
               const char *file, char **url, char sha256[DIGEST_HEX_LEN + 1])
{
	return locate(state_dir, package, NULL, version, file, url, sha256);
}

int apt_locate_deb(const char *state_dir, const char *package, const char *arch,
                   const char *version, const char *file, char **url,
                   char sha256[DIGEST_HEX_LEN + 1])
{
	char *dir = xasprintf("%s/binary-%s", state_dir, arch);
	int rc = locate(dir, package, arch, version, file, url, sha256);
	free(dir);
	return rc;
}

/* Each base URI, one per line: from one-line entries "deb [options] URI suite ...". */
static void list_bases(const char *text, struct buf *out)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		char *l = end ? xstrndup(line, (size_t)(end - line)) : xstrdup(line);
		line = end ? end + 1 : NULL;
		char *p = l + strspn(l, " \t");
		if (strncmp(p, "deb", 3) == 0 && (p[3] == ' ' || p[3] == '\t')) {
			p += 4 + strspn(p + 4, " \t");
			if (*p == '[') {   /* options: [arch=amd64 signed-by=...] */
				char *close = strchr(p, ']');
				p = close ? close + 1 + strspn(close + 1, " \t") : p + strlen(p);
			}
			size_t n = strcspn(p, " \t#");
			if (n) {
				buf_add(out, p, n);
				buf_puts(out, "\n");
			}
		}
		free(l);
	}
}

/* ... and from deb822 stanzas "Types: deb" with "URIs: A B" (not "Enabled: no"). */
static void deb822_bases(const char *text, struct buf *out)
{
	struct buf converted = {0};
	convert_deb822(text, &converted);   /* keeps the enabled stanzas that have deb */
	for (const char *line = converted.s; line && *line;) {
		const char *end = strchr(line, '\n');
		char *l = end ? xstrndup(line, (size_t)(end - line)) : xstrdup(line);
		line = end ? end + 1 : NULL;
		if (strncasecmp(l, "URIs:", 5) == 0)
			for (char *u = strtok(l + 5, " \t"); u; u = strtok(NULL, " \t")) {
				buf_puts(out, u);
				buf_puts(out, "\n");
			}
		free(l);
	}
	buf_release(&converted);
}

size_t apt_archive_bases(struct strlist *out)
{
	struct buf text = {0};
	read_sources(list_bases, deb822_bases, &text, &text);
	for (const char *line = text.s; line && *line;) {
		const char *end = strchr(line, '\n');
		char *u = end ? xstrndup(line, (size_t)(end - line)) : xstrdup(line);
		line = end ? end + 1 : NULL;
		size_t n = strlen(u);
		while (n && u[n - 1] == '/')
			u[--n] = '\0';
		bool usable = strncmp(u, "http://", 7) == 0 || strncmp(u, "https://", 8) == 0 ||
		              strncmp(u, "file://", 7) == 0;
		for (size_t i = 0; usable && i < out->n; i++)
			usable = strcmp(out->v[i], u) != 0;
		if (usable)
			strlist_take(out, u);
		else
			free(u);
	}
	buf_release(&text);
	return out->n;
}
