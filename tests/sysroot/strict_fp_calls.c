// requires: fenv threads
// link: dynamic
// flags: -frounding-math -pthread
// shared: strict_fp_calls_lib.c
/* strict_fp_calls: a program compiled with strict floating point (-frounding-math here; C's
 * `#pragma STDC FENV_ACCESS ON` in the library) whose functions call other modules' functions
 * when libc or another module calls them: a qsort and a tsearch comparator, an atexit handler,
 * a thread's start routine, a thread-specific data destructor, and a library function called
 * from the program. Each callback calls into libc and touches no global data, so nothing but
 * the call itself needs the program's GOT pointer. On 32-bit PowerPC, clang 19 emits such calls
 * (secure-PLT stubs that read the GOT through r30) without setting r30 up in strict
 * floating-point functions: the callee then jumps through the caller's GOT and crashes (LLVM
 * PR 121281). The sysroot's drivers must not produce such a program. */
#define _GNU_SOURCE
#include <pthread.h>
#include <search.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

size_t lib_length(const char *s);   /* strict_fp_calls_lib.c */

static int by_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int by_string(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void *start(void *arg)
{
	return (void *)strlen(arg);
}

static void destroy(void *p)
{
	free(p);
}

static void at_exit(void)
{
	char line[] = {'a', 't', 'e', 'x', 'i', 't', ' ', 'r', 'a', 'n', '\n'};
	write(1, line, sizeof(line));
}

static void *keyed(void *key)
{
	pthread_setspecific(*(pthread_key_t *)key, malloc(16));
	return NULL;
}

int main(void)
{
	const char *names[] = {"pear", "apple", "fig", "banana"};
	qsort(names, 4, sizeof(names[0]), by_name);
	printf("qsort: %s %s %s %s\n", names[0], names[1], names[2], names[3]);

	void *root = NULL;
	for (int i = 0; i < 4; i++)
		tsearch(names[i], &root, by_string);
	printf("tfind fig: %s\n", tfind("fig", &root, by_string) ? "found" : "missing");

	pthread_t th;
	void *length;
	if (pthread_create(&th, NULL, start, "thread") != 0 || pthread_join(th, &length) != 0)
		return 1;
	printf("thread returned %zu\n", (size_t)length);

	pthread_key_t key;
	if (pthread_key_create(&key, destroy) != 0 || pthread_create(&th, NULL, keyed, &key) != 0 ||
	    pthread_join(th, NULL) != 0)
		return 1;
	printf("destructor ran\n");

	printf("lib_length: %zu\n", lib_length("library"));
	atexit(at_exit);
	fflush(stdout);
	return 0;
}
