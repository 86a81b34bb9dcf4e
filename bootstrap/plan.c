/* plan: stage graph, variables and keys. See plan.h. */
#define _GNU_SOURCE
#include "plan.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

/* ---- file hashes, cached by (device, inode, size, mtime) so a no-op run hashes nothing ---- */

/* Format of work/state/file-hashes, one file per line:
 *   crossroot-file-hashes 1            (header)
 *   <dev> <ino> <size> <mtime_ns> <sha256> <path>  */
static struct strlist hash_lines;
static bool hash_lines_loaded, hash_lines_dirty;

static void load_hash_cache(const char *path)
{
	hash_lines_loaded = true;
	if (!path_exists(path))
		return;
	char *text = read_file(path, NULL);
	if (!text || strncmp(text, "crossroot-file-hashes 1\n", 24) != 0) {
		free(text);
		return;
	}
	for (char *line = strtok(text + 24, "\n"); line; line = strtok(NULL, "\n"))
		strlist_add(&hash_lines, line);
	free(text);
}

static int hash_file_cached(const char *cache_path, const char *path, char *hex)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		error("cannot read '%s':", path);
		return -1;
	}
	if (!hash_lines_loaded)
		load_hash_cache(cache_path);
	char *prefix = xasprintf("%lu %lu %lld %lld ", (unsigned long)st.st_dev,
	                         (unsigned long)st.st_ino, (long long)st.st_size,
	                         (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
	size_t plen = strlen(prefix);
	for (size_t i = 0; i < hash_lines.n; i++) {
		const char *l = hash_lines.v[i];
		if (strncmp(l, prefix, plen) == 0 && strlen(l) > plen + DIGEST_HEX_LEN + 1 &&
		    strcmp(l + plen + DIGEST_HEX_LEN + 1, path) == 0) {
			memcpy(hex, l + plen, DIGEST_HEX_LEN);
			hex[DIGEST_HEX_LEN] = '\0';
			free(prefix);
			return 0;
		}
	}
	if (digest_file(path, hex) < 0) {
		free(prefix);
		return -1;
	}
	strlist_take(&hash_lines, xasprintf("%s%s %s", prefix, hex, path));
	hash_lines_dirty = true;
	free(prefix);
	return 0;
}

static void save_hash_cache(const char *path)
{
	if (!hash_lines_dirty)
		return;
	struct buf b = {0};
	buf_puts(&b, "crossroot-file-hashes 1\n");
	for (size_t i = 0; i < hash_lines.n; i++)
		buf_printf(&b, "%s\n", hash_lines.v[i]);
	write_file_atomic(path, b.s, b.len, 0644);
	buf_release(&b);
	hash_lines_dirty = false;
}

/* ---- compiler identity ---- */

static int compiler_identity(struct plan *p, const char *cache_path)
{
	const char *tools[] = {"clang", "ld.lld", "llvm-ar"};
	struct digest d;
	digest_init(&d);
	char *libdir = NULL;
	for (size_t i = 0; i < 3; i++) {
		char *tool = path_join(p->dirs.llvm_bin, tools[i]);
		char *real = realpath(tool, NULL);
		if (!real) {
			error("host tool '%s' not found (is clang-19/lld-19/llvm-19 installed? set "
			      "CROSSROOT_LLVM_BIN to another LLVM bin directory):", tool);
			free(tool);
			digest_release(&d);
			return -1;
		}
		char hex[DIGEST_HEX_LEN + 1];
		if (hash_file_cached(cache_path, real, hex) < 0) {
			free(tool);
			free(real);
			digest_release(&d);
			return -1;
		}
		digest_update_string(&d, hex);
		if (!libdir) {
			char *slash = strrchr(real, '/');
			*slash = '\0';
			libdir = xasprintf("%s/../lib", real);
		}
		free(tool);
		free(real);
	}
	/* The driver is small; the compiler lives in these libraries. */
	struct strlist names = {0};
	list_dir(libdir, &names);
	for (size_t i = 0; i < names.n; i++) {
		if (strncmp(names.v[i], "libLLVM", 7) && strncmp(names.v[i], "libclang-cpp", 12))
			continue;
		if (!strstr(names.v[i], ".so"))
			continue;
		char *path = path_join(libdir, names.v[i]);
		char *real = realpath(path, NULL);
		char hex[DIGEST_HEX_LEN + 1];
		if (real && hash_file_cached(cache_path, real, hex) == 0)
			digest_update_string(&d, hex);
		free(real);
		free(path);
	}
	strlist_release(&names);
	/* clang's resource directory is named by its major version */
	char *clang_lib = xasprintf("%s/clang", libdir);
	names = (struct strlist){0};
	list_dir(clang_lib, &names);
	if (names.n == 0) {
		error("no clang resource directory under '%s'", clang_lib);
		free(clang_lib);
		free(libdir);
		digest_release(&d);
		return -1;
	}
	p->clang_version = xstrdup(names.v[names.n - 1]);
	digest_update_string(&d, p->clang_version);
	strlist_release(&names);
	free(clang_lib);
	free(libdir);
	digest_final(&d, p->compiler);
	return 0;
}

/* ---- graph ---- */

static struct node *node_new(struct plan *p, enum node_kind kind)
{
	struct node *n = xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->log_fd = -1;
	p->nodes = xrealloc(p->nodes, (p->n_nodes + 1) * sizeof(*p->nodes));
	p->nodes[p->n_nodes++] = n;
	return n;
}

static void add_dep(struct node *user, struct node *dep)
{
	for (size_t i = 0; i < user->n_deps; i++)
		if (user->deps[i] == dep)
			return;
	user->deps = xrealloc(user->deps, (user->n_deps + 1) * sizeof(*user->deps));
	user->deps[user->n_deps++] = dep;
	dep->users = xrealloc(dep->users, (dep->n_users + 1) * sizeof(*dep->users));
	dep->users[dep->n_users++] = user;
}

static void hash_strlist(struct digest *d, const char *label, const struct strlist *l)
{
	digest_update_string(d, label);
	for (size_t i = 0; i < l->n; i++)
		digest_update_string(d, l->v[i]);
}

/* The patches of a source, as absolute paths in name order, and their hashes as inputs. */
static int collect_patches(const struct plan *p, const struct source *s, struct strlist *paths,
                           struct strlist *inputs)
{
	char *dir = xasprintf("%s/patches/%s/%s", p->dirs.root, s->name, s->version);
	struct strlist names = {0};
	int rc = list_dir(dir, &names);
	for (size_t i = 0; i < names.n && rc == 0; i++) {
		if (names.v[i][0] == '.')
			continue;
		char *path = path_join(dir, names.v[i]);
		char hex[DIGEST_HEX_LEN + 1];
		rc = digest_file(path, hex);
		if (rc == 0)
			strlist_take(inputs, xasprintf("patch:%s/%s %s", s->name, names.v[i], hex));
		strlist_take(paths, path);
	}
	strlist_release(&names);
	free(dir);
	return rc;
}

static void source_identity(const struct source *s, char *hex)
{
	struct digest d;
	digest_init(&d);
	digest_update_string(&d, s->name);
	digest_update_string(&d, s->version);
	for (size_t i = 0; i < s->n_origins; i++)
		digest_update_string(&d, s->origins[i].sha256);
	hash_strlist(&d, "extract", &s->extract);
	hash_strlist(&d, "exclude", &s->exclude);
	char strip[16];
	snprintf(strip, sizeof(strip), "%d", s->strip);
	digest_update_string(&d, strip);
	digest_final(&d, hex);
}

static struct node *tree_node(struct plan *p, struct source *s)
{
	struct strlist patches = {0}, inputs = {0};
	if (collect_patches(p, s, &patches, &inputs) < 0) {
		strlist_release(&patches);
		return NULL;
	}
	char id[DIGEST_HEX_LEN + 1], key[DIGEST_HEX_LEN + 1];
	source_identity(s, id);
	struct digest d;
	digest_init(&d);
	digest_update_string(&d, "crossroot-tree " CROSSROOT_ENGINE_VERSION);
	digest_update_string(&d, id);
	hash_strlist(&d, "patches", &inputs);
	digest_final(&d, key);
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i]->kind == NODE_TREE && strcmp(p->nodes[i]->key, key) == 0) {
			strlist_release(&patches);
			strlist_release(&inputs);
			return p->nodes[i];
		}
	struct node *n = node_new(p, NODE_TREE);
	memcpy(n->key, key, sizeof(key));
	n->source = s;
	n->patches = patches;
	n->inputs = inputs;   /* the patch lines, which the stages using this tree key on too */
	n->label = xasprintf("source %s %s", s->name, s->version);
	n->tree_dir = xasprintf("%s/src/%s-%s-%.12s", p->dirs.work, s->name, s->version, key);
	return n;
}

