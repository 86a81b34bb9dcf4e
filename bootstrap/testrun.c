/* testrun: build and run tests/sysroot/ programs under qemu-user. See testrun.h. */
#define _GNU_SOURCE
#include "testrun.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "guest.h"
#include "recipes.h"
#include "run.h"
#include "sysroot.h"
#include "searchpaths.h"
#include "util.h"

/* Seconds a test program may run, under qemu-user (timeout(1)) or on the kernel (init) */
#define PROGRAM_TIMEOUT 120

struct test {
	char *name, *source;
	bool cxx;
	struct strlist links, flags, shared, requires;
	struct strlist systems;     /* "system: Windows": only on targets of these systems (CMake's
	                               names, as recipes_system gives them): a platform's own API */
	int exit_status;
	char *not_run;              /* "not-run: why": built and linked, never run (qemu-user
	                               cannot host it), and said so in its result line */
	struct strlist not_run_under;   /* "not-run-under: qemu-x86_64-static: why": the same,
	                                   under that qemu only (qemu, why, ...) */
	char *native;               /* "native: why": where the host's CPU runs the target's
	                               programs, it runs there, through the sysroot's loader,
	                               not under qemu (and despite not-run) */
};

static bool is_key_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
}

/* One header line's value, checked: NULL if it is right, else why not. */
static char *header_value(struct test *t, const char *key, char *value)
{
	static const char *const known = "link, flags, shared, requires, system, exit, not-run, "
	                                 "not-run-under, native";
	struct strlist *into = strcmp(key, "link") == 0 ? &t->links :
	                       strcmp(key, "flags") == 0 ? &t->flags :
	                       strcmp(key, "shared") == 0 ? &t->shared :
	                       strcmp(key, "requires") == 0 ? &t->requires :
	                       strcmp(key, "system") == 0 ? &t->systems : NULL;
	value += strspn(value, " \t");
	if (*value == '\0')
		return xasprintf("'%s:' has no value", key);
	if (into) {
		for (char *w = strtok(value, " \t"); w; w = strtok(NULL, " \t")) {
			if (into == &t->links && strcmp(w, "static") != 0 && strcmp(w, "dynamic") != 0)
				return xasprintf("link '%s': a link is static or dynamic", w);
			if (into == &t->systems && !recipes_is_system(w))
				return xasprintf("system '%s': a system is Linux, WASI, Windows or Generic "
				                 "(bare metal), as CMake names them", w);
			if (into == &t->requires && strcmp(w, "c++") != 0 && strncmp(w, "clang_rt.", 9) != 0 &&
			    strncmp(w, "lib", 3) != 0 && !recipes_is_capability(w))
				return xasprintf("requires '%s': a requirement is c++, a runtime (clang_rt.NAME), "
				                 "a library (libNAME) or what a platform may lack (%s)", w,
				                 recipes_capabilities);
			strlist_add(into, w);
		}
	} else if (strcmp(key, "exit") == 0) {
		char *end;
		long status = strtol(value, &end, 10);
		if (end == value || end[strspn(end, " \t")] != '\0' || status < 0 || status > 255)
			return xasprintf("exit '%s': an exit status is a number from 0 to 255", value);
		t->exit_status = (int)status;
	} else if (strcmp(key, "not-run") == 0) {
		if (!t->not_run)
			t->not_run = xstrdup(value);
	} else if (strcmp(key, "native") == 0) {
		if (!t->native)
			t->native = xstrdup(value);
	} else if (strcmp(key, "not-run-under") == 0) {
		size_t name = strcspn(value, " \t:");
		char *why = value + name + strspn(value + name, " \t");
		if (name == 0 || *why != ':' || why[1 + strspn(why + 1, " \t")] == '\0')
			return xasprintf("'not-run-under: %s': the form is not-run-under: <qemu>: <why>", value);
		strlist_take(&t->not_run_under, xstrndup(value, name));
		strlist_add(&t->not_run_under, why + 1 + strspn(why + 1, " \t"));
	} else {
		return xasprintf("unknown header '%s:' (the runner knows %s)", key, known);
	}
	return NULL;
}

/* The `// key: value` lines a program starts with. A line that looks like a header (a word and
 * a colon) must be a right one: a misspelt or malformed line would otherwise be ignored, and the
 * program built or run in a way its author did not mean. Returns NULL, or the first error as
 * "file:line: why". */
static char *parse_header(struct test *t, const char *text)
{
	char *error = NULL;
	int number = 1;
	for (const char *line = text; line && strncmp(line, "//", 2) == 0 && !error; number++) {
		const char *end = strchr(line, '\n');
		char *l = end ? xstrndup(line + 2, (size_t)(end - line - 2)) : xstrdup(line + 2);
		char *key = l + strspn(l, " \t"), *colon = key;
		while (is_key_char(*colon))
			colon++;
		if (colon > key && *colon == ':') {
			*colon = '\0';
			char *why = header_value(t, key, colon + 1);
			if (why)
				error = xasprintf("%s:%d: %s", t->source, number, why);
			free(why);
		}
		free(l);
		line = end ? end + 1 : NULL;
	}
	if (t->links.n == 0) {
		strlist_add(&t->links, "static");
		strlist_add(&t->links, "dynamic");
	}
	return error;
}

static void test_release(struct test *t)
{
	free(t->name);
	free(t->source);
	free(t->not_run);
	free(t->native);
	strlist_release(&t->not_run_under);
	strlist_release(&t->links);
	strlist_release(&t->flags);
	strlist_release(&t->shared);
	strlist_release(&t->requires);
	strlist_release(&t->systems);
}

/* Run argv, output into `log`; returns the wait status. */
static int run_logged(struct strlist *argv, struct buf *log)
{
	strlist_take(argv, NULL);
	struct buf err = {0};
	int status = run_capture(argv->v, log, &err);
	if (err.s)
		buf_puts(log, err.s);
	buf_release(&err);
	argv->n--;
	return status;
}

static int compile(const char *driver, const char *src, const char *out, const struct strlist *extra,
                   const struct strlist *flags, struct buf *log)
{
	struct strlist argv = {0};
	strlist_add(&argv, driver);
	strlist_add(&argv, src);
	strlist_add(&argv, "-o");
	strlist_add(&argv, out);
	strlist_add(&argv, "-O2");
	for (size_t i = 0; i < extra->n; i++)
		strlist_add(&argv, extra->v[i]);
	for (size_t i = 0; i < flags->n; i++)
		strlist_add(&argv, flags->v[i]);
	int status = run_logged(&argv, log);
	strlist_release(&argv);
	return status;
}

