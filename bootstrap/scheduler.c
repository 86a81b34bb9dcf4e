/* scheduler: ready list, job tokens, critical-path-first order. See scheduler.h. */
#define _GNU_SOURCE
#include "scheduler.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util.h"

/* SIGCHLD (and SIGINT through `interrupted`) wake the scheduler through this pipe, so it
 * sleeps in poll() instead of spinning. */
static int wake_pipe[2] = {-1, -1};

/* Without a terminal, running nodes are reported this often ($CROSSROOT_PROGRESS_SECONDS). */
static double progress_seconds(void)
{
	const char *v = getenv("CROSSROOT_PROGRESS_SECONDS");
	char *end;
	double s = v ? strtod(v, &end) : 0;
	return v && *v && !*end && s >= 1 ? s : 300;
}

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

struct job {
	pid_t pid;
	bool holds_token;
	bool started;
	bool later;                 /* asked to wait for another node (see SCHED_LATER) */
};

struct sched {
	struct plan *p;
	const struct sched_ops *ops;
	struct jobserver *js;
	struct job *jobs;           /* parallel to p->nodes */
	double *rank;               /* remaining work through each node, seconds */
	size_t running;
	/* crossroot's own job slot, the one no token stands for: the first node to start takes
	 * it, and when that node ends the next one takes it again, whatever still runs. Tying
	 * it to "nothing runs" left a slot unused whenever the first node ended first. */
	bool implicit_busy;
	bool exclusive_running;
	bool failed;
};

static bool to_do(const struct node *n)
{
	return n->state == NODE_WAITING || n->state == NODE_PENDING;
}

/* Longest chain of remaining work from each node to the end of the graph: its own estimate
 * plus the longest of its users'. Nodes are in dependency order, so walk backwards. */
static void rank_nodes(struct sched *s)
{
	for (size_t i = s->p->n_nodes; i-- > 0;) {
		struct node *n = s->p->nodes[i];
		double after = 0;
		for (size_t u = 0; u < n->n_users; u++)
			if (s->rank[n->users[u]->index] > after)
				after = s->rank[n->users[u]->index];
		s->rank[i] = (to_do(n) ? s->ops->estimate(s->ops->ctx, n) : 0) + after;
	}
}

static void finish(struct sched *s, struct node *n, bool ok)
{
	struct job *j = &s->jobs[n->index];
	if (j->holds_token) {
		jobserver_return(s->js);
	} else if (j->started) {
		/* crossroot's own slot is free, but a running make cannot see it, only the pipe: a
		 * running job that holds a token takes the slot over and its token goes back to the
		 * pipe for the makes (else musl's make, started beside an extraction, stayed at one
		 * job for its whole minute after the extraction ended) */
		struct job *heir = NULL;
		for (size_t i = 0; i < s->p->n_nodes && !heir; i++)
			if (&s->jobs[i] != j && s->jobs[i].started && s->jobs[i].pid > 0 &&
			    s->jobs[i].holds_token)
				heir = &s->jobs[i];
		if (heir) {
			heir->holds_token = false;
			jobserver_return(s->js);
		} else {
			s->implicit_busy = false;
		}
	}
	j->holds_token = false;
	j->pid = 0;
	if (j->started) {
		s->running--;
		if (s->ops->exclusive(s->ops->ctx, n))
			s->exclusive_running = false;
	}
	if (!ok) {
		n->state = NODE_FAILED;
		s->failed = true;
		return;
	}
	if (n->state != NODE_CACHED)
		n->state = NODE_DONE;
	for (size_t i = 0; i < n->n_users; i++)
		n->users[i]->blocked--;
	for (size_t i = 0; i < s->p->n_nodes; i++)
		s->jobs[i].later = false;   /* what waited for this node is asked again */
	rank_nodes(s);   /* what just finished may have taught the estimates something */
}

/* The ready node with the most work behind it, or NULL. */
static struct node *next_ready(struct sched *s)
{
	struct node *best = NULL;
	for (size_t i = 0; i < s->p->n_nodes; i++) {
		struct node *n = s->p->nodes[i];
		if (!to_do(n) || n->blocked || s->jobs[i].started || s->jobs[i].later)
			continue;
		if (!best || s->rank[i] > s->rank[best->index])
			best = n;
	}
	return best;
}

