/* plan: stage graph, variables and keys. See plan.h. */
#define _GNU_SOURCE
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache.h"
#include "extract.h"
#include "util.h"

/* ---- graph ---- */

static struct node *node_new(struct plan *p, enum node_kind kind)
{
	struct node *n = xcalloc(1, sizeof(*n));
	n->kind = kind;
	n->index = p->n_nodes;
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
	char count[48];
	snprintf(count, sizeof(count), "%s %zu", label, l->n);
	digest_update_string(d, count);
	for (size_t i = 0; i < l->n; i++)
		digest_update_string(d, l->v[i]);
}

/* Does the patch at `path` touch a file that source `s` extracts? Its file names, "a/x" and
 * "b/x" (applied with -p1), against the source's (or the stage's view's) extract list: a
 * patch to libc++'s build is not the compiler's, whose view has no libcxx/, and does not key
 * it. A file without such names counts as touching: `patch` says what is wrong with it. */
static bool patch_in_view(const char *path, const struct source *s)
{
	if (s->extract.n == 0 && s->exclude.n == 0)
		return true;
	FILE *f = fopen(path, "re");
	if (!f)
		return true;
	char line[4096];
	bool named = false, touches = false;
	while (!touches && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "--- ", 4) != 0 && strncmp(line, "+++ ", 4) != 0)
			continue;
		char *name = line + 4;
		name[strcspn(name, "\t\n")] = '\0';
		char *slash = strchr(name, '/');
		if (strcmp(name, "/dev/null") == 0 || !slash)
			continue;
		named = true;
		touches = extract_wanted(&s->extract, &s->exclude, slash + 1);
	}
	fclose(f);
	return touches || !named;
}

/* The patch files of one directory (patches/<source>/<version>[/<set>]) that touch what `s`
 * extracts, as absolute paths in name order, and their hashes as inputs. Subdirectories are
 * patch sets, not patches. */
static int collect_patch_dir(const char *dir, const char *label, const struct source *s,
                             struct strlist *paths, struct strlist *inputs)
{
	struct strlist names = {0};
	int rc = list_dir(dir, &names);
	for (size_t i = 0; i < names.n && rc == 0; i++) {
		char *path = path_join(dir, names.v[i]);
		if (names.v[i][0] == '.' || is_dir(path) || !patch_in_view(path, s)) {
			free(path);
			continue;
		}
		char hex[DIGEST_HEX_LEN + 1];
		rc = digest_file(path, hex);
		if (rc == 0)
			strlist_take(inputs, xasprintf("patch:%s/%s %s", label, names.v[i], hex));
		strlist_take(paths, path);
	}
	strlist_release(&names);
	return rc;
}

/* The patches of a source: its version's, then those of the target's patch set `set` (NULL:
 * none). */
static int collect_patches(const struct plan *p, const struct source *s, const char *set,
                           struct strlist *paths, struct strlist *inputs)
{
	char *dir = xasprintf("%s/patches/%s/%s", p->dirs.root, s->name, s->version);
	int rc = collect_patch_dir(dir, s->name, s, paths, inputs);
	if (rc == 0 && set) {
		char *sub = path_join(dir, set);
		char *label = xasprintf("%s/%s", s->name, set);
		rc = collect_patch_dir(sub, label, s, paths, inputs);
		free(label);
		free(sub);
	}
	free(dir);
	return rc;
}

static void source_identity(const struct source *s, char *hex)
{
	struct digest d;
	digest_init(&d);
	digest_update_string(&d, s->name);
	digest_update_string(&d, s->version);
	/* the bytes, not where they come from: each pin once, so another origin of the same
	 * file (a mirror, a pool) changes nothing */
	for (size_t i = 0; i < s->n_origins; i++) {
		bool seen = false;
		for (size_t j = 0; j < i && !seen; j++)
			seen = strcmp(s->origins[j].sha256, s->origins[i].sha256) == 0;
		if (!seen)
			digest_update_string(&d, s->origins[i].sha256);
	}
	hash_strlist(&d, "extract", &s->extract);
	hash_strlist(&d, "exclude", &s->exclude);
	char strip[16];
	snprintf(strip, sizeof(strip), "%d", s->strip);
	digest_update_string(&d, strip);
	digest_final(&d, hex);
}