/* A dynamic program must ask for a loader the sysroot has: otherwise qemu -L would quietly
 * take the host's file of that name, or none. Returns -1 with the reason in `log`; else 0, and
 * the program's interpreter (NULL for none) in *interp_out. */
static int check_interpreter(const struct target *t, const char *exe, const char *sysroot,
                             struct buf *log, char **interp_out)
{
	struct strlist argv = {0};
	strlist_take(&argv, xasprintf("%s/bin/%s-readelf", sysroot, t->name));
	strlist_add(&argv, "--program-headers");
	strlist_add(&argv, exe);
	struct buf out = {0};
	int status = run_logged(&argv, &out);
	strlist_release(&argv);
	const char *at = out.s ? strstr(out.s, "[Requesting program interpreter: ") : NULL;
	int rc = 0;
	if (status != 0 || !out.s) {
		buf_printf(log, "readelf --program-headers %s failed\n%s", exe, out.s ? out.s : "");
		rc = -1;
	} else if (at) {
		at += strlen("[Requesting program interpreter: ");
		char *interp = xstrndup(at, strcspn(at, "]"));
		char *inside = xasprintf("%s%s", sysroot, interp);   /* interp is absolute */
		/* a link in the sysroot (musl's loader is one) must resolve inside it too */
		char *real = realpath(inside, NULL), *root = realpath(sysroot, NULL);
		size_t n = root ? strlen(root) : 0;
		if (!real || !root || strncmp(real, root, n) != 0 || real[n] != '/') {
			buf_printf(log, "%s asks for %s, which the sysroot does not have (%s%s%s)\n",
			           exe, interp, inside, real ? " leads to " : "", real ? real : "");
			rc = -1;
		}
		free(real);
		free(root);
		if (rc == 0)
			*interp_out = interp;
		else
			free(interp);
		free(inside);
	}
	buf_release(&out);
	return rc;
}

/* Can this host's CPU run the target's programs itself: the same architecture (uname's machine
 * is the target's Meson cpu_family: x86_64, aarch64) and byte order? */
static bool host_runs_target(const struct target *t)
{
	struct utsname u;
	const char *order = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "little" : "big";
	return uname(&u) == 0 && t->cpu_family && t->endian && strcmp(u.machine, t->cpu_family) == 0 &&
	       strcmp(t->endian, order) == 0;
}

/* What runs the target's programs, as `not-run-under:` and messages name it: the qemu
 * binary's name (qemu-user, or qemu-system for semihosting), or node (WASI) */
static const char *runner_name(const struct target *t)
{
	if (t->runner == RUNNER_WASI)
		return "node";
	if (t->runner == RUNNER_WINE)
		return "wine";
	if (t->runner == RUNNER_NONE)
		return "none";
	const char *slash = strrchr(t->qemu, '/');
	return slash ? slash + 1 : t->qemu;
}

/* The qemu-user binary that runs target t's programs: its emulator stage's, which the sysroot
 * ships in toolchain/ (as its run wrapper runs it), or the host's, by name (found in PATH) */
static char *qemu_user_path(const struct target *t, const char *sysroot)
{
	return t->emulator ? xasprintf("%s/toolchain/%s/%s", sysroot, t->emulator_user_dir, t->qemu)
	                   : xstrdup(t->qemu);
}

/* The table's runner cell of a qemu-user target: which qemu, in which version, ran it
 * ("qemu-user (qemu-aarch64-static 7.2.22 -cpu cortex-a53)", "... 10.0.13 of the stage qemu
 * -cpu ...") */
static char *qemu_user_runner(const struct target *t, const char *sysroot)
{
	char *path = qemu_user_path(t, sysroot);
	char *version = guest_qemu_version(path);
	char *cell = xasprintf("qemu-user (%s %s%s%s%s%s)", t->qemu, version,
	                       t->emulator ? " of the stage " : "", t->emulator ? t->emulator : "",
	                       t->qemu_cpu ? " -cpu " : "", t->qemu_cpu ? t->qemu_cpu : "");
	free(version);
	free(path);
	return cell;
}

/* The command that runs `exe`: under qemu-user with the sysroot as its -L prefix, or natively.
 * Natively a dynamic program runs through the sysroot's own loader (its PT_INTERP inside the
 * sysroot) with the sysroot's library directories first, as qemu -L gives them; glibc's loader
 * also leaves the host's /etc/ld.so.cache unread (--inhibit-cache). */
static void run_command(const struct target *t, const char *sysroot, const char *exe,
                        const char *interp, bool native, struct strlist *argv)
{
	char *real = realpath(sysroot, NULL);
	const char *root = real ? real : sysroot;
	strlist_add(argv, "timeout");
	strlist_take(argv, xasprintf("%d", PROGRAM_TIMEOUT));
	if (t->runner != RUNNER_QEMU_USER) {   /* the sysroot's own run wrapper, as a user runs it */
		strlist_take(argv, xasprintf("%s/bin/%s-run", root, t->name));
	} else if (native) {
		strlist_add(argv, "env");
		strlist_take(argv, xasprintf("CROSSROOT_SYSROOT=%s", root));
		if (interp) {
			strlist_take(argv, xasprintf("%s%s", root, interp));
			if (!t->libc || strcmp(t->libc, "musl") != 0)   /* glibc's loader has a cache */
				strlist_add(argv, "--inhibit-cache");
			strlist_add(argv, "--library-path");
			strlist_take(argv, xasprintf("%s/lib:%s/usr/lib", root, root));
		}
	} else {
		strlist_take(argv, qemu_user_path(t, sysroot));
		if (t->qemu_cpu) {
			strlist_add(argv, "-cpu");
			strlist_add(argv, t->qemu_cpu);
		}
		strlist_add(argv, "-L");
		strlist_add(argv, sysroot);
		strlist_add(argv, "-E");   /* for host_isolation.c */
		strlist_take(argv, xasprintf("CROSSROOT_SYSROOT=%s", root));
	}
	strlist_add(argv, exe);
	free(real);
}

/* The expected output of a test on target t: where a target, an architecture or a C library
 * knowingly differs, <name>.<target>.expected, <name>.<triple>.expected or
 * <name>.<libc>.expected (picolibc's printf, say); else <name>.expected. */
static char *expected_path_of(const struct target *t, const struct test *test)
{
	char *stem = xstrdup(test->source);
	*strrchr(stem, '.') = '\0';
	const char *specific[] = {t->name, t->triple, t->libc};
	char *path = NULL;
	for (size_t i = 0; i < sizeof(specific) / sizeof(specific[0]) && !path; i++) {
		if (!specific[i])
			continue;
		path = xasprintf("%s.%s.expected", stem, specific[i]);
		if (!path_exists(path)) {
			free(path);
			path = NULL;
		}
	}
	if (!path)
		path = xasprintf("%s.expected", stem);
	free(stem);
	return path;
}

