/* build: scheduling trees and stages, stage publication, sysroot assembly. See build.h. */
#define _GNU_SOURCE
#include "build.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "extract.h"
#include "run.h"
#include "sysroot.h"
#include "util.h"

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
	return rc == 0 ? EXIT_OK : EXIT_FETCH;
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
	if (extract_archive(&eo) < 0) {
		free(dest);
		return -1;
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
	if (rename(dest, t->tree_dir) < 0) {
		error("cannot rename '%s' to '%s':", dest, t->tree_dir);
		remove_tree(dest);
		free(dest);
		return -1;
	}
	free(dest);
	return 0;
}

/* ---- stage results ---- */

/* Manifest format (written into <key>/manifest):
 *   crossroot-manifest 1
 *   f <mode octal> <sha256> <path>     regular file
 *   l - <target> <path>                symbolic link
 *   d <mode octal> - <path>            directory */
static int manifest_walk(const char *root, const char *rel, struct buf *out)
{
	char *dir = rel[0] ? path_join(root, rel) : xstrdup(root);
	struct strlist names = {0};
	int rc = list_dir(dir, &names);
	for (size_t i = 0; i < names.n && rc == 0; i++) {
		char *r = rel[0] ? xasprintf("%s/%s", rel, names.v[i]) : xstrdup(names.v[i]);
		char *full = path_join(root, r);
		struct stat st;
		if (lstat(full, &st) < 0) {
			error("cannot stat '%s':", full);
			rc = -1;
		} else if (S_ISLNK(st.st_mode)) {
			char target[4096];
			ssize_t n = readlink(full, target, sizeof(target) - 1);
			target[n < 0 ? 0 : n] = '\0';
			buf_printf(out, "l - %s %s\n", target, r);
		} else if (S_ISDIR(st.st_mode)) {
			buf_printf(out, "d %o - %s\n", st.st_mode & 07777, r);
			rc = manifest_walk(root, r, out);
		} else if (S_ISREG(st.st_mode)) {
			char hex[DIGEST_HEX_LEN + 1];
			rc = digest_file(full, hex);
			buf_printf(out, "f %o %s %s\n", st.st_mode & 07777, hex, r);
		} else {
			error("stage output '%s' is not a file, link or directory", full);
			rc = -1;
		}
		free(full);
		free(r);
	}
	strlist_release(&names);
	free(dir);
	return rc;
}

static char *stage_base(const struct plan *p, const struct node *n)
{
	return xasprintf("%s/build/%s/%s", p->dirs.work, n->target->name, n->stage->name);
}

static int write_lines(const char *path, const struct strlist *lines)
{
	struct buf b = {0};
	for (size_t i = 0; i < lines->n; i++)
		buf_printf(&b, "%s\n", lines->v[i]);
	int rc = write_file_atomic(path, b.s ? b.s : "", b.len, 0644);
	buf_release(&b);
	return rc;
}

/* Move a finished stage's DESTDIR into the stage cache under its key. */
static int publish_stage(const struct plan *p, struct node *n)
{
	char *base = stage_base(p, n);
	char *dest = xasprintf("%s/dest", base);
	char *tmp = xasprintf("%s/.tmp-%s-%ld", p->dirs.stage_cache, n->key, (long)getpid());
	char *files = xasprintf("%s/files", tmp);
	char *result = plan_stage_result(p, n);
	char *manifest_path = xasprintf("%s/manifest", tmp);
	char *inputs_path = xasprintf("%s/inputs", tmp);
	struct buf manifest = {0};
	int rc = -1;
	buf_puts(&manifest, "crossroot-manifest 1\n");
	remove_tree(tmp);
	if (mkdir_p(tmp, 0755) < 0)
		goto out;
	if (rename(dest, files) < 0) {
		/* the cache may live on another file system than the work directory */
		if (errno != EXDEV || copy_tree(dest, files, false) < 0) {
			error("cannot move '%s' to '%s':", dest, files);
			goto out;
		}
		remove_tree(dest);
	}
	if (manifest_walk(files, "", &manifest) < 0 ||
	    write_file_atomic(manifest_path, manifest.s, manifest.len, 0644) < 0 ||
	    write_lines(inputs_path, &n->inputs) < 0)
		goto out;
	/* who made it, for `crossroot prune` */
	char *owner_path = xasprintf("%s/owner", tmp);
	char *owner = xasprintf("%s %s\n", n->target->name, n->stage->name);
	int written = write_file_atomic(owner_path, owner, strlen(owner), 0644);
	free(owner_path);
	free(owner);
	if (written < 0)
		goto out;
	if (rename(tmp, result) < 0) {
		if (errno != EEXIST && errno != ENOTEMPTY) {
			error("cannot rename '%s' to '%s':", tmp, result);
			goto out;
		}
		remove_tree(tmp);   /* another crossroot published the same key first */
	}
	char *state_dir = xasprintf("%s/state/%s", p->dirs.work, n->target->name);
	char *last = xasprintf("%s/%s.inputs", state_dir, n->stage->name);
	rc = mkdir_p(state_dir, 0755) == 0 ? write_lines(last, &n->inputs) : -1;
	free(state_dir);
	free(last);
	if (rc == 0)
		remove_tree(base);
out:
	if (rc < 0)
		remove_tree(tmp);
	buf_release(&manifest);
	free(base);
	free(dest);
	free(tmp);
	free(files);
	free(result);
	free(manifest_path);
	free(inputs_path);
	return rc;
}