static void set_var(struct node *n, const char *name, const char *value)
{
	strlist_add(&n->vars, name);
	strlist_add(&n->vars, value);
}

static void stage_vars(const struct plan *p, struct node *n)
{
	const struct target *t = n->target;
	char *base = xasprintf("%s/build/%s/%s", p->dirs.work, t->name, n->stage->name);
	char *sysroot = xasprintf("%s/sysroot", base);
	char *resource = xasprintf("%s/usr/lib/clang/%s", sysroot, p->clang_version);
	char *clang = path_join(p->dirs.llvm_bin, "clang");
	struct buf tflags = {0}, cflags = {0};
	for (size_t i = 0; i < t->cflags.n; i++)
		buf_printf(&tflags, "%s%s", i ? " " : "", t->cflags.v[i]);
	/* Builds must not leak the work directory's path into their output. */
	buf_printf(&cflags, "%s%s-ffile-prefix-map=%s=/crossroot", tflags.s ? tflags.s : "",
	           tflags.len ? " " : "", p->dirs.work);
	char jobs[16];
	snprintf(jobs, sizeof(jobs), "%d", p->jobs);

	set_var(n, "target", t->name);
	set_var(n, "triple", t->triple);
	set_var(n, "target_cflags", tflags.s ? tflags.s : "");
	set_var(n, "cflags", cflags.s);
	set_var(n, "jobs", jobs);
	set_var(n, "prefix", "/usr");
	set_var(n, "llvm_bin", p->dirs.llvm_bin);
	set_var(n, "clang", clang);
	char *v = path_join(p->dirs.llvm_bin, "clang++");
	set_var(n, "clangxx", v);
	free(v);
	v = xasprintf("%s/../lib/clang/%s", p->dirs.llvm_bin, p->clang_version);
	char *real = realpath(v, NULL);
	set_var(n, "clang_resource_dir", real ? real : v);
	free(real);
	free(v);
	set_var(n, "clang_version", p->clang_version);
	set_var(n, "sysroot", sysroot);
	set_var(n, "resource_dir", resource);
	v = xasprintf("%s/dest", base);
	set_var(n, "destdir", v);
	free(v);
	v = xasprintf("%s/build", base);
	set_var(n, "build", v);
	free(v);
	set_var(n, "src", n->trees && n->stage->sources.n ? n->trees[0]->tree_dir : "");
	v = xasprintf("%s --target=%s --sysroot=%s -resource-dir=%s -fuse-ld=lld "
	              "--rtlib=compiler-rt --unwindlib=none %s", clang, t->triple, sysroot, resource,
	              cflags.s);
	set_var(n, "cc", v);
	free(v);
	const char *tools[][2] = {{"ar", "llvm-ar"}, {"ranlib", "llvm-ranlib"}, {"nm", "llvm-nm"},
	                          {"objcopy", "llvm-objcopy"}, {"strip", "llvm-strip"},
	                          {"readelf", "llvm-readelf"}, {"ld", "ld.lld"}};
	for (size_t i = 0; i < sizeof(tools) / sizeof(tools[0]); i++) {
		v = path_join(p->dirs.llvm_bin, tools[i][1]);
		set_var(n, tools[i][0], v);
		free(v);
	}
	for (size_t i = 0; i + 1 < t->vars.n; i += 2)
		set_var(n, t->vars.v[i], t->vars.v[i + 1]);
	free(base);
	free(sysroot);
	free(resource);
	free(clang);
	buf_release(&tflags);
	buf_release(&cflags);
}