/* The one verdict of a run, whichever runner ran it: its status and output (stdout, then
 * stderr) against the test's expectations, as a report line into `report`. `where` says who
 * ran it ("under qemu-aarch64-static", "natively", "on the kernel"); `mark` follows "ok" lines
 * (" (run natively)", " (kernel)"). Returns 1 pass, 0 fail. */
static int judge(const struct target *t, const struct test *test, const char *link, int status,
                 bool timed_out, long timeout, const char *out, const char *where,
                 const char *mark, struct buf *report)
{
	char *expected_path = expected_path_of(t, test);
	char *expected = path_exists(expected_path) ? read_file(expected_path, NULL) : xstrdup("");
	/* the Windows C runtime's text mode ends each line with CR LF */
	char *lf = out && t->runner == RUNNER_WINE ? str_replace_all(out, "\r\n", "\n") : NULL;
	if (lf)
		out = lf;
	int code = timed_out ? -1 : WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	int ok = 0;
	if (code != test->exit_status) {
		char how[96];
		if (timed_out)
			snprintf(how, sizeof(how), "timed out after %ld s", timeout);
		else
			run_describe(status, how);
		buf_printf(report, "FAIL %-28s %-8s %s %s (expected status %d); output:\n%s\n",
		           test->name, link, how, where, test->exit_status, out ? out : "");
	} else if (strcmp(expected ? expected : "", out ? out : "") != 0) {
		buf_printf(report, "FAIL %-28s %-8s output differs from %s\n--- expected\n%s--- got\n%s---\n",
		           test->name, link, expected_path, expected ? expected : "", out ? out : "");
	} else {
		buf_printf(report, "ok   %-28s %s%s\n", test->name, link, mark);
		ok = 1;
	}
	free(lf);
	free(expected);
	free(expected_path);
	return ok;
}

/* What build_one made: the program, and for a dynamic one the loader it asks for. */
struct built {
	char *exe;
	char *interp;
};

enum { BUILD_FAILED = -1, BUILD_NOT_RUN = 0, BUILD_RUNNABLE = 1 };

/* Build one test with one link mode. A failure, or a program that is built and linked but not
 * run (`not-run:` under qemu-user), is reported here; BUILD_RUNNABLE leaves the running to the
 * caller's runner. */
static int build_one(const struct dirs *dirs, const struct target *t, const char *sysroot,
                     const struct test *test, const char *link, const char *outdir,
                     bool on_kernel, struct built *b)
{
	struct buf log = {0};
	char *driver = xasprintf("%s/bin/%s-%s", sysroot, t->name, test->cxx ? "clang++" : "clang");
	/* Windows: programs are .exe files (lld's MinGW driver adds the suffix otherwise), shared
	 * libraries DLLs that a program finds beside itself, linked through an import library */
	bool windows = strcmp(recipes_system(t), "Windows") == 0;
	char *exe = xasprintf("%s/%s-%s%s", outdir, test->name, link, windows ? ".exe" : "");
	struct strlist extra = {0};
	bool is_static = strcmp(link, "static") == 0;
	if (is_static)
		strlist_add(&extra, "-static");
	int rc = BUILD_FAILED;
	char *interp = NULL;   /* a dynamic program's loader, as it asks for it */
	for (size_t i = 0; i < test->shared.n; i++) {
		char *src = xasprintf("%s/tests/sysroot/%s", dirs->root, test->shared.v[i]);
		char *base = xstrndup(test->shared.v[i], strcspn(test->shared.v[i], "."));
		char *lib = xasprintf("%s/lib%s.%s", outdir, base, windows ? "dll" : "so");
		struct strlist libflags = {0};
		strlist_add(&libflags, "-shared");
		strlist_add(&libflags, "-fPIC");
		if (windows)
			strlist_take(&libflags, xasprintf("-Wl,--out-implib,%s/lib%s.dll.a", outdir, base));
		int status = compile(driver, src, lib, &libflags, &test->flags, &log);
		strlist_release(&libflags);
		strlist_take(&extra, xasprintf("-L%s", outdir));
		strlist_take(&extra, xasprintf("-l%s", base));
		if (!windows)
			strlist_take(&extra, xasprintf("-Wl,-rpath,%s", outdir));
		free(src);
		free(base);
		free(lib);
		if (status != 0) {
			printf("FAIL %-28s %-8s shared library does not build:\n%s", test->name, link, log.s);
			goto out;
		}
	}
	int status = compile(driver, test->source, exe, &extra, &test->flags, &log);
	if (status != 0) {
		char how[96];
		printf("FAIL %-28s %-8s does not build (%s):\n%s", test->name, link,
		       run_describe(status, how), log.s ? log.s : "");
		goto out;
	}
	if (!is_static && strcmp(recipes_object_format(t), "elf") == 0 &&
	    check_interpreter(t, exe, sysroot, &log, &interp) < 0) {
		printf("FAIL %-28s %-8s wrong program interpreter:\n%s", test->name, link, log.s);
		goto out;
	}
	/* not-run and not-run-under name what qemu-user cannot host: on a kernel everything runs */
	const char *not_run = on_kernel ? NULL : test->not_run;
	if (t->runner == RUNNER_NONE && !on_kernel)
		not_run = "nothing on this machine runs the target's programs (runner: none)";
	for (size_t i = 0; i + 1 < test->not_run_under.n && !not_run && !on_kernel; i += 2)
		if (strcmp(test->not_run_under.v[i], runner_name(t)) == 0)
			not_run = test->not_run_under.v[i + 1];
	bool native = !on_kernel && test->native && host_runs_target(t);
	if (not_run && !native) {
		printf("ok   %-28s %-8s built and linked; not run: %s\n", test->name, link, not_run);
		rc = BUILD_NOT_RUN;
		goto out;
	}
	b->exe = exe;
	b->interp = interp;
	exe = interp = NULL;
	rc = BUILD_RUNNABLE;
out:
	fflush(stdout);
	free(interp);
	strlist_release(&extra);
	buf_release(&log);
	free(driver);
	free(exe);
	return rc;
}

/* The qemu-user runner (or native, where the test says so and the host's CPU is the target's):
 * one program now, in this process's child. Returns 1 pass, 0 fail. */