/* Fill the stage's private sysroot with the results of all it depends on, transitively. */
static int fill_sysroot(const struct plan *p, const struct node *n, const char *sysroot,
                        struct strlist *done)
{
	for (size_t i = 0; i < n->stage->depends.n; i++) {
		const struct node *dep = n->stage_deps[i];
		if (strlist_has(done, dep->key))
			continue;
		strlist_add(done, dep->key);
		if (fill_sysroot(p, dep, sysroot, done) < 0)
			return -1;
		char *result = plan_stage_result(p, dep);
		char *files = path_join(result, "files");
		int rc = copy_tree(files, sysroot, true);
		free(files);
		free(result);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* ---- the scheduler ---- */

/* SIGCHLD (and SIGINT through `interrupted`) wake the scheduler through this pipe, so it
 * sleeps in poll() instead of spinning. */
static int wake_pipe[2] = {-1, -1};

static void on_child(int sig)
{
	(void)sig;
	int saved = errno;
	if (write(wake_pipe[1], "c", 1) < 0) {
		/* full pipe: a wake-up is pending anyway */
	}
	errno = saved;
}

static void drain_wake_pipe(void)
{
	char junk[64];
	while (read(wake_pipe[0], junk, sizeof(junk)) > 0)
		;
}

struct run {
	struct plan *p;
	const struct build_options *o;
	struct jobserver js;
	char **env;
	size_t running;
	bool exclusive_running;
	bool failed;
};

static char **build_environment(const struct plan *p, struct jobserver *js)
{
	struct strlist env = {0};
	strlist_take(&env, xasprintf("PATH=%s:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	                             p->dirs.llvm_bin));
	strlist_add(&env, "LC_ALL=C");
	strlist_add(&env, "TZ=UTC");
	strlist_add(&env, "TERM=dumb");
	strlist_add(&env, "SOURCE_DATE_EPOCH=1");
	strlist_take(&env, xasprintf("HOME=%s/home", p->dirs.work));
	char *flags = jobserver_makeflags(js);
	strlist_take(&env, xasprintf("MAKEFLAGS=%s", flags));
	free(flags);
	strlist_take(&env, NULL);
	return env.v;
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

static int open_log(const struct plan *p, struct node *n)
{
	char *dir = n->kind == NODE_STAGE ? xasprintf("%s/logs/%s", p->dirs.work, n->target->name)
	                                  : xasprintf("%s/logs/sources", p->dirs.work);
	if (mkdir_p(dir, 0755) < 0) {
		free(dir);
		return -1;
	}
	free(n->log_path);
	n->log_path = n->kind == NODE_STAGE
	                  ? xasprintf("%s/%s.log", dir, n->stage->name)
	                  : xasprintf("%s/%s-%s.log", dir, n->source->name, n->source->version);
	free(dir);
	n->log_fd = open(n->log_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (n->log_fd < 0) {
		error("cannot create log '%s':", n->log_path);
		return -1;
	}
	return 0;
}

static int start_step(struct run *r, struct node *n)
{
	const struct step *s = &n->stage->steps[n->step];
	char *cmd = plan_expand(n, s->command, &s->where);
	if (!cmd)
		return -1;
	dprintf(n->log_fd, "\n$ %s\n", cmd);
	n->step_started = now_seconds();
	if (r->o->verbose)
		info("[%s] $ %s", n->label, cmd);
	char *build = xasprintf("%s/build/%s/%s/build", r->p->dirs.work, n->target->name,
	                        n->stage->name);
	n->pid = run_shell(cmd, build, r->env, n->log_fd);
	free(build);
	free(cmd);
	return n->pid < 0 ? -1 : 0;
}

static int start_node(struct run *r, struct node *n)
{
	struct plan *p = r->p;
	n->started = now_seconds();
	n->state = NODE_RUNNING;
	if (open_log(p, n) < 0)
		return -1;
	if (n->kind == NODE_TREE) {
		info("extract %s", n->label);
		n->pid = run_function(prepare_tree, n, n->log_fd);
		return n->pid < 0 ? -1 : 0;
	}
	info("build   %s: %zu steps, log %s", n->label, n->stage->n_steps, n->log_path);
	char *base = stage_base(p, n);
	char *sysroot = xasprintf("%s/sysroot", base);
	char *build = xasprintf("%s/build", base);
	char *dest = xasprintf("%s/dest", base);
	char *home = xasprintf("%s/home", p->dirs.work);
	struct strlist done = {0};
	int rc = remove_tree(base);
	if (rc == 0)
		rc = mkdir_p(sysroot, 0755) | mkdir_p(build, 0755) | mkdir_p(dest, 0755) |
		     mkdir_p(home, 0755);
	if (rc == 0)
		rc = fill_sysroot(p, n, sysroot, &done);
	strlist_release(&done);
	free(base);
	free(sysroot);
	free(build);
	free(dest);
	free(home);
	n->step = 0;
	if (rc < 0)
		return -1;
	return start_step(r, n);
}

static void node_finished(struct run *r, struct node *n, bool ok)
{
	char took[32];
	n->seconds = now_seconds() - n->started;
	n->pid = 0;
	if (n->log_fd >= 0)
		close(n->log_fd);
	n->log_fd = -1;
	if (n->holds_token)
		jobserver_return(&r->js);
	if (n->kind == NODE_STAGE && n->stage->exclusive)
		r->exclusive_running = false;
	n->holds_token = false;
	r->running--;
	if (!ok) {
		n->state = NODE_FAILED;
		r->failed = true;
		return;
	}
	n->state = NODE_DONE;
	info("done    %s in %s", n->label, format_duration(n->seconds, took));
	for (size_t i = 0; i < n->n_users; i++)
		n->users[i]->blocked--;
}

/* A child of node `n` ended with `status`: go on with the next step, publish, or fail. */
static void child_ended(struct run *r, struct node *n, int status)
{
	char how[96];
	if (n->kind == NODE_TREE) {
		if (status != 0) {
			error("cannot prepare %s: extraction or patching %s; log %s", n->label,
			      run_describe(status, how), n->log_path);
			tail_log(n->log_path, 20);
		}
		node_finished(r, n, status == 0);
		return;
	}
	if (status != 0) {
		if (!interrupted) {
			const struct step *s = &n->stage->steps[n->step];
			char *cmd = plan_expand(n, s->command, &s->where);
			error("stage '%s' of target '%s' failed: step %zu of %zu (%s:%zu) %s:\n  %s\n"
			      "log: %s", n->stage->name, n->target->name, n->step + 1, n->stage->n_steps,
			      s->where.path, s->where.line, run_describe(status, how), cmd, n->log_path);
			free(cmd);
			tail_log(n->log_path, 20);
		}
		node_finished(r, n, false);
		return;
	}
	dprintf(n->log_fd, "# step %zu took %.1f s\n", n->step + 1, now_seconds() - n->step_started);
	n->step++;
	if (n->step < n->stage->n_steps) {
		if (start_step(r, n) < 0)
			node_finished(r, n, false);
		return;
	}
	node_finished(r, n, publish_stage(r->p, n) == 0);
}

static struct node *node_of_pid(struct plan *p, pid_t pid)
{
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i]->state == NODE_RUNNING && p->nodes[i]->pid == pid)
			return p->nodes[i];
	return NULL;
}

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
}

/* The chain of dependent nodes with the largest summed run time: what bounds the wall time
 * however many cores there are. */
static void report_critical_path(const struct plan *p)
{
	double *longest = xcalloc(p->n_nodes, sizeof(*longest));
	size_t *via = xcalloc(p->n_nodes, sizeof(*via));
	size_t end = 0;
	for (size_t i = 0; i < p->n_nodes; i++) {   /* nodes are in dependency order */
		const struct node *n = p->nodes[i];
		double before = 0;
		via[i] = (size_t)-1;
		for (size_t d = 0; d < n->n_deps; d++)
			for (size_t j = 0; j < i; j++)
				if (p->nodes[j] == n->deps[d] && longest[j] > before) {
					before = longest[j];
					via[i] = j;
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
		else if (n->state == NODE_CACHED)
			info("  %-44s cached", n->label);
	}
}

/* On a terminal, one status line under the log lines: what runs, at which step, how long. */
static void show_running(const struct plan *p, double started)
{
	struct buf line = {0};
	char took[32];
	double now = now_seconds();
	buf_printf(&line, "[%s]", format_duration(now - started, took));
	for (size_t i = 0; i < p->n_nodes; i++) {
		const struct node *n = p->nodes[i];
		if (n->state != NODE_RUNNING)
			continue;
		buf_printf(&line, "  %s", n->label);
		if (n->kind == NODE_STAGE)
			buf_printf(&line, " %zu/%zu", n->step + 1, n->stage->n_steps);
		buf_printf(&line, " %s", format_duration(now - n->started, took));
	}
	status_show(line.s);
	buf_release(&line);
}

int build_run(struct plan *p, const struct build_options *o)
{
	double started = now_seconds();
	bool tty = isatty(1);
	struct run r = {.p = p, .o = o};
	size_t todo = 0;
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i]->state == NODE_WAITING)
			todo++;
	if (todo) {
		int rc = build_fetch(p, o);
		if (rc != EXIT_OK)
			return rc;
		if (mkdir_p(p->dirs.stage_cache, 0755) < 0 || jobserver_init(&r.js, p->jobs) < 0)
			return EXIT_FAILED;
		remove_leftovers(p);
		r.env = build_environment(p, &r.js);
	}
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		n->blocked = 0;
		for (size_t d = 0; d < n->n_deps; d++)
			if (n->deps[d]->state == NODE_WAITING)
				n->blocked++;
	}
	if (todo && wake_pipe[0] < 0) {
		if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
			error("cannot create a pipe:");
			return EXIT_FAILED;
		}
		struct sigaction sa = {0};
		sa.sa_handler = on_child;
		sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
		sigaction(SIGCHLD, &sa, NULL);
	}
	while (todo) {
		/* Start every ready node the job budget allows, in plan order. */
		bool want_token = false;
		for (size_t i = 0; i < p->n_nodes && !interrupted && !(r.failed && !o->keep_going); i++) {
			struct node *n = p->nodes[i];
			if (n->state != NODE_WAITING || n->blocked)
				continue;
			/* an exclusive stage runs alone: it waits for an idle engine, and while it
			 * runs nothing else starts */
			if (r.exclusive_running)
				break;
			if (n->kind == NODE_STAGE && n->stage->exclusive) {
				if (r.running > 0)
					continue;
				r.exclusive_running = true;
			} else if (r.running > 0 && !jobserver_try_acquire(&r.js)) {
				want_token = true;
				break;
			}
			n->holds_token = r.running > 0;
			r.running++;
			if (start_node(&r, n) < 0) {
				error("cannot start %s", n->label);
				node_finished(&r, n, false);
			}
		}
		if (r.running == 0)
			break;
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);
		if (pid > 0) {
			struct node *n = node_of_pid(p, pid);
			if (n)
				child_ended(&r, n, status);
			continue;
		}
		if (interrupted) {
			for (size_t i = 0; i < p->n_nodes; i++)
				if (p->nodes[i]->state == NODE_RUNNING)
					run_kill_group(p->nodes[i]->pid, SIGTERM);
		}
		/* Sleep until a child ends, a signal arrives, or a token frees up for a ready node. */
		struct pollfd pfd[2] = {{wake_pipe[0], POLLIN, 0}, {want_token ? r.js.poll_fd : -1, POLLIN, 0}};
		poll(pfd, 2, 1000);
		drain_wake_pipe();
		if (tty)
			show_running(p, started);
	}
	if (tty)
		status_clear();
	int rc = EXIT_OK;
	if (interrupted) {
		struct buf left = {0};
		for (size_t i = 0; i < p->n_nodes; i++)
			if (p->nodes[i]->state == NODE_FAILED || p->nodes[i]->state == NODE_WAITING ||
			    p->nodes[i]->state == NODE_RUNNING)
				buf_printf(&left, "\n  %s", p->nodes[i]->label);
		error("interrupted; left unfinished (the next run resumes here):%s", left.s ? left.s : "");
		buf_release(&left);
		rc = EXIT_INTERRUPTED;
	} else if (r.failed) {
		rc = EXIT_FAILED;
	}
	if (todo) {
		jobserver_release(&r.js);
		for (char **e = r.env; *e; e++)
			free(*e);
		free(r.env);
	}
	if (rc != EXIT_OK)
		return rc;
	for (size_t t = 0; t < p->n_targets; t++)
		if (sysroot_assemble(p, p->targets[t]) < 0)
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
