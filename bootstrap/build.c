/* build: scheduling trees and stages, stage publication, sysroot assembly. See build.h. */
#define _GNU_SOURCE
#include "build.h"

#include <errno.h>
#include <glob.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache.h"
#include "debuginfo.h"
#include "extract.h"
#include "launcher.h"
#include "remote.h"
#include "run.h"
#include "scheduler.h"
#include "sysroot.h"
#include "toolchain.h"
#include "tree.h"
#include "util.h"

/* Runtime state of one node while the scheduler runs it (the plan holds no process data). */
struct job {
	size_t step;                /* next step to run */
	int log_fd;
	char *log_path;
	double started, step_started;
	char **env;                 /* NULL-ended, for the steps of a stage */
	struct run_sandbox sandbox; /* what its steps see (stage_sandbox); lists NULL-ended */
	pid_t pid_group;            /* the running step's process group */
	bool splitting;             /* the steps are done; debuginfo_split() is running */
	char *objcopy, *dest;       /* what it works with */
};

struct run {
	struct plan *p;
	const struct build_options *o;
	struct jobserver js;
	struct job *jobs;           /* parallel to p->nodes */
	bool extract_failed;        /* an archive could not be extracted: exit code 3 */
	bool *assembled;            /* parallel to p->targets: its sysroot is assembled */
};

/* ---- fetch ---- */

int build_fetch(struct plan *p, const struct build_options *o)
{
	struct source **sources = xcalloc(p->n_nodes, sizeof(*sources));
	size_t n = 0;
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *t = p->nodes[i];
		if (t->kind != NODE_TREE || t->state != NODE_WAITING)
			continue;
		bool dup = false;
		for (size_t j = 0; j < n; j++)
			if (sources[j] == t->source)
				dup = true;
		if (!dup)
			sources[n++] = t->source;
	}
	char **paths = xcalloc(n ? n : 1, sizeof(*paths));
	int rc = n ? fetch_sources(&o->fetch, sources, n, paths) : 0;
	bool machine_failed = false;
	/* a source that is an archive inside the download: that archive, verified on its own */
	for (size_t j = 0; j < n && !interrupted; j++) {
		if (!sources[j]->member || !paths[j])
			continue;
		bool refused;
		char *inner = fetch_member(&o->fetch, sources[j], paths[j], &refused);
		free(paths[j]);
		paths[j] = inner;
		if (!inner) {
			rc = -1;
			machine_failed |= !refused;
		}
	}
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *t = p->nodes[i];
		for (size_t j = 0; j < n; j++)
			if (t->kind == NODE_TREE && t->source == sources[j] && paths[j])
				t->archive = xstrdup(paths[j]);
	}
	for (size_t j = 0; j < n; j++)
		free(paths[j]);
	free(paths);
	free(sources);
	if (interrupted)
		return EXIT_INTERRUPTED;
	return rc == 0 ? EXIT_OK : machine_failed ? EXIT_FAILED : EXIT_FETCH;
}

/* ---- trees: extraction and patches, run in a forked child beside the builds ---- */

static int prepare_tree(void *arg)
{
	struct node *t = arg;
	char *dest = xasprintf("%s.new.%ld", t->tree_dir, (long)getpid());
	remove_tree(dest);
	double start = now_seconds();
	struct extract_options eo = {
		.archive = t->archive,
		.dest = dest,
		.strip = t->source->strip,
		.include = &t->source->extract,
		.exclude = &t->source->exclude,
	};
	printf("extracting %s into %s\n", t->archive, t->tree_dir);
	int extracted = extract_archive(&eo);
	if (extracted < 0) {
		free(dest);
		/* the archive's fault is exit code 3, the machine's (a full disk) 1 */
		return extracted == EXTRACT_REFUSED ? EXIT_FETCH : EXIT_FAILED;
	}
	printf("extracted in %.1f s\n", now_seconds() - start);
	for (size_t i = 0; i < t->patches.n; i++) {
		printf("applying %s\n", t->patches.v[i]);
		fflush(stdout);
		char *argv[] = {"patch", "-p1", "-N", "-f", "--no-backup-if-mismatch", "-d", dest,
		                "-i", t->patches.v[i], NULL};
		pid_t pid = run_argv(argv, NULL, 1, 2);
		int status = pid < 0 ? -1 : run_wait(pid);
		if (status != 0) {
			char how[96];
			error("patch '%s' does not apply to %s %s (patch %s)", t->patches.v[i],
			      t->source->name, t->source->version,
			      status < 0 ? "could not run" : run_describe(status, how));
			remove_tree(dest);
			free(dest);
			return -1;
		}
	}
	/* what the tree holds, so a later run can tell a tree a build step changed */
	char *manifest = xasprintf("%s.manifest", t->tree_dir);
	unlink(manifest);
	if (rename(dest, t->tree_dir) < 0) {
		error("cannot rename '%s' to '%s':", dest, t->tree_dir);
		remove_tree(dest);
		free(dest);
		free(manifest);
		return -1;
	}
	int rc = cache_tree_record(t->tree_dir, manifest);
	free(dest);
	free(manifest);
	return rc;
}

