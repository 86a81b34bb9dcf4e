/* prune: cache pruning by use. See prune.h. */
#define _GNU_SOURCE
#include "prune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util.h"

struct entry {
	char *key, *owner;
	double used;
	bool keep;
};

static int by_owner_then_newest(const void *a, const void *b)
{
	const struct entry *x = a, *y = b;
	int c = strcmp(x->owner, y->owner);
	if (c)
		return c;
	return x->used < y->used ? 1 : x->used > y->used ? -1 : 0;
}

static long long tree_size(const char *path)
{
	struct stat st;
	if (lstat(path, &st) < 0)
		return 0;
	long long total = S_ISREG(st.st_mode) ? (long long)st.st_size : 0;
	if (S_ISDIR(st.st_mode)) {
		struct strlist names = {0};
		list_dir(path, &names);
		for (size_t i = 0; i < names.n; i++) {
			char *child = path_join(path, names.v[i]);
			total += tree_size(child);
			free(child);
		}
		strlist_release(&names);
	}
	return total;
}

static int remove_counted(const char *path, long long *freed)
{
	*freed += tree_size(path);
	return remove_tree(path);
}

int prune_caches(const struct plan *p, const struct recipes *r, int keep)
{
	struct strlist names = {0};
	if (list_dir(p->dirs.stage_cache, &names) < 0)
		return -1;
	struct entry *e = xcalloc(names.n, sizeof(*e));
	size_t n = 0;
	long long freed = 0;
	int rc = 0;
	size_t removed = 0;
	for (size_t i = 0; i < names.n; i++) {
		char *dir = path_join(p->dirs.stage_cache, names.v[i]);
		if (names.v[i][0] == '.') {   /* leftovers of interrupted runs */
			rc |= remove_counted(dir, &freed);
			free(dir);
			continue;
		}
		char *owner_path = path_join(dir, "owner");
		char *owner = path_exists(owner_path) ? read_file(owner_path, NULL) : xstrdup("? ?");
		struct stat st;
		e[n].key = xstrdup(names.v[i]);
		e[n].owner = owner ? owner : xstrdup("? ?");
		e[n].used = stat(dir, &st) == 0 ? (double)st.st_mtim.tv_sec + st.st_mtim.tv_nsec / 1e9 : 0;
		for (size_t j = 0; j < p->n_nodes; j++)
			if (p->nodes[j]->kind == NODE_STAGE && strcmp(p->nodes[j]->key, e[n].key) == 0)
				e[n].keep = true;
		n++;
		free(owner_path);
		free(dir);
	}
	qsort(e, n, sizeof(*e), by_owner_then_newest);
	for (size_t i = 0, rank = 0; i < n; i++) {
		rank = i > 0 && strcmp(e[i].owner, e[i - 1].owner) == 0 ? rank + 1 : 0;
		if (e[i].keep || (int)rank < keep)
			continue;
		char *dir = path_join(p->dirs.stage_cache, e[i].key);
		rc |= remove_counted(dir, &freed);
		removed++;
		free(dir);
	}
	/* downloads no source file pins any more */
	struct strlist pinned = {0}, files = {0};
	char *sources = path_join(r->root, "sources");
	struct strlist source_names = {0};
	list_dir(sources, &source_names);
	for (size_t i = 0; i < source_names.n; i++) {
		char *text = NULL;
		char *path = path_join(sources, source_names.v[i]);
		text = read_file(path, NULL);
		for (char *t = text; t && (t = strstr(t, "sha256:")); t += 7) {
			char *hex = t + 7 + strspn(t + 7, " \t\"'");
			strlist_take(&pinned, xstrndup(hex, 64));
		}
		free(text);
		free(path);
	}
	size_t dropped = 0;
	list_dir(p->dirs.downloads, &files);
	for (size_t i = 0; i < files.n; i++) {
		if (strlen(files.v[i]) != 64 || strlist_has(&pinned, files.v[i]))
			continue;
		char *path = path_join(p->dirs.downloads, files.v[i]);
		rc |= remove_counted(path, &freed);
		dropped++;
		free(path);
	}
	char size[32];
	info("pruned %zu stage results and %zu downloads, freed %s; kept %zu stage results "
	     "(every result the current recipes need, and up to %d per target and stage)",
	     removed, dropped, format_size((double)freed, size), n - removed, keep);
	for (size_t i = 0; i < n; i++) {
		free(e[i].key);
		free(e[i].owner);
	}
	free(e);
	strlist_release(&names);
	strlist_release(&pinned);
	strlist_release(&files);
	strlist_release(&source_names);
	free(sources);
	return rc ? -1 : 0;
}
