// flags: -fsanitize=scudo
// requires: clang_rt.scudo_standalone
/* scudo: -fsanitize=scudo makes the scudo hardened allocator malloc; a double free is caught
 * by scudo itself (its report, then abort), not by the C library's allocator. The free runs
 * in a child whose stderr goes to a file read here, so the output compared is fixed. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void)
{
	char *p = malloc(64);
	strcpy(p, "scudo");
	printf("allocation works: %s\n", p);
	free(p);
	fflush(stdout);
	FILE *report = tmpfile();
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fileno(report), 2);
		char *volatile q = malloc(48);
		free(q);
		free(q);   /* the double free */
		_exit(0);
	}
	int status;
	waitpid(pid, &status, 0);
	char text[4096] = "";
	rewind(report);
	size_t n = fread(text, 1, sizeof(text) - 1, report);
	text[n] = '\0';
	printf("double free stops the program: %s\n",
	       WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT ? "yes (SIGABRT)" : "no");
	printf("scudo reported it: %s\n", strstr(text, "Scudo ERROR") ? "yes" : "no");
	if (!strstr(text, "Scudo ERROR"))
		printf("report was: %s\n", text);
	return 0;
}