/* ---- stages ---- */

static char *stage_path(const struct node *n, const char *name)
{
	return path_join(n->base, name);
}

/* Fill the stage's private sysroot and tools prefix with the results of all it depends on,
 * transitively: tools stages into the prefix, the others into the sysroot. Copies, so no
 * step can change a cached result; nothing is written through a link. */
static void collect_deps(const struct node *n, struct node **seen, size_t *n_seen)
{
	for (size_t i = 0; i < n->n_stage_deps; i++) {
		struct node *dep = n->stage_deps[i];
		bool known = false;
		for (size_t j = 0; j < *n_seen; j++)
			known |= seen[j] == dep;
		if (known)
			continue;
		seen[(*n_seen)++] = dep;
		collect_deps(dep, seen, n_seen);
	}
}

static int fill_private_dirs(const struct plan *p, const struct node *n, const char *sysroot,
                             const char *tools)
{
	struct node **deps = xcalloc(p->n_nodes + 1, sizeof(*deps));
	size_t count = 0;
	collect_deps(n, deps, &count);
	struct cache_union into_sysroot = {0}, into_tools = {0};
	int rc = 0;
	for (size_t i = 0; i < count && rc == 0; i++) {
		if (plan_superseded(deps[i], deps, count))
			continue;
		bool is_tools = deps[i]->stage->installs == INSTALLS_TOOLS;
		rc = cache_union_add(is_tools ? &into_tools : &into_sysroot, p->dirs.stage_cache,
		                     deps[i]->key, deps[i]->label, deps[i]->output);
	}
	if (rc == 0)
		rc = cache_union_install(&into_sysroot, sysroot);
	if (rc == 0)
		rc = cache_union_install(&into_tools, tools);
	cache_union_release(&into_sysroot);
	cache_union_release(&into_tools);
	free(deps);
	return rc;
}

static char **stage_environment(const struct run *r, const struct node *n)
{
	struct strlist env = {0};
	char *tools = stage_path(n, "tools");
	char *path = toolchain_step_path(r->p->host, tools, n->host_llvm);
	strlist_take(&env, xasprintf("PATH=%s", path));
	free(path);
	free(tools);
	strlist_add(&env, "LC_ALL=C");
	strlist_add(&env, "TZ=UTC");
	strlist_add(&env, "TERM=dumb");
	strlist_add(&env, "SOURCE_DATE_EPOCH=1");
	/* Python scripts of a build (libc++'s) would leave __pycache__ in the shared source tree,
	 * which then fails its check and is extracted again by the next run */
	strlist_add(&env, "PYTHONDONTWRITEBYTECODE=1");
	char *home = stage_path(n, "home");   /* its own: nothing of another stage or run */
	strlist_take(&env, xasprintf("HOME=%s", home));
	free(home);
	/* the run wrappers refuse to run inside a step: a configure check that runs a target
	 * program must not pass or fail with the host's binfmt registrations */
	strlist_take(&env, xasprintf("CROSSROOT_STAGE=%s", n->stage->name));
	for (size_t i = 0; r->o->launcher && i < r->o->launcher->env.n; i++)
		strlist_add(&env, r->o->launcher->env.v[i]);
	char *flags = jobserver_makeflags(&r->js);
	strlist_take(&env, xasprintf("MAKEFLAGS=%s", flags));
	free(flags);
	strlist_take(&env, NULL);
	return env.v;
}

static void free_env(char **env)
{
	for (char **e = env; e && *e; e++)
		free(*e);
	free(env);
}

static const char *const *list_end(struct strlist *l)
{
	strlist_take(l, NULL);
	return (const char *const *)l->v;
}

/* Steps see only their own stage (run.h): the work directory, the caches, the output, the
 * invoking user's home and configuration are hidden from them; the stage's directory (its
 * private HOME included) is theirs, its declared source trees are read-only, and so is every
 * PATH entry a hidden directory holds (a toolchain in $HOME/...). The remote cache's signing
 * key and configuration read as empty. */
