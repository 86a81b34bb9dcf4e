/* The body of ubsan_minimal.c and ubsan_standalone.c: a signed overflow and a misaligned load
 * must each be reported with the runtime's message (OVERFLOW_MESSAGE, MISALIGNED_MESSAGE),
 * and the program goes on. The reports go to stderr: caught in a file and checked here, so
 * the output compared is fixed. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char report[4096];

static void catch_stderr(FILE **f, int *saved)
{
	fflush(stderr);
	*f = tmpfile();
	*saved = dup(2);
	dup2(fileno(*f), 2);
}

static void release_stderr(FILE *f, int saved)
{
	dup2(saved, 2);
	close(saved);
	rewind(f);
	size_t n = fread(report, 1, sizeof(report) - 1, f);
	report[n] = '\0';
	fclose(f);
}

int main(void)
{
	volatile int big = INT_MAX, one = 1;
	_Alignas(8) static char buf[16] = {1, 2, 3, 4, 5, 6, 7, 8};
	char *volatile p = buf + 1;
	FILE *f;
	int saved;

	catch_stderr(&f, &saved);
	int sum = big + one;
	release_stderr(f, saved);
	printf("signed overflow reported: %s\n", strstr(report, OVERFLOW_MESSAGE) ? "yes" : report);

	catch_stderr(&f, &saved);
	int v = *(int *)p;
	release_stderr(f, saved);
	printf("misaligned load reported: %s\n", strstr(report, MISALIGNED_MESSAGE) ? "yes" : report);
	return (sum == INT_MIN && v != 0) ? 0 : 1;
}