char *plan_expand(const struct node *n, const char *text, const struct location *where)
{
	struct buf out = {0};
	for (const char *s = text; *s;) {
		const char *open = strstr(s, "${");
		if (!open) {
			buf_puts(&out, s);
			break;
		}
		buf_add(&out, s, (size_t)(open - s));
		const char *close = strchr(open, '}');
		if (!close) {
			location_error(where, "unterminated '${' in step");
			buf_release(&out);
			return NULL;
		}
		char *name = xstrndup(open + 2, (size_t)(close - open - 2));
		const char *value = NULL;
		/* later definitions win: target vars may refine engine defaults */
		for (size_t i = 0; i + 1 < n->vars.n; i += 2)
			if (strcmp(n->vars.v[i], name) == 0)
				value = n->vars.v[i + 1];
		if (!value) {
			location_error(where, "unknown variable '${%s}' (target '%s' defines no such var "
			               "and crossroot provides none)", name, n->target->name);
			free(name);
			buf_release(&out);
			return NULL;
		}
		buf_puts(&out, value);
		free(name);
		s = close + 1;
	}
	return buf_detach(&out);
}

/* Depth-first: dependencies first, so p->nodes ends in a valid build order; `path` holds
 * the stages being visited to name a cycle. */
static struct node *stage_node(struct plan *p, struct recipes *r, struct target *t,
                               struct stage *s, struct strlist *path)
{
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		if (n->kind == NODE_STAGE && n->target == t && n->stage == s)
			return n;
	}
	if (strlist_has(path, s->name)) {
		struct buf cycle = {0};
		for (size_t i = 0; i < path->n; i++)
			buf_printf(&cycle, "%s -> ", path->v[i]);
		error("%s: dependency cycle: %s%s", s->path, cycle.s, s->name);
		buf_release(&cycle);
		return NULL;
	}
	strlist_add(path, s->name);
	struct node **deps = xcalloc(s->depends.n, sizeof(*deps));
	for (size_t i = 0; i < s->depends.n; i++) {
		struct stage *dep = recipes_stage(r, s->depends.v[i], NULL);
		deps[i] = dep ? stage_node(p, r, t, dep, path) : NULL;
		if (!deps[i]) {
			free(deps);
			return NULL;
		}
	}
	free(path->v[--path->n]);
	struct node **trees = xcalloc(s->sources.n, sizeof(*trees));
	for (size_t i = 0; i < s->sources.n; i++) {
		trees[i] = tree_node(p, recipes_source(r, s->sources.v[i], NULL));
		if (!trees[i]) {
			free(deps);
			free(trees);
			return NULL;
		}
	}
	struct node *n = node_new(p, NODE_STAGE);
	n->target = t;
	n->stage = s;
	n->stage_deps = deps;
	n->trees = trees;
	n->label = xasprintf("%s (%s)", s->name, t->name);
	for (size_t i = 0; i < s->sources.n; i++)
		add_dep(n, trees[i]);
	for (size_t i = 0; i < s->depends.n; i++)
		add_dep(n, deps[i]);
	return n;
}