static void stage_sandbox(const struct run *r, const struct node *n, char *const env[],
                          struct job *j)
{
	const struct dirs *d = &r->p->dirs;
	struct strlist hide = {0}, read_only = {0}, writable = {0}, mask = {0};
	strlist_add(&writable, n->base);
	for (size_t i = 0; i < n->stage->sources.n; i++)
		strlist_add(&read_only, n->trees[i]->tree_dir);
	const char *candidates[] = {d->work, d->downloads, d->stage_cache, d->out, getenv("HOME"),
	                            getenv("XDG_CONFIG_HOME"), "/root", "/home",
	                            r->o->allow_network ? NULL : "/run"};
	for (size_t i = 0; i < sizeof(candidates) / sizeof(candidates[0]); i++)
		if (candidates[i] && candidates[i][0] == '/' && !strlist_has(&hide, candidates[i]))
			strlist_add(&hide, candidates[i]);
	for (char *const *e = env; *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0) {
			for (const char *p = *e + 5; *p;) {
				size_t len = strcspn(p, ":");
				const char *hider = NULL;
				for (size_t k = 0; k < hide.n && !hider; k++)
					if (path_below(p, len, hide.v[k]) && !path_below(p, len, n->base))
						hider = hide.v[k];
				/* a toolchain's prefix, not only its bin/: clang finds its resource
				 * directory and libraries beside it ($CROSSROOT_LLVM_BIN in $HOME); never
				 * the hidden directory itself */
				char *dir = xasprintf("%.*s", (int)len, p);
				size_t n_dir = strlen(dir);
				if (hider && n_dir > 4 && strcmp(dir + n_dir - 4, "/bin") == 0 &&
				    n_dir - 4 > strlen(hider))
					dir[n_dir - 4] = '\0';
				if (hider && is_dir(dir) && !strlist_has(&read_only, dir))
					strlist_take(&read_only, dir);
				else
					free(dir);
				p += len + (p[len] == ':');
			}
		} else if ((strncmp(*e, "CCACHE_DIR=", 11) == 0 && (*e)[11] == '/') ||
		           (strncmp(*e, "DISTCC_DIR=", 11) == 0 && (*e)[11] == '/')) {
			/* the launcher's state, perhaps in a hidden directory: made now, as a directory
			 * that does not exist cannot be bound */
			mkdir_p(*e + 11, 0755);
			strlist_add(&writable, *e + 11);
		}
	for (size_t i = 0; r->o->secrets && i < r->o->secrets->n; i++)
		strlist_add(&mask, r->o->secrets->v[i]);
	j->sandbox = (struct run_sandbox){.no_network = !r->o->allow_network, .chroot = n->stage->chroot,
	                                  .hide = list_end(&hide), .read_only = list_end(&read_only),
	                                  .writable = list_end(&writable), .mask = list_end(&mask)};
}

/* As root, steps run as another user (run.h): the directories they write become that user's
 * (the stage's directory always; a launcher's shared state once). */
static int give_to_step_user(const struct run_sandbox *sb)
{
	uid_t uid;
	gid_t gid;
	if (!run_step_owner(&uid, &gid) || !run_isolation())
		return 0;
	int rc = 0;
	for (size_t i = 0; sb->writable[i] && rc == 0; i++) {
		struct stat st;
		if (i > 0 && lstat(sb->writable[i], &st) == 0 && st.st_uid == uid)
			continue;
		rc = tree_chown(sb->writable[i], uid, gid);
	}
	return rc;
}

static void sandbox_release(struct run_sandbox *sb)
{
	const char *const *lists[] = {sb->hide, sb->read_only, sb->writable, sb->mask};
	for (size_t i = 0; i < 4; i++) {
		for (const char *const *p = lists[i]; p && *p; p++)
			free((char *)*p);
		free((void *)lists[i]);
	}
	*sb = (struct run_sandbox){0};
}

static void tail_log(const char *path, int lines)
{
	char *text = read_file(path, NULL);
	if (!text)
		return;
	size_t len = strlen(text);
	const char *p = text + len;
	int seen = 0;
	while (p > text) {
		p--;
		if (*p == '\n' && p != text + len - 1 && ++seen == lines) {
			p++;
			break;
		}
	}
	fprintf(stderr, "---- last %d lines of %s ----\n%s%s---- end of log ----\n", lines, path, p,
	        len && text[len - 1] != '\n' ? "\n" : "");
	free(text);
}

