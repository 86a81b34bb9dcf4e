/* unit: the harness of the C unit tests. One file per module, tests/unit/<module>.c, holds
 * that module's tests; each is a TEST(name) { ... } that registers itself before main runs.
 *
 * tests/unit/run-unit runs every test, files in the order the Makefile links them
 * (UNIT_TESTS) and tests in the order they are written, or only those named on its command
 * line (`tests/unit/run-unit remote sign`). CHECK(cond) counts a check and, when it fails,
 * prints the file, line and condition and goes on. Every test may use `scratch`, a private
 * temporary directory removed at the end, and must not depend on another test having run. */
#ifndef CROSSROOT_UNIT_H
#define CROSSROOT_UNIT_H

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

extern int unit_checks, unit_failures;
extern char *scratch;

#define CHECK(cond)                                                                        \
	do {                                                                                   \
		unit_checks++;                                                                     \
		if (!(cond)) {                                                                     \
			unit_failures++;                                                               \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);       \
		}                                                                                  \
	} while (0)

/* Defines test_<name> and registers it as `name`. */
#define TEST(name)                                                                         \
	static void test_##name(void);                                                         \
	__attribute__((constructor)) static void register_##name(void)                         \
	{                                                                                      \
		unit_register(#name, test_##name, __FILE__, __LINE__);                             \
	}                                                                                      \
	static void test_##name(void)
void unit_register(const char *name, void (*fn)(void), const char *file, int line);

/* Helpers for every module's tests. */
void write_text(const char *path, const char *text);
/* Does the file `path` hold exactly `text`? */
bool file_has(const char *path, const char *text);
/* Run fn with stderr (capture_output: stdout and stderr) captured into a string (caller
 * frees); fn's result in *rc. */
char *capture_stderr(int (*fn)(void *), void *arg, int *rc);
char *capture_output(int (*fn)(void *), void *arg, int *rc);

/* A project directory for recipe and plan tests: make_project() makes an empty one
 * (targets/, stages/, sources/) in scratch, project_file() writes a file into it. */
extern char *project;
void make_project(void);
void project_file(const char *rel, const char *text);
/* Loading `target` fails and its messages include `expected` (else they are shown). */
bool load_fails_with(const char *target, const char *expected);

#endif
