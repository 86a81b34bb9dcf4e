/* libFuzzer target for variable expansion and planning (STYLE 16). An input is up to four
 * YAML files separated by lines "%%": a target "t", stages "a" and "b", and a source "s"
 * (a missing part is no file at all). They are written into a scratch project and planned
 * as `crossroot plan t` plans them, with a fake host LLVM (no compiler is needed): the graph
 * with its cycles and toolchain stages, every step of every stage expanded, pending keys
 * resolved after faking their dependencies' outputs, the CMake toolchain file written.
 * Whatever the bytes, the planner must report problems and return, never crash, leak or
 * touch memory it does not own (the build adds ASan and UBSan). Work directory and stage
 * cache are in the scratch directory too: nothing outside it is touched. Run by
 * tests/fuzz/run.sh; `make fuzz` for a longer run. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan.h"
#include "toolchain.h"

#define N_PARTS 4

static char scratch[] = "/tmp/crossroot-fuzz-plan.XXXXXX";
static char *paths[N_PARTS], *work, *cache, *cmake_file;

static void cleanup(void)
{
	remove_tree(scratch);
	for (int i = 0; i < N_PARTS; i++)
		free(paths[i]);
	free(work);
	free(cache);
	free(cmake_file);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	if (!mkdtemp(scratch))
		abort();
	const char *files[N_PARTS] = {"targets/t.yaml", "stages/a.yaml", "stages/b.yaml",
	                              "sources/s.yaml"};
	for (int i = 0; i < N_PARTS; i++) {
		paths[i] = path_join(scratch, files[i]);
		char *dir = xstrdup(paths[i]);
		*strrchr(dir, '/') = '\0';
		if (mkdir_p(dir, 0755) < 0)
			abort();
		free(dir);
	}
	work = path_join(scratch, "work");
	cache = path_join(scratch, "cache");
	cmake_file = path_join(work, "toolchain.cmake");
	if (mkdir_p(work, 0755) < 0 || mkdir_p(cache, 0755) < 0)
		abort();
	atexit(cleanup);
	return 0;
}

static void write_part(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
}

static void exercise(struct plan *p, struct target *t)
{
	struct node **stages;
	size_t n = plan_target_stages(p, t, &stages);
	free(stages);
	n = plan_toolchain_stages(p, t, &stages);
	free(stages);
	(void)n;
	plan_print(p);
	/* in build order: resolve what is pending, then fake the output a build would give */
	for (size_t i = 0; i < p->n_nodes; i++) {
		struct node *m = p->nodes[i];
		if (m->kind != NODE_STAGE)
			continue;
		for (size_t s = 0; s < m->stage->n_steps; s++)
			free(plan_expand(m, m->stage->steps[s].command, &m->stage->steps[s].where));
		if (m->state == NODE_PENDING)
			plan_resolve(p, m);
		snprintf(m->output, sizeof(m->output), "%.64s", m->key);
		toolchain_write_cmake_file(cmake_file, m->target, &m->vars);
		free(toolchain_step_path(p->host, m->base, m->host_llvm));
	}
	plan_print(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *part = data, *end = data + size;
	for (int i = 0; i < N_PARTS; i++) {
		if (part == end) {
			unlink(paths[i]);
			continue;
		}
		const uint8_t *cut = part;
		while (cut < end && !(end - cut >= 4 && memcmp(cut, "\n%%\n", 4) == 0))
			cut++;
		write_part(paths[i], part, (size_t)(cut - part));
		part = cut < end ? cut + 4 : end;
	}
	struct host_llvm host;
	toolchain_host_fake(&host, "/nonexistent/llvm/bin", "19", "fake");
	struct dirs dirs = {scratch, work, cache, cache, work};
	struct recipes r;
	recipes_init(&r, scratch);
	struct target *t = recipes_target(&r, "t");
	struct plan p;
	if (t && plan_create(&p, &dirs, &host, 2, false, &t, 1, &r) == 0) {
		exercise(&p, t);
		plan_release(&p);
	}
	recipes_release(&r);
	toolchain_host_release(&host);
	return 0;
}