static int open_log(const struct plan *p, const struct node *n, struct job *j)
{
	char *dir = n->kind == NODE_STAGE ? xasprintf("%s/logs/%s", p->dirs.work, n->target->name)
	                                  : xasprintf("%s/logs/sources", p->dirs.work);
	if (mkdir_p(dir, 0755) < 0) {
		free(dir);
		return -1;
	}
	free(j->log_path);
	j->log_path = n->kind == NODE_STAGE
	                  ? xasprintf("%s/%s.log", dir, n->stage->name)
	                  : xasprintf("%s/%s-%s.log", dir, n->source->name, n->source->version);
	free(dir);
	j->log_fd = open(j->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (j->log_fd < 0) {
		error("cannot create log '%s':", j->log_path);
		return -1;
	}
	return 0;
}

static pid_t start_step(struct run *r, struct node *n)
{
	struct job *j = &r->jobs[n->index];
	const struct step *s = &n->stage->steps[j->step];
	char *cmd = plan_expand(n, s->command, &s->where);
	if (!cmd)
		return -1;
	dprintf(j->log_fd, "\n$ %s\n", cmd);
	j->step_started = now_seconds();
	if (r->o->verbose)
		info("[%s] $ %s", n->label, cmd);
	char *build = stage_path(n, "build");
	pid_t pid = run_step(cmd, build, j->env, j->log_fd, &j->sandbox);
	free(build);
	free(cmd);
	return pid;
}

static int split_child(void *arg)
{
	struct job *j = arg;
	return debuginfo_split(j->objcopy, j->dest) < 0 ? 1 : 0;
}

/* After the last step of a `debug: split` stage, beside other builds (a forked child). */
static pid_t start_split(struct run *r, struct node *n)
{
	struct job *j = &r->jobs[n->index];
	free(j->objcopy);
	free(j->dest);
	j->objcopy = plan_expand(n, "${objcopy}", NULL);
	j->dest = stage_path(n, "dest");
	if (!j->objcopy)
		return -1;
	dprintf(j->log_fd, "\n# debug: split (%s) in %s\n", j->objcopy, j->dest);
	j->splitting = true;
	j->step_started = now_seconds();
	return run_function(split_child, j, j->log_fd);
}

/* The record of the key a `resume: true` stage's directory was made for: beside it, out of
 * its steps' reach (they can write only inside the directory). */
static char *resume_mark(const struct node *n)
{
	return xasprintf("%s.key", n->base);
}

/* Empty the stage's directory for a run. A `resume: true` stage whose last run with the same
 * key stopped before its end (interrupted, failed, killed) keeps build/: its steps run again
 * there, and ninja or make redo only what is left. Anything else starts from nothing. */
static int clear_stage_dir(const struct node *n, bool *resumed)
{
	char *mark = resume_mark(n);
	size_t len = 0;
	char *recorded = n->stage->resume && path_exists(mark) ? read_file(mark, &len) : NULL;
	char *build = stage_path(n, "build");
	*resumed = recorded && len == strlen(n->key) && memcmp(recorded, n->key, len) == 0 &&
	           is_dir(build);
	free(recorded);
	int rc = 0;
	if (*resumed) {
		struct strlist names = {0};
		list_dir(n->base, &names);
		for (size_t i = 0; i < names.n && rc == 0; i++)
			if (strcmp(names.v[i], "build") != 0) {
				char *path = path_join(n->base, names.v[i]);
				rc = remove_tree(path);
				free(path);
			}
		strlist_release(&names);
	} else {
		rc = remove_tree(n->base);
		if (rc == 0 && unlink(mark) < 0 && errno != ENOENT)
			rc = -1;
		if (rc == 0 && n->stage->resume && (mkdir_p(n->base, 0755) < 0 ||
		    write_file_atomic(mark, n->key, strlen(n->key), 0644) < 0))
			rc = -1;
	}
	free(build);
	free(mark);
	return rc;
}

static pid_t start_stage(struct run *r, struct node *n)
{
	struct plan *p = r->p;
	struct job *j = &r->jobs[n->index];
	bool resumed;
	int rc = clear_stage_dir(n, &resumed);
	info("build   %s: %zu steps%s, log %s", n->label, n->stage->n_steps,
	     resumed ? ", resumed in the build directory an earlier run left" : "", j->log_path);
	const char *parts[] = {"sysroot", "tools", "build", "dest", "home"};
	for (size_t i = 0; i < 5 && rc == 0; i++) {
		char *dir = stage_path(n, parts[i]);
		rc = mkdir_p(dir, 0755);
		free(dir);
	}
	if (rc == 0 && n->stage->sources.n > 0) {   /* ${src}: see stage_vars() in plan.c */
		char *link = stage_path(n, "src");
		if (symlink(n->trees[0]->tree_dir, link) < 0) {
			error("cannot link '%s' to '%s':", link, n->trees[0]->tree_dir);
			rc = -1;
		}
		free(link);
	}
	char *sysroot = stage_path(n, "sysroot"), *tools = stage_path(n, "tools");
	char *cmake = stage_path(n, "toolchain.cmake");
	if (rc == 0)
		rc = fill_private_dirs(p, n, sysroot, tools);
	if (rc == 0 && !n->stage->has_machine)   /* it names the target: not for shared stages */
		rc = toolchain_write_cmake_file(cmake, n->target, &n->vars);
	free(sysroot);
	free(tools);
	free(cmake);
	if (rc < 0)
		return -1;
	j->env = stage_environment(r, n);
	stage_sandbox(r, n, j->env, j);
	if (give_to_step_user(&j->sandbox) < 0)
		return -1;
	j->step = 0;
	j->splitting = false;
	pid_t pid = start_step(r, n);
	j->pid_group = pid;
	return pid;
}

/* ---- scheduler callbacks ---- */

/* Another stage instance of this run with the same key (targets that share a stage): the
 * one running or built, or NULL. */
static struct node *twin_of(const struct plan *p, const struct node *n, bool running)
{
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *o = p->nodes[i];
		if (o != n && o->kind == NODE_STAGE && strcmp(o->key, n->key) == 0 &&
		    (running ? o->state == NODE_RUNNING : o->state == NODE_DONE))
			return o;
	}
	return NULL;
}