/* Start what the budget allows. Returns true if a ready node waits for a token. */
static bool start_ready(struct sched *s, bool keep_going)
{
	for (;;) {
		if (interrupted || (s->failed && !keep_going) || s->exclusive_running)
			return false;
		struct node *n = next_ready(s);
		if (!n)
			return false;
		int prepared = s->ops->prepare(s->ops->ctx, n);
		if (prepared == SCHED_LATER) {
			s->jobs[n->index].later = true;
			continue;
		}
		if (prepared != 0) {   /* cached after all, or failed: no job needed */
			if (prepared > 0)
				n->state = NODE_CACHED;
			finish(s, n, prepared > 0);
			continue;
		}
		struct job *j = &s->jobs[n->index];
		/* An exclusive node starts on the next free token like any other, not on an idle
		 * engine: waiting for the running stages to drain left a core idle for their whole
		 * tail. The overlap with that tail is short, and nothing else starts meanwhile. */
		if (s->implicit_busy) {
			if (!jobserver_try_acquire(s->js))
				return true;
			j->holds_token = true;
		} else {
			s->implicit_busy = true;
		}
		if (s->ops->exclusive(s->ops->ctx, n))
			s->exclusive_running = true;
		j->started = true;
		s->running++;
		n->state = NODE_RUNNING;
		j->pid = s->ops->start(s->ops->ctx, n);
		if (j->pid <= 0)
			finish(s, n, false);
	}
}

static struct node *node_of_pid(struct sched *s, pid_t pid)
{
	for (size_t i = 0; i < s->p->n_nodes; i++)
		if (s->jobs[i].pid == pid && s->jobs[i].started)
			return s->p->nodes[i];
	return NULL;
}

/* On a terminal, one status line under the log lines: what runs and for how long. */
static void show_running(struct sched *s, double started)
{
	struct buf line = {0};
	char took[32];
	buf_printf(&line, "[%s]", format_duration(now_seconds() - started, took));
	for (size_t i = 0; i < s->p->n_nodes; i++)
		if (s->jobs[i].pid > 0) {
			buf_puts(&line, "  ");
			s->ops->describe(s->ops->ctx, s->p->nodes[i], &line);
		}
	status_show(line.s);
	buf_release(&line);
}

/* Without a terminal (a CI log), a line per running node every few minutes instead: a long
 * stage does not look hung. */
static void report_running(struct sched *s)
{
	for (size_t i = 0; i < s->p->n_nodes; i++)
		if (s->jobs[i].pid > 0) {
			struct buf line = {0};
			s->ops->describe(s->ops->ctx, s->p->nodes[i], &line);
			info("running %s", line.s);
			buf_release(&line);
		}
}

int sched_run(struct plan *p, const struct sched_ops *ops, struct jobserver *js, bool keep_going)
{
	struct sched s = {.p = p, .ops = ops, .js = js};
	s.jobs = xcalloc(p->n_nodes + 1, sizeof(*s.jobs));
	s.rank = xcalloc(p->n_nodes + 1, sizeof(*s.rank));
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		n->blocked = 0;
		for (size_t d = 0; d < n->n_deps; d++)
			if (to_do(n->deps[d]))
				n->blocked++;
	}
	rank_nodes(&s);
	if (wake_pipe[0] < 0) {
		if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
			error("cannot create a pipe:");
			free(s.jobs);
			free(s.rank);
			return -1;
		}
		struct sigaction sa = {0};
		sa.sa_handler = on_child;
		sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
		sigaction(SIGCHLD, &sa, NULL);
	}
	bool tty = isatty(1);
	double started = now_seconds(), reported = started, every = progress_seconds();
	for (;;) {
		bool want_token = start_ready(&s, keep_going);
		if (s.running == 0)
			break;
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG);
		if (pid > 0) {
			struct node *n = node_of_pid(&s, pid);
			if (n) {
				pid_t next = ops->child_ended(ops->ctx, n, status);
				if (next > 0)
					s.jobs[n->index].pid = next;
				else
					finish(&s, n, next == 0);
			}
			continue;
		}
		if (interrupted)
			for (size_t i = 0; i < p->n_nodes; i++)
				if (s.jobs[i].pid > 0)
					run_kill_group(s.jobs[i].pid, SIGTERM);
		/* Sleep until a child ends, a signal arrives, or a token frees up for a ready node. */
		struct pollfd pfd[2] = {{wake_pipe[0], POLLIN, 0},
		                        {want_token ? js->poll_fd : -1, POLLIN, 0}};
		poll(pfd, 2, 1000);
		drain_wake_pipe();
		if (tty)
			show_running(&s, started);
		else if (now_seconds() - reported >= every) {
			report_running(&s);
			reported = now_seconds();
		}
	}
	if (tty)
		status_clear();
	free(s.jobs);
	free(s.rank);
	return s.failed ? -1 : 0;
}
