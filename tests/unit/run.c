/* Unit tests of run: the step sandbox (network, directories, its limit on binds).
 * See unit.h for TEST and CHECK. */
#define _GNU_SOURCE
#include "unit.h"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "run.h"

/* A sandboxed step without network cannot reach a port that the same step with network
 * reaches (the listening socket's backlog completes the connection; nothing needs to accept
 * it); it starts in its directory with exactly its environment. */
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
	const char *writable[] = {scratch, NULL};
	struct run_sandbox open_net = {.writable = writable}, closed = {.no_network = true, .writable = writable};
	uid_t uid;
	gid_t gid;
	if (run_step_owner(&uid, &gid))   /* as root, the step runs as another user */
		CHECK(chown(scratch, uid, gid) == 0);
	pid_t pid = run_step(cmd, scratch, env, devnull, &open_net);
	CHECK(pid > 0 && run_wait(pid) == 0);
	if (run_isolation()) {
		pid = run_step(cmd, scratch, env, devnull, &closed);
		int status = pid > 0 ? run_wait(pid) : 0;
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
		pid = run_step("pwd >pwd.txt; echo $X >>pwd.txt", scratch, (char *[]){"X=kept", NULL},
		               devnull, &closed);
		CHECK(pid > 0 && run_wait(pid) == 0);
		char *path = xasprintf("%s/pwd.txt", scratch);
		char *text = read_file(path, NULL);
		char *want = xasprintf("%s\nkept\n", scratch);
		CHECK(text && strcmp(text, want) == 0);
		free(want);
		free(text);
		free(path);
	} else {
		printf("unit: no sandbox here: the isolated half of test_run_network skipped\n");
	}
	CHECK(chown(scratch, getuid(), getgid()) == 0);
	close(devnull);
	close(listener);
	free(cmd);
}

/* More directories to bind than the sandbox can take is an error, never a directory silently
 * left out; a link where a directory is to be bound is refused. */
TEST(run_too_many_binds)
{
	if (!run_isolation()) {
		printf("unit: no sandbox here: test_run_too_many_binds skipped\n");
		return;
	}
	const char *binds[RUN_MAX_BINDS + 2];
	for (size_t i = 0; i < RUN_MAX_BINDS + 1; i++)
		binds[i] = "/usr";
	binds[RUN_MAX_BINDS + 1] = NULL;
	struct run_sandbox sb = {.read_only = binds};
	char *env[] = {"PATH=/usr/bin:/bin", NULL};
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(run_step("true", "/", env, devnull, &sb) == -1);
	binds[RUN_MAX_BINDS] = NULL;   /* exactly the most: runs */
	pid_t pid = run_step("true", "/", env, devnull, &sb);
	CHECK(pid > 0 && run_wait(pid) == 0);
	char *link = xasprintf("%s/usr-link", scratch);
	CHECK(symlink("/usr", link) == 0);
	const char *linked[] = {link, NULL};
	sb.read_only = linked;
	CHECK(run_step("true", "/", env, devnull, &sb) == -1);
	unlink(link);
	free(link);
	close(devnull);
}
