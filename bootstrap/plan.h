/* plan: the graph of work for one run. Nodes are source trees (a verified archive, extracted
 * in part and patched, shared by every stage and target that needs the same tree) and stage
 * instances (target x stage). A stage's key is the sha256 of everything its result depends
 * on, so a result is reused exactly when nothing it was made from changed.
 *
 * Stage key inputs, one line each (stored beside the result, so `plan` can say which input
 * changed since the last build):
 *   engine <version>          bumped when the build environment crossroot gives changes
 *   recipe <sha256>           the parsed stage recipe (comments and layout do not count)
 *   target <sha256>           triple, cflags, vars, architecture facts, static-only
 *   source:<name> <sha256>    version, every origin's pin, extract/exclude/strip
 *   patch:<name>/<file> <sha256>
 *   debug <-g or none>        static-only targets, in stages with `debug: split` or whose
 *                             steps use ${debug_flag}: whether they are compiled with -g
 *                             (`with: [debug]`); a shared build always is, and has no line
 *   compiler <sha256>         the host LLVM, for stages built with it: tools stages, and
 *                             every stage of a target without a toolchain of its own
 *   dep:<stage> <output id>   for each stage it depends on (and the target's toolchain
 *                             stages): the sha256 of the dependency's output manifest
 * Dependencies count by what they installed, not by their keys: a dependency rebuilt with
 * identical output leaves its users cached (early cutoff). So a key can be known only once
 * every dependency's output is; until then the node is NODE_PENDING ("may rebuild"), and the
 * build resolves it when its dependencies finish (plan_resolve). */
#ifndef CROSSROOT_PLAN_H
#define CROSSROOT_PLAN_H

#include <stdbool.h>
#include <sys/types.h>

#include "digest.h"
#include "recipes.h"
#include "toolchain.h"

#define CROSSROOT_ENGINE_VERSION "3"

struct dirs {
	const char *root;           /* project: targets/ stages/ sources/ patches/ tests/ */
	const char *work;           /* scratch: build/, src/, logs/, state/ (one run at a time) */
	const char *downloads;      /* verified downloads, content addressed */
	const char *stage_cache;    /* finished stage outputs, by key (cache.h) */
	const char *out;            /* sysroots/ */
};

enum node_kind { NODE_TREE, NODE_STAGE };
enum node_state {
	NODE_WAITING,               /* to run */
	NODE_PENDING,               /* stage whose dependencies will rebuild: key not known yet */
	NODE_RUNNING,
	NODE_DONE,
	NODE_CACHED,                /* stage: its result is in the cache; tree: not needed */
	NODE_FAILED,
	NODE_SKIPPED,               /* tree: not needed by any stage that may run */
};

struct node {
	size_t index;               /* in plan.nodes */
	enum node_kind kind;
	enum node_state state;
	char key[DIGEST_HEX_LEN + 1];       /* "" while pending */
	char output[DIGEST_HEX_LEN + 1];    /* stage: output id, once cached or built */
	char *label;                /* "musl (aarch64-linux-musl)" or "source llvm-project 19.1.7" */
	struct node **deps;         /* must be finished before this node runs */
	size_t n_deps;
	struct node **users;        /* nodes that wait for this one */
	size_t n_users;
	size_t blocked;             /* unfinished deps (the scheduler's count) */
	struct strlist inputs;      /* key lines, see above; a tree's are its patch lines */
	double seconds;             /* how long it ran */

	/* NODE_TREE */
	struct source *source;
	char *tree_dir;             /* work/src/<name>-<version>-<key12> */
	char *archive;              /* verified download, once fetched */
	struct strlist patches;     /* absolute paths, in name order */

	/* NODE_STAGE */
	struct target *target;
	struct stage *stage;
	struct node **trees;        /* parallel to stage->sources */
	struct node **stage_deps;   /* stage->depends, then the target's toolchain stages */
	size_t n_stage_deps;
	struct strlist toolchain;   /* the tools stages it is compiled with (see stage_toolchain
	                               in plan.c); empty: the host clang */
	struct strlist provided;    /* tools its compilers come from (toolchain.h); empty: host */
	bool host_llvm;             /* a step names the host LLVM: in the key, on the PATH */
	char *why;                  /* plan: why it must (or may) be built, or NULL */
	struct strlist vars;        /* name, value pairs for ${...} */
	char *base;                 /* work/build/<target>/<stage>: its private scratch; for a
	                               machine-keyed stage work/build/machine/<stage>-<hex>,
	                               with no target name in it (plan.c's machine_base) */
};