static struct node *tree_node(struct plan *p, struct source *s, const char *set)
{
	struct strlist patches = {0}, inputs = {0};
	if (collect_patches(p, s, set, &patches, &inputs) < 0) {
		strlist_release(&patches);
		strlist_release(&inputs);
		return NULL;
	}
	char id[DIGEST_HEX_LEN + 1], key[DIGEST_HEX_LEN + 1];
	source_identity(s, id);
	struct digest d;
	digest_init(&d);
	/* "modes": extraction normalises modes (extract.h), so a tree extracted before it did
	 * (with a tarball's 0700 directories, say) gets a new name and is extracted again; stage
	 * keys do not include this one */
	digest_update_string(&d, "crossroot-tree " CROSSROOT_ENGINE_VERSION " modes");
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
	/* a stage's view (its own extract list) is named by the stage it is for */
	const char *part = s->base ? strrchr(s->id, '/') + 1 : NULL;
	char *what = part ? xasprintf("source %s %s, %s's part", s->name, s->version, part)
	                  : xasprintf("source %s %s", s->name, s->version);
	n->label = set ? xasprintf("%s + %s", what, set) : xstrdup(what);
	free(what);
	n->tree_dir = xasprintf("%s/src/%s-%s-%.12s", p->dirs.work, s->name, s->version, key);
	return n;
}

