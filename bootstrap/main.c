/* main: the crossroot command line. Parses options, takes the work directory lock, loads the
 * recipes and runs one command; the only place that decides the exit code. */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binfmt.h"
#include "build.h"
#include "cache.h"
#include "fetch.h"
#include "guest.h"
#include "launcher.h"
#include "matrix.h"
#include "plan.h"
#include "overlay.h"
#include "package.h"
#include "recipes.h"
#include "remote.h"
#include "run.h"
#include "sysroot.h"
#include "testrun.h"
#include "toolchain.h"
#include "util.h"

static const char usage[] =
	"usage: crossroot COMMAND [options] TARGET... | --all\n"
	"       crossroot exec [options] TARGET... -- COMMAND [ARGUMENT]...\n"
	"\n"
	"Bootstraps Clang-based cross sysroots from verified sources.\n"
	"\n"
	"commands:\n"
	"  build    fetch, extract, patch and build what is out of date; assemble sysroots/TARGET\n"
	"  fetch    only fill the download cache\n"
	"  plan     show each stage as cached or to build, and why\n"
	"  test     build tests/sysroot/ programs with the sysroot and run them under qemu-user\n"
	"           (--system: all of them in one boot of Debian's Linux under qemu-system)\n"
	"  run      --system TARGET PROGRAM [ARGS...]: run a program of the target on Debian's\n"
	"           Linux booted under qemu-system; its output and exit status come back\n"
	"  clean    remove the target's sysroot and scratch files (the caches and overlay stay)\n"
	"  install  TARGET DIR: copy a DESTDIR tree (libraries you built) into the target's\n"
	"           overlay, laid over its sysroot now and after every rebuild\n"
	"  binfmt   register the target's run wrapper with binfmt_misc (root), so its programs\n"
	"           run when executed directly; --remove unregisters\n"
	"  exec     TARGET... -- COMMAND: run COMMAND (any user) in a session of its own where\n"
	"           the targets' programs run when executed directly (a user namespace's own\n"
	"           binfmt_misc, Linux 6.7 and later); its exit status is COMMAND's\n"
	"  prune    bound the caches: keep what the current recipes of every target need and\n"
	"           the --keep N (default 1) most recently used results per target and stage\n"
	"  key      generate [FILE]: a key to sign remote cache entries with (prints its public\n"
	"           key); public FILE: print a key's public key\n"
	"  package  build, then write TARGET-VERSION.tar.zst (--xz: also .tar.xz), its manifest\n"
	"           and SPDX document into -o DIR (default .): deterministic bytes\n"
	"  matrix   the targets for a CI system, one job each, with a digest of what goes into\n"
	"           each (--format json, github or gitlab; docs/ci/)\n"
	"  verify   PACKAGE|DIR: check a package, or a directory unpacked from one, against its\n"
	"           manifest; each missing, extra or changed file is named\n";