static int run_user(const struct target *t, const char *sysroot, const struct test *test,
                    const char *link, const struct built *b)
{
	bool native = test->native && host_runs_target(t);
	struct strlist argv = {0};
	run_command(t, sysroot, b->exe, b->interp, native, &argv);
	char *where = native ? xstrdup("natively") : xasprintf("under %s", runner_name(t));
	struct buf out = {0}, report = {0};
	int status = run_logged(&argv, &out);
	strlist_release(&argv);
	int ok = judge(t, test, link, status, false, 0, out.s, where,
	               native ? " (run natively)" : "", &report);
	fputs(report.s, stdout);
	fflush(stdout);
	buf_release(&report);
	buf_release(&out);
	free(where);
	return ok;
}

/* Build and run one test with one link mode under qemu-user; returns 1 pass, 0 fail. Under
 * --system a runnable program is only built: its report line is RUN_MARK and the link, which
 * the boot's verdict replaces. */
#define RUN_MARK "@run-on-kernel "
static int run_one(const struct dirs *dirs, const struct target *t, const char *sysroot,
                   const struct test *test, const char *link, const char *outdir, bool on_kernel)
{
	struct built b = {0};
	int built = build_one(dirs, t, sysroot, test, link, outdir, on_kernel, &b);
	int ok = built == BUILD_NOT_RUN;
	if (built == BUILD_RUNNABLE && on_kernel) {
		printf(RUN_MARK "%s\n", link);
		fflush(stdout);
		ok = 1;   /* for now: the boot decides */
	} else if (built == BUILD_RUNNABLE) {
		ok = run_user(t, sysroot, test, link, &b);
	}
	free(b.exe);
	free(b.interp);
	return ok;
}

/* One test in a child process: its report lines go to a file, its exit status counts its
 * failed links. Tests run `jobs` at a time; reports are printed in name order. */
struct job {
	struct test test;
	const struct dirs *dirs;
	const struct target *target;
	const char *sysroot, *outdir;
	char *report;               /* file the child writes its lines to */
	pid_t pid;
	int failed;                 /* failed links, once done; -1 while running */
	char *skip;                 /* why it is skipped, or NULL */
	char *bad_header;           /* "file:line: why" when its header is wrong: it fails unbuilt */
	bool on_kernel;             /* --system: build only; the boot runs what was built */
};

/* A static-only sysroot has no shared library: only static links are tried. */
static void static_links_only(struct test *t)
{
	struct strlist kept = {0};
	for (size_t i = 0; i < t->links.n && t->shared.n == 0; i++)
		if (strcmp(t->links.v[i], "dynamic") != 0)
			strlist_add(&kept, t->links.v[i]);
	strlist_release(&t->links);
	t->links = kept;
}

static int run_test_child(void *arg)
{
	struct job *j = arg;
	int failed = 0;
	/* what a program writes where it runs (default.profraw, say) stays in the scratch */
	if (chdir(j->outdir) < 0) {
		printf("cannot enter the test's scratch directory '%s': %s\n", j->outdir, strerror(errno));
		fflush(stdout);
		_exit(100);
	}
	for (size_t l = 0; l < j->test.links.n; l++)
		failed += !run_one(j->dirs, j->target, j->sysroot, &j->test, j->test.links.v[l],
		                   j->outdir, j->on_kernel);
	fflush(stdout);
	_exit(failed > 100 ? 100 : failed);
}

/* Under --system: every program the tests built (their RUN_MARK lines) runs in one boot, then
 * each mark in a report becomes the verdict, and a failed one counts in its job. Returns -1 when
 * the boot failed (every program it did not run fails, saying why). */
static int boot_and_judge(struct guest *g, const struct target *t, const char *sysroot,
                          const char *outdir, struct job *js, size_t n)
{
	struct guest_program *programs = NULL;
	size_t np = 0;
	char *real = realpath(sysroot, NULL);
	for (size_t i = 0; i < n; i++) {
		if (js[i].skip || js[i].bad_header || js[i].pid <= 0 || js[i].failed < 0)
			continue;
		char *text = path_exists(js[i].report) ? read_file(js[i].report, NULL) : NULL;
		for (char *line = text; line && *line;) {
			char *end = strchr(line, '\n');
			if (end)
				*end = '\0';
			if (strncmp(line, RUN_MARK, strlen(RUN_MARK)) == 0) {
				programs = xrealloc(programs, (np + 1) * sizeof(*programs));
				struct guest_program *p = &programs[np++];
				memset(p, 0, sizeof(*p));
				strlist_take(&p->argv, xasprintf("%s/%s-%s", outdir, js[i].test.name,
				                                 line + strlen(RUN_MARK)));
				strlist_take(&p->env, xasprintf("CROSSROOT_SYSROOT=%s", real ? real : sysroot));
				strlist_add(&p->env, "PATH=/usr/bin:/bin");
				strlist_add(&p->env, "HOME=/tmp");
				p->cwd = xstrdup(outdir);
				p->timeout = PROGRAM_TIMEOUT;
			}
			line = end ? end + 1 : NULL;
		}
		free(text);
	}
	free(real);
	if (np == 0)
		return 0;
	struct guest_result *results = xcalloc(np, sizeof(*results));
	struct strlist include = {0};
	strlist_add(&include, outdir);
	info("booting %s for %zu programs: %s", t->name, np, guest_describe(g));
	double start = now_seconds();
	int rc = guest_run(g, programs, np, &include, results, NULL, NULL);
	char took[32];
	info("the boot of %s ran %zu programs in %s", t->name, np,
	     format_duration(now_seconds() - start, took));
	size_t k = 0;
	for (size_t i = 0; i < n && k < np; i++) {
		if (js[i].skip || js[i].bad_header || js[i].pid <= 0 || js[i].failed < 0)
			continue;
		char *text = path_exists(js[i].report) ? read_file(js[i].report, NULL) : NULL;
		struct buf report = {0};
		bool marked = false;
		for (char *line = text; line && *line;) {
			char *end = strchr(line, '\n');
			if (end)
				*end = '\0';
			if (strncmp(line, RUN_MARK, strlen(RUN_MARK)) == 0 && k < np) {
				const char *link = line + strlen(RUN_MARK);
				struct guest_result *r = &results[k++];
				marked = true;
				if (r->ran) {
					struct buf out = {0};
					buf_puts(&out, r->out.s ? r->out.s : "");
					buf_puts(&out, r->err.s ? r->err.s : "");
					if (!judge(t, &js[i].test, link, r->status, r->timed_out, PROGRAM_TIMEOUT,
					           out.s, "on the kernel", " (kernel)", &report))
						js[i].failed++;
					buf_release(&out);
				} else {
					buf_printf(&report, "FAIL %-28s %-8s not run on the kernel: %s\n",
					           js[i].test.name, link, r->error ? r->error : "no result");
					js[i].failed++;
				}
			} else {
				buf_printf(&report, "%s\n", line);
			}
			line = end ? end + 1 : NULL;
		}
		if (marked && write_file_atomic(js[i].report, report.s ? report.s : "", report.len,
		                                0644) < 0)
			rc = -1;
		buf_release(&report);
		free(text);
	}
	for (size_t i = 0; i < np; i++) {
		guest_program_release(&programs[i]);
		guest_result_release(&results[i]);
	}
	free(programs);
	free(results);
	strlist_release(&include);
	return rc;
}