static const char *var_value(const struct node *n, const char *name)
{
	const char *value = NULL;
	/* later definitions win */
	for (size_t i = 0; i + 1 < n->vars.n; i += 2)
		if (strcmp(n->vars.v[i], name) == 0)
			value = n->vars.v[i + 1];
	return value;
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
		const char *value = name[0] && name[0] != '.' ? var_value(n, name) : NULL;
		const char *gcc_missing = var_value(n, ".host_gcc_missing");
		if (!value && gcc_missing && (!strcmp(name, "host_gcc") || !strcmp(name, "host_gxx"))) {
			location_error(where, "unknown variable '${%s}': the host GCC cannot be used: %s",
			               name, gcc_missing);
			free(name);
			buf_release(&out);
			return NULL;
		}
		if (!value) {
			location_error(where, "unknown variable '${%s}' (target '%s' defines no such var, "
			               "the stage gives no default and crossroot provides none)", name, n->target->name);
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

static struct node *find_stage(const struct plan *p, const struct target *t, const struct stage *s)
{
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		if (n->kind == NODE_STAGE && n->target == t && n->stage == s)
			return n;
	}
	return NULL;
}

static struct node *stage_node(struct plan *p, struct recipes *r, struct target *t,
                               struct stage *s, struct strlist *path);

/* Whether stage `s`, or a stage it depends on or brings (for target `t`), builds from source
 * `name` */
static bool stage_uses_source(struct recipes *r, const struct target *t,
                              const struct stage *s, const char *name, int depth)
{
	if (!s || depth > 64)   /* (cycles were refused when the graph was made) */
		return false;
	for (size_t j = 0; j < s->sources.n; j++)
		if (strcmp(s->sources.v[j], name) == 0)
			return true;
	/* what the graph would build with it: the same lists stage_node follows */
	struct strlist next = {0};
	recipes_stage_depends(s, t, &next);
	for (size_t j = 0; j < s->brings.n; j++)
		strlist_add(&next, s->brings.v[j]);
	bool found = false;
	for (size_t j = 0; j < next.n && !found; j++)
		found = stage_uses_source(r, t, recipes_stage(r, recipes_substitute(t, next.v[j]), NULL),
		                          name, depth + 1);
	strlist_release(&next);
	return found;
}

/* Whether a stage of target `t` builds from source `name`: one in the graph, or one the
 * target lists but this build leaves out (a static-only build without its extras: the
 * target's patch set for the sanitizers' source is still the target's) */
static bool uses_source(const struct plan *p, struct recipes *r, size_t ti,
                        const char *name)
{
	const struct target *t = p->targets[ti];
	for (size_t i = 0; i < p->n_nodes; i++) {
		const struct node *n = p->nodes[i];
		if (n->kind == NODE_STAGE && n->target == t)
			for (size_t j = 0; j < n->stage->sources.n; j++)
				if (strcmp(n->stage->sources.v[j], name) == 0)
					return true;
	}
	for (size_t j = 0; j < t->stages.n; j++) {
		const char *stage = recipes_substitute(t, t->stages.v[j]);
		if (strlist_has(&p->left_out[ti], stage) &&
		    stage_uses_source(r, t, recipes_stage(r, stage, NULL), name, 0))
			return true;
	}
	return false;
}

/* The tools stages whose compilers build stage `s` of target `t`: the target's choice for
 * this stage (`stage_toolchain`), else the stage's own `toolchain`, else the target's. A tools
 * stage is always built with the host's compilers. Empty: the host clang. */
static void stage_toolchain(const struct target *t, const struct stage *s, struct strlist *out)
{
	if (s->installs == INSTALLS_TOOLS)
		return;
	for (size_t i = 0; i + 1 < t->stage_toolchain.n; i += 2)
		if (strcmp(t->stage_toolchain.v[i], s->name) == 0) {
			if (strcmp(t->stage_toolchain.v[i + 1], "host") != 0)
				strlist_add(out, t->stage_toolchain.v[i + 1]);
			return;
		}
	const struct strlist *names = s->has_toolchain ? &s->toolchain : &t->toolchain;
	for (size_t i = 0; i < names->n; i++)
		strlist_add(out, recipes_substitute(t, names->v[i]));
}

/* The dependencies of a stage: its `depends` (through the target's substitutions), then
 * the toolchain stages it is compiled with. */
static int stage_dependencies(struct plan *p, struct recipes *r, struct target *t,
                              struct stage *s, struct strlist *path, struct node ***out,
                              size_t *n_out)
{
	struct strlist names = {0}, toolchain = {0}, depends = {0};
	recipes_stage_depends(s, t, &depends);
	for (size_t i = 0; i < depends.n; i++) {
		const char *name = recipes_substitute(t, depends.v[i]);
		if (recipes_is_role(name)) {
			error("%s: stage '%s' depends on the role '%s', the target's C library, but target "
			      "'%s' names none: add 'libc: musl' (or glibc, or another C library's stage) "
			      "to %s", s->path, s->name, name, t->name, t->path);
			strlist_release(&names);
			strlist_release(&depends);
			*out = NULL;
			*n_out = 0;
			return -1;
		}
		if (!strlist_has(&names, name))
			strlist_add(&names, name);
	}
	strlist_release(&depends);
	stage_toolchain(t, s, &toolchain);
	for (size_t i = 0; i < toolchain.n; i++)
		if (!strlist_has(&names, toolchain.v[i]))
			strlist_add(&names, toolchain.v[i]);
	strlist_release(&toolchain);
	*out = xcalloc(names.n + 1, sizeof(**out));
	*n_out = names.n;
	int rc = 0;
	for (size_t i = 0; i < names.n && rc == 0; i++) {
		struct stage *dep = recipes_stage(r, names.v[i], NULL);
		(*out)[i] = dep ? stage_node(p, r, t, dep, path) : NULL;
		if (!(*out)[i])
			rc = -1;
	}
	strlist_release(&names);
	return rc;
}

/* Depth-first: dependencies first, so p->nodes ends in a valid build order; `path` holds
 * the stages being visited to name a cycle. */
static struct node *stage_node(struct plan *p, struct recipes *r, struct target *t,
                               struct stage *s, struct strlist *path)
{
	struct node *found = find_stage(p, t, s);
	if (found)
		return found;
	if (strlist_has(path, s->name)) {
		struct buf cycle = {0};
		for (size_t i = 0; i < path->n; i++)
			buf_printf(&cycle, "%s -> ", path->v[i]);
		error("%s: dependency cycle: %s%s", s->path, cycle.s, s->name);
		buf_release(&cycle);
		return NULL;
	}
	const char *why = recipes_unsupported(r, s, t);
	if (why) {
		location_error(&s->unsupported_where, "stage '%s' cannot be built for %s (target %s, "
		               "%s): %s", s->name, t->triple, t->name, t->path, why);
		return NULL;
	}
	strlist_add(path, s->name);
	struct node **deps = NULL;
	size_t n_deps = 0;
	if (stage_dependencies(p, r, t, s, path, &deps, &n_deps) < 0) {
		free(deps);
		return NULL;
	}
	free(path->v[--path->n]);
	struct node **trees = xcalloc(s->sources.n + 1, sizeof(*trees));
	for (size_t i = 0; i < s->sources.n; i++) {
		struct source *src = recipes_source_for(r, t, s->sources.v[i], NULL);
		if (src && i == 0)
			src = recipes_source_view(r, src, s);
		trees[i] = src ? tree_node(p, src, recipes_patch_set(t, s->sources.v[i])) : NULL;
		if (!trees[i]) {
			free(deps);
			free(trees);
			return NULL;
		}
	}
	struct node *n = node_new(p, NODE_STAGE);
	n->target = t;
	n->stage = s;
	stage_toolchain(t, s, &n->toolchain);
	n->stage_deps = deps;
	n->n_stage_deps = n_deps;
	n->trees = trees;
	n->label = xasprintf("%s (%s)", s->name, t->name);
	n->base = xasprintf("%s/build/%s/%s", p->dirs.work, t->name, s->name);
	for (size_t i = 0; i < s->sources.n; i++)
		add_dep(n, trees[i]);
	for (size_t i = 0; i < n_deps; i++)
		add_dep(n, deps[i]);
	/* what it brings joins the target's graph (and sysroot) without an edge: neither waits */
	for (size_t i = 0; i < s->brings.n; i++) {
		struct stage *b = recipes_stage(r, recipes_substitute(t, s->brings.v[i]), NULL);
		if (!b || !stage_node(p, r, t, b, path))
			return NULL;
	}
	return n;
}

static bool steps_use(const struct stage *s, const char *name)
{
	char *ref = xasprintf("${%s}", name);
	bool used = false;
	for (size_t j = 0; j < s->n_steps && !used; j++)
		used = strstr(s->steps[j].command, ref) != NULL;
	free(ref);
	return used;
}

/* The target as one stage sees it: its machine, and of its `vars` only those the stage's
 * steps name, so a variable that one stage reads (gcc's ${gcc_configure}) does not set the
 * other stages of the target apart from another target's (combinations share stages). */
static void target_hash(const struct target *t, const struct stage *s, char *hex)
{
	struct strlist used = {0};
	for (size_t i = 0; i + 1 < t->vars.n; i += 2)
		if (steps_use(s, t->vars.v[i])) {
			strlist_add(&used, t->vars.v[i]);
			strlist_add(&used, t->vars.v[i + 1]);
		}
	/* a stage's default counts as the target's value: a target that says it shares the
	 * stage with one that does not (only stages with defaults get these lines) */
	for (size_t i = 0; i + 1 < s->vars.n; i += 2) {
		bool set = false;
		for (size_t k = 0; k + 1 < t->vars.n && !set; k += 2)
			set = strcmp(t->vars.v[k], s->vars.v[i]) == 0;
		if (!set && steps_use(s, s->vars.v[i])) {
			strlist_add(&used, s->vars.v[i]);
			strlist_add(&used, s->vars.v[i + 1]);
		}
	}
	struct digest d;
	digest_init(&d);
	if (s->has_machine) {   /* only the facts its steps can see (recipes.c checks them) */
		digest_update_string(&d, "machine");
		hash_strlist(&d, "vars", &used);
		strlist_release(&used);
		const char *facts[][2] = {{"linux_arch", t->linux_arch ? t->linux_arch : ""},
		                          {"cpu_family", t->cpu_family}, {"cpu", t->cpu},
		                          {"endian", t->endian}, {"triple", t->triple},
		                          {"static", t->static_only ? "static" : "shared"}};
		for (size_t i = 0; i < sizeof(facts) / sizeof(facts[0]); i++)
			if (strlist_has(&s->machine, facts[i][0])) {
				digest_update_string(&d, facts[i][0]);
				digest_update_string(&d, facts[i][1]);
			}
		if (strlist_has(&s->machine, "cflags"))
			hash_strlist(&d, "cflags", &t->cflags);
		digest_final(&d, hex);
		return;
	}
	digest_update_string(&d, t->triple);
	hash_strlist(&d, "cflags", &t->cflags);
	hash_strlist(&d, "vars", &used);
	strlist_release(&used);
	digest_update_string(&d, t->linux_arch ? t->linux_arch : "");
	digest_update_string(&d, t->cpu_family);
	digest_update_string(&d, t->cpu);
	digest_update_string(&d, t->endian);
	digest_update_string(&d, t->static_only ? "static" : "shared");
	digest_final(&d, hex);
}

/* A stage keyed by its machine (`machine:`) is shared by every target with those facts, so
 * nothing its steps can see may carry the target's name: not ${sysroot}, ${build} or
 * ${destdir}, not $PWD. Its directory is named by the facts it lists instead:
 * build/machine/<stage>-<16 hex of them>. Two nodes of the plan get the same directory only
 * if their dependencies are the same nodes too (then their keys are the same, and build.c runs
 * one and gives the other its result); otherwise the later one takes a counted suffix. */
static void machine_base(struct plan *p, struct node *n, size_t index)
{
	char hex[DIGEST_HEX_LEN + 1];
	target_hash(n->target, n->stage, hex);
	char *base = NULL;
	for (int count = 1; !base; count++) {
		base = count == 1 ? xasprintf("%s/build/machine/%s-%.16s", p->dirs.work,
		                              n->stage->name, hex)
		                  : xasprintf("%s/build/machine/%s-%.16s-%d", p->dirs.work,
		                              n->stage->name, hex, count);
		for (size_t i = 0; i < index && base; i++) {
			const struct node *o = p->nodes[i];
			if (o->kind != NODE_STAGE || strcmp(o->base, base) != 0)
				continue;
			bool same = o->stage == n->stage && o->n_stage_deps == n->n_stage_deps;
			for (size_t d = 0; same && d < n->n_stage_deps; d++)
				same = o->stage_deps[d] == n->stage_deps[d];
			for (size_t t = 0; same && t < n->stage->sources.n; t++)   /* parallel to sources */
				same = o->trees[t] == n->trees[t];
			if (!same) {
				free(base);
				base = NULL;
			}
		}
	}
	free(n->base);
	n->base = base;
}

/* Does a step (expanded) run the host's LLVM: name its bin directory (${cc}, ${clang},
 * ${llvm_bin}, ${ar}, ... of a stage without a toolchain stage), its resource directory, or
 * the CMake toolchain file that names its compilers? Only such a stage has the host LLVM in
 * its key and on its PATH, and needs one: the llvm stage (built by the host's GCC) is the
 * same on a host without clang as on one with any clang. */
static bool uses_host_llvm(const struct plan *p, const struct node *n, bool cmake_names_host,
                           const char *step)
{
	const char *cmake = toolchain_var(&n->vars, "cmake_toolchain");
	const char *resource = p->host->resource_dir;
	return strstr(step, p->host->bin) || (resource && strstr(step, resource)) ||
	       (cmake_names_host && cmake && *cmake && strstr(step, cmake));
}

/* Does the stage's CMake toolchain file name a tool of the host's LLVM? It names the stage's
 * compilers and binary tools: those of its toolchain stage, if it has one. */
static bool cmake_file_names_host(const struct plan *p, const struct node *n)
{
	static const char *const named[] = {".cc_driver", ".cxx_driver", "ar", "nm", "ranlib",
	                                    "strip", "objcopy"};
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++) {
		const char *tool = toolchain_var(&n->vars, named[i]);
		if (tool && path_below(tool, strlen(tool), p->host->bin))
			return true;
	}
	return false;
}

