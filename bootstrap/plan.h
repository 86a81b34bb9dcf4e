/* plan: the graph of work for one run. Nodes are source trees (a verified archive, extracted
 * in part and patched, shared by every stage and target that needs the same tree) and stage
 * instances (target x stage). Each node has a key, the sha256 of everything its result
 * depends on, so a result is reused exactly when nothing it was made from changed.
 *
 * Stage key inputs, one line each (also stored beside the result, so `plan` can say which
 * input changed since the last build):
 *   engine <version>          bumped when the build environment crossroot gives changes
 *   recipe <sha256>           the stage's YAML text
 *   target <sha256>           triple, cflags and vars of the target
 *   source:<name> <sha256>    version, every origin's pin, extract/exclude/strip
 *   patch:<name>/<file> <sha256>
 *   compiler <sha256>         the host clang, lld and LLVM libraries (file contents)
 *   dep:<stage> <key>         the key of each stage it depends on (so transitively all)
 */
#ifndef CROSSROOT_PLAN_H
#define CROSSROOT_PLAN_H

#include <stdbool.h>
#include <sys/types.h>

#include "digest.h"
#include "recipes.h"

#define CROSSROOT_ENGINE_VERSION "1"

struct dirs {
	const char *root;           /* project: targets/ stages/ sources/ patches/ tests/ */
	const char *work;           /* scratch: build/, src/, logs/, state/ (one run at a time) */
	const char *downloads;      /* verified downloads, content addressed */
	const char *stage_cache;    /* finished stage outputs, by key */
	const char *out;            /* sysroots/ */
	const char *llvm_bin;       /* host clang, lld and LLVM tools */
};

enum node_kind { NODE_TREE, NODE_STAGE };
enum node_state { NODE_WAITING, NODE_RUNNING, NODE_DONE, NODE_CACHED, NODE_FAILED, NODE_SKIPPED };

struct node {
	enum node_kind kind;
	enum node_state state;
	char key[DIGEST_HEX_LEN + 1];
	char *label;                /* "musl (aarch64-linux-musl)" or "source llvm-project 19.1.7" */
	struct node **deps;         /* must be finished before this node runs */
	size_t n_deps;
	struct node **users;        /* nodes that wait for this one */
	size_t n_users;
	size_t blocked;             /* unfinished deps */
	struct strlist inputs;      /* "name hash" lines, see above; a tree's are its patch lines */

	/* NODE_TREE */
	struct source *source;
	char *tree_dir;             /* work/src/<name>-<version>-<key12> */
	char *archive;              /* verified download, once fetched */
	struct strlist patches;     /* absolute paths, in name order */

	/* NODE_STAGE */
	struct target *target;
	struct stage *stage;
	struct node **trees;        /* parallel to stage->sources */
	struct node **stage_deps;   /* parallel to stage->depends */
	char *why;                  /* plan: what changed since the last build, or NULL */
	struct strlist vars;        /* name, value pairs for ${...} */

	/* while running */
	pid_t pid;
	size_t step;                /* next step to run */
	int log_fd;
	char *log_path;
	bool holds_token;
	double started, seconds;
	double step_started;
};

struct plan {
	struct dirs dirs;
	int jobs;
	struct node **nodes;        /* every node, dependencies before users */
	size_t n_nodes;
	struct target **targets;
	size_t n_targets;
	char compiler[DIGEST_HEX_LEN + 1];
	char *clang_version;        /* resource dir name, e.g. "19" */
};

/* Build the graph for `targets`: the closure of their stages, the source trees, every key.
 * Returns -1 after reporting a problem (dependency cycle, unknown variable, missing host
 * compiler). Cheap: no process is spawned and big files are hashed once (stat cache). */
int plan_create(struct plan *p, const struct dirs *dirs, int jobs, struct target *const targets[],
                size_t n_targets, struct recipes *r);
void plan_release(struct plan *p);

/* Stage nodes of `target` in dependency order. */
size_t plan_target_stages(const struct plan *p, const struct target *t, struct node ***out);
/* Directory holding a finished stage's files: <stage_cache>/<key>. */
char *plan_stage_result(const struct plan *p, const struct node *n);
/* Expand ${name} in `text` with the node's variables. Returns NULL after an error at `where`. */
char *plan_expand(const struct node *n, const char *text, const struct location *where);
/* Print the plan: each stage cached or to build, and why. */
void plan_print(const struct plan *p);

#endif
