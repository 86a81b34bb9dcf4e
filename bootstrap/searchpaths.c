/* searchpaths: a cross compile and link that see nothing of the host. See searchpaths.h. */
#define _GNU_SOURCE
#include "searchpaths.h"

#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

/* "/a/./b//../c" -> "/a/c" */
static char *normalize(const char *path)
{
	struct strlist parts = {0};
	char *copy = xstrdup(path);
	for (char *save = NULL, *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			if (parts.n)
				free(parts.v[--parts.n]);
			continue;
		}
		strlist_add(&parts, c);
	}
	free(copy);
	struct buf b = {0};
	for (size_t i = 0; i < parts.n; i++)
		buf_printf(&b, "/%s", parts.v[i]);
	if (!b.len)
		buf_puts(&b, "/");
	strlist_release(&parts);
	return buf_detach(&b);
}

bool searchpaths_under(const char *path, const char *dir)
{
	char *p = normalize(path), *d = normalize(dir);
	size_t n = strlen(d);
	bool under = strcmp(d, "/") == 0 || (strncmp(p, d, n) == 0 && (p[n] == '\0' || p[n] == '/'));
	free(p);
	free(d);
	return under;
}

struct allowed {
	char *sysroot, *real_sysroot, *resource, *outdir;
};

static bool inside(const struct allowed *a, const char *path)
{
	return searchpaths_under(path, a->sysroot) ||
	       (a->real_sysroot && searchpaths_under(path, a->real_sysroot));
}

/* Runs the driver with -v; its stderr (where -v writes) into `text` */
static int run_verbose(const char *driver, const char *const *args, struct buf *text)
{
	struct strlist argv = {0};
	strlist_add(&argv, driver);
	strlist_add(&argv, "-v");
	for (size_t i = 0; args[i]; i++)
		strlist_add(&argv, args[i]);
	strlist_take(&argv, NULL);
	struct buf out = {0};
	int status = run_capture(argv.v, &out, text);
	if (out.s)
		buf_puts(text, out.s);
	buf_release(&out);
	strlist_release(&argv);
	return status;
}

/* The include directories of a -v compile: between "search starts here:" and "End of
 * search list." */
static void check_includes(const struct allowed *a, const char *text, struct buf *bad)
{
	bool in_list = false;
	char *copy = xstrdup(text);
	for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strstr(line, "search starts here:")) {
			in_list = true;
			continue;
		}
		if (strncmp(line, "End of search list.", 19) == 0) {
			in_list = false;
			continue;
		}
		if (!in_list || line[0] != ' ')
			continue;
		char *dir = line + 1;
		char *note = strstr(dir, " (framework directory)");
		if (note)
			*note = '\0';
		if (!inside(a, dir) && !(a->resource && searchpaths_under(dir, a->resource)))
			buf_printf(bad, "  include directory outside the sysroot: %s\n", dir);
	}
	free(copy);
}

/* The linker's line of a -v link: ' "/usr/lib/llvm-19/bin/ld.lld" "--sysroot=..." ...'. Its
 * -L directories and input files must be in the sysroot (or the test's own directory);
 * values of -o, -dynamic-linker and -rpath are target paths, not host ones. */
static void check_link(const struct allowed *a, const char *text, struct buf *bad)
{
	char *copy = xstrdup(text);
	bool seen = false;
	for (char *save = NULL, *line = strtok_r(copy, "\n", &save); line && !seen;
	     line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, " \"", 2) != 0)
			continue;
		struct strlist tokens = {0};
		for (char *p = line; (p = strchr(p, '"'));) {
			char *end = strchr(p + 1, '"');
			if (!end)
				break;
			strlist_take(&tokens, xstrndup(p + 1, (size_t)(end - p - 1)));
			p = end + 1;
		}
		const char *prog = tokens.n ? tokens.v[0] : "";
		const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
		if (strstr(base, "ld") == NULL || strstr(base, "clang")) {
			strlist_release(&tokens);
			continue;
		}
		seen = true;
		for (size_t i = 1; i < tokens.n; i++) {
			const char *tok = tokens.v[i];
			if ((strcmp(tok, "-o") == 0 || strcmp(tok, "-dynamic-linker") == 0 ||
			     strcmp(tok, "-rpath") == 0) && i + 1 < tokens.n) {
				i++;
				continue;
			}
			const char *path = strncmp(tok, "-L", 2) == 0 ? tok + 2
			                   : strncmp(tok, "--sysroot=", 10) == 0 ? tok + 10 : tok;
			if (path[0] != '/' || inside(a, path) || searchpaths_under(path, a->outdir))
				continue;
			buf_printf(bad, "  link %s outside the sysroot: %s\n",
			           path == tok ? "input" : "search directory", path);
		}
		strlist_release(&tokens);
	}
	free(copy);
	if (!seen)
		buf_puts(bad, "  no linker command in the driver's -v output\n");
}

int searchpaths_check(const char *driver, const char *src, const char *exe, bool is_static,
                      const char *sysroot, struct buf *report)
{
	char *exe_copy = xstrdup(exe);
	struct allowed a = {xstrdup(sysroot), realpath(sysroot, NULL), NULL,
	                    xstrdup(dirname(exe_copy))};
	char *object = xasprintf("%s.o", exe);
	struct buf compile = {0}, link = {0}, bad = {0};
	const char *compile_args[] = {"-c", src, "-o", object, NULL};
	const char *link_args[] = {object, "-o", exe, is_static ? "-static" : NULL, NULL};
	int status = run_verbose(driver, compile_args, &compile);
	if (status == 0)
		status = run_verbose(driver, link_args, &link);
	/* clang's builtin headers: <InstalledDir>/../lib/clang/<version>/include */
	const char *installed = compile.s ? strstr(compile.s, "InstalledDir: ") : NULL;
	if (installed) {
		installed += strlen("InstalledDir: ");
		char *dir = xstrndup(installed, strcspn(installed, "\n"));
		a.resource = xasprintf("%s/../lib/clang", dir);
		free(dir);
	}
	if (status != 0) {
		buf_printf(report, "%s -v failed:\n%s%s", driver, compile.s ? compile.s : "",
		           link.s ? link.s : "");
	} else {
		check_includes(&a, compile.s ? compile.s : "", &bad);
		check_link(&a, link.s ? link.s : "", &bad);
		if (bad.len)
			buf_printf(report, "%s%s%s", compile.s, link.s ? link.s : "", bad.s);
	}
	int rc = status == 0 && bad.len == 0 ? 0 : -1;
	buf_release(&compile);
	buf_release(&link);
	buf_release(&bad);
	free(object);
	free(a.sysroot);
	free(a.real_sysroot);
	free(a.resource);
	free(a.outdir);
	free(exe_copy);
	return rc;
}
