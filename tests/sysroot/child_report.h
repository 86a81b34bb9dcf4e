/* For the sanitizer programs: run a function in a child whose stderr goes to a file, and give
 * back the child's wait status and what it wrote there (the runtime's report), so that what
 * the program prints, and is compared, is fixed. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char report[16384];

static int child_report(void (*fn)(void))
{
	fflush(stdout);
	fflush(stderr);
	FILE *f = tmpfile();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fileno(f), 2);
		fn();
		fflush(stdout);
		_exit(0);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	rewind(f);
	size_t n = fread(report, 1, sizeof(report) - 1, f);
	report[n] = '\0';
	fclose(f);
	return status;
}

static const char *yes(int cond)
{
	return cond ? "yes" : "no";
}

/* the report, shown only when a check failed (the expected output never has it) */
static void show_report_if(int failed)
{
	if (failed)
		printf("report was:\n%s\n", report);
}

/* The case without the bug: fn runs to its end and the runtime reports nothing (no `marker`,
 * the start of its reports) */
static void expect_no_report(void (*fn)(void), const char *marker, const char *what)
{
	int status = child_report(fn);
	int clean = WIFEXITED(status) && WEXITSTATUS(status) == 0 && !strstr(report, marker);
	printf("%s: no report: %s\n", what, yes(clean));
	show_report_if(!clean);
}