/* two strings: C17 compilers need only take 4095 characters in one */
static const char usage_options[] =
	"\n"
	"options:\n"
	"  -a, --all          every target in targets/\n"
	"  -j, --jobs N       job budget shared by all builds (default: number of CPUs)\n"
	"  -C, --root DIR     project directory with targets/, stages/, sources/ (default: .)\n"
	"      --work DIR     scratch and state directory (default: ROOT/work)\n"
	"      --cache DIR    download and stage cache (default: $CROSSROOT_CACHE or WORK/cache)\n"
	"      --out DIR      where sysroots go (default: ROOT/sysroots)\n"
	"      --offline      build from the download cache only\n"
	"      --mirror URL   ask this mirror (URL or directory) before the origins; repeatable;\n"
	"                     also read, one per line, from $CROSSROOT_MIRRORS or\n"
	"                     ~/.config/crossroot/mirrors\n"
	"      --remote-cache URL  pull stage results from this HTTP(S) cache before building;\n"
	"                     also 'url =' in ~/.config/crossroot/remote-cache (README)\n"
	"      --remote-cache-mode read|read-write  read-write also pushes what is built\n"
	"                     (signed with the configured signing-key); default read\n"
	"      --wait         wait for another crossroot using the work directory or cache\n"
	"      --static-only  static runtimes only (as a target's 'static: true'): no shared\n"
	"                     library is built, the compilers link statically, and only the C\n"
	"                     and C++ runtimes are built: the extras (sanitizers, openmp) and\n"
	"                     debug information come with --with\n"
	"      --with LIST    what a static-only build adds (comma separated, repeatable):\n"
	"                     sanitizers, openmp (a target's extra stages), debug\n"
	"      --verify       hash every cached download and stage result in full before use\n"
	"      --launcher L   put a compiler launcher before every compile of every stage: ccache,\n"
	"                     distcc (DISTCC_HOSTS; the job budget grows by its slots) or\n"
	"                     ccache+distcc; also $CROSSROOT_LAUNCHER. Stage keys do not change\n"
	"      --pull-only    build nothing: every stage comes from the stage cache or the remote\n"
	"                     cache, else exit 1 naming it (CI jobs that must not compile)\n"
	"      --allow-network  build steps keep the host's network (by default each runs in a\n"
	"                     network namespace of its own, where a download fails)\n"
	"  -k, --keep-going   after a failure, go on with stages that do not depend on it (a\n"
	"                     target gets its sysroot as soon as its last stage is done)\n"
	"      --check        build: then build again cold in a temporary work directory and\n"
	"                     compare the two packages, naming the files that differ\n"
	"  -o DIR             package: where the package goes (default: .)\n"
	"      --xz           package: also write a .tar.xz\n"
	"      --keep N       prune: older results kept per target and stage (default 1)\n"
	"      --remove       binfmt: unregister the target's entry\n"
	"      --system       test, run: on a Linux kernel booted under qemu-system (one boot)\n"
	"      --table FILE   test: also write the support table (pieces, programs by\n"
	"                     targets) to FILE as Markdown\n"
	"  -v, --verbose      show every command\n"
	"  -h, --help         this text\n"
	"  -V, --version      print the version\n"
	"\n"
	"exit codes: 0 done, 1 build or test failed, 2 usage or recipe error, 3 fetch, verify or\n"
	"extract error, 4 work directory locked, 5 verify or --check found differences,\n"
	"130 interrupted; exec: COMMAND's status, 125 no session (COMMAND never ran), 126 COMMAND\n"
	"cannot be executed, 127 COMMAND not found\n";

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int lock_work(const char *work, bool wait)
{
	if (mkdir_p(work, 0755) < 0)
		return -1;
	char *path = path_join(work, "lock");
	/* Not CLOEXEC on purpose: build steps inherit the lock, so if crossroot dies (kill -9)
	 * while its children still run, no new run starts over their scratch files. */
	int fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0) {
		error("cannot open '%s':", path);
		free(path);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		char holder[32] = "";
		ssize_t n = pread(fd, holder, sizeof(holder) - 1, 0);
		holder[n > 0 ? n : 0] = '\0';
		holder[strcspn(holder, "\n")] = '\0';
		long pid = atol(holder);
		bool alive = pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
		/* Its holder is dead: what holds the lock are its steps. A bwrap killed while it set
		 * up (before its --die-with-parent is armed) never ends by itself, so the run that
		 * would reap it (build.c) could never start: end them here. No live run owns them. */
		if (pid > 0 && !alive) {
			char *build = path_join(work, "build");
			run_reap_steps(build);
			free(build);
			for (int tries = 0; tries < 20 && flock(fd, LOCK_EX | LOCK_NB) < 0; tries++)
				usleep(50 * 1000);   /* the killed steps' descriptors close as they die */
			if (flock(fd, LOCK_EX | LOCK_NB) == 0)
				goto locked;
		}
		if (!wait) {
			if (pid > 0 && !alive)
				error("work directory '%s' is locked by build steps of crossroot pid %ld, "
				      "which has died; they will end soon: retry, or run with --wait", work, pid);
			else
				error("work directory '%s' is in use by another crossroot (pid %s); wait for "
				      "it, run with --wait, or use another --work directory", work,
				      holder[0] ? holder : "unknown");
			free(path);
			close(fd);
			return -2;
		}
		info("waiting for crossroot (pid %s) to release '%s'", holder[0] ? holder : "?", work);
		if (flock(fd, LOCK_EX) < 0) {
			error("cannot lock '%s':", path);
			free(path);
			close(fd);
			return -1;
		}
	}
locked:;
	char pid[32];
	int len = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, pid, (size_t)len, 0) < 0)
		warn("cannot record our pid in '%s':", path);
	free(path);
	return fd;   /* held until exit */
}

/* Paths reach build steps through the shell: refuse what it would split or interpret (as
 * Buildroot refuses a build directory with spaces). */
static bool shell_safe_path(const char *what, const char *path)
{
	for (const char *c = path; *c; c++)
		if (!isalnum((unsigned char)*c) && !strchr("/._+-,=:@%", *c)) {
			error("%s '%s' holds '%c', which build steps cannot take safely; use a path of "
			      "letters, digits and /._+-,=:@%%", what, path, *c);
			return false;
		}
	return true;
}

static char *absolute(const char *path)
{
	if (path[0] == '/')
		return xstrdup(path);
	char *cwd = getcwd(NULL, 0);
	char *abs = strcmp(path, ".") == 0 ? xstrdup(cwd) : path_join(cwd, path);
	free(cwd);
	return abs;
}

/* Mirrors from $CROSSROOT_MIRRORS (a file) or ~/.config/crossroot/mirrors: one URL or
 * directory per line, '#' starts a comment. A missing default file is fine. */