static int prepare(void *ctx, struct node *n)
{
	struct run *r = ctx;
	if (n->kind != NODE_STAGE)
		return 0;
	if (n->state == NODE_PENDING) {
		if (plan_resolve(r->p, n) < 0)
			return -1;
		if (n->state == NODE_CACHED) {
			info("cached  %s: its dependencies' output did not change", n->label);
			return 1;
		}
		int pulled = remote_pull_stage(r->o->remote, r->p, n);
		if (pulled != 0)
			return pulled;
		if (r->o->pull_only) {
			error("--pull-only: %s is in neither the stage cache nor the remote cache (key %s); "
			      "a build without --pull-only makes it", n->label, n->key);
			return -1;
		}
	}
	/* A stage two targets share is built once: the second waits, then takes the result */
	if (twin_of(r->p, n, true))
		return SCHED_LATER;
	const struct node *built = twin_of(r->p, n, false);
	if (built) {
		int found = cache_lookup(r->p->dirs.stage_cache, n->key, r->p->verify, n->output);
		if (found < 0)
			return -1;
		if (found) {
			info("cached  %s: built for %s in this run", n->label, built->target->name);
			return 1;
		}
	}
	return 0;
}

static pid_t start(void *ctx, struct node *n)
{
	struct run *r = ctx;
	struct job *j = &r->jobs[n->index];
	j->started = now_seconds();
	if (open_log(r->p, n, j) < 0)
		return -1;
	if (n->kind == NODE_TREE) {
		info("extract %s", n->label);
		return run_function(prepare_tree, n, j->log_fd);
	}
	pid_t pid = start_stage(r, n);
	if (pid < 0)
		error("cannot start %s; log %s", n->label, j->log_path);
	return pid;
}

static void job_done(struct run *r, struct node *n)
{
	struct job *j = &r->jobs[n->index];
	n->seconds = now_seconds() - j->started;
	if (j->log_fd >= 0)
		close(j->log_fd);
	j->log_fd = -1;
	free_env(j->env);
	sandbox_release(&j->sandbox);
	j->env = NULL;
	free(j->objcopy);
	free(j->dest);
	j->objcopy = j->dest = NULL;
}

static void remember_seconds(const struct plan *p, const struct node *n)
{
	char *path = xasprintf("%s/state/%s/%s.seconds", p->dirs.work, n->target->name,
	                       n->stage->name);
	char *text = xasprintf("%.1f\n", n->seconds);
	write_file_atomic(path, text, strlen(text), 0644);
	free(path);
	free(text);
}

static bool target_built(const struct plan *p, const struct target *t);

/* A target whose last stage just finished gets its sysroot now, not when every target of the
 * run is built: the first targets of a long run can be used (and tested) while it goes on. */
static void assemble_ready(struct run *r)
{
	size_t left = 0;   /* targets still waiting for a stage */
	for (size_t t = 0; t < r->p->n_targets; t++)
		left += !r->assembled[t] && !target_built(r->p, r->p->targets[t]);
	for (size_t t = 0; t < r->p->n_targets; t++) {
		const struct target *target = r->p->targets[t];
		if (r->assembled[t] || !target_built(r->p, target))
			continue;
		if (sysroot_assemble(r->p, target) < 0)
			continue;   /* said why; the end of the run tries again and fails there */
		r->assembled[t] = true;
		if (left)   /* else the run's own last lines say it */
			info("sysroot %s: %s/%s (ready; the run goes on)", target->name, r->p->dirs.out,
			     target->name);
	}
}