static bool uses_host_gcc(const struct stage *s)
{
	return steps_use(s, "host_gcc") || steps_use(s, "host_gxx");
}

/* The key lines a stage has on its own (its dependencies' lines come later). */
static void own_inputs(const struct plan *p, struct node *n)
{
	char hex[DIGEST_HEX_LEN + 1];
	struct strlist *in = &n->inputs;
	strlist_add(in, "engine " CROSSROOT_ENGINE_VERSION);
	strlist_take(in, xasprintf("recipe %s", n->stage->recipe_hash));
	target_hash(n->target, n->stage, hex);
	strlist_take(in, xasprintf("target %s", hex));
	for (size_t i = 0; i < n->stage->sources.n; i++) {
		const struct source *s = n->trees[i]->source;
		source_identity(s, hex);
		strlist_take(in, xasprintf("source:%s %s", s->name, hex));
		for (size_t j = 0; j < n->trees[i]->inputs.n; j++)
			strlist_add(in, n->trees[i]->inputs.v[j]);
	}
	if (n->host_llvm)
		strlist_take(in, xasprintf("compiler %s", p->host->identity));
	if (uses_host_gcc(n->stage))
		strlist_take(in, xasprintf("host-gcc %s", p->host->gcc_identity));
	if (n->target->static_only && (n->stage->split_debug || steps_use(n->stage, "debug_flag")))
		strlist_take(in, xasprintf("debug %s", recipes_debug(n->target) ? "-g" : "none"));
}

