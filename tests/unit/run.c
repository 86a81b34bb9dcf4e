/* Unit tests of run: a step without network, and the limit on directories shown.
 * See unit.h for TEST and CHECK. */
#define _GNU_SOURCE
#include "unit.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "run.h"

/* A step with RUN_NO_NETWORK cannot reach a port that the same step without it reaches (the
 * listening socket's backlog completes the connection; nothing needs to accept it). */
TEST(run_network)
{
	int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(addr);
	CHECK(listener >= 0 && bind(listener, (struct sockaddr *)&addr, len) == 0 &&
	      listen(listener, 8) == 0 && getsockname(listener, (struct sockaddr *)&addr, &len) == 0);
	char *cmd = xasprintf("python3 -c \"import socket; socket.create_connection(('127.0.0.1', "
	                      "%d), 3)\" 2>/dev/null", ntohs(addr.sin_port));
	char *env[] = {"PATH=/usr/bin:/bin", NULL};
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	pid_t pid = run_shell(cmd, scratch, env, devnull, 0);
	CHECK(pid > 0 && run_wait(pid) == 0);
	if (run_isolation()) {
		pid = run_shell(cmd, scratch, env, devnull, RUN_NO_NETWORK);
		int status = pid > 0 ? run_wait(pid) : 0;
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
		pid = run_shell("pwd >pwd.txt; echo $X >>pwd.txt", scratch, (char *[]){"X=kept", NULL},
		                devnull, RUN_NO_NETWORK);
		CHECK(pid > 0 && run_wait(pid) == 0);
		char *path = xasprintf("%s/pwd.txt", scratch);
		char *text = read_file(path, NULL);
		char *want = xasprintf("%s\nkept\n", scratch);
		CHECK(text && strcmp(text, want) == 0);
		free(want);
		free(text);
		free(path);
	} else {
		printf("unit: no network namespace here: the isolated half of test_run_network skipped\n");
	}
	close(devnull);
	close(listener);
	free(cmd);
}

/* More directories to show than hide_directories() can bind back is an error, never a
 * directory silently left hidden. */
TEST(run_too_many_shows)
{
	const char *hide[] = {"/nonexistent-hidden", NULL};
	const char *show[RUN_MAX_SHOW + 2];
	for (size_t i = 0; i < RUN_MAX_SHOW + 1; i++)
		show[i] = "/nonexistent-hidden/x";
	show[RUN_MAX_SHOW + 1] = NULL;
	struct run_sandbox sb = {.hide = hide, .show = show};
	char *env[] = {"PATH=/usr/bin:/bin", NULL};
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(run_step("true", scratch, env, devnull, &sb) == -1);
	show[RUN_MAX_SHOW] = NULL;   /* exactly the most: runs */
	pid_t pid = run_step("true", scratch, env, devnull, &sb);
	CHECK(pid > 0 && run_wait(pid) == 0);
	close(devnull);
}