static pid_t child_ended(void *ctx, struct node *n, int status)
{
	struct run *r = ctx;
	struct job *j = &r->jobs[n->index];
	char how[96], took[32];
	if (n->kind == NODE_TREE) {
		job_done(r, n);
		if (status != 0) {
			error("cannot prepare %s: extraction or patching %s; log %s", n->label,
			      run_describe(status, how), j->log_path);
			tail_log(j->log_path, 20);
			if (WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FETCH)
				r->extract_failed = true;
			return -1;
		}
		info("done    %s in %s", n->label, format_duration(n->seconds, took));
		return 0;
	}
	/* whatever the step left running in the background ends with it */
	run_kill_group(r->jobs[n->index].pid_group, SIGKILL);
	if (status != 0 && j->splitting) {
		if (!interrupted) {
			error("stage '%s' of target '%s' failed: splitting its debug information into "
			      "usr/lib/debug (debug: split in %s) %s; log: %s", n->stage->name,
			      n->target->name, n->stage->path, run_describe(status, how), j->log_path);
			tail_log(j->log_path, 20);
		}
		job_done(r, n);
		return -1;
	}
	if (status != 0) {
		if (!interrupted) {
			const struct step *s = &n->stage->steps[j->step];
			char *cmd = plan_expand(n, s->command, &s->where);
			error("stage '%s' of target '%s' failed: step %zu of %zu (%s:%zu) %s:\n  %s\n"
			      "log: %s%s", n->stage->name, n->target->name, j->step + 1, n->stage->n_steps,
			      s->where.path, s->where.line, run_describe(status, how), cmd, j->log_path,
			      !r->o->allow_network && run_isolation()
			          ? "\n(build steps have no network: a step that downloads or connects "
			            "anywhere fails; declare what it needs in sources/. They see of the "
			            "work directory, caches and sysroots only their stage's directory and "
			            "declared source trees)" : "");
			free(cmd);
			tail_log(j->log_path, 20);
		}
		job_done(r, n);
		return -1;
	}
	if (j->splitting) {
		dprintf(j->log_fd, "# splitting debug information took %.1f s\n",
		        now_seconds() - j->step_started);
	} else {
		dprintf(j->log_fd, "# step %zu took %.1f s\n", j->step + 1, now_seconds() - j->step_started);
		j->step++;
	}
	/* a static-only target has no shared object to keep DWARF apart from: its archives keep
	 * what ${debug_flag} gave them (recipes.h) */
	bool split = j->step == n->stage->n_steps && n->stage->split_debug &&
	             !n->target->static_only && !j->splitting;
	if (split || j->step < n->stage->n_steps) {
		pid_t pid = split ? start_split(r, n) : start_step(r, n);
		if (pid > 0)
			j->pid_group = pid;
		else
			job_done(r, n);
		return pid > 0 ? pid : -1;
	}
	job_done(r, n);
	char *dest = stage_path(n, "dest");
	char *owner = xasprintf("%s %s", n->target->name, n->stage->name);
	int rc = cache_publish(r->p->dirs.stage_cache, n->key, dest, &n->inputs, owner, n->seconds,
	                       n->output);
	free(dest);
	free(owner);
	if (rc == 0)
		rc = plan_remember(r->p, n);
	if (rc < 0) {
		error("cannot publish %s into the stage cache", n->label);
		return -1;
	}
	remember_seconds(r->p, n);
	remove_tree(n->base);
	char *mark = resume_mark(n);
	unlink(mark);
	free(mark);
	info("done    %s in %s", n->label, format_duration(n->seconds, took));
	remote_push_stage(r->o->remote, r->p, n);
	n->state = NODE_DONE;   /* as the scheduler marks it next: its target may be complete */
	assemble_ready(r);
	return 0;
}

static bool exclusive(void *ctx, const struct node *n)
{
	(void)ctx;
	return n->kind == NODE_STAGE && n->stage->exclusive;
}

/* Seconds a node is expected to take: its last build here, else a guess by kind. */
/* Seconds recorded in `path`, or -1. */
static double read_seconds(const char *path)
{
	double s = -1;
	FILE *f = fopen(path, "re");
	if (f) {
		if (fscanf(f, "%lf", &s) != 1 || s < 0)
			s = -1;
		fclose(f);
	}
	return s;
}