static int read_mirror_file(struct strlist *mirrors)
{
	const char *path = getenv("CROSSROOT_MIRRORS");
	char *fallback = NULL;
	if (!path) {
		const char *config = getenv("XDG_CONFIG_HOME");
		const char *home = getenv("HOME");
		if (config)
			fallback = xasprintf("%s/crossroot/mirrors", config);
		else if (home)
			fallback = xasprintf("%s/.config/crossroot/mirrors", home);
		if (!fallback || !path_exists(fallback)) {
			free(fallback);
			return 0;
		}
		path = fallback;
	}
	char *text = read_file(path, NULL);
	if (!text) {
		free(fallback);
		return -1;
	}
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		line[strcspn(line, "#")] = '\0';
		char *end = line + strlen(line);
		while (end > line && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
			*--end = '\0';
		line += strspn(line, " \t");
		if (*line)
			strlist_add(mirrors, line);
	}
	free(text);
	free(fallback);
	return 0;
}

static int clean_target(const struct dirs *d, const char *name)
{
	const char *parts[][2] = {{d->out, ""}, {d->work, "build/"}, {d->work, "logs/"},
	                          {d->work, "state/"}, {d->work, "test/"}};
	int rc = 0;
	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		char *path = xasprintf("%s/%s%s", parts[i][0], parts[i][1], name);
		rc |= remove_tree(path);
		free(path);
	}
	char *overlay = sysroot_overlay_dir(d, name);
	info("cleaned %s (download and stage caches kept%s%s)", name,
	     is_dir(overlay) ? "; its overlay stays in " : "", is_dir(overlay) ? overlay : "");
	free(overlay);
	return rc;
}

/* crossroot install: the tree into the overlay; `assembled` says whether the sysroot exists
 * (and must be assembled again to show it) */
static int install_overlay(const struct dirs *d, const char *name, const char *from,
                           bool *assembled)
{
	char *sysroot = path_join(d->out, name);
	char *stamp = path_join(sysroot, SYSROOT_STAMP);
	char *overlay = sysroot_overlay_dir(d, name);
	char *source = absolute(from);
	*assembled = path_exists(stamp);
	int rc = overlay_install(overlay, source, *assembled ? sysroot : NULL) == 0 ? EXIT_OK
	                                                                           : EXIT_CONFIG;
	if (rc == EXIT_OK)
		info("installed %s into the overlay of %s (%s)%s", source, name, overlay,
		     *assembled ? "" : "; it joins the sysroot with the next 'crossroot build'");
	free(source);
	free(overlay);
	free(stamp);
	free(sysroot);
	return rc;
}

/* What `crossroot run` exits with when it could not run the program (as env(1) and
 * timeout(1) do): the program's own statuses keep their meaning. */
#define RUN_EXIT_OWN 125

static void run_output(void *arg, size_t program, int fd, const char *data, size_t n)
{
	(void)arg;
	(void)program;
	fwrite(data, 1, n, fd == 1 ? stdout : stderr);
	fflush(fd == 1 ? stdout : stderr);
}

/* crossroot run --system: one program (and CROSSROOT_GUEST_INCLUDE's paths) on the kernel,
 * its output streamed; returns its exit status, 128+N for signal N, 124 when it timed out
 * (CROSSROOT_RUN_TIMEOUT seconds, default 600) or RUN_EXIT_OWN when it could not run. */