void plan_provided(const struct node *tools, const struct target *t, struct strlist *out)
{
	const struct stage *s = tools->stage;
	/* ${major}: the first source's version up to its first dot (clang 19.1.7's resource
	 * directory is lib/clang/19) */
	const char *version = s->sources.n && tools->trees ? tools->trees[0]->source->version : "";
	char *major = xstrndup(version, strcspn(version, "."));
	for (size_t j = 0; j < s->provides.n; j++) {
		char *value = str_replace_all(s->provides.v[j], "${triple}", t->triple);
		strlist_take(out, str_replace_all(value, "${major}", major));
		free(value);
	}
	free(major);
}

/* The tools a sysroot stage's compilers come from: its toolchain stages' `provides`. */
static void stage_provided(struct node *n)
{
	for (size_t i = 0; i < n->n_stage_deps; i++)
		if (strlist_has(&n->toolchain, n->stage_deps[i]->stage->name))
			plan_provided(n->stage_deps[i], n->target, &n->provided);
}

static void stage_vars(const struct plan *p, struct node *n)
{
	char *sysroot = xasprintf("%s/sysroot", n->base);
	char *tools = xasprintf("%s/tools", n->base);
	char *build = xasprintf("%s/build", n->base);
	char *destdir = xasprintf("%s/dest", n->base);
	char *cmake = xasprintf("%s/toolchain.cmake", n->base);
	struct stage_paths paths = {p->dirs.work, sysroot, tools, build, destdir, cmake};
	/* the stage's defaults first: later definitions win, and the target's come later */
	for (size_t i = 0; i < n->stage->vars.n; i++)
		strlist_add(&n->vars, n->stage->vars.v[i]);
	toolchain_stage_vars(p->host, n->target, &n->provided, &paths, p->jobs, &n->vars);
	/* the C library, the target's fact: what a recipe shared by several libcs asks */
	if (n->target->libc) {
		strlist_add(&n->vars, "libc");
		strlist_add(&n->vars, n->target->libc);
	}
	/* ${src} is a link in the stage's own directory to the shared tree: the tree's name carries
	 * its patches' key, the stage's directory does not, so compile lines, debug info and
	 * ccache's hashes stay the same when a patch changes (build.c makes the link) */
	strlist_add(&n->vars, "src");
	strlist_take(&n->vars, n->stage->sources.n ? xasprintf("%s/src", n->base) : xstrdup(""));
	free(sysroot);
	free(tools);
	free(build);
	free(destdir);
	free(cmake);
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
	bool has_deps = false;   /* a pending stage has no dependency lines yet */
	for (size_t i = 0; i < n->inputs.n; i++)
		has_deps |= strncmp(n->inputs.v[i], "dep:", 4) == 0;
	for (size_t j = 0; j < old.n; j++) {
		size_t name_len = strcspn(old.v[j], " ");
		bool present = !has_deps && strncmp(old.v[j], "dep:", 4) == 0;
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

int plan_resolve(struct plan *p, struct node *n)
{
	struct strlist *in = &n->inputs;
	for (size_t i = 0; i < n->n_stage_deps; i++)
		strlist_take(in, xasprintf("dep:%s %s", n->stage_deps[i]->stage->name,
		                           n->stage_deps[i]->output));
	struct digest d;
	digest_init(&d);
	for (size_t i = 0; i < in->n; i++)
		digest_update_string(&d, in->v[i]);
	digest_final(&d, n->key);
	free(n->why);
	n->why = NULL;
	int found = cache_lookup(p->dirs.stage_cache, n->key, p->verify, n->output);
	if (found < 0)
		return -1;
	if (found) {
		n->state = NODE_CACHED;
		return 0;
	}
	n->state = NODE_WAITING;
	n->why = explain(p, n);
	return 0;
}

/* Does a stage that may still be built use tree `t`? */
static bool tree_needed(const struct node *t)
{
	for (size_t u = 0; u < t->n_users; u++)
		if (t->users[u]->state != NODE_CACHED)
			return true;
	return false;
}

int plan_pull_stage(struct plan *p, struct node *n, const struct plan_source *from)
{
	if (n->kind != NODE_STAGE || n->state != NODE_WAITING || !n->key[0] ||
	    !from->available(from->ctx))
		return 0;
	/* a stage two targets share may have been pulled for the other already */
	int found = cache_lookup(p->dirs.stage_cache, n->key, p->verify, n->output);
	if (found < 0)
		return -1;
	if (found)
		info("cached  %s", n->label);
	int rc = found ? 1 : from->take(from->ctx, p, n, n->output);
	if (rc == 1) {
		n->state = NODE_CACHED;
		free(n->why);
		n->why = NULL;
	}
	return rc;
}

int plan_pull(struct plan *p, const struct plan_source *from)
{
	for (size_t i = 0; i < p->n_nodes && from->available(from->ctx); i++) {
		struct node *n = p->nodes[i];
		if (n->kind != NODE_STAGE)
			continue;
		if (n->state == NODE_PENDING) {
			bool known = true;
			for (size_t d = 0; d < n->n_stage_deps; d++)
				known &= n->stage_deps[d]->state == NODE_CACHED;
			if (!known)
				continue;
			if (plan_resolve(p, n) < 0)
				return -1;
			if (n->state == NODE_CACHED) {
				info("cached  %s", n->label);
				continue;
			}
		}
		if (plan_pull_stage(p, n, from) < 0)
			return -1;
	}
	/* a tree only pulled stages needed is neither fetched nor extracted */
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *t = p->nodes[i];
		if (t->kind == NODE_TREE && t->state == NODE_WAITING && !tree_needed(t))
			t->state = NODE_SKIPPED;
	}
	return 0;
}

int plan_remember(const struct plan *p, const struct node *n)
{
	char *dir = xasprintf("%s/state/%s", p->dirs.work, n->target->name);
	char *path = last_inputs_path(p, n);
	struct buf b = {0};
	for (size_t i = 0; i < n->inputs.n; i++)
		buf_printf(&b, "%s\n", n->inputs.v[i]);
	int rc = mkdir_p(dir, 0755) == 0 ? write_file_atomic(path, b.s, b.len, 0644) : -1;
	buf_release(&b);
	free(dir);
	free(path);
	return rc;
}

/* A stage whose dependencies are not all known: what it waits for, for `plan`. */
static char *pending_reason(const struct node *n)
{
	struct buf why = {0};
	for (size_t i = 0; i < n->n_stage_deps; i++) {
		const struct node *d = n->stage_deps[i];
		if (d->state == NODE_WAITING || d->state == NODE_PENDING)
			buf_printf(&why, "%s%s, which %s", why.len ? "; " : "may rebuild: depends on ",
			           d->stage->name, d->state == NODE_WAITING ? "is to build" : "may rebuild");
	}
	return buf_detach(&why);
}

int plan_create(struct plan *p, const struct dirs *dirs, struct host_llvm *host, int jobs,
                bool verify, struct target *const targets[], size_t n_targets,
                struct recipes *r)
{
	memset(p, 0, sizeof(*p));
	p->dirs = *dirs;
	p->host = host;
	p->jobs = jobs;
	p->verify = verify;
	p->targets = xcalloc(n_targets + 1, sizeof(*p->targets));
	memcpy(p->targets, targets, n_targets * sizeof(*targets));
	p->n_targets = n_targets;
	int rc = 0;
	p->left_out = xcalloc(n_targets + 1, sizeof(*p->left_out));
	for (size_t i = 0; i < n_targets && rc == 0; i++) {
		struct strlist path = {0};
		struct target *t = targets[i];
		for (size_t j = 0; j < t->toolchain.n + t->stages.n && rc == 0; j++) {
			const char *name = j < t->toolchain.n ? t->toolchain.v[j]
			                                      : t->stages.v[j - t->toolchain.n];
			struct stage *s = recipes_stage(r, recipes_substitute(t, name), NULL);
			if (s && j >= t->toolchain.n && !recipes_wanted(t, s))
				strlist_add(&p->left_out[i], s->name);   /* (unless another stage needs it) */
			else if (!s || !stage_node(p, r, t, s, &path))
				rc = -1;
		}
		/* the emulator runs the target's programs: a stage of its graph that no other
		 * stage depends on, so no runtime's key holds it */
		struct stage *emulator = t->emulator && rc == 0 ? recipes_stage(r, t->emulator, NULL)
		                                                : NULL;
		if (t->emulator && rc == 0 && (!emulator || !stage_node(p, r, t, emulator, &path)))
			rc = -1;
		if (!recipes_debug(t))
			strlist_add(&p->left_out[i], "debug information");
		strlist_release(&path);
	}
	/* A stage_toolchain entry for a stage the graph does not build would be silently unused */
	for (size_t i = 0; i < n_targets && rc == 0; i++) {
		const struct target *t = targets[i];
		for (size_t j = 0; j + 1 < t->stage_toolchain.n && rc == 0; j += 2) {
			struct stage *s = recipes_stage(r, t->stage_toolchain.v[j], NULL);
			if (s && !find_stage(p, t, s)) {
				location_error(&t->stage_toolchain_at, "stage_toolchain names stage '%s', "
				               "which target '%s' does not build", s->name, t->name);
				rc = -1;
			} else if (s && s->installs == INSTALLS_TOOLS) {
				location_error(&t->stage_toolchain_at, "stage_toolchain names stage '%s', "
				               "a tools stage: those are built with the host's compilers",
				               s->name);
				rc = -1;
			}
		}
	}
	/* So would a version or a patch set chosen for a source that none of the target's
	 * stages uses */
	for (size_t i = 0; i < n_targets && rc == 0; i++) {
		const struct target *t = targets[i];
		for (size_t j = 0; j + 1 < t->versions.n && rc == 0; j += 2)
			if (!uses_source(p, r, i, t->versions.v[j])) {
				location_error(&t->versions_at, "versions names source '%s', which no stage "
				               "of target '%s' uses", t->versions.v[j], t->name);
				rc = -1;
			}
		for (size_t j = 0; j + 1 < t->patch_sets.n && rc == 0; j += 2)
			if (!uses_source(p, r, i, t->patch_sets.v[j])) {
				location_error(&t->patch_sets_at, "patches names source '%s', which no stage "
				               "of target '%s' uses", t->patch_sets.v[j], t->name);
				rc = -1;
			}
	}
	if (rc < 0) {
		plan_release(p);   /* a failed plan leaves nothing to release */
		return -1;
	}
	/* The host GCC is asked about only if a step may run it */
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i]->kind == NODE_STAGE && uses_host_gcc(p->nodes[i]->stage)) {
			toolchain_host_want_gcc(host);
			break;
		}
	/* Variables, then keys in dependency order as far as outputs are known. */
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		if (n->kind != NODE_STAGE)
			continue;
		if (n->stage->has_machine)
			machine_base(p, n, i);
		stage_provided(n);
		stage_vars(p, n);
		bool cmake_names_host = cmake_file_names_host(p, n);
		for (size_t s = 0; s < n->stage->n_steps; s++) {
			char *check = plan_expand(n, n->stage->steps[s].command, &n->stage->steps[s].where);
			if (!check) {
				plan_release(p);
				return -1;
			}
			n->host_llvm = n->host_llvm || uses_host_llvm(p, n, cmake_names_host, check);
			free(check);
		}
		if (n->host_llvm && p->host->llvm_missing) {
			error("target '%s': stage '%s' (%s) is compiled by the host's LLVM, and %s; or "
			      "give the target a toolchain stage that builds its compiler (toolchain: "
			      "[llvm]; README: \"The compiler as a stage\")", n->target->name,
			      n->stage->name, n->stage->path, p->host->llvm_missing);
			plan_release(p);
			return -1;
		}
		own_inputs(p, n);
		bool known = true;
		for (size_t d = 0; d < n->n_stage_deps; d++)
			if (n->stage_deps[d]->state != NODE_CACHED)
				known = false;
		if (!known) {
			n->state = NODE_PENDING;
			n->why = pending_reason(n);
			/* its own inputs changed too: say which (dependency lines are not there yet) */
			char *own = explain(p, n);
			if (strstr(own, " changed") || strstr(own, " added")) {
				char *both = xasprintf("%s; %s", own, n->why);
				free(n->why);
				n->why = both;
			}
			free(own);
		} else if (plan_resolve(p, n) < 0) {
			plan_release(p);
			return -1;
		}
	}
	/* A tree is needed only by stages that may be built, and only if not extracted yet. */
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		if (n->kind != NODE_TREE)
			continue;
		if (!tree_needed(n)) {
			n->state = NODE_SKIPPED;
			continue;
		}
		/* a tree a build step changed is extracted again, never used as it is */
		char *manifest = xasprintf("%s.manifest", n->tree_dir);
		bool whole = is_dir(n->tree_dir) && cache_tree_check(n->tree_dir, manifest, p->verify);
		if (!whole && remove_tree(n->tree_dir) < 0) {
			free(manifest);
			plan_release(p);
			return -1;
		}
		n->state = whole ? NODE_DONE : NODE_WAITING;
		free(manifest);
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
		strlist_release(&n->provided);
		strlist_release(&n->toolchain);
		free(n->why);
		strlist_release(&n->vars);
		free(n->base);
		free(n);
	}
	free(p->nodes);
	for (size_t t = 0; p->left_out && t < p->n_targets; t++)
		strlist_release(&p->left_out[t]);
	free(p->left_out);
	free(p->targets);
	memset(p, 0, sizeof(*p));
}