/* The runtime pieces a sysroot holds, by the files that make them; the C library by the
 * target's name for it (musl, glibc, wasi-libc, mingw-w64), where its libc.a or libc.so (or
 * UCRT's import library, libucrt.a) is there. */
static char *sysroot_pieces(const char *sysroot, const struct target *t)
{
	/* mingw-w64's C library is libmingwex over the Universal C Runtime's import library */
	static const char *const pieces[][2] = {
		{"headers", "usr/include/linux/version.h"}, {"builtins", NULL},
		{"libgcc", "usr/lib/gcc/*/*/libgcc.a"}, {"libatomic", "usr/lib/libatomic.a"},
		{"libc", "usr/lib/libc.[as]*"}, {"libc", "usr/lib/libucrt.a"},
		{"libunwind", "usr/lib/libunwind.a"}, {"libc++abi", "usr/lib/libc++abi.a"},
		{"libc++", "usr/lib/libc++.a"}, {"libstdc++", "usr/lib/libstdc++.a"},
	};
	struct buf b = {0};
	for (size_t i = 0; i < sizeof(pieces) / sizeof(pieces[0]); i++) {
		char *path = pieces[i][1] ? path_join(sysroot, pieces[i][1])
		                          : xasprintf("%s/usr/lib/clang/*/lib/%s/libclang_rt.builtins.a",
		                                      sysroot, t->triple);
		const char *name = strcmp(pieces[i][0], "libc") == 0 && t->libc ? t->libc : pieces[i][0];
		glob_t g;
		if (glob(path, GLOB_NOSORT, NULL, &g) == 0)
			buf_printf(&b, "%s%s", b.len ? " " : "", name);
		globfree(&g);
		free(path);
	}
	return b.s ? b.s : xstrdup("");
}

/* A cell of a program built and linked but not run: this, then why */
#define NOT_RUN_SHORT "built and linked, not run"
#define NOT_RUN_CELL NOT_RUN_SHORT ": "
/* The Markdown table says why once per reason, in numbered notes below this line */
#define NOT_RUN_NOTES "Why programs were built and linked but not run:"

/* One program's cell from its report lines: "ok", or each failed link and its reason. Only
 * the runner's own lines count ("FAIL <name> ..."), not a program's output quoted below them. */
static char *result_cell(const char *name, const char *report, int failed)
{
	const char *not_run = report ? strstr(report, "; not run: ") : NULL;
	if (failed == 0 && not_run) {   /* and why: the table says it once, in a note */
		not_run += strlen("; not run: ");
		return xasprintf("%s%.*s", NOT_RUN_CELL, (int)strcspn(not_run, "\n"), not_run);
	}
	if (failed == 0)
		return xstrdup(report && strstr(report, " (run natively)") ? "ok (run natively)"
		               : report && strstr(report, " (kernel)\n")     ? "ok (kernel)"
		                                                             : "ok");
	struct buf b = {0};
	for (const char *line = report; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		size_t n = strlen(name);
		if (strncmp(line, "FAIL ", 5) == 0 && strncmp(line + 5, name, n) == 0 &&
		    line[5 + n] == ' ') {
			/* "FAIL <name> <link> <why>": keep link and why */
			char *l = xstrndup(line + 5, len - 5);
			char *p = l + strspn(l, " ");
			p += strcspn(p, " ");
			p += strspn(p, " ");
			size_t link = strcspn(p, " ");
			char *why = p + link + strspn(p + link, " ");
			size_t why_len = strcspn(why, ":");
			const char *file = memrchr(why, '/', why_len);   /* the expected file's name */
			if (strncmp(why, "output differs from /", 21) == 0 && file)
				buf_printf(&b, "%sFAIL %.*s: output differs from %.*s", b.len ? "; " : "",
				           (int)link, p, (int)(why + why_len - file - 1), file + 1);
			else
				buf_printf(&b, "%sFAIL %.*s: %.*s", b.len ? "; " : "", (int)link, p,
				           (int)why_len, why);
			free(l);
		}
		line = end ? end + 1 : NULL;
	}
	if (!b.s)
		buf_printf(&b, "FAIL (%d links)", failed);
	return b.s;
}

static void table_add(struct test_table *table, const char *target, const char *program,
                      char *cell)
{
	strlist_add(&table->cells, target);
	strlist_add(&table->cells, program);
	strlist_take(&table->cells, cell);
	if (!strlist_has(&table->programs, program)) {
		strlist_add(&table->programs, program);
		strlist_sort(&table->programs);
	}
}

/* "requires: clang_rt.ubsan_minimal": the sysroot's resource directory has that runtime */
static bool has_runtime(const char *sysroot, const struct target *t, const char *name)
{
	char *pattern = xasprintf("%s/usr/lib/clang/*/lib/%s/lib%s.a", sysroot, t->triple, name);
	glob_t g = {0};
	bool found = glob(pattern, 0, NULL, &g) == 0 && g.gl_pathc > 0;
	globfree(&g);
	free(pattern);
	return found;
}

/* "requires: libomp": the sysroot has usr/lib/libomp.a or libomp.so */
static bool has_library(const char *sysroot, const char *name)
{
	char *a = xasprintf("%s/usr/lib/%s.a", sysroot, name);
	char *so = xasprintf("%s/usr/lib/%s.so", sysroot, name);
	bool found = path_exists(a) || path_exists(so);
	free(a);
	free(so);
	return found;
}

