/* launcher: ccache and distcc in front of every compile of every stage, outside the stage
 * keys. Finds the programs, gathers the settings build steps need, rewrites ${cc}-style values. */
#include "launcher.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "run.h"

extern char **environ;

/* First line of `argv`'s standard output, or NULL if it failed. */
static char *first_line(char *const argv[])
{
	struct buf out = {0}, err = {0};
	int status = run_capture(argv, &out, &err);
	buf_release(&err);
	if (status != 0 || !out.s) {
		buf_release(&out);
		return NULL;
	}
	out.s[strcspn(out.s, "\n")] = '\0';
	return buf_detach(&out);
}

static bool has_env(const struct strlist *env, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = 0; i < env->n; i++)
		if (strncmp(env->v[i], name, len) == 0 && env->v[i][len] == '=')
			return true;
	return false;
}

/* The caller's settings of a program (CCACHE_*, DISTCC_*) pass into the steps, but `except`. */
static void pass_prefixed(struct strlist *env, const char *prefix, const char *except)
{
	for (char **e = environ; *e; e++)
		if (strncmp(*e, prefix, strlen(prefix)) == 0 &&
		    !(except && strncmp(*e, except, strlen(except)) == 0))
			strlist_add(env, *e);
}

/* ccache as the user runs it: steps have HOME=work/home, so the cache directory and the
 * configuration file are passed explicitly (from `ccache -p`, which names each setting's
 * origin: "(/root/.config/ccache/ccache.conf) max_size = 20G"). */
static int ccache_env(struct launcher *l, const char *ccache)
{
	/* base_dir would make ccache rewrite absolute paths into relative ones on the compile
	 * line, and so change the debug info: a result must be the same bytes with or without
	 * ccache, so it is off whatever the user's settings say. Stages compile in directories
	 * whose paths depend on neither keys nor patches (${src} is the stage's link to its tree),
	 * so a rebuild in the same work directory hits without it. */
	pass_prefixed(&l->env, "CCACHE_", "CCACHE_BASEDIR=");
	strlist_add(&l->env, "CCACHE_BASEDIR=");
	char *get_dir[] = {(char *)ccache, "-k", "cache_dir", NULL};
	char *dir = first_line(get_dir);
	if (!dir || dir[0] != '/') {
		error("'%s -k cache_dir' did not name ccache's cache directory", ccache);
		free(dir);
		return -1;
	}
	if (!has_env(&l->env, "CCACHE_DIR"))
		strlist_take(&l->env, xasprintf("CCACHE_DIR=%s", dir));
	free(dir);
	if (!has_env(&l->env, "CCACHE_CONFIGPATH")) {
		struct buf out = {0};
		char *show[] = {(char *)ccache, "-p", NULL};
		if (run_capture(show, &out, NULL) == 0 && out.s)
			for (char *line = strtok(out.s, "\n"); line; line = strtok(NULL, "\n"))
				if (line[0] == '(' && line[1] == '/') {
					size_t end = strcspn(line, ")");
					strlist_take(&l->env, xasprintf("CCACHE_CONFIGPATH=%.*s", (int)end - 1, line + 1));
					break;
				}
		buf_release(&out);
	}
	char *get_remote[] = {(char *)ccache, "-k", "remote_storage", NULL};
	char *remote = first_line(get_remote);
	l->network = remote && *remote;
	free(remote);
	return 0;
}

static int distcc_env(struct launcher *l, const char *distcc)
{
	pass_prefixed(&l->env, "DISTCC_", NULL);
	/* distcc keeps its host list, locks and back-off state in DISTCC_DIR (default ~/.distcc) */
	const char *home = getenv("HOME");
	if (!has_env(&l->env, "DISTCC_DIR") && home && *home)
		strlist_take(&l->env, xasprintf("DISTCC_DIR=%s/.distcc", home));
	char *count[] = {(char *)distcc, "-j", NULL};
	char *slots = first_line(count);
	l->remote_slots = slots ? atoi(slots) : 0;
	free(slots);
	if (l->remote_slots < 1) {
		error("'%s -j' found no distcc hosts: set DISTCC_HOSTS or ~/.distcc/hosts", distcc);
		return -1;
	}
	return 0;
}

int launcher_init(struct launcher *l, const char *spec)
{
	memset(l, 0, sizeof(*l));
	if (!spec || !*spec || strcmp(spec, "none") == 0)
		return 0;
	bool use_ccache = strcmp(spec, "ccache") == 0 || strcmp(spec, "ccache+distcc") == 0;
	bool use_distcc = strcmp(spec, "distcc") == 0 || strcmp(spec, "ccache+distcc") == 0;
	if (!use_ccache && !use_distcc) {
		error("unknown compiler launcher '%s' (launchers: ccache, distcc, ccache+distcc, none)", spec);
		return -1;
	}
	l->spec = xstrdup(spec);
	char *ccache = use_ccache ? path_search("ccache") : NULL;
	char *distcc = use_distcc ? path_search("distcc") : NULL;
	int rc = 0;
	if ((use_ccache && !ccache) || (use_distcc && !distcc)) {
		error("the compiler launcher '%s' needs '%s', which is not in PATH (Debian package %s)",
		      spec, use_ccache && !ccache ? "ccache" : "distcc",
		      use_ccache && !ccache ? "ccache" : "distcc");
		rc = -1;
	}
	/* the launcher's path becomes part of ${cc}, which build steps run through a shell */
	for (int i = 0; i < 2 && rc == 0; i++) {
		const char *found = i == 0 ? ccache : distcc;
		char bad = found ? shell_unsafe_char(found) : '\0';
		if (bad) {
			error("the compiler launcher '%s' found in PATH holds '%c', which build steps "
			      "cannot take safely; put it in a directory of letters, digits and "
			      "/._+-,=:@%%", found, bad);
			rc = -1;
		}
	}
	if (rc == 0 && use_ccache)
		rc = ccache_env(l, ccache);
	if (rc == 0 && use_distcc)
		rc = distcc_env(l, distcc);
	if (rc == 0 && use_ccache && use_distcc)
		strlist_take(&l->env, xasprintf("CCACHE_PREFIX=%s", distcc));
	l->distcc = use_distcc;
	l->network |= use_distcc;
	l->command = use_ccache ? ccache : distcc;
	free(use_ccache ? distcc : ccache);
	if (rc < 0)
		launcher_release(l);
	return rc;
}

void launcher_release(struct launcher *l)
{
	free(l->spec);
	free(l->command);
	strlist_release(&l->env);
	memset(l, 0, sizeof(*l));
}

void launcher_apply(const struct launcher *l, struct strlist *vars)
{
	if (!l->command)
		return;
	static const char *const compilers[] = {"cc", "cxx", "host_gcc", "host_gxx"};
	for (size_t c = 0; c < sizeof(compilers) / sizeof(compilers[0]); c++) {
		const char *value = NULL;
		for (size_t i = 0; i + 1 < vars->n; i += 2)
			if (strcmp(vars->v[i], compilers[c]) == 0)
				value = vars->v[i + 1];
		if (!value)
			continue;
		char *launched = xasprintf("%s %s", l->command, value);
		strlist_add(vars, compilers[c]);
		strlist_take(vars, launched);
	}
	strlist_add(vars, ".launcher");
	strlist_add(vars, l->command);
}