static int run_on_kernel(struct guest *g, int argc, char **argv, bool as_root)
{
	char *program = realpath(argv[0], NULL);
	if (!program) {
		error("cannot run '%s':", argv[0]);
		return RUN_EXIT_OWN;
	}
	struct guest_program p = {0};
	strlist_add(&p.argv, program);
	for (int i = 1; i < argc; i++)
		strlist_add(&p.argv, argv[i]);
	char *real = realpath(g->sysroot, NULL);
	strlist_take(&p.env, xasprintf("CROSSROOT_SYSROOT=%s", real ? real : g->sysroot));
	free(real);
	strlist_add(&p.env, "PATH=/usr/bin:/bin");
	strlist_add(&p.env, "HOME=/tmp");
	/* the rest of the caller's environment, as the qemu-user run wrapper passes it, but what
	 * names the host's own files (its PATH, HOME, libraries and loader's preloads) */
	extern char **environ;
	static const char *const host_only[] = {"PATH=", "HOME=", "LD_", "CROSSROOT_SYSROOT=", NULL};
	for (char **e = environ; *e; e++) {
		bool keep = strchr(*e, '=') != NULL;
		for (size_t i = 0; host_only[i] && keep; i++)
			keep = strncmp(*e, host_only[i], strlen(host_only[i])) != 0;
		if (keep)
			strlist_add(&p.env, *e);
	}
	char cwd[4096];
	p.cwd = xstrdup(getcwd(cwd, sizeof(cwd)) ? cwd : "/tmp");
	const char *timeout = getenv("CROSSROOT_RUN_TIMEOUT");
	p.timeout = timeout && atol(timeout) > 0 ? atol(timeout) : 600;
	p.root = as_root;
	struct strlist include = {0};
	strlist_add(&include, program);
	const char *more = getenv("CROSSROOT_GUEST_INCLUDE");
	char *copy = xstrdup(more ? more : "");
	for (char *path = strtok(copy, ":"); path; path = strtok(NULL, ":")) {
		char *abs = realpath(path, NULL);
		if (!abs) {
			error("CROSSROOT_GUEST_INCLUDE names '%s':", path);
			free(copy);
			return RUN_EXIT_OWN;
		}
		strlist_take(&include, abs);
	}
	free(copy);
	struct guest_result r;
	int status = RUN_EXIT_OWN;
	if (guest_run(g, &p, 1, &include, &r, run_output, NULL) == 0) {
		if (r.timed_out) {
			error("'%s' timed out after %ld s on the kernel", argv[0], p.timeout);
			status = 124;
		} else if (r.ran && WIFEXITED(r.status)) {
			status = WEXITSTATUS(r.status);
		} else if (r.ran && WIFSIGNALED(r.status)) {
			char how[96];
			error("'%s' was %s on the kernel", argv[0], run_describe(r.status, how));
			status = 128 + WTERMSIG(r.status);
		} else {
			error("'%s' did not run on the kernel: %s", argv[0], r.error ? r.error : "no result");
		}
	}
	guest_result_release(&r);
	guest_program_release(&p);
	strlist_release(&include);
	free(program);
	return status;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"all", no_argument, NULL, 'a'},      {"jobs", required_argument, NULL, 'j'},
		{"root", required_argument, NULL, 'C'}, {"work", required_argument, NULL, 'w'},
		{"cache", required_argument, NULL, 'c'}, {"out", required_argument, NULL, 'D'},
		{"offline", no_argument, NULL, 'O'},  {"wait", no_argument, NULL, 'W'},
		{"keep-going", no_argument, NULL, 'k'}, {"verbose", no_argument, NULL, 'v'},
		{"help", no_argument, NULL, 'h'},     {"version", no_argument, NULL, 'V'},
		{"mirror", required_argument, NULL, 'm'},
		{"keep", required_argument, NULL, 'K'},
		{"static-only", no_argument, NULL, 'S'}, {"verify", no_argument, NULL, 'Y'},
		{"with", required_argument, NULL, 'I'},
		{"table", required_argument, NULL, 'T'},
		{"remove", no_argument, NULL, 'R'},
		{"remote-cache", required_argument, NULL, 'U'},
		{"remote-cache-mode", required_argument, NULL, 'M'},
		{"allow-network", no_argument, NULL, 'N'},
		{"launcher", required_argument, NULL, 'L'},
		{"pull-only", no_argument, NULL, 'P'},
		{"format", required_argument, NULL, 'F'},
		{"xz", no_argument, NULL, 'X'}, {"check", no_argument, NULL, 'H'},
		{"system", no_argument, NULL, 'Z'},
		{NULL, 0, NULL, 0},
	};
	bool all = false, offline = false, wait = false, keep_going = false, verbose = false,
	     static_only = false, verify = false, remove = false, allow_network = false,
	     xz = false, check = false, system = false;
	struct strlist mirrors = {0}, with = {0};
	int keep = 1;
	long jobs = sysconf(_SC_NPROCESSORS_ONLN);
	bool jobs_given = false, pull_only = false;
	const char *launcher_arg = getenv("CROSSROOT_LAUNCHER"), *format_arg = NULL;
	const char *root_arg = ".", *work_arg = NULL, *cache_arg = getenv("CROSSROOT_CACHE"),
	           *out_arg = NULL, *table_arg = NULL, *remote_arg = NULL, *remote_mode_arg = NULL,
	           *package_arg = ".";
	if (cache_arg && !*cache_arg)
		cache_arg = NULL;   /* empty is unset, not the current directory */
	/* `crossroot run [options] TARGET PROGRAM ARGS...`: options end at the target, so the
	 * program's own options stay its own */
	bool run_command_line = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--") == 0 || a[0] != '-' || a[1] == '\0') {
			if (strcmp(a, "run") == 0) {   /* the command word leaves; options may follow */
				memmove(argv + i, argv + i + 1, (size_t)(argc - i) * sizeof(*argv));
				argc--;
				run_command_line = true;
			}
			break;
		}
		if (a[1] == '-') {   /* --name or --name=value: does it take the next word? */
			size_t n = strcspn(a + 2, "=");
			for (size_t o = 0; longopts[o].name && !a[2 + n]; o++)
				if (strlen(longopts[o].name) == n && strncmp(longopts[o].name, a + 2, n) == 0 &&
				    longopts[o].has_arg == required_argument)
					i++;
		} else if (strchr("jCo", a[1]) && a[2] == '\0') {
			i++;
		}
	}
	/* `exec TARGET... -- COMMAND ARGUMENT...`: from the first --, words are never crossroot's
	 * options (getopt would take COMMAND's -v); for other commands they are operands, as
	 * getopt would make them (`run` stops at its target instead) */
	int dashdash = 0;
	for (int i = 1; i < argc && !dashdash && !run_command_line; i++)
		if (strcmp(argv[i], "--") == 0)
			dashdash = i;
	int c;
	while ((c = getopt_long(dashdash ? dashdash : argc, argv,
	                        run_command_line ? "+aj:C:o:kvhV" : "aj:C:o:kvhV", longopts,
	                        NULL)) != -1) {
		switch (c) {
		case 'a': all = true; break;
		case 'j': {
			char *end;
			jobs = strtol(optarg, &end, 10);
			jobs_given = true;
			if (*end || jobs < 1 || jobs > 1024) {
				error("--jobs needs a number from 1 to 1024, not '%s'", optarg);
				return EXIT_CONFIG;
			}
			break;
		}
		case 'C': root_arg = optarg; break;
		case 'w': work_arg = optarg; break;
		case 'c': cache_arg = optarg; break;
		case 'D': out_arg = optarg; break;
		case 'o': package_arg = optarg; break;
		case 'O': offline = true; break;
		case 'W': wait = true; break;
		case 'k': keep_going = true; break;
		case 'v': verbose = true; break;
		case 'm': strlist_add(&mirrors, optarg); break;
		case 'K': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 0 || v > 1000000) {
				error("--keep needs a number from 0 up, not '%s'", optarg);
				return EXIT_CONFIG;
			}
			keep = (int)v;
			break;
		}
		case 'S': static_only = true; break;
		case 'I': {
			char *copy = xstrdup(optarg);
			for (char *save = NULL, *w = strtok_r(copy, ",", &save); w;
			     w = strtok_r(NULL, ",", &save))
				strlist_add(&with, w);
			free(copy);
			break;
		}
		case 'Y': verify = true; break;
		case 'T': table_arg = optarg; break;
		case 'R': remove = true; break;
		case 'U': remote_arg = optarg; break;
		case 'M': remote_mode_arg = optarg; break;
		case 'N': allow_network = true; break;
		case 'L': launcher_arg = optarg; break;
		case 'P': pull_only = true; break;
		case 'F': format_arg = optarg; break;
		case 'X': xz = true; break;
		case 'H': check = true; break;
		case 'Z': system = true; break;
		case 'h': fputs(usage, stdout); fputs(usage_options, stdout); return EXIT_OK;
		case 'V': printf("crossroot %s\n", CROSSROOT_VERSION); return EXIT_OK;
		default: fputs(usage, stderr); fputs(usage_options, stderr); return EXIT_CONFIG;
		}
	}
	if (dashdash && optind >= dashdash) {
		/* `crossroot [options] -- COMMAND ...`: that -- only ended the options */
		memmove(&argv[dashdash], &argv[dashdash + 1], (size_t)(argc - dashdash) * sizeof(*argv));
		argc--;
		dashdash = 0;
		for (int i = optind + 1; i < argc && !dashdash; i++)
			if (strcmp(argv[i], "--") == 0)
				dashdash = i;
	}
	if (optind >= (dashdash ? dashdash : argc) && !run_command_line) {
		fputs(usage, stderr);
		fputs(usage_options, stderr);
		return EXIT_CONFIG;
	}
	const char *command = run_command_line ? "run" : argv[optind++];
	bool exec = strcmp(command, "exec") == 0;
	/* exec's own failures must not look like its command's statuses */
	const int usage_rc = exec ? EXIT_NO_SESSION : EXIT_CONFIG;
	int targets_end = argc;   /* the arguments from optind on that name targets */
	if (exec) {
		if (all || !dashdash || dashdash + 1 >= argc || optind >= dashdash) {
			error("usage: crossroot exec [options] TARGET... -- COMMAND [ARGUMENT]...");
			return EXIT_NO_SESSION;
		}
		targets_end = dashdash;
	} else if (dashdash) {
		memmove(&argv[dashdash], &argv[dashdash + 1], (size_t)(argc - dashdash) * sizeof(*argv));
		targets_end = --argc;
	}
	if (strcmp(command, "key") == 0)
		return remote_key_command(argc - optind, argv + optind);
	if (strcmp(command, "verify") == 0) {
		if (argc - optind != 1) {
			error("usage: crossroot verify PACKAGE|DIRECTORY (a .tar.zst or .tar.xz package, or "
			      "a directory unpacked from one)");
			return EXIT_CONFIG;
		}
		int verified = package_verify(argv[optind]);
		return verified == PACKAGE_SAME ? EXIT_OK : verified == PACKAGE_DIFFERS ? EXIT_MISMATCH
		                                                                        : EXIT_CONFIG;
	}
	static const char *const commands[] = {"build", "fetch", "plan", "test", "clean", "prune",
	                                       "install", "binfmt", "exec", "package", "matrix", "run",
	                                       NULL};
	if (system && strcmp(command, "test") != 0 && strcmp(command, "run") != 0) {
		error("--system is for 'crossroot test' and 'crossroot run', not '%s'", command);
		return EXIT_CONFIG;
	}
	if (run_command_line && (!system || all || argc - optind < 2)) {
		error("usage: crossroot run --system [options] TARGET PROGRAM [ARGS...] (without "
		      "--system, run target programs with the sysroot's bin/TARGET-run)");
		return RUN_EXIT_OWN;
	}
	if (format_arg && strcmp(command, "matrix") != 0) {
		error("--format is for 'crossroot matrix', not '%s'", command);
		return usage_rc;
	}
	if (check && strcmp(command, "build") != 0) {
		error("--check is for 'crossroot build', not '%s'", command);
		return usage_rc;
	}
	if ((xz || strcmp(package_arg, ".") != 0) && strcmp(command, "package") != 0) {
		error("--xz and -o are for 'crossroot package', not '%s'", command);
		return usage_rc;
	}
	if (remove && strcmp(command, "binfmt") != 0) {
		error("--remove is for 'crossroot binfmt', not '%s'", command);
		return usage_rc;
	}
	if (pull_only && strcmp(command, "build") != 0) {
		error("--pull-only is for 'crossroot build', not '%s'", command);
		return usage_rc;
	}
	if (table_arg && strcmp(command, "test") != 0) {
		error("--table is for 'crossroot test', not '%s'", command);
		return usage_rc;
	}
	bool known = false;
	for (size_t i = 0; commands[i]; i++)
		known |= strcmp(command, commands[i]) == 0;
	if (!known) {
		error("unknown command '%s' (commands: build, fetch, plan, test, run, clean, prune, "
		      "install, binfmt, exec, key, package, verify, matrix)",
		      command);
		return EXIT_CONFIG;
	}
	if (jobs < 1)
		jobs = 1;
	const char *install_from = NULL;
	if (strcmp(command, "install") == 0) {
		if (all || argc - optind != 2) {
			error("usage: crossroot install TARGET DIR (DIR: the DESTDIR of a 'make install')");
			return EXIT_CONFIG;
		}
		install_from = argv[optind + 1];
		targets_end = optind + 1;
	}
	if (run_command_line)
		targets_end = optind + 1;

	char *root = absolute(root_arg);
	char *work = work_arg ? absolute(work_arg) : path_join(root, "work");
	char *cache = cache_arg ? absolute(cache_arg) : path_join(work, "cache");
	char *out = out_arg ? absolute(out_arg) : path_join(root, "sysroots");
	char *downloads = path_join(cache, "downloads");
	char *stage_cache = path_join(cache, "stages");
	char *apt_dir = path_join(cache, "apt");
	const char *llvm_bin = getenv("CROSSROOT_LLVM_BIN") && *getenv("CROSSROOT_LLVM_BIN")
	                           ? getenv("CROSSROOT_LLVM_BIN") : "/usr/lib/llvm-19/bin";
	struct dirs dirs = {root, work, downloads, stage_cache, out};
	const char *checked[][2] = {{"project directory", root}, {"--work", work},
	                            {"--cache", cache}, {"--out", out},
	                            {"CROSSROOT_LLVM_BIN", llvm_bin}};
	for (size_t i = 0; i < sizeof(checked) / sizeof(checked[0]); i++)
		if (!shell_safe_path(checked[i][0], checked[i][1]))
			return usage_rc;

	struct recipes recipes;
	recipes_init(&recipes, root);
	struct strlist names = {0};
	if (strcmp(command, "prune") == 0)
		all = true;   /* what any target needs is kept */
	if (all && recipes_list_targets(&recipes, &names) == 0 && names.n == 0) {
		error("--all: no targets in '%s/targets'", root);
		return EXIT_CONFIG;
	}
	for (int i = optind; i < targets_end; i++)
		if (!strlist_has(&names, argv[i]))
			strlist_add(&names, argv[i]);
	if (names.n == 0) {
		error("%s: name a target (files in '%s/targets/') or use --all", command, root);
		return usage_rc;
	}
	struct target **targets = xcalloc(names.n, sizeof(*targets));
	for (size_t i = 0; i < names.n; i++) {
		targets[i] = recipes_target(&recipes, names.v[i]);
		if (!targets[i])
			return usage_rc;
		if (static_only)
			targets[i]->static_only = true;
		if (recipes_add_with(&recipes, targets[i], &with, true) < 0)
			return EXIT_CONFIG;
	}
	/* exec reads the sysroots only: no lock (a build may run beside it, or inside it), and
	 * the command gets crossroot's umask and signal dispositions */
	if (exec) {
		int rc = binfmt_exec(targets, names.n, out, argv + dashdash + 1);
		return rc < 0 ? EXIT_NO_SESSION : rc;
	}
	/* Build steps create files: the same modes whatever the caller's umask. */
	umask(022);

	struct sigaction sa = {0};
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	/* plan and matrix only read (their one write, the file-hash cache, is an atomic rename):
	 * they answer while a build runs */
	bool reads_only = strcmp(command, "plan") == 0 || strcmp(command, "matrix") == 0;
	int lock = reads_only ? 0 : lock_work(work, wait);
	if (lock < 0)
		return lock == -2 ? EXIT_LOCKED : EXIT_FAILED;

	int rc = EXIT_OK;
	if (install_from) {
		/* then assembled again, as a build with nothing else to do */
		bool assembled = false;
		rc = install_overlay(&dirs, names.v[0], install_from, &assembled);
		if (rc != EXIT_OK || !assembled)
			return rc;
		command = "build";
	}
	if (strcmp(command, "clean") == 0) {
		for (size_t i = 0; i < names.n; i++)
			if (clean_target(&dirs, names.v[i]) < 0)
				rc = EXIT_FAILED;
		return rc;
	}
	if (strcmp(command, "binfmt") == 0) {
		for (size_t i = 0; i < names.n; i++) {
			char *sysroot = path_join(out, names.v[i]);
			if (binfmt_register(targets[i], sysroot, remove) < 0)
				rc = EXIT_FAILED;
			free(sysroot);
		}
		return rc;
	}
	if (strcmp(command, "test") == 0 || strcmp(command, "run") == 0) {
		/* --system fetches a kernel: the download cache, mirrors and apt state as a build's */
		if (system && read_mirror_file(&mirrors) < 0)
			return strcmp(command, "run") == 0 ? RUN_EXIT_OWN : EXIT_CONFIG;
		struct fetch_options fo = {.cache_dir = downloads, .apt_dir = apt_dir, .parallel = 1,
		                           .retries = 3, .stall_seconds = 30, .backoff_seconds = 1,
		                           .mirrors = &mirrors, .offline = offline, .verify = verify};
		const char *ca = getenv("CROSSROOT_CA_BUNDLE");
		if (ca && *ca)
			fo.ca_bundle = ca;
		if (strcmp(command, "run") == 0) {
			struct guest g;
			int status = RUN_EXIT_OWN;
			if (guest_prepare(&g, &dirs, &recipes, targets[0], &fo) == 0)
				status = run_on_kernel(&g, argc - optind - 1, argv + optind + 1,
				                       getenv("CROSSROOT_RUN_AS_ROOT") &&
				                           strcmp(getenv("CROSSROOT_RUN_AS_ROOT"), "1") == 0);
			guest_release(&g);
			return interrupted ? EXIT_INTERRUPTED : status;
		}
		struct test_table table = {0};
		for (size_t i = 0; i < names.n && !interrupted; i++) {
			struct guest g;
			struct testrun_options to = {.jobs = (int)jobs, .system = system ? &g : NULL};
			if (system && guest_prepare(&g, &dirs, &recipes, targets[i], &fo) < 0)
				rc = EXIT_FAILED;
			else if (testrun_target(&dirs, targets[i], &to, &table) != EXIT_OK)
				rc = EXIT_FAILED;
			if (system)
				guest_release(&g);
		}
		if ((names.n > 1 || table_arg) && testrun_print_table(&table, table_arg) < 0)
			rc = EXIT_FAILED;
		testrun_table_release(&table);
		return interrupted ? EXIT_INTERRUPTED : rc;
	}
	if (read_mirror_file(&mirrors) < 0)
		return EXIT_CONFIG;
	/* the remote stage cache: what to pull before building, and push after */
	struct remote_cache remote = {0};
	const char *ca_env = getenv("CROSSROOT_CA_BUNDLE");
	const char *stall_env = getenv("CROSSROOT_STALL_SECONDS");
	if ((strcmp(command, "build") == 0 || strcmp(command, "package") == 0) && !offline &&
	    remote_configure(&remote, remote_arg, remote_mode_arg, ca_env && *ca_env ? ca_env : NULL,
	                     stall_env ? atol(stall_env) : 0) < 0)
		return EXIT_CONFIG;
	/* a step that could read the signing key must never run beside it */
	if (remote.push && !run_isolation()) {
		error("the remote cache's read-write mode needs sandboxed build steps, which this "
		      "machine cannot give (see the warning above)");
		return EXIT_CONFIG;
	}
	struct strlist secrets = {0};
	if (remote.config)
		strlist_add(&secrets, remote.config);
	if (remote.key_file)
		strlist_add(&secrets, remote.key_file);
	struct host_llvm host;
	char *hash_cache = path_join(work, "state/file-hashes");
	char *state = path_join(work, "state");
	int probed = mkdir_p(state, 0755) == 0 ? toolchain_host_probe(&host, llvm_bin, hash_cache) : -1;
	free(hash_cache);
	free(state);
	if (probed < 0)
		return EXIT_CONFIG;
	/* Builds hold the stage cache shared, so a prune cannot remove what they use. */
	int cache_lock_fd = -1;
	if (strcmp(command, "build") == 0 || strcmp(command, "package") == 0) {
		cache_lock_fd = cache_lock(stage_cache, false, wait);
		if (cache_lock_fd == -2) {
			error("the stage cache '%s' is being pruned; retry, or run with --wait", stage_cache);
			return EXIT_LOCKED;
		}
		if (cache_lock_fd < 0)
			return EXIT_FAILED;
	}
	struct launcher launcher;
	if (launcher_init(&launcher, strcmp(command, "build") == 0 || strcmp(command, "package") == 0
	                                 ? launcher_arg : NULL) < 0)
		return EXIT_CONFIG;
	if (launcher.remote_slots && !jobs_given)
		jobs += launcher.remote_slots;   /* compiles on distcc hosts do not load this machine */
	if (launcher.network && !allow_network)
		info("build steps keep the network: the launcher '%s' needs it", launcher.spec);
	struct plan plan;
	if (plan_create(&plan, &dirs, &host, (int)jobs, verify, targets, names.n, &recipes) < 0)
		return EXIT_CONFIG;
	for (size_t i = 0; i < plan.n_nodes; i++)
		if (plan.nodes[i]->kind == NODE_STAGE)
			launcher_apply(&launcher, &plan.nodes[i]->vars);
	struct build_options bo = {
		.fetch = {.cache_dir = downloads, .apt_dir = apt_dir, .parallel = 4, .retries = 3,
		          .stall_seconds = 30, .backoff_seconds = 1, .mirrors = &mirrors,
		          .offline = offline, .verify = verify},
		.verbose = verbose,
		.keep_going = keep_going,
		.remote = remote.url ? &remote : NULL,
		.allow_network = allow_network || launcher.network,
		.launcher = &launcher,
		.pull_only = pull_only,
		.secrets = &secrets,
	};
	const char *stall = getenv("CROSSROOT_STALL_SECONDS");
	if (stall && atol(stall) > 0)
		bo.fetch.stall_seconds = atol(stall);
	const char *delay = getenv("CROSSROOT_RETRY_DELAY");
	if (delay)
		bo.fetch.backoff_seconds = atof(delay);
	const char *ca_bundle = getenv("CROSSROOT_CA_BUNDLE");
	if (ca_bundle && *ca_bundle)
		bo.fetch.ca_bundle = ca_bundle;
	if (strcmp(command, "plan") == 0)
		plan_print(&plan);
	else if (strcmp(command, "matrix") == 0)
		rc = matrix_print(&plan, format_arg ? format_arg : "json", stdout) == 0 ? EXIT_OK : EXIT_CONFIG;
	else if (strcmp(command, "prune") == 0) {
		/* what the current recipes need: every known key, every source's pins */
		struct strlist keys = {0}, pins = {0};
		for (size_t i = 0; i < plan.n_nodes; i++)
			if (plan.nodes[i]->kind == NODE_STAGE && plan.nodes[i]->key[0])
				strlist_add(&keys, plan.nodes[i]->key);
		/* and the kernels --system boots, which no stage names */
		for (size_t i = 0; i < names.n; i++)
			if (guest_kernel_source(targets[i]))
				recipes_source(&recipes, guest_kernel_source(targets[i]), NULL);
		for (size_t i = 0; i < recipes.n_sources; i++)
			for (size_t j = 0; j < recipes.sources[i]->n_origins; j++)
				strlist_add(&pins, recipes.sources[i]->origins[j].sha256);
		int pruned = cache_prune(stage_cache, downloads, &keys, &pins, keep, wait);
		rc = pruned == 0 ? EXIT_OK : pruned == -2 ? EXIT_LOCKED : EXIT_FAILED;
		strlist_release(&keys);
		strlist_release(&pins);
	}
	else if (strcmp(command, "fetch") == 0) {
		plan_want_trees(&plan);   /* everything the targets could need, cached or not */
		rc = build_fetch(&plan, &bo);
	} else {
		rc = build_run(&plan, &bo);
		/* package: what was just built (or found up to date); build --check: and again, cold */
		struct package_options po = {.dir = package_arg, .xz = xz};
		char *self = realpath("/proc/self/exe", NULL);
		struct package_check pc = {.self = self, .allow_network = allow_network,
		                           .verbose = verbose};
		for (size_t i = 0; i < names.n && rc == EXIT_OK; i++) {
			if (strcmp(command, "package") == 0 && package_write(&plan, targets[i], &po, NULL) < 0)
				rc = EXIT_FAILED;
			if (check) {
				int same = package_check(&plan, targets[i], &pc);
				rc = same == PACKAGE_SAME ? EXIT_OK : same == PACKAGE_DIFFERS ? EXIT_MISMATCH
				                                                              : EXIT_FAILED;
			}
		}
		free(self);
	}
	plan_release(&plan);
	remote_release(&remote);
	launcher_release(&launcher);
	toolchain_host_release(&host);
	if (cache_lock_fd >= 0)
		close(cache_lock_fd);
	free(targets);
	strlist_release(&names);
	recipes_release(&recipes);
	free(root);
	free(work);
	free(cache);
	free(out);
	free(downloads);
	free(stage_cache);
	free(apt_dir);
	return rc;
}