struct plan {
	struct dirs dirs;
	const struct host_llvm *host;
	int jobs;
	bool verify;                /* hash every cached result in full before use */
	struct node **nodes;        /* every node, dependencies before users */
	size_t n_nodes;
	struct target **targets;
	size_t n_targets;
	struct strlist *left_out;   /* per target: the extras (and "debug information") its
	                               static-only build leaves out, for `plan` to say */
};

/* Build the graph for `targets`: the closure of their stages and toolchains, the source
 * trees, every key that can be known, and each node's state (cached results are checked
 * against their manifests, see cache.h). Returns -1 after reporting a problem (dependency
 * cycle, unknown variable), with the plan already released. Cheap: no process is spawned
 * unless a stage's steps name ${host_gcc} or ${host_gxx} (then the host GCC is probed:
 * toolchain_host_want_gcc). */
int plan_create(struct plan *p, const struct dirs *dirs, struct host_llvm *host, int jobs,
                bool verify, struct target *const targets[], size_t n_targets,
                struct recipes *r);
void plan_release(struct plan *p);

/* A pending stage whose dependencies have all finished: compute its key and look it up.
 * Leaves it NODE_CACHED or NODE_WAITING. Returns -1 on an I/O error. */
int plan_resolve(struct plan *p, struct node *n);
/* Every source tree becomes wanted (NODE_WAITING), cached stages or not: `crossroot fetch`. */
void plan_want_trees(struct plan *p);
/* Every tree still waiting is not needed (NODE_SKIPPED): no stage left to build reads it. */
void plan_skip_trees(struct plan *p);

/* A stage cache elsewhere that results can be taken from (the remote cache, remote.h). The
 * plan decides which stages to ask for and writes their states; the source only fetches. */
struct plan_source {
	void *ctx;
	/* Still worth asking? (false once the source failed for the run, or on Ctrl-C) */
	bool (*available)(void *ctx);
	/* Put the result of stage `n` (key known, not in the local stage cache) into the local
	 * stage cache: 1 if it did (`output` holds its output id), 0 if not (no entry, refused,
	 * unreachable: the source said so), -1 on a local error (reported). */
	int (*take)(void *ctx, const struct plan *p, const struct node *n,
	            char output[DIGEST_HEX_LEN + 1]);
};
/* Before a build: in dependency order, ask `from` for every stage whose key is known and whose
 * result is not in the local stage cache, resolving each pending stage once its dependencies
 * are all cached; then source trees that only cached stages need become NODE_SKIPPED (neither
 * fetched nor extracted). Stages taken become NODE_CACHED. Stops asking once `from` is not
 * available. Returns -1 only on a local error. */
int plan_pull(struct plan *p, const struct plan_source *from);
/* One stage whose key is known (NODE_WAITING), before it is built: cached if another node put
 * its result in the local stage cache meanwhile (a stage two targets share), else asked from
 * `from`. 1: now NODE_CACHED (output set), 0: still to build, -1: a local error. */
int plan_pull_stage(struct plan *p, struct node *n, const struct plan_source *from);
/* Remember a built stage's inputs in the work directory, for later explanations. */
int plan_remember(const struct plan *p, const struct node *n);

/* Stage nodes of `target` in dependency order. */
size_t plan_target_stages(const struct plan *p, const struct target *t, struct node ***out);
/* The tools stages a target's compilers come from, and their tools dependencies; then its
 * emulator stage (`emulator:`), without its dependencies. The sysroot ships them all. */
size_t plan_toolchain_stages(const struct plan *p, const struct target *t, struct node ***out);
/* What tools stage node `tools` provides to target `t`'s stages: name, path under the tools
 * prefix, ..., with ${triple} and ${major} (its first source's major version) filled in. */
void plan_provided(const struct node *tools, const struct target *t, struct strlist *out);
/* Is stage node `n` replaced by another of `set` (its `supersedes`)? Such a node's output is
 * left out wherever the set is installed together. */
bool plan_superseded(const struct node *n, struct node *const set[], size_t count);
/* Expand ${name} in `text` with the node's variables. Returns NULL after an error at `where`. */
char *plan_expand(const struct node *n, const char *text, const struct location *where);
/* Print the plan: each stage cached, to build or may rebuild, and why. */
void plan_print(const struct plan *p);

#endif
