// flags: -fsanitize=thread
// requires: clang_rt.tsan
// link: dynamic
// native: qemu-x86_64 cannot host it (below); where the host's CPU is the target's, it runs there
// not-run-under: qemu-x86_64-static: after TSan maps its x86_64 shadow memory, qemu-user 7.2's next mmap (8 KiB at 0x720000000000) makes no progress in minutes
/* tsan: ThreadSanitizer reports two threads that increment one counter without a lock, and
 * the program ends with its exit status (66); the same threads with a mutex are not reported. */
#include <pthread.h>
#include "child_report.h"

static int counter;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static void *unlocked(void *arg)
{
	for (int i = 0; i < 1000; i++)
		counter++;
	return arg;
}

static void *locked(void *arg)
{
	for (int i = 0; i < 1000; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return arg;
}

static void two_threads(void *(*fn)(void *))
{
	pthread_t t[2];
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, fn, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
}

static void with_lock(void)
{
	two_threads(locked);
}

static void without_lock(void)
{
	two_threads(unlocked);
}

int main(void)
{
	expect_no_report(with_lock, "WARNING", "threads with a mutex");

	int status = child_report(without_lock);
	int race = strstr(report, "WARNING: ThreadSanitizer: data race") != NULL;
	int exit66 = WIFEXITED(status) && WEXITSTATUS(status) == 66;
	printf("threads without a lock: data race reported: %s\n", yes(race));
	printf("the program ends with status 66: %s\n", yes(exit66));
	show_report_if(!(race && exit66));
	return 0;
}
