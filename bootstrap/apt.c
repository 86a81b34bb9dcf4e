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

/* One-line sources (sources.list, *.list): every "deb " line gets a "deb-src " twin. */
static void convert_list(const char *text, struct buf *out)
{
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t n = end ? (size_t)(end - line) : strlen(line);
		while (n && (*line == ' ' || *line == '\t'))
			line++, n--;
		if (n > 4 && strncmp(line, "deb ", 4) == 0) {
			buf_puts(out, "deb-src ");
			buf_add(out, line + 4, n - 4);
			buf_puts(out, "\n");
		}
		line = end ? end + 1 : NULL;
	}
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

/* Write DIR/sources/crossroot.list and .sources from the system's configuration. */
static int write_sources(const char *dir)
{
	struct buf list = {0}, deb822 = {0};
	char *text = path_exists("/etc/apt/sources.list") ? read_file("/etc/apt/sources.list", NULL) : NULL;
	if (text)
		convert_list(text, &list);
	free(text);
	struct strlist names = {0};
	list_dir("/etc/apt/sources.list.d", &names);
	for (size_t i = 0; i < names.n; i++) {
		char *path = path_join("/etc/apt/sources.list.d", names.v[i]);
		if (has_suffix(names.v[i], ".list") || has_suffix(names.v[i], ".sources")) {
			text = read_file(path, NULL);
			if (text && has_suffix(names.v[i], ".list"))
				convert_list(text, &list);
			else if (text)
				convert_deb822(text, &deb822);
			free(text);
		}
		free(path);
	}
	strlist_release(&names);
	int rc = -1;
	char *parts = path_join(dir, "sources");
	char *a = path_join(parts, "crossroot.list");
	char *b = path_join(parts, "crossroot.sources");
	if (list.len == 0 && deb822.len == 0) {
		error("the host's apt configuration (/etc/apt/sources.list*) lists no 'deb' source "
		      "to derive deb-src entries from");
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

static void apt_options(const char *dir, struct strlist *argv)
{
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
	info("apt: reading source package indices (private deb-src copy of the host's sources)");
	char *lists = xasprintf("%s/lists/partial", dir);
	char *cache = xasprintf("%s/cache/archives/partial", dir);
	int rc = mkdir_p(lists, 0755) | mkdir_p(cache, 0755);
	free(lists);
	free(cache);
	if (rc < 0 || write_sources(dir) < 0)
		return -1;
	struct buf out = {0}, err = {0};
	const char *args[] = {"update", NULL};
	int status = apt_run(dir, args, &out, &err);
	if (status != 0) {
		char how[96];
		error("apt-get update (private deb-src sources in '%s') %s:\n%s", dir,
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

int apt_locate(const char *state_dir, const char *package, const char *version,
               const char *file, char **url, char sha256[DIGEST_HEX_LEN + 1])
{
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
	char *spec = xasprintf("%s=%s", package, version);
	for (;;) {
		struct buf out = {0}, err = {0};
		const char *args[] = {"source", "--print-uris", "--download-only", spec, NULL};
		int status = apt_run(state_dir, args, &out, &err);
		if (status == 0 && find_in_uris(out.s, file, url, sha256) == 0)
			rc = 0;
		else if (fresh) {
			if (status == 0)
				error("Debian source package %s has no file '%s'", spec, file);
			else
				error("apt cannot find Debian source package %s: %s", spec,
				      err.s ? err.s : "no output");
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
	return rc;
}