static void target_hash(const struct target *t, char *hex)
{
	struct digest d;
	digest_init(&d);
	digest_update_string(&d, t->triple);
	hash_strlist(&d, "cflags", &t->cflags);
	hash_strlist(&d, "vars", &t->vars);
	digest_final(&d, hex);
}

/* Inputs and key of a stage node; its dependencies have theirs already. */
static void stage_key(struct plan *p, struct node *n)
{
	char hex[DIGEST_HEX_LEN + 1];
	struct strlist *in = &n->inputs;
	strlist_add(in, "engine " CROSSROOT_ENGINE_VERSION);
	struct digest d;
	digest_init(&d);
	digest_update_string(&d, n->stage->text);
	digest_final(&d, hex);
	strlist_take(in, xasprintf("recipe %s", hex));
	target_hash(n->target, hex);
	strlist_take(in, xasprintf("target %s", hex));
	for (size_t i = 0; i < n->stage->sources.n; i++) {
		const struct source *s = n->trees[i]->source;
		source_identity(s, hex);
		strlist_take(in, xasprintf("source:%s %s", s->name, hex));
		for (size_t j = 0; j < n->trees[i]->inputs.n; j++)
			strlist_add(in, n->trees[i]->inputs.v[j]);
	}
	strlist_take(in, xasprintf("compiler %s", p->compiler));
	for (size_t i = 0; i < n->stage->depends.n; i++)
		strlist_take(in, xasprintf("dep:%s %s", n->stage_deps[i]->stage->name,
		                           n->stage_deps[i]->key));
	digest_init(&d);
	for (size_t i = 0; i < in->n; i++)
		digest_update_string(&d, in->v[i]);
	digest_final(&d, n->key);
}

char *plan_stage_result(const struct plan *p, const struct node *n)
{
	return path_join(p->dirs.stage_cache, n->key);
}

static char *last_inputs_path(const struct plan *p, const struct node *n)
{
	return xasprintf("%s/state/%s/%s.inputs", p->dirs.work, n->target->name, n->stage->name);
}

/* Why must this stage be built? Compares its inputs with those of its last build here. */
static char *explain(const struct plan *p, const struct node *n)
{
	char *path = last_inputs_path(p, n);
	char *text = path_exists(path) ? read_file(path, NULL) : NULL;
	free(path);
	if (!text)
		return xstrdup("never built in this work directory");
	struct strlist old = {0};
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"))
		strlist_add(&old, l);
	free(text);
	struct buf why = {0};
	for (size_t i = 0; i < n->inputs.n; i++) {
		if (strlist_has(&old, n->inputs.v[i]))
			continue;
		const char *line = n->inputs.v[i];
		size_t name_len = strcspn(line, " ");
		bool seen = false;
		for (size_t j = 0; j < old.n; j++)
			if (strncmp(old.v[j], line, name_len + 1) == 0)
				seen = true;
		buf_printf(&why, "%s%.*s %s", why.len ? ", " : "", (int)name_len, line,
		           seen ? "changed" : "added");
	}
	for (size_t j = 0; j < old.n; j++) {
		size_t name_len = strcspn(old.v[j], " ");
		bool present = false;
		for (size_t i = 0; i < n->inputs.n; i++)
			if (strncmp(n->inputs.v[i], old.v[j], name_len + 1) == 0)
				present = true;
		if (!present)
			buf_printf(&why, "%s%.*s removed", why.len ? ", " : "", (int)name_len, old.v[j]);
	}
	strlist_release(&old);
	if (!why.len)
		buf_puts(&why, "its result is not in the stage cache");
	return buf_detach(&why);
}

