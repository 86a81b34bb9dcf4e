/* Unit tests of scheduler: the order and the job budget, with fake nodes whose children
 * sleep. */
#define _GNU_SOURCE
#include "unit.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "plan.h"
#include "run.h"
#include "scheduler.h"

/* Fake nodes for the scheduler: each runs a child that sleeps `ms` and records, in the
 * context, the order of starts and ends and how many ran at once. */
struct fake_job {
	const char *name;
	double estimate;
	int ms;
	bool exclusive;
	bool wants_token;           /* after sleeping, takes a token from the jobserver pipe as a
	                               make would (and gives it back), or fails */
};

static int token_fd = -1;      /* the jobserver pipe's read end, for wants_token */

struct fake_sched {
	const struct fake_job *jobs;
	char order[256];            /* "+A" on start, "-A" on end */
	int running, most_running;
	bool other_during_exclusive; /* something started while an exclusive node ran */
	int exclusive_running;
};

static int fake_prepare(void *ctx, struct node *n)
{
	(void)ctx;
	(void)n;
	return 0;
}

static pid_t fake_start(void *ctx, struct node *n)
{
	struct fake_sched *f = ctx;
	const struct fake_job *j = &f->jobs[n->index];
	if (f->exclusive_running)
		f->other_during_exclusive = true;
	f->exclusive_running += j->exclusive;
	if (++f->running > f->most_running)
		f->most_running = f->running;
	strcat(f->order, "+");
	strcat(f->order, j->name);
	pid_t pid = fork();
	if (pid == 0) {
		usleep((useconds_t)j->ms * 1000);
		if (j->wants_token) {
			char path[64], c;
			snprintf(path, sizeof(path), "/proc/self/fd/%d", token_fd);
			int fd = open(path, O_RDONLY | O_NONBLOCK);
			_exit(fd >= 0 && read(fd, &c, 1) == 1 ? 0 : 3);
		}
		_exit(0);
	}
	return pid;
}

static pid_t fake_child_ended(void *ctx, struct node *n, int status)
{
	struct fake_sched *f = ctx;
	const struct fake_job *j = &f->jobs[n->index];
	f->running--;
	f->exclusive_running -= j->exclusive;
	strcat(f->order, "-");
	strcat(f->order, j->name);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static bool fake_exclusive(void *ctx, const struct node *n)
{
	return ((struct fake_sched *)ctx)->jobs[n->index].exclusive;
}

static double fake_estimate(void *ctx, const struct node *n)
{
	return ((struct fake_sched *)ctx)->jobs[n->index].estimate;
}

static void fake_describe(void *ctx, const struct node *n, struct buf *out)
{
	buf_puts(out, ((struct fake_sched *)ctx)->jobs[n->index].name);
}

/* Run `count` fake jobs; edges[i] is the index of job i's one dependency, or -1. */
static int run_fake(struct fake_sched *f, const struct fake_job *jobs, const int *edges,
                    size_t count, int budget)
{
	memset(f, 0, sizeof(*f));
	f->jobs = jobs;
	struct node nodes[8] = {0};
	struct node *ptrs[8], *deps[8], *users[8][8];
	struct plan p = {.nodes = ptrs, .n_nodes = count};
	for (size_t i = 0; i < count; i++) {
		nodes[i].index = i;
		nodes[i].state = NODE_WAITING;
		nodes[i].users = users[i];
		ptrs[i] = &nodes[i];
	}
	for (size_t i = 0; i < count; i++)
		if (edges[i] >= 0) {
			struct node *d = &nodes[edges[i]];
			deps[i] = d;
			nodes[i].deps = &deps[i];
			nodes[i].n_deps = 1;
			d->users[d->n_users++] = &nodes[i];
		}
	struct jobserver js;
	if (jobserver_init(&js, budget) < 0)
		return -1;
	token_fd = js.read_fd;
	struct sched_ops ops = {f, fake_prepare, fake_start, fake_child_ended, fake_exclusive,
	                        fake_estimate, fake_describe};
	int rc = sched_run(&p, &ops, &js, false);
	jobserver_release(&js);
	return rc;
}

TEST(scheduler)
{
	struct fake_sched f;

	/* critical path first: B and its user C (20 s of work) before the short A, which comes
	 * first in file order */
	const struct fake_job chain[] = {{"A", 1, 10, false, false}, {"B", 10, 10, false, false},
	                                 {"C", 10, 10, false, false}};
	const int chain_edges[] = {-1, -1, 1};
	CHECK(run_fake(&f, chain, chain_edges, 3, 1) == 0);
	CHECK(strcmp(f.order, "+B-B+C-C+A-A") == 0);
	CHECK(f.most_running == 1);

	/* two slots: when the first node to start ends first, its slot goes to the next ready
	 * node while the other still runs (the slot was once tied to an idle engine) */
	const struct fake_job slots[] = {{"S", 30, 20, false, false}, {"L", 20, 400, false, false},
	                                 {"N", 10, 20, false, false}};
	const int slot_edges[] = {-1, -1, -1};
	CHECK(run_fake(&f, slots, slot_edges, 3, 2) == 0);
	CHECK(strncmp(f.order, "+S+L-S+N-N-L", 12) == 0);
	CHECK(f.most_running == 2);

	/* an exclusive node starts on the next free slot, not once the engine is idle, and
	 * nothing else starts while it runs */
	const struct fake_job excl[] = {{"S", 1, 20, false, false}, {"L", 2, 400, false, false},
	                                {"X", 100, 100, true, false}, {"Y", 0.5, 20, false, false}};
	const int excl_edges[] = {-1, -1, 0, -1};
	CHECK(run_fake(&f, excl, excl_edges, 4, 2) == 0);
	CHECK(strncmp(f.order, "+S+L-S+X", 8) == 0);
	CHECK(!f.other_during_exclusive);
	CHECK(strstr(f.order, "-X+Y") != NULL);

	/* when the node in crossroot's own slot ends, a running node that holds a token takes
	 * the slot over and the token goes back to the pipe, where its make can take it (musl's
	 * make once stayed at one job after the extraction beside it ended) */
	const struct fake_job heir[] = {{"E", 20, 30, false, false}, {"M", 10, 200, false, true}};
	const int heir_edges[] = {-1, -1};
	CHECK(run_fake(&f, heir, heir_edges, 2, 2) == 0);
	CHECK(strcmp(f.order, "+E+M-E-M") == 0);
}