/* Before any program: a compile and link of the target see nothing of the host */
static int check_search_paths(const struct target *t, const char *sysroot, const char *outdir,
                              bool cxx)
{
	char *src = xasprintf("%s/search_paths.%s", outdir, cxx ? "cpp" : "c");
	char *exe = xasprintf("%s/search_paths", outdir);
	char *driver = xasprintf("%s/bin/%s-%s", sysroot, t->name, cxx ? "clang++" : "clang");
	const char *text = cxx ? "#include <cmath>\n#include <iostream>\n"
	                         "int main() { std::cout << std::sqrt(2.0) << std::endl; }\n"
	                       : "#include <math.h>\n#include <stdio.h>\n"
	                         "int main(void) { printf(\"%f\\n\", sqrt(2.0)); return 0; }\n";
	struct buf report = {0};
	int rc = write_file_atomic(src, text, strlen(text), 0644);
	if (rc == 0)
		rc = searchpaths_check(driver, src, exe, t->static_only, sysroot, &report);
	if (rc == 0)
		printf("ok   %-28s %s\n", "search_paths", "no host directory in compile or link");
	else
		printf("FAIL %-28s a host directory in compile or link:\n%s", "search_paths",
		       report.s ? report.s : "");
	fflush(stdout);
	buf_release(&report);
	free(driver);
	free(exe);
	free(src);
	return rc;
}