int plan_create(struct plan *p, const struct dirs *dirs, int jobs, struct target *const targets[],
                size_t n_targets, struct recipes *r)
{
	memset(p, 0, sizeof(*p));
	p->dirs = *dirs;
	p->jobs = jobs;
	p->targets = xcalloc(n_targets, sizeof(*p->targets));
	memcpy(p->targets, targets, n_targets * sizeof(*targets));
	p->n_targets = n_targets;
	char *state = xasprintf("%s/state", dirs->work);
	char *hash_cache = xasprintf("%s/file-hashes", state);
	int rc = mkdir_p(state, 0755);
	if (rc == 0)
		rc = compiler_identity(p, hash_cache);
	for (size_t i = 0; i < n_targets && rc == 0; i++) {
		struct strlist path = {0};
		for (size_t j = 0; j < targets[i]->stages.n && rc == 0; j++) {
			struct stage *s = recipes_stage(r, targets[i]->stages.v[j], NULL);
			if (!s || !stage_node(p, r, targets[i], s, &path))
				rc = -1;
		}
		strlist_release(&path);
	}
	save_hash_cache(hash_cache);
	free(hash_cache);
	free(state);
	if (rc < 0)
		return -1;
	/* Keys in dependency order, then the state of each node. */
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		if (n->kind != NODE_STAGE)
			continue;
		stage_key(p, n);
		stage_vars(p, n);
		for (size_t s = 0; s < n->stage->n_steps; s++) {
			char *check = plan_expand(n, n->stage->steps[s].command, &n->stage->steps[s].where);
			if (!check)
				return -1;
			free(check);
		}
		char *result = plan_stage_result(p, n);
		if (is_dir(result)) {
			n->state = NODE_CACHED;
			utimensat(AT_FDCWD, result, NULL, 0);   /* recently used: `prune` keeps it */
		}
		else
			n->why = explain(p, n);
		free(result);
	}
	/* A tree is needed only by stages that will be built, and only if not extracted yet. */
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		if (n->kind != NODE_TREE)
			continue;
		bool needed = false;
		for (size_t u = 0; u < n->n_users; u++)
			if (n->users[u]->state != NODE_CACHED)
				needed = true;
		n->state = !needed ? NODE_SKIPPED : is_dir(n->tree_dir) ? NODE_DONE : NODE_WAITING;
	}
	return 0;
}

void plan_release(struct plan *p)
{
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		free(n->label);
		free(n->deps);
		free(n->users);
		free(n->tree_dir);
		free(n->archive);
		strlist_release(&n->patches);
		free(n->trees);
		free(n->stage_deps);
		strlist_release(&n->inputs);
		free(n->why);
		strlist_release(&n->vars);
		free(n->log_path);
		free(n);
	}
	free(p->nodes);
	free(p->targets);
	free(p->clang_version);
	memset(p, 0, sizeof(*p));
}

size_t plan_target_stages(const struct plan *p, const struct target *t, struct node ***out)
{
	size_t count = 0;
	*out = xcalloc(p->n_nodes, sizeof(**out));
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i]->kind == NODE_STAGE && p->nodes[i]->target == t)
			(*out)[count++] = p->nodes[i];
	return count;
}

void plan_print(const struct plan *p)
{
	for (size_t t = 0; t < p->n_targets; t++) {
		info("%s:", p->targets[t]->name);
		struct node **stages;
		size_t n = plan_target_stages(p, p->targets[t], &stages);
		for (size_t i = 0; i < n; i++) {
			const struct node *s = stages[i];
			if (s->state == NODE_CACHED)
				info("  %-24s cached   %.12s", s->stage->name, s->key);
			else
				info("  %-24s to build %.12s (%s)", s->stage->name, s->key, s->why);
		}
		free(stages);
	}
	for (size_t i = 0; i < p->n_nodes; i++) {
		const struct node *n = p->nodes[i];
		if (n->kind == NODE_TREE && n->state == NODE_WAITING)
			info("  %-24s to extract into %s", n->label, n->tree_dir);
	}
}
