// requires: threads
// flags: -pthread
/* pthreads: threads, a mutex-protected sum, a condition variable barrier, join return values. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>

#define NTHREADS 8
#define ITERS 20000

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static long sum;        /* protected by lock */
static int arrived;     /* protected by lock */
static int go;          /* protected by lock */

static void *worker(void *arg)
{
	long id = (long)(intptr_t)arg;
	/* wait until main releases every thread at once */
	pthread_mutex_lock(&lock);
	arrived++;
	pthread_cond_broadcast(&cond);
	while (!go)
		pthread_cond_wait(&cond, &lock);
	pthread_mutex_unlock(&lock);
	for (int i = 0; i < ITERS; i++) {
		pthread_mutex_lock(&lock);
		sum += id + 1;
		pthread_mutex_unlock(&lock);
	}
	return (void *)(intptr_t)(id * 10);
}

int main(void)
{
	pthread_t t[NTHREADS];
	for (long i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(intptr_t)i) != 0) {
			printf("pthread_create failed\n");
			return 1;
		}
	pthread_mutex_lock(&lock);
	while (arrived < NTHREADS)
		pthread_cond_wait(&cond, &lock);
	printf("all %d threads waiting\n", arrived);
	go = 1;
	pthread_cond_broadcast(&cond);
	pthread_mutex_unlock(&lock);
	long rets = 0;
	for (int i = 0; i < NTHREADS; i++) {
		void *ret;
		if (pthread_join(t[i], &ret) != 0) {
			printf("pthread_join failed\n");
			return 1;
		}
		rets += (long)(intptr_t)ret;
	}
	printf("sum=%ld expected=%ld\n", sum, (long)ITERS * NTHREADS * (NTHREADS + 1) / 2);
	printf("join values total=%ld\n", rets);
	pthread_t self = pthread_self();
	printf("pthread_equal(self, self)=%d\n", pthread_equal(self, self) != 0);
	return sum == (long)ITERS * NTHREADS * (NTHREADS + 1) / 2 ? 0 : 1;
}