static double estimate(void *ctx, const struct node *n)
{
	struct run *r = ctx;
	if (n->kind == NODE_TREE)
		return 5;
	char *path = xasprintf("%s/state/%s/%s.seconds", r->p->dirs.work, n->target->name,
	                       n->stage->name);
	double s = read_seconds(path);
	free(path);
	if (s >= 0)
		return s;
	/* never built for this target: the same stage for the other targets is a better guess
	 * than any constant (a first `--all` learns libcxx is long from the first target) */
	path = xasprintf("%s/state/*/%s.seconds", r->p->dirs.work, n->stage->name);
	glob_t g;
	double sum = 0;
	size_t count = 0;
	if (glob(path, 0, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			if ((s = read_seconds(g.gl_pathv[i])) >= 0) {
				sum += s;
				count++;
			}
		globfree(&g);
	}
	free(path);
	return count ? sum / (double)count : 60 + 10.0 * (double)n->stage->n_steps;
}

/* A build tool's own count of its work: the last "[N/M]" status line ninja wrote to the
 * step's log (read from the end: the log of a long stage is large). */
static bool ninja_progress(const char *log_path, long *done, long *total)
{
	char tail[8192];
	int fd = open(log_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	off_t size = lseek(fd, 0, SEEK_END);
	off_t from = size > (off_t)sizeof(tail) - 1 ? size - (off_t)sizeof(tail) + 1 : 0;
	ssize_t got = size > 0 ? pread(fd, tail, sizeof(tail) - 1, from) : 0;
	close(fd);
	if (got <= 0)
		return false;
	tail[got] = '\0';
	for (char *line = tail + got; line > tail; line--) {
		if (line[-1] != '\n' || line[0] != '[')
			continue;
		char close;
		if (sscanf(line, "[%ld/%ld%c", done, total, &close) == 3 && close == ']' &&
		    *done >= 0 && *total > 0 && *done <= *total)
			return true;
	}
	return false;
}

static void describe(void *ctx, const struct node *n, struct buf *out)
{
	struct run *r = ctx;
	const struct job *j = &r->jobs[n->index];
	char took[32];
	buf_puts(out, n->label);
	if (n->kind == NODE_STAGE)
		buf_printf(out, " %zu/%zu", j->step + 1, n->stage->n_steps);
	buf_printf(out, " %s", format_duration(now_seconds() - j->started, took));
	long done, total;
	if (n->kind != NODE_STAGE || j->splitting || !j->log_path ||
	    !ninja_progress(j->log_path, &done, &total))
		return;
	buf_printf(out, " (ninja %ld/%ld", done, total);
	/* by the rate of this step so far: after a resume, ninja's count starts over at what is
	 * left, so the rate stays right */
	double spent = now_seconds() - j->step_started;
	if (done >= 20 && spent >= 60)
		buf_printf(out, ", about %s left",
		           format_duration(spent * (double)(total - done) / (double)done, took));
	buf_puts(out, ")");
}

/* ---- reports ---- */

/* Leftovers of interrupted runs: never mistaken for results, removed before we start. */
static void remove_leftovers(const struct plan *p)
{
	char *src = path_join(p->dirs.work, "src");
	struct strlist names = {0};
	list_dir(src, &names);
	for (size_t i = 0; i < names.n; i++)
		if (strstr(names.v[i], ".new.") || strstr(names.v[i], ".tmp.")) {
			char *path = path_join(src, names.v[i]);
			remove_tree(path);
			free(path);
		}
	strlist_release(&names);
	free(src);
	cache_remove_leftovers(p->dirs.stage_cache);
}

/* Sandboxes a dead run left in the work directory: looked for (a scan of /proc) only when
 * steps are about to start, which is when one could be in the way. */
static void reap_dead_steps(const struct plan *p)
{
	char *build = path_join(p->dirs.work, "build");
	run_reap_steps(build);   /* we hold the work directory: no live run has steps there */
	free(build);
}

/* The chain of dependent nodes with the largest summed run time: what bounds the wall time
 * however many cores there are. */
static void report_critical_path(const struct plan *p)
{
	double *longest = xcalloc(p->n_nodes + 1, sizeof(*longest));
	size_t *via = xcalloc(p->n_nodes + 1, sizeof(*via));
	size_t end = 0;
	for (size_t i = 0; i < p->n_nodes; i++) {   /* nodes are in dependency order */
		const struct node *n = p->nodes[i];
		double before = 0;
		via[i] = (size_t)-1;
		for (size_t d = 0; d < n->n_deps; d++)
			if (longest[n->deps[d]->index] > before) {
				before = longest[n->deps[d]->index];
				via[i] = n->deps[d]->index;
			}
		longest[i] = before + (n->state == NODE_DONE ? n->seconds : 0);
		if (longest[i] > longest[end])
			end = i;
	}
	struct buf path = {0};
	char took[32];
	for (size_t i = end; i != (size_t)-1; i = via[i]) {
		char *part = xasprintf("%s (%s)%s%s", p->nodes[i]->label,
		                       format_duration(p->nodes[i]->seconds, took), path.len ? " -> " : "",
		                       path.s ? path.s : "");
		buf_release(&path);
		buf_puts(&path, part);
		free(part);
	}
	info("critical path %s: %s", format_duration(longest[end], took), path.s ? path.s : "");
	buf_release(&path);
	free(longest);
	free(via);
}

static void report_times(const struct plan *p)
{
	char took[32];
	info("\nstage times:");
	for (size_t i = 0; i < p->n_nodes; i++) {
		const struct node *n = p->nodes[i];
		if (n->state == NODE_DONE)
			info("  %-44s %s", n->label, format_duration(n->seconds, took));
		else if (n->state == NODE_CACHED && n->kind == NODE_STAGE)
			info("  %-44s cached", n->label);
	}
}

/* --pull-only: every stage whose key is known must have come from a cache by now; what is
 * left are pending stages, which may still turn out cached. Their sources are not needed. */
static int refuse_to_build(struct plan *p)
{
	size_t missing = 0;
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		if (n->kind == NODE_STAGE && n->state == NODE_WAITING) {
			error("--pull-only: %s is in neither the stage cache nor the remote cache (key %s)",
			      n->label, n->key);
			missing++;
		}
	}
	plan_skip_trees(p);   /* what is left of them, no stage will read */
	if (missing)
		info("crossroot: %zu stage%s to build; a build without --pull-only makes %s", missing,
		     missing == 1 ? "" : "s", missing == 1 ? "it" : "them");
	return missing ? -1 : 0;
}

/* Have all the stages a target's sysroot is made of (and its tools) been built or found? */
static bool target_built(const struct plan *p, const struct target *t)
{
	struct node **stages, **tools;
	size_t n = plan_target_stages(p, t, &stages), n_tools = plan_toolchain_stages(p, t, &tools);
	bool built = true;
	for (size_t i = 0; i < n + n_tools && built; i++) {
		enum node_state s = (i < n ? stages[i] : tools[i - n])->state;
		built = s == NODE_DONE || s == NODE_CACHED;
	}
	free(stages);
	free(tools);
	return built;
}

static int run_build(struct run *r)
{
	struct plan *p = r->p;
	const struct build_options *o = r->o;
	double started = now_seconds();
	if (remote_pull_plan(o->remote, p) < 0)
		return EXIT_FAILED;
	if (o->pull_only && refuse_to_build(p) < 0)
		return EXIT_FAILED;
	size_t todo = 0;
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i]->state == NODE_WAITING || p->nodes[i]->state == NODE_PENDING)
			todo++;
	int rc = EXIT_OK;
	remove_leftovers(p);
	if (todo) {
		reap_dead_steps(p);
		rc = build_fetch(p, o);
		if (rc != EXIT_OK)
			return rc;
		if (jobserver_init(&r->js, p->jobs) < 0)
			return EXIT_FAILED;
		r->jobs = xcalloc(p->n_nodes + 1, sizeof(*r->jobs));
		for (size_t i = 0; i < p->n_nodes; i++)
			r->jobs[i].log_fd = -1;
		assemble_ready(r);   /* the targets found whole in the cache */
		struct sched_ops ops = {r, prepare, start, child_ended, exclusive, estimate, describe};
		bool failed = sched_run(p, &ops, &r->js, o->keep_going) < 0;
		for (size_t i = 0; i < p->n_nodes; i++)
			free(r->jobs[i].log_path);
		free(r->jobs);
		jobserver_release(&r->js);
		if (interrupted) {
			struct buf left = {0};
			for (size_t i = 0; i < p->n_nodes; i++) {
				enum node_state s = p->nodes[i]->state;
				if (s == NODE_FAILED || s == NODE_WAITING || s == NODE_PENDING || s == NODE_RUNNING)
					buf_printf(&left, "\n  %s", p->nodes[i]->label);
			}
			error("interrupted; left unfinished (the next run resumes here):%s",
			      left.s ? left.s : "");
			buf_release(&left);
			return EXIT_INTERRUPTED;
		}
		if (failed)   /* the targets that were complete have their sysroots (assemble_ready) */
			return r->extract_failed ? EXIT_FETCH : EXIT_FAILED;
	}
	for (size_t t = 0; t < p->n_targets; t++)
		if (!r->assembled[t] && sysroot_assemble(p, p->targets[t]) < 0)
			return EXIT_FAILED;
	if (todo) {
		report_times(p);
		report_critical_path(p);
		char took[32];
		info("total %s", format_duration(now_seconds() - started, took));
	}
	for (size_t t = 0; t < p->n_targets; t++)
		info("sysroot %s: %s/%s (compilers: %s/%s/bin/%s-clang, -clang++)", p->targets[t]->name,
		     p->dirs.out, p->targets[t]->name, p->dirs.out, p->targets[t]->name,
		     p->targets[t]->name);
	return EXIT_OK;
}

int build_run(struct plan *p, const struct build_options *o)
{
	struct run r = {.p = p, .o = o, .assembled = xcalloc(p->n_targets + 1, sizeof(bool))};
	int rc = run_build(&r);
	free(r.assembled);
	return rc;
}
