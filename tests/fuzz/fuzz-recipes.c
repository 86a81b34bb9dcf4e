/* libFuzzer target for the recipe loader (STYLE 16). An input is up to three YAML files
 * separated by lines "%%": a target "t", a stage "s" and a source "s". They are written into
 * a scratch project and loaded as crossroot loads them: whatever the bytes, the loader must
 * report problems and return, never crash, leak or touch memory it does not own (the build
 * adds ASan and UBSan). Run by tests/fuzz/run.sh; `make fuzz` for a longer run. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "recipes.h"

static char project[] = "/tmp/crossroot-fuzz.XXXXXX";
static char *paths[3];

static void cleanup(void)
{
	for (int i = 0; i < 3; i++)
		unlink(paths[i]);
	const char *dirs[] = {"targets", "stages", "sources"};
	for (int i = 0; i < 3; i++) {
		char *dir = path_join(project, dirs[i]);
		rmdir(dir);
		free(dir);
		free(paths[i]);
	}
	rmdir(project);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	if (!mkdtemp(project))
		abort();
	const char *files[] = {"targets/t.yaml", "stages/s.yaml", "sources/s.yaml"};
	for (int i = 0; i < 3; i++) {
		paths[i] = path_join(project, files[i]);
		char *dir = xstrdup(paths[i]);
		*strrchr(dir, '/') = '\0';
		if (mkdir_p(dir, 0755) < 0)
			abort();
		free(dir);
	}
	atexit(cleanup);
	return 0;
}

static void write_part(const char *path, const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a missing part is an empty file, itself an input the loader must handle */
	const uint8_t *part = data, *end = data + size;
	for (int i = 0; i < 3; i++) {
		const uint8_t *cut = part;
		while (cut < end && !(end - cut >= 4 && memcmp(cut, "\n%%\n", 4) == 0))
			cut++;
		write_part(paths[i], part, (size_t)(cut - part));
		part = cut < end ? cut + 4 : end;
	}
	struct recipes r;
	recipes_init(&r, project);
	recipes_target(&r, "t");
	recipes_release(&r);
	return 0;
}