int testrun_target(const struct dirs *dirs, const struct target *t,
                   const struct testrun_options *options, struct test_table *table)
{
	int jobs = options->jobs;
	struct guest *system = options->system;
	char *sysroot = path_join(dirs->out, t->name);
	char *stamp = path_join(sysroot, SYSROOT_STAMP);
	char *dir = path_join(dirs->root, "tests/sysroot");
	char *outdir = xasprintf("%s/test/%s", dirs->work, t->name);
	int passed = 0, failed = 0, skipped = 0;
	bool boot_failed = false;
	int rc = EXIT_FAILED;
	struct job *js = NULL;
	size_t n = 0;
	if (table) {
		strlist_add(&table->targets, t->name);
		strlist_add(&table->pieces, t->name);
		strlist_add(&table->runners, t->name);
		strlist_take(&table->runners, system ? xstrdup(guest_describe(system))
		                              : t->runner == RUNNER_WASI ? xstrdup("Node.js (WASI preview 1)")
		                              : t->runner == RUNNER_WINE ? xstrdup("wine")
		                              : t->runner == RUNNER_NONE ?
		                                xstrdup("none: built and linked only")
		                              : t->runner == RUNNER_SEMIHOSTING ?
		                                xasprintf("%s -M %s%s%s (semihosting)", t->qemu,
		                                          t->qemu_machine, t->qemu_cpu ? " -cpu " : "",
		                                          t->qemu_cpu ? t->qemu_cpu : "")
		                              : qemu_user_runner(t, sysroot));
	}
	if (!path_exists(stamp)) {
		error("no sysroot for '%s' at '%s': run 'crossroot build %s' first", t->name, sysroot,
		      t->name);
		if (table)
			strlist_add(&table->pieces, "no sysroot (not built, or its build failed)");
		goto out;
	}
	if (table)
		strlist_take(&table->pieces, sysroot_pieces(sysroot, t));
	remove_tree(outdir);
	if (mkdir_p(outdir, 0755) < 0)
		goto out;
	char *libcxx = path_join(sysroot, "usr/lib/libc++.a");
	char *libstdcxx = path_join(sysroot, "usr/lib/libstdc++.a");
	bool has_cxx = path_exists(libcxx) || path_exists(libstdcxx);
	free(libcxx);
	free(libstdcxx);
	struct strlist names = {0};
	list_dir(dir, &names);
	if (system)
		info("testing %s: programs of %s built %d at a time, then run in one boot: %s", t->name,
		     dir, jobs, guest_describe(system));
	else
		info("testing %s: programs of %s under %s, %d at a time", t->name, dir, runner_name(t),
		     jobs);
	if (check_search_paths(t, sysroot, outdir, has_cxx) == 0)
		passed++;
	else
		failed++;
	js = xcalloc(names.n, sizeof(*js));
	for (size_t i = 0; i < names.n; i++) {
		const char *name = names.v[i];
		size_t len = strlen(name);
		bool c = len > 2 && strcmp(name + len - 2, ".c") == 0;
		bool cpp = len > 4 && strcmp(name + len - 4, ".cpp") == 0;
		if ((!c && !cpp) || strstr(name, "_lib."))
			continue;
		struct job *j = &js[n++];
		j->test.name = xstrndup(name, len - (c ? 2 : 4));
		j->test.source = path_join(dir, name);
		j->test.cxx = cpp;
		j->dirs = dirs;
		j->target = t;
		j->sysroot = sysroot;
		j->outdir = outdir;
		j->failed = -1;
		j->on_kernel = system != NULL;
		j->report = xasprintf("%s/%s.report", outdir, j->test.name);
		char *text = read_file(j->test.source, NULL);
		j->bad_header = text ? parse_header(&j->test, text) : NULL;
		free(text);
		if (j->bad_header)
			continue;
		if ((strlist_has(&j->test.requires, "c++") || cpp) && !has_cxx)
			j->skip = xstrdup("the sysroot has no C++ runtime");
		for (size_t r = 0; r < j->test.requires.n && !j->skip; r++) {
			const char *need = j->test.requires.v[r];
			if (strncmp(need, "clang_rt.", 9) == 0 && !has_runtime(sysroot, t, need))
				j->skip = xasprintf("the sysroot has no %s (sanitizers stage)", need);
			else if (strncmp(need, "lib", 3) == 0 && !has_library(sysroot, need))
				j->skip = xasprintf("the sysroot has no %s", need);
			else if (strlist_has(&t->lacks, need))
				j->skip = xasprintf("%s has no %s", t->name, need);
		}
		if (!j->skip && j->test.systems.n && !strlist_has(&j->test.systems, recipes_system(t))) {
			struct buf systems = {0};
			for (size_t k = 0; k < j->test.systems.n; k++)
				buf_printf(&systems, "%s%s", k ? " and " : "", j->test.systems.v[k]);
			j->skip = xasprintf("a program for %s only", systems.s);
			buf_release(&systems);
		}
		if (t->static_only) {
			static_links_only(&j->test);
			if (j->test.links.n == 0)
				j->skip = xstrdup("static-only sysroot: no shared libraries");
		}
	}
	strlist_release(&names);
	size_t next = 0, printed = 0, running = 0;
	bool booted = system == NULL;   /* under --system nothing is printed before the boot */
	while (printed < n) {
		/* start what the budget allows */
		while (next < n && running < (size_t)jobs && !interrupted) {
			struct job *j = &js[next++];
			if (j->skip || j->bad_header)
				continue;
			int fd = open(j->report, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			j->pid = fd < 0 ? -1 : run_function(run_test_child, j, fd);
			if (fd >= 0)
				close(fd);
			if (j->pid < 0) {
				j->failed = (int)j->test.links.n;
				continue;
			}
			running++;
		}
		/* print finished reports in name order */
		while (booted && printed < n &&
		       (js[printed].skip || js[printed].bad_header || js[printed].failed >= 0 ||
		        (interrupted && js[printed].pid == 0))) {
			struct job *j = &js[printed++];
			if (j->skip) {
				printf("skip %-28s (%s)\n", j->test.name, j->skip);
				skipped++;
				if (table)
					table_add(table, t->name, j->test.name, xasprintf("skip: %s", j->skip));
				continue;
			}
			if (j->bad_header) {
				printf("FAIL %-28s wrong header: %s\n", j->test.name, j->bad_header);
				failed++;
				if (table)
					table_add(table, t->name, j->test.name,
					          xasprintf("FAIL: wrong header: %s", j->bad_header));
				continue;
			}
			if (j->pid == 0)
				continue;   /* never started: interrupted */
			char *text = path_exists(j->report) ? read_file(j->report, NULL) : NULL;
			fputs(text ? text : "", stdout);
			if (table)
				table_add(table, t->name, j->test.name, result_cell(j->test.name, text, j->failed));
			free(text);
			failed += j->failed;
			passed += (int)j->test.links.n - j->failed;
		}
		fflush(stdout);
		if (running == 0 && !booted && !interrupted) {
			booted = true;
			if (boot_and_judge(system, t, sysroot, outdir, js, n) < 0)
				boot_failed = true;
			continue;
		}
		if (running == 0)
			break;
		int status;
		pid_t pid = waitpid(-1, &status, 0);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (size_t i = 0; i < n; i++)
			if (js[i].pid == pid && js[i].failed < 0) {
				js[i].failed = WIFEXITED(status) ? WEXITSTATUS(status) : (int)js[i].test.links.n;
				running--;
			}
	}
	if (skipped)
		info("%d passed, %d failed, %d skipped", passed, failed, skipped);
	else
		info("%d passed, %d failed", passed, failed);
	rc = failed || passed == 0 || interrupted || boot_failed ? EXIT_FAILED : EXIT_OK;
out:
	for (size_t i = 0; i < n; i++) {
		test_release(&js[i].test);
		free(js[i].report);
		free(js[i].skip);
		free(js[i].bad_header);
	}
	free(js);
	free(sysroot);
	free(stamp);
	free(dir);
	free(outdir);
	return rc;
}

static const char *table_cell(const struct test_table *table, const char *target,
                              const char *program)
{
	for (size_t i = 0; i + 2 < table->cells.n; i += 3)
		if (strcmp(table->cells.v[i], target) == 0 && strcmp(table->cells.v[i + 1], program) == 0)
			return table->cells.v[i + 2];
	return "-";
}

/* Markdown cells may not hold '|' or line breaks. */
static void md_cell(FILE *f, const char *text)
{
	fputs("| ", f);
	for (const char *c = text; *c; c++) {
		if (*c == '|')
			fputc('\\', f);
		fputc(*c == '\n' ? ' ' : *c, f);
	}
	fputc(' ', f);
}

/* The cells of one Markdown table row ("| a | b \\| c |"), unescaped and trimmed; NULL for a
 * line that is not a row. */
static struct strlist *md_row(const char *line, struct strlist *cells)
{
	if (line[0] != '|')
		return NULL;
	struct buf cell = {0};
	for (const char *c = line + 1; *c && *c != '\n'; c++) {
		if (*c == '\\' && c[1] == '|') {
			buf_add(&cell, "|", 1);
			c++;
		} else if (*c == '|') {
			size_t b = 0, e = cell.len;
			while (b < e && cell.s[b] == ' ')
				b++;
			while (e > b && cell.s[e - 1] == ' ')
				e--;
			strlist_take(cells, xstrndup(cell.s ? cell.s + b : "", e - b));
			cell.len = 0;
		} else {
			buf_add(&cell, c, 1);
		}
	}
	buf_release(&cell);
	return cells;
}

/* The targets of an earlier table at `path` (crossroot's own Markdown) that `table` did not
 * test, added to `merged` after this run's: the file stays the table of the last run that
 * tested each target, so testing a few targets does not drop the others. Rows are kept in the
 * file's order, this run's replacing its own; a file that is absent or not a table adds
 * nothing. */
static void table_merge(const struct test_table *table, const char *path,
                        struct test_table *merged)
{
	char *text = path_exists(path) ? read_file(path, NULL) : NULL;
	struct strlist order = {0}, columns = {0}, notes = {0};
	/* the notes below the table: "N. why", N counting from 1 */
	const char *heading = text ? strstr(text, "\n" NOT_RUN_NOTES "\n") : NULL;
	for (const char *line = heading ? heading + 1 : NULL; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char *dot = NULL;
		long number = *line >= '1' && *line <= '9' ? strtol(line, &dot, 10) : 0;
		if (number && dot < line + len && dot[0] == '.' && dot[1] == ' ' &&
		    number == (long)notes.n + 1)
			strlist_take(&notes, xstrndup(dot + 2, len - (size_t)(dot + 2 - line)));
		line = end ? end + 1 : NULL;
	}
	/* the earlier file's rows, then this run's targets not in it */
	enum { NONE, TARGETS, PROGRAMS } part = NONE;
	for (const char *line = text; line && *line;) {
		const char *end = strchr(line, '\n');
		struct strlist cells = {0};
		if (!md_row(line, &cells) || cells.n == 0) {
			part = NONE;
		} else if (strcmp(cells.v[0], "target") == 0 && cells.n >= 2) {
			part = TARGETS;
		} else if (strcmp(cells.v[0], "program") == 0) {
			part = PROGRAMS;
			strlist_release(&columns);
			for (size_t i = 1; i < cells.n; i++)
				strlist_add(&columns, cells.v[i]);
		} else if (strncmp(cells.v[0], "---", 3) == 0) {
			/* the header's rule */
		} else if (part == TARGETS && !strlist_has(&order, cells.v[0])) {
			strlist_add(&order, cells.v[0]);
			if (!strlist_has(&table->targets, cells.v[0])) {
				strlist_add(&merged->pieces, cells.v[0]);
				strlist_add(&merged->pieces, cells.n > 1 ? cells.v[1] : "?");
				strlist_add(&merged->runners, cells.v[0]);
				strlist_add(&merged->runners, cells.n > 2 ? cells.v[2]
				                                          : "qemu-user (not recorded)");
			}
		} else if (part == PROGRAMS) {
			for (size_t i = 1; i < cells.n && i - 1 < columns.n; i++) {
				if (!strlist_has(&order, columns.v[i - 1]) ||
				    strlist_has(&table->targets, columns.v[i - 1]))
					continue;
				long note = 0;
				if (sscanf(cells.v[i], NOT_RUN_SHORT " (note %ld)", &note) == 1 && note >= 1 &&
				    (size_t)note <= notes.n)
					table_add(merged, columns.v[i - 1], cells.v[0],
					          xasprintf("%s%s", NOT_RUN_CELL, notes.v[note - 1]));
				else
					table_add(merged, columns.v[i - 1], cells.v[0], xstrdup(cells.v[i]));
			}
		}
		strlist_release(&cells);
		line = end ? end + 1 : NULL;
	}
	for (size_t i = 0; i < table->targets.n; i++)
		if (!strlist_has(&order, table->targets.v[i]))
			strlist_add(&order, table->targets.v[i]);
	for (size_t i = 0; i < order.n; i++)
		strlist_add(&merged->targets, order.v[i]);
	for (size_t i = 0; i < table->cells.n; i += 3)
		table_add(merged, table->cells.v[i], table->cells.v[i + 1], xstrdup(table->cells.v[i + 2]));
	for (size_t i = 0; i < table->pieces.n; i++)
		strlist_add(&merged->pieces, table->pieces.v[i]);
	for (size_t i = 0; i < table->runners.n; i++)
		strlist_add(&merged->runners, table->runners.v[i]);
	strlist_release(&order);
	strlist_release(&columns);
	strlist_release(&notes);
	free(text);
}

/* target's value in a (target, value, ...) list */
static const char *table_value(const struct strlist *list, const char *target)
{
	for (size_t i = 0; i + 1 < list->n; i += 2)
		if (strcmp(list->v[i], target) == 0)
			return list->v[i + 1];
	return "?";
}

int testrun_print_table(const struct test_table *table, const char *markdown)
{
	if (table->targets.n == 0)
		return 0;
	/* terminal: one line per target and program, failures spelled out */
	printf("\n== support table: %zu targets, %zu programs\n", table->targets.n,
	       table->programs.n);
	for (size_t t = 0; t < table->targets.n; t++) {
		const char *name = table->targets.v[t];
		int ok = 0, bad = 0, skip = 0;
		for (size_t p = 0; p < table->programs.n; p++) {
			const char *cell = table_cell(table, name, table->programs.v[p]);
			ok += strncmp(cell, "ok", 2) == 0;   /* "ok (kernel)", "ok (run natively)" too */
			bad += strncmp(cell, "FAIL", 4) == 0;
			skip += strncmp(cell, "skip", 4) == 0;
		}
		printf("%-34s %3d ok %3d failed %3d skipped   pieces: %s\n", name, ok, bad, skip,
		       table->pieces.n > 2 * t + 1 ? table->pieces.v[2 * t + 1] : "?");
		printf("%-34s run: %s\n", "", table->runners.n > 2 * t + 1 ? table->runners.v[2 * t + 1]
		                                                           : "?");
		for (size_t p = 0; p < table->programs.n; p++) {
			const char *cell = table_cell(table, name, table->programs.v[p]);
			if (strncmp(cell, "FAIL", 4) == 0)
				printf("    %-28s %s\n", table->programs.v[p], cell);
		}
	}
	if (!markdown)
		return 0;
	struct test_table merged = {0};
	table_merge(table, markdown, &merged);
	char *tmp = xasprintf("%s.tmp", markdown);
	FILE *f = fopen(tmp, "w");
	if (!f) {
		error("cannot write '%s': %s", tmp, strerror(errno));
		free(tmp);
		testrun_table_release(&merged);
		return -1;
	}
	fputs("# Targets and what passes on them\n\n"
	      "Written by `crossroot test` (each target's column is from the last run that tested it): "
	      "the runtime pieces each sysroot holds, and each program of `tests/sysroot/` built "
	      "static and dynamic with the target's compiler and run where the target's row says: "
	      "under qemu-user, or (`crossroot test --system`) on Debian's Linux booted under "
	      "qemu-system. A cell `ok (kernel)` ran on the kernel, `ok (run natively)` on the "
	      "host's CPU.\n\n", f);
	fputs("| target | pieces | programs ran |\n|---|---|---|\n", f);
	for (size_t t = 0; t < merged.targets.n; t++) {
		md_cell(f, merged.targets.v[t]);
		md_cell(f, table_value(&merged.pieces, merged.targets.v[t]));
		md_cell(f, table_value(&merged.runners, merged.targets.v[t]));
		fputs("|\n", f);
	}
	fputs("\n| program |", f);
	for (size_t t = 0; t < merged.targets.n; t++)
		fprintf(f, " %s |", merged.targets.v[t]);
	fputs("\n|---|", f);
	for (size_t t = 0; t < merged.targets.n; t++)
		fputs("---|", f);
	fputc('\n', f);
	struct strlist notes = {0};
	for (size_t p = 0; p < merged.programs.n; p++) {
		md_cell(f, merged.programs.v[p]);
		for (size_t t = 0; t < merged.targets.n; t++) {
			const char *cell = table_cell(&merged, merged.targets.v[t], merged.programs.v[p]);
			if (strncmp(cell, NOT_RUN_CELL, strlen(NOT_RUN_CELL)) != 0) {
				md_cell(f, cell);
				continue;
			}
			const char *why = cell + strlen(NOT_RUN_CELL);
			size_t note = 0;
			while (note < notes.n && strcmp(notes.v[note], why) != 0)
				note++;
			if (note == notes.n)
				strlist_add(&notes, why);
			char *text = xasprintf(NOT_RUN_SHORT " (note %zu)", note + 1);
			md_cell(f, text);
			free(text);
		}
		fputs("|\n", f);
	}
	if (notes.n)
		fputs("\n" NOT_RUN_NOTES "\n\n", f);
	for (size_t i = 0; i < notes.n; i++) {
		fprintf(f, "%zu. ", i + 1);
		for (const char *c = notes.v[i]; *c; c++)
			fputc(*c == '\n' ? ' ' : *c, f);
		fputc('\n', f);
	}
	strlist_release(&notes);
	testrun_table_release(&merged);
	int rc = 0;
	if (fclose(f) != 0 || rename(tmp, markdown) != 0) {
		error("cannot write '%s': %s", markdown, strerror(errno));
		unlink(tmp);
		rc = -1;
	} else {
		info("support table written to %s", markdown);
	}
	free(tmp);
	return rc;
}

void testrun_table_release(struct test_table *table)
{
	strlist_release(&table->targets);
	strlist_release(&table->programs);
	strlist_release(&table->cells);
	strlist_release(&table->pieces);
	strlist_release(&table->runners);
}
