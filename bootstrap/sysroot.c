/* sysroot: assembly from stage manifests. See sysroot.h. */
#define _GNU_SOURCE
#include "sysroot.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "crossfiles.h"
#include "overlay.h"
#include "util.h"

#define SYSROOT_FORMAT "17"   /* bump when the generated files change */
#define STAMP_NAME SYSROOT_STAMP

/* ".<target>.new.<pid>" and ".<target>.old.<pid>" of runs that were killed. */
static void remove_leftovers(const char *out, const char *name)
{
	struct strlist names = {0};
	list_dir(out, &names);
	char *prefix = xasprintf(".%s.", name);
	for (size_t i = 0; i < names.n; i++) {
		const char *n = names.v[i];
		if (strncmp(n, prefix, strlen(prefix)) != 0)
			continue;
		const char *rest = n + strlen(prefix);
		if (strncmp(rest, "new.", 4) && strncmp(rest, "old.", 4))
			continue;
		long pid = atol(rest + 4);
		if (pid > 0 && (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		char *path = path_join(out, n);
		remove_tree(path);
		free(path);
	}
	free(prefix);
	strlist_release(&names);
}

static int install_union(const struct plan *p, struct node **stages, size_t n, bool tools,
                         const char *dest)
{
	struct cache_union u = {0};
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++)
		if ((stages[i]->stage->installs == INSTALLS_TOOLS) == tools &&
		    !plan_superseded(stages[i], stages, n))
			rc = cache_union_add(&u, p->dirs.stage_cache, stages[i]->key, stages[i]->label,
			                     stages[i]->output);
	if (rc == 0 && u.n)
		rc = mkdir_p(dest, 0755) == 0 ? cache_union_install(&u, dest) : -1;
	cache_union_release(&u);
	return rc;
}

char *sysroot_overlay_dir(const struct dirs *d, const char *target)
{
	return xasprintf("%s/overlays/%s", d->work, target);
}

int sysroot_assemble(const struct plan *p, const struct target *t)
{
	struct node **stages, **tools;
	size_t n = plan_target_stages(p, t, &stages);
	size_t n_tools = plan_toolchain_stages(p, t, &tools);
	struct strlist provided = {0};
	struct digest d;
	digest_init(&d);
	digest_update_string(&d, "crossroot-sysroot " SYSROOT_FORMAT);
	digest_update_string(&d, p->host->bin);
	digest_update_string(&d, p->dirs.out);
	digest_update_string(&d, t->text);
	for (size_t i = 0; i < n; i++)
		if (stages[i]->stage->installs == INSTALLS_SYSROOT)
			digest_update_string(&d, stages[i]->output);
	for (size_t i = 0; i < n_tools; i++) {
		digest_update_string(&d, tools[i]->output);
		if (strlist_has(&t->toolchain, tools[i]->stage->name) ||
		    (t->emulator && strcmp(t->emulator, tools[i]->stage->name) == 0))
			plan_provided(tools[i], t, &provided);
	}
	char *overlay = sysroot_overlay_dir(&p->dirs, t->name);
	overlay_digest(&d, overlay);
	char stamp[DIGEST_HEX_LEN + 1];
	digest_final(&d, stamp);

	char *final = path_join(p->dirs.out, t->name);
	char *stamp_path = path_join(final, STAMP_NAME);
	char *old = path_exists(stamp_path) ? read_file(stamp_path, NULL) : NULL;
	char *tmp = NULL, *prev = NULL;
	int rc = 0;
	if (old && strncmp(old, stamp, DIGEST_HEX_LEN) == 0)
		goto out;
	if (path_exists(final) && !old) {
		error("'%s' exists and was not made by crossroot (no %s in it): move it away, or use "
		      "another --out", final, STAMP_NAME);
		rc = -1;
		goto out;
	}
	if (mkdir_p(p->dirs.out, 0755) < 0) {
		rc = -1;
		goto out;
	}
	remove_leftovers(p->dirs.out, t->name);
	tmp = xasprintf("%s/.%s.new.%ld", p->dirs.out, t->name, (long)getpid());
	prev = xasprintf("%s/.%s.old.%ld", p->dirs.out, t->name, (long)getpid());
	char *toolchain_dir = path_join(tmp, "toolchain");
	rc = remove_tree(tmp) == 0 ? mkdir_p(tmp, 0755) : -1;
	if (rc == 0)
		rc = install_union(p, stages, n, false, tmp);
	if (rc == 0)
		rc = install_union(p, tools, n_tools, true, toolchain_dir);
	free(toolchain_dir);
	if (rc == 0)
		rc = overlay_apply(overlay, tmp);
	if (rc == 0)
		rc = crossfiles_write(p->host, t, &provided, tmp, p->dirs.out);
	if (rc == 0) {
		char *line = xasprintf("%s\n", stamp);
		char *sp = path_join(tmp, STAMP_NAME);
		rc = write_file_atomic(sp, line, strlen(line), 0644);
		free(sp);
		free(line);
	}
	/* Swap in: the old sysroot stays whole until the new one is complete. */
	if (rc == 0 && path_exists(final) && rename(final, prev) < 0) {
		error("cannot move '%s' aside:", final);
		rc = -1;
	}
	if (rc == 0 && rename(tmp, final) < 0) {
		error("cannot rename '%s' to '%s':", tmp, final);
		rc = -1;
	}
	remove_tree(prev);
	if (rc < 0) {
		remove_tree(tmp);
		error("sysroot '%s' not assembled", final);
	}
out:
	free(overlay);
	free(tmp);
	free(prev);
	free(old);
	free(final);
	free(stamp_path);
	free(stages);
	free(tools);
	strlist_release(&provided);
	return rc;
}