bool plan_superseded(const struct node *n, struct node *const set[], size_t count)
{
	for (size_t i = 0; i < count; i++)
		if (set[i] != n && set[i]->target == n->target)
			for (size_t j = 0; j < set[i]->stage->supersedes.n; j++)
				if (strcmp(recipes_substitute(n->target, set[i]->stage->supersedes.v[j]),
				           n->stage->name) == 0)
					return true;
	return false;
}

size_t plan_target_stages(const struct plan *p, const struct target *t, struct node ***out)
{
	size_t count = 0;
	*out = xcalloc(p->n_nodes + 1, sizeof(**out));
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i]->kind == NODE_STAGE && p->nodes[i]->target == t)
			(*out)[count++] = p->nodes[i];
	return count;
}

static void add_toolchain(struct node *n, struct node **out, size_t *count)
{
	for (size_t i = 0; i < *count; i++)
		if (out[i] == n)
			return;
	for (size_t i = 0; i < n->n_stage_deps; i++)
		if (n->stage_deps[i]->stage->installs == INSTALLS_TOOLS)
			add_toolchain(n->stage_deps[i], out, count);
	out[(*count)++] = n;
}

size_t plan_toolchain_stages(const struct plan *p, const struct target *t, struct node ***out)
{
	size_t count = 0;
	*out = xcalloc(p->n_nodes + 1, sizeof(**out));
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		if (n->kind == NODE_STAGE && n->target == t && strlist_has(&t->toolchain, n->stage->name))
			add_toolchain(n, *out, &count);
	}
	/* the emulator stage alone: what it was built with (meson) is not needed to run it */
	for (size_t i = 0; t->emulator && i < p->n_nodes; i++) {
		struct node *n = p->nodes[i];
		bool listed = false;
		for (size_t j = 0; j < count; j++)
			listed |= (*out)[j] == n;
		if (n->kind == NODE_STAGE && n->target == t && !listed &&
		    strcmp(n->stage->name, t->emulator) == 0)
			(*out)[count++] = n;
	}
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
			else if (s->state == NODE_PENDING)
				info("  %-24s maybe    (%s)", s->stage->name, s->why);
			else
				info("  %-24s to build %.12s (%s)", s->stage->name, s->key, s->why);
		}
		free(stages);
		/* what a static-only build leaves out, unless a stage it builds needs it */
		struct buf out = {0};
		const struct strlist *left = &p->left_out[t];
		for (size_t i = 0; i < left->n; i++) {
			bool built = false;
			for (size_t k = 0; k < p->n_nodes && !built; k++)
				built = p->nodes[k]->kind == NODE_STAGE &&
				        p->nodes[k]->target == p->targets[t] &&
				        strcmp(p->nodes[k]->stage->name, left->v[i]) == 0;
			if (!built)
				buf_printf(&out, "%s%s", out.len ? ", " : "", left->v[i]);
		}
		if (out.len)
			info("  static-only, not built: %s (--with adds them)", out.s);
		else if (p->targets[t]->static_only && p->targets[t]->with.n)
			info("  static-only, with what --with or 'with' asked for");
		buf_release(&out);
	}
	for (size_t i = 0; i < p->n_nodes; i++) {
		const struct node *n = p->nodes[i];
		if (n->kind == NODE_TREE && n->state == NODE_WAITING)
			info("  %-24s to extract into %s", n->label, n->tree_dir);
	}
}

void plan_want_trees(struct plan *p)
{
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i]->kind == NODE_TREE)
			p->nodes[i]->state = NODE_WAITING;
}

void plan_skip_trees(struct plan *p)
{
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i]->kind == NODE_TREE && p->nodes[i]->state == NODE_WAITING)
			p->nodes[i]->state = NODE_SKIPPED;
}
