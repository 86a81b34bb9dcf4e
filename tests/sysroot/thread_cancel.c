// requires: threads signals
// flags: -pthread
// native: qemu-x86_64 misaligns signal stacks (below); where the host's CPU is the target's, it runs there
// not-run-under: qemu-x86_64-static: qemu-user 7.2 enters x86_64 signal handlers with the stack misaligned by 8, and glibc's cancellation handler unwinds through dl_iterate_phdr, which faults on an aligned SSE store (movaps)
/* thread_cancel: pthread_exit and pthread_cancel end a thread and run its cleanup handlers,
 * and pthread_join sees the value or PTHREAD_CANCELED. glibc does both by unwinding the
 * thread's stack, with the unwinder it loads at run time (libgcc_s.so.1): a sysroot without
 * one aborts here ("libgcc_s.so.1 must be installed for pthread_cancel to work"). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>

static int cleanups;
static int fds[2];

static void cleanup(void *arg)
{
	cleanups += (int)(intptr_t)arg;
}

static void *exits(void *arg)
{
	pthread_cleanup_push(cleanup, (void *)(intptr_t)1);
	pthread_cleanup_push(cleanup, (void *)(intptr_t)10);
	pthread_exit(arg);
	pthread_cleanup_pop(0);
	pthread_cleanup_pop(0);
	return NULL;
}

static void *blocks(void *arg)
{
	char c;
	pthread_cleanup_push(cleanup, (void *)(intptr_t)100);
	for (;;)
		if (read(fds[0], &c, 1) <= 0)   /* a cancellation point: nothing is ever written */
			break;
	pthread_cleanup_pop(0);
	return arg;
}

int main(void)
{
	pthread_t t;
	void *ret = NULL;
	pthread_create(&t, NULL, exits, (void *)(intptr_t)42);
	pthread_join(t, &ret);
	printf("pthread_exit: value %ld, cleanup handlers run: %d\n", (long)(intptr_t)ret, cleanups);

	if (pipe(fds) != 0)
		return 1;
	cleanups = 0;
	pthread_create(&t, NULL, blocks, NULL);
	usleep(100000);
	pthread_cancel(t);
	pthread_join(t, &ret);
	printf("pthread_cancel: %s, cleanup handlers run: %d\n",
	       ret == PTHREAD_CANCELED ? "PTHREAD_CANCELED" : "not cancelled", cleanups);
	return 0;
}
