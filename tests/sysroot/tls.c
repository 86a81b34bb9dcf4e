// requires: threads
// flags: -pthread
/* tls: _Thread_local and __thread variables (initialised, zero and over-aligned): every
 * thread starts from the initial values and sees only its own copy. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define NTHREADS 4

static _Thread_local int counter = 100;
static _Thread_local long long zero;
static __thread char name[16] = "initial";
static __thread unsigned gnu_zero[32];
static _Thread_local _Alignas(64) int aligned = 7;

static pthread_barrier_t barrier;
static char report[NTHREADS + 1][128];

/* Set this thread's copies, wait for every thread to do the same, then check them. */
static void exercise(int id)
{
	snprintf(report[id], sizeof report[id], "start counter=%d zero=%lld name=%s gnu_zero=%u aligned=%d%s",
	         counter, zero, name, gnu_zero[31], aligned,
	         (uintptr_t)&aligned % 64 == 0 ? " (64-aligned)" : " (MISALIGNED)");
	counter += id;
	zero = 1000LL * id;
	snprintf(name, sizeof name, "thread%d", id);
	gnu_zero[31] = (unsigned)id * 3;
	aligned = -id;
	if (id != NTHREADS)  /* main thread (id NTHREADS) does not take part in the barrier */
		pthread_barrier_wait(&barrier);
	int ok = counter == 100 + id && zero == 1000LL * id && gnu_zero[31] == (unsigned)id * 3 &&
	         aligned == -id && strncmp(name, "thread", 6) == 0 && name[6] - '0' == id;
	size_t len = strlen(report[id]);
	snprintf(report[id] + len, sizeof report[id] - len, "; after: %s counter=%d %s", name, counter,
	         ok ? "own copy" : "CLOBBERED");
}

static void *worker(void *arg)
{
	exercise((int)(intptr_t)arg);
	return NULL;
}

int main(void)
{
	pthread_t t[NTHREADS];
	pthread_barrier_init(&barrier, NULL, NTHREADS);
	exercise(NTHREADS);
	for (int i = 0; i < NTHREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i);
	for (int i = 0; i < NTHREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < NTHREADS; i++)
		printf("thread %d: %s\n", i, report[i]);
	printf("main: %s\n", report[NTHREADS]);
	/* the threads must not have touched main's copies */
	printf("main after threads: counter=%d zero=%lld name=%s aligned=%d\n", counter, zero, name, aligned);
	return 0;
}
