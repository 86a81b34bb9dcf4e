/* The body of ubsan_minimal.c and ubsan_standalone.c: a signed overflow and a misaligned load
 * must each be reported with the runtime's message (OVERFLOW_MESSAGE, MISALIGNED_MESSAGE),
 * and the program goes on. The reports go to stderr: caught in a file and checked here, so
 * the output compared is fixed. After its report the misaligned load is still made, in a
 * child: where the machine refuses it (MIPS under qemu-user, which lacks the Linux kernel's
 * fix-up of unaligned loads) the child's SIGBUS is said, and that target's expected file has
 * the line. No signal handler is installed for it: a static program's signal() goes through
 * the standalone runtime's interceptor, which finds no real signal() there and calls 0. */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
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

	fflush(stdout);
	catch_stderr(&f, &saved);
	pid_t pid = fork();
	if (pid == 0)
		_exit(*(int *)p != 0 ? 0 : 1);
	int status = -1;
	waitpid(pid, &status, 0);
	release_stderr(f, saved);
	printf("misaligned load reported: %s\n", strstr(report, MISALIGNED_MESSAGE) ? "yes" : report);
	if (WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS)
		printf("the load itself then raised SIGBUS\n");
	else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		printf("the program did not go on after the report (wait status %#x)\n", status);
	return sum == INT_MIN ? 0 : 1;
}
