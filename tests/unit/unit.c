/* unit: the unit tests' harness: the registry of TEST()s, main, and helpers every module's
 * tests use. See unit.h. */
#define _GNU_SOURCE
#include "unit.h"

#include "recipes.h"

int unit_checks, unit_failures;
char *scratch;

struct unit_test {
	const char *name;
	void (*fn)(void);
	const char *file;
	int line;
	size_t file_rank;           /* files in the order their first test registered */
	bool chosen;
};
static struct unit_test *tests;
static size_t n_tests;

void unit_register(const char *name, void (*fn)(void), const char *file, int line)
{
	size_t rank = n_tests;
	for (size_t i = 0; i < n_tests; i++)
		if (strcmp(tests[i].file, file) == 0) {
			rank = tests[i].file_rank;
			break;
		}
	tests = xrealloc(tests, (n_tests + 1) * sizeof(*tests));
	tests[n_tests++] = (struct unit_test){name, fn, file, line, rank, false};
}

/* Link order of the files, then the order in each file (constructors within one file need
 * not run in it). */
static int by_place(const void *a, const void *b)
{
	const struct unit_test *x = a, *y = b;
	if (x->file_rank != y->file_rank)
		return x->file_rank < y->file_rank ? -1 : 1;
	return x->line - y->line;
}

void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

bool file_has(const char *path, const char *text)
{
	if (!path_exists(path))
		return false;
	char *got = read_file(path, NULL);
	bool same = got && strcmp(got, text) == 0;
	free(got);
	return same;
}

/* Run fn with stderr captured into a string (caller frees). */
char *capture_stderr(int (*fn)(void *), void *arg, int *rc)
{
	char *path = xasprintf("%s/stderr.txt", scratch);
	fflush(stderr);
	int saved = dup(2);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 2);
	close(fd);
	*rc = fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char *text = read_file(path, NULL);
	free(path);
	return text;
}

/* Run fn with stdout and stderr captured into one string (caller frees). */
char *capture_output(int (*fn)(void *), void *arg, int *rc)
{
	char *path = xasprintf("%s/output.txt", scratch);
	fflush(stdout);
	fflush(stderr);
	int out = dup(1), err = dup(2);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 1);
	dup2(fd, 2);
	close(fd);
	*rc = fn(arg);
	fflush(stdout);
	fflush(stderr);
	dup2(out, 1);
	dup2(err, 2);
	close(out);
	close(err);
	char *text = read_file(path, NULL);
	free(path);
	return text;
}

char *project;

void make_project(void)
{
	free(project);
	project = xasprintf("%s/project", scratch);
	char *dirs[] = {"targets", "stages", "sources"};
	for (int i = 0; i < 3; i++) {
		char *d = xasprintf("%s/%s", project, dirs[i]);
		mkdir_p(d, 0755);
		free(d);
	}
}

void project_file(const char *rel, const char *text)
{
	char *path = xasprintf("%s/%s", project, rel);
	char *slash = strrchr(path, '/');
	*slash = '\0';
	mkdir_p(path, 0755);   /* (patches/<source>/<version>/<set>/ and the like) */
	*slash = '/';
	write_text(path, text);
	free(path);
}

static int load_target(void *name)
{
	struct recipes r;
	recipes_init(&r, project);
	int rc = recipes_target(&r, name) ? 0 : -1;
	recipes_release(&r);
	return rc;
}

/* Loading `target` fails and its messages include `expected` (else they are shown). */
bool load_fails_with(const char *target, const char *expected)
{
	int rc;
	char *err = capture_stderr(load_target, (void *)target, &rc);
	bool ok = rc < 0 && strstr(err, expected);
	if (!ok)
		fprintf(stderr, "loading '%s' gave status %d and:\n%s", target, rc, err);
	free(err);
	return ok;
}

int main(int argc, char **argv)
{
	qsort(tests, n_tests, sizeof(*tests), by_place);
	for (int a = 1; a < argc; a++) {
		bool known = false;
		for (size_t i = 0; i < n_tests; i++)
			if (strcmp(tests[i].name, argv[a]) == 0)
				tests[i].chosen = known = true;
		if (!known) {
			fprintf(stderr, "run-unit: no test named '%s' (tests:", argv[a]);
			for (size_t i = 0; i < n_tests; i++)
				fprintf(stderr, " %s", tests[i].name);
			fprintf(stderr, ")\n");
			return 2;
		}
	}
	char template[] = "/tmp/crossroot-unit.XXXXXX";
	scratch = mkdtemp(template);
	if (!scratch) {
		perror("mkdtemp");
		return 1;
	}
	for (size_t i = 0; i < n_tests; i++)
		if (argc == 1 || tests[i].chosen)
			tests[i].fn();
	remove_tree(scratch);
	free(project);
	free(tests);
	printf("unit: %d checks, %d failed\n", unit_checks, unit_failures);
	return unit_failures ? 1 : 0;
}
