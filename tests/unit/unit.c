/* Unit tests of the engine's modules: digest, yamlfile + recipes, extract, util.
 * Each TEST is a function; CHECK records a failure with its line and goes on. */
#define _GNU_SOURCE
#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <netinet/in.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "apt.h"
#include "cache.h"
#include "digest.h"
#include "extract.h"
#include "fetch.h"
#include "package.h"
#include "run.h"
#include "plan.h"
#include "recipes.h"
#include "scheduler.h"
#include "searchpaths.h"
#include "sign.h"
#include "toolchain.h"
#include "util.h"
#include "yamlfile.h"

static int failures, checks;
static char *scratch;

#define CHECK(cond)                                                                        \
	do {                                                                                   \
		checks++;                                                                          \
		if (!(cond)) {                                                                     \
			failures++;                                                                    \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);       \
		}                                                                                  \
	} while (0)

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	fputs(text, f);
	fclose(f);
}

/* Run fn with stderr captured into a string (caller frees). */
static char *capture_stderr(int (*fn)(void *), void *arg, int *rc)
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

/* ---- digest ---- */

static void test_digest(void)
{
	struct digest d;
	char hex[DIGEST_HEX_LEN + 1];
	digest_init(&d);
	digest_update(&d, "abc", 3);
	digest_final(&d, hex);
	CHECK(strcmp(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad") == 0);
	/* streaming in pieces gives the same hash as one piece */
	digest_init(&d);
	digest_update(&d, "a", 1);
	char hex2[DIGEST_HEX_LEN + 1];
	digest_peek(&d, hex2);   /* the hash so far, and the digest goes on */
	CHECK(strcmp(hex2, "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb") == 0);
	digest_update(&d, "bc", 2);
	digest_final(&d, hex2);
	CHECK(strcmp(hex, hex2) == 0);
	char *path = xasprintf("%s/abc", scratch);
	write_text(path, "abc");
	CHECK(digest_file(path, hex2) == 0 && strcmp(hex, hex2) == 0);
	free(path);
	CHECK(digest_is_valid_hex(hex));
	CHECK(!digest_is_valid_hex("BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"));
	CHECK(!digest_is_valid_hex("abc"));
	CHECK(digest_file("/nonexistent/file", hex2) < 0);
}

/* ---- yamlfile and recipes ---- */

static char *project;

static void make_project(void)
{
	project = xasprintf("%s/project", scratch);
	char *dirs[] = {"targets", "stages", "sources"};
	for (int i = 0; i < 3; i++) {
		char *d = xasprintf("%s/%s", project, dirs[i]);
		mkdir_p(d, 0755);
		free(d);
	}
}

static void project_file(const char *rel, const char *text)
{
	char *path = xasprintf("%s/%s", project, rel);
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
static bool load_fails_with(const char *target, const char *expected)
{
	int rc;
	char *err = capture_stderr(load_target, (void *)target, &rc);
	bool ok = rc < 0 && strstr(err, expected);
	if (!ok)
		fprintf(stderr, "loading '%s' gave status %d and:\n%s", target, rc, err);
	free(err);
	return ok;
}

static const char good_source[] =
	"name: src\nversion: 1.0\norigins:\n"
	"  - url: http://127.0.0.1:1/src.tar.gz\n"
	"    sha256: ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n"
	"  - apt: src=1.0-1\n    file: src_1.0.orig.tar.gz\n"
	"    sha256: ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n";

/* Seconds taken by loading `target`, which must fail with `expected`. */
static double load_fails_within(const char *target, const char *expected, bool *matched)
{
	double start = now_seconds();
	*matched = load_fails_with(target, expected);
	return now_seconds() - start;
}

/* Hostile recipe files: each is refused at its place, quickly, and nothing hangs. */
static void test_recipe_limits(void)
{
	bool matched;
	/* duplicate keys in any mapping, not only those with a fixed key set */
	project_file("targets/dupvars.yaml", "triple: a-b-c\nqemu: q\nstages: [two]\nvars:\n"
	             "  arch: arm64\n  other: x\n  arch: x86\n");
	CHECK(load_fails_with("dupvars",
	                      "targets/dupvars.yaml:7:3: duplicate key 'arch' (first given on line 5)"));
	project_file("sources/dupsrc.yaml", "name: dupsrc\nversion: 1\norigins:\n"
	             "  - url: http://127.0.0.1:1/a\n"
	             "    sha256: ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n"
	             "    url: http://127.0.0.1:1/b\n");
	project_file("stages/dupsrc.yaml", "name: dupsrc\nsources: [dupsrc]\nsteps: [true]\n");
	project_file("targets/dupsrc.yaml", "triple: a-b-c\nqemu: q\nstages: [dupsrc]\n");
	CHECK(load_fails_with("dupsrc",
	                      "sources/dupsrc.yaml:6:5: duplicate key 'url' (first given on line 4)"));
	/* a second document is an error at its line, not ignored */
	project_file("targets/twodocs.yaml", "triple: a-b-c\nqemu: q\nstages: [two]\n---\n"
	             "triple: x-y-z\n");
	CHECK(load_fails_with("twodocs", "targets/twodocs.yaml:4:1: a second YAML document"));
	/* 100,000 levels of nesting: refused at level 65 (the top mapping is level 1), at once (libyaml alone: 45 s) */
	struct buf deep = {0};
	buf_puts(&deep, "triple: a-b-c\nqemu: q\nstages: [two]\nvars: ");
	for (int i = 0; i < 100000; i++)
		buf_puts(&deep, "[");
	for (int i = 0; i < 100000; i++)
		buf_puts(&deep, "]");
	buf_puts(&deep, "\n");
	project_file("targets/deep.yaml", deep.s);
	buf_release(&deep);
	double took = load_fails_within("deep", "targets/deep.yaml:4:70: nested deeper than 64 "
	                                "levels", &matched);
	CHECK(matched);
	CHECK(took < 1.0);
	/* block sequences nest too */
	struct buf dashes = {0};
	buf_puts(&dashes, "triple: a-b-c\nqemu: q\nstages: [two]\ncflags:\n");
	for (int i = 0; i < 100000; i++)
		buf_puts(&dashes, "- ");
	buf_puts(&dashes, "x\n");
	project_file("targets/dashes.yaml", dashes.s);
	buf_release(&dashes);
	took = load_fails_within("dashes", "nested deeper than 64 levels", &matched);
	CHECK(matched);
	CHECK(took < 1.0);
	/* over the size limit: refused where the limit falls */
	struct buf big = {0};
	buf_puts(&big, "triple: a-b-c\nqemu: q\nstages: [two]\ndescription: |\n");
	while (big.len <= YAMLFILE_MAX_BYTES)
		buf_puts(&big, "  0123456789012345678901234567890123456789012345678901234567890123456\n");
	project_file("targets/big.yaml", big.s);
	size_t line = 1, column = 1;
	for (size_t i = 0; i < YAMLFILE_MAX_BYTES; i++, column++)
		if (big.s[i] == '\n')
			line++, column = 0;
	buf_release(&big);
	char *expected = xasprintf("targets/big.yaml:%zu:%zu: file is larger than %d bytes", line,
	                           column, YAMLFILE_MAX_BYTES);
	CHECK(load_fails_with("big", expected));
	free(expected);
	/* a FIFO (or a device) is refused before any read: no hang. The alarm turns a hang into
	 * a failure of this test instead of a stuck suite. */
	char *fifo = xasprintf("%s/targets/fifo.yaml", project);
	CHECK(mkfifo(fifo, 0644) == 0);
	alarm(10);
	CHECK(load_fails_with("fifo", "targets/fifo.yaml: not a regular file (a FIFO)"));
	alarm(0);
	free(fifo);
	char *dir = xasprintf("%s/targets/dir.yaml", project);
	mkdir_p(dir, 0755);
	CHECK(load_fails_with("dir", "targets/dir.yaml: not a regular file (a directory)"));
	free(dir);
}

static void test_recipes(void)
{
	make_project();
	project_file("sources/src.yaml", good_source);
	project_file("stages/one.yaml", "name: one\nsources: [src]\nsteps:\n  - echo ${triple}\n");
	project_file("stages/two.yaml", "name: two\ndepends: [one]\nsteps: [make]\n");
	project_file("targets/good.yaml", "triple: aarch64-unknown-linux-musl\nqemu: qemu-aarch64\n"
	             "stages: [two]\nlinux_arch: arm64\nvars:\n  greeting: arm64\n");
	struct recipes r;
	recipes_init(&r, project);
	struct target *t = recipes_target(&r, "good");
	CHECK(t != NULL);
	if (t) {
		CHECK(strcmp(t->triple, "aarch64-unknown-linux-musl") == 0);
		CHECK(t->linux_arch && strcmp(t->linux_arch, "arm64") == 0);
		CHECK(strcmp(t->cpu, "aarch64") == 0 && strcmp(t->endian, "little") == 0);
		CHECK(t->vars.n == 2 && strcmp(t->vars.v[1], "arm64") == 0);
		struct stage *two = recipes_stage(&r, "two", NULL);
		CHECK(two && two->depends.n == 1 && two->n_steps == 1);
		struct source *s = recipes_source(&r, "src", NULL);
		CHECK(s && s->n_origins == 2 && s->origins[1].kind == ORIGIN_APT);
		CHECK(s && strcmp(s->origins[1].package, "src") == 0 &&
		      strcmp(s->origins[1].version, "1.0-1") == 0);
		CHECK(s && s->strip == 1);
		struct stage *one = recipes_stage(&r, "one", NULL);
		CHECK(one && one->steps[0].where.line == 4 && one->steps[0].where.column == 5);
	}
	recipes_release(&r);

	/* unknown key: named with line, column, and the closest valid key */
	project_file("targets/typo.yaml", "triple: x86_64-unknown-linux-musl\nqemu: q\nstage: [two]\n");
	CHECK(load_fails_with("typo",
	                      "targets/typo.yaml:3:1: unknown key 'stage'; did you mean 'stages'?"));
	CHECK(load_fails_with("typo", "missing required key 'stages'"));
	/* malformed YAML: the parser's mark */
	project_file("targets/broken.yaml", "triple: [unclosed\nqemu: q\n");
	CHECK(load_fails_with("broken",
	                      "targets/broken.yaml:2:5: did not find expected ',' or ']'"));
	/* wrong type */
	project_file("targets/types.yaml", "triple:\n  a: b\nqemu: q\nstages: [two]\n");
	CHECK(load_fails_with("types",
	                      "targets/types.yaml:2:3: 'triple' must be a string, not a mapping"));
	/* bad value in a source, reported at its own file and line */
	project_file("sources/bad.yaml", "name: bad\nversion: 1\norigins:\n  - url: ftp://x/y\n"
	             "    sha256: 1234\n");
	project_file("stages/usesbad.yaml", "name: usesbad\nsources: [bad]\nsteps: [true]\n");
	project_file("targets/badsrc.yaml", "triple: a-b-c\nqemu: q\nstages: [usesbad]\n");
	CHECK(load_fails_with("badsrc",
	                      "sources/bad.yaml:4:10: url must start with https://, http:// or file://"));
	CHECK(load_fails_with("badsrc",
	                      "sources/bad.yaml:5:13: sha256 must be 64 lowercase hexadecimal digits"));
	/* missing target file and unknown stage */
	CHECK(load_fails_with("nosuch", "unknown target 'nosuch'"));
	project_file("targets/nostage.yaml", "triple: a-b-c\nqemu: q\nstages: [two, three]\n");
	CHECK(load_fails_with("nostage", "targets/nostage.yaml:3:9: unknown stage 'three'"));
	/* duplicate keys */
	project_file("targets/dup.yaml", "triple: a-b-c\nqemu: q\nqemu: r\nstages: [two]\n");
	CHECK(load_fails_with("dup",
	                      "targets/dup.yaml:3:1: duplicate key 'qemu' (first given on line 2)"));
	test_recipe_limits();
}

/* ---- plan, with a fake host toolchain: no compiler needs to be installed ---- */

static struct node *stage_of(struct plan *p, const char *name)
{
	for (size_t i = 0; i < p->n_nodes; i++)
		if (p->nodes[i]->kind == NODE_STAGE && strcmp(p->nodes[i]->stage->name, name) == 0)
			return p->nodes[i];
	return NULL;
}

static bool has_line(const struct strlist *l, const char *prefix)
{
	for (size_t i = 0; i < l->n; i++)
		if (strncmp(l->v[i], prefix, strlen(prefix)) == 0)
			return true;
	return false;
}

/* Plan `target` of the project and return the key of `stage` (into key). */
static int plan_key(const char *target, const char *stage, char *key, char *cmd, size_t cmd_size)
{
	struct host_llvm host;
	toolchain_host_fake(&host, "/nonexistent/llvm/bin", "19", "fake-identity");
	char *work = xasprintf("%s/plan-work", scratch);
	char *cache = xasprintf("%s/plan-cache", scratch);
	struct dirs dirs = {project, work, cache, cache, work};
	struct recipes r;
	recipes_init(&r, project);
	struct target *t = recipes_target(&r, target);
	struct plan p;
	int rc = -1;
	if (t && plan_create(&p, &dirs, &host, 2, false, &t, 1, &r) == 0) {
		struct node *n = stage_of(&p, stage);
		if (n) {
			/* keys are known once dependencies' outputs are: fake them in order */
			for (size_t i = 0; i < p.n_nodes; i++) {
				struct node *m = p.nodes[i];
				if (m->kind == NODE_STAGE && m->state == NODE_PENDING)
					plan_resolve(&p, m);
				if (m->kind == NODE_STAGE)
					snprintf(m->output, sizeof(m->output), "%.64s", m->key);
			}
			memcpy(key, n->key, DIGEST_HEX_LEN + 1);
			char *expanded = plan_expand(n, n->stage->steps[0].command, &n->stage->steps[0].where);
			snprintf(cmd, cmd_size, "%s", expanded ? expanded : "");
			free(expanded);
			rc = has_line(&n->inputs, "compiler ") ? 1 : 0;
			rc += has_line(&n->inputs, "dep:tc ") ? 2 : 0;
		}
		plan_release(&p);
	}
	recipes_release(&r);
	toolchain_host_release(&host);
	free(work);
	free(cache);
	return rc;
}

static void test_plan(void)
{
	make_project();
	project_file("stages/tc.yaml", "name: tc\ninstalls: tools\nprovides:\n  cc: bin/xcc\n"
	             "steps: [true]\n");
	project_file("stages/base.yaml", "name: base\nsteps: ['echo ${cc}']\n");
	project_file("stages/top.yaml", "name: top\ndepends: [base]\nsteps: ['echo ${cc}']\n");
	project_file("targets/host.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\n"
	             "stages: [top]\n");
	project_file("targets/own.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\n"
	             "toolchain: [tc]\nstages: [top]\n");
	char key1[DIGEST_HEX_LEN + 1], key2[DIGEST_HEX_LEN + 1], key3[DIGEST_HEX_LEN + 1];
	char cmd[4096];
	/* host toolchain: the host compiler's identity is an input, ${cc} is its clang */
	CHECK(plan_key("host", "top", key1, cmd, sizeof(cmd)) == 1);
	CHECK(strstr(cmd, "/nonexistent/llvm/bin/clang --target=aarch64-unknown-linux-musl") != NULL);
	/* stage toolchain: its output is an input instead, ${cc} is the provided compiler */
	CHECK(plan_key("own", "top", key2, cmd, sizeof(cmd)) == 2);
	CHECK(strstr(cmd, "/tools/bin/xcc --sysroot=") != NULL);
	CHECK(strcmp(key1, key2) != 0);
	/* the tools stage itself is built with the host compiler */
	CHECK(plan_key("own", "tc", key3, cmd, sizeof(cmd)) == 1);
	/* a comment does not change a key; a step does */
	project_file("stages/base.yaml", "# a comment\nname: base\nsteps: ['echo ${cc}']\n");
	CHECK(plan_key("host", "top", key3, cmd, sizeof(cmd)) == 1 && strcmp(key1, key3) == 0);
	project_file("stages/tc.yaml", "name: tc\ninstalls: tools\nprovides:\n  cc: bin/xcc\n"
	             "steps: [true, true]\n");
	CHECK(plan_key("own", "top", key3, cmd, sizeof(cmd)) == 2 && strcmp(key2, key3) != 0);
	/* values that would reach the shell, and engine variables, are refused at their place */
	project_file("targets/inject.yaml", "triple: a-b-c\nqemu: q\nstages: [top]\n"
	             "vars:\n  x: 'a; touch /tmp/pwned'\n");
	CHECK(load_fails_with("inject", "targets/inject.yaml:5:3: value of 'x' holds a character"));
	project_file("targets/override.yaml", "triple: a-b-c\nqemu: q\nstages: [top]\n"
	             "vars:\n  destdir: /\n");
	CHECK(load_fails_with("override", "variable 'destdir' is set by crossroot"));
	project_file("targets/flags.yaml", "triple: a-b-c\nqemu: q\nstages: [top]\n"
	             "cflags: ['-O2 $(id)']\n");
	CHECK(load_fails_with("flags", "flag '-O2 $(id)' holds a character the shell would"));
	project_file("targets/notools.yaml", "triple: a-b-c\nqemu: q\nstages: [top]\n"
	             "toolchain: [base]\n");
	CHECK(load_fails_with("notools", "toolchain stage 'base' must say 'installs: tools'"));
	/* a stage's own extract list needs a source to take it from; provides names tools and the
	 * two LLVM directories only */
	project_file("stages/noextract.yaml", "name: noextract\nextract: [llvm]\nsteps: [true]\n");
	project_file("targets/noextract.yaml", "triple: a-b-c\nqemu: q\nstages: [noextract]\n");
	CHECK(load_fails_with("noextract", "'extract' names parts of the stage's first source"));
	project_file("stages/baddir.yaml", "name: baddir\ninstalls: tools\nprovides:\n"
	             "  llvm_lib: lib\nsteps: [true]\n");
	project_file("targets/baddir.yaml", "triple: a-b-c\nqemu: q\nstages: [baddir]\n");
	CHECK(load_fails_with("baddir", "unknown tool 'llvm_lib'"));
	project_file("stages/llvmdirs.yaml", "name: llvmdirs\ninstalls: tools\nprovides:\n"
	             "  llvm_bin: bin\n  clang_resource_dir: lib/clang/${major}\nsteps: [true]\n");
	project_file("stages/usellvm.yaml", "name: usellvm\nsteps: ['echo ${clang_version} ${llvm_bin}']\n");
	project_file("targets/usellvm.yaml", "triple: a-b-c\nqemu: q\ntoolchain: [llvmdirs]\n"
	             "stages: [usellvm]\n");
	/* built with the tools stage, not the host compiler (0: neither the host's identity nor
	 * tc's output); with no source, ${major} is empty and so is the version */
	CHECK(plan_key("usellvm", "usellvm", key3, cmd, sizeof(cmd)) == 0);
	CHECK(strstr(cmd, "echo  ") == cmd && strstr(cmd, "/tools/bin") != NULL);
	/* internal values are not variables */
	project_file("stages/internal.yaml", "name: internal\nsteps: ['echo ${.cc_driver}']\n");
	project_file("targets/internal.yaml", "triple: a-b-c\nqemu: q\nstages: [internal]\n");
	CHECK(plan_key("internal", "internal", key3, cmd, sizeof(cmd)) == -1);

	/* a stage's default for a variable: used where the target says nothing, the target's
	 * value wins, and a target that says the default shares the stage with one that does not */
	project_file("stages/dflt.yaml", "name: dflt\nvars:\n  runtimes: asan tsan\n"
	             "steps: ['echo ${runtimes}']\n");
	project_file("targets/quiet.yaml", "triple: a-b-c\nqemu: q\nstages: [dflt]\n");
	project_file("targets/same.yaml", "triple: a-b-c\nqemu: q\nstages: [dflt]\n"
	             "vars:\n  runtimes: asan tsan\n");
	project_file("targets/other.yaml", "triple: a-b-c\nqemu: q\nstages: [dflt]\n"
	             "vars:\n  runtimes: ubsan\n");
	CHECK(plan_key("quiet", "dflt", key1, cmd, sizeof(cmd)) == 1 &&
	      strcmp(cmd, "echo asan tsan") == 0);
	CHECK(plan_key("same", "dflt", key2, cmd, sizeof(cmd)) == 1 && strcmp(key1, key2) == 0);
	CHECK(plan_key("other", "dflt", key3, cmd, sizeof(cmd)) == 1 &&
	      strcmp(cmd, "echo ubsan") == 0 && strcmp(key1, key3) != 0);
	/* the default is part of the recipe: changing it changes the key */
	project_file("stages/dflt.yaml", "name: dflt\nvars:\n  runtimes: asan\n"
	             "steps: ['echo ${runtimes}']\n");
	CHECK(plan_key("quiet", "dflt", key2, cmd, sizeof(cmd)) == 1 && strcmp(key1, key2) != 0);
	/* a stage cannot default what crossroot sets, nor hand the shell code */
	project_file("stages/dfltbad.yaml", "name: dfltbad\nvars:\n  sysroot: /\n  y: '$(id)'\n"
	             "steps: [true]\n");
	project_file("targets/dfltbad.yaml", "triple: a-b-c\nqemu: q\nstages: [dfltbad]\n");
	CHECK(load_fails_with("dfltbad", "stages/dfltbad.yaml:3:3: variable 'sysroot' is set by "
	                      "crossroot; a recipe cannot give it a default"));
	CHECK(load_fails_with("dfltbad", "value of 'y' holds a character the shell would"));
}

/* ---- extract ---- */

enum entry_kind { REG, DIR_, SYMLINK, HARDLINK, CHARDEV, FIFO_ };
struct entry {
	const char *path;
	enum entry_kind kind;
	const char *data;       /* REG: contents; links: target */
	int mode;
};

static char *make_archive(const char *name, int format, int filter, const struct entry *e, size_t n)
{
	char *path = xasprintf("%s/%s", scratch, name);
	struct archive *a = archive_write_new();
	archive_write_set_format(a, format);
	if (filter == 'z')
		archive_write_add_filter_gzip(a);
	else if (filter == 'x')
		archive_write_add_filter_xz(a);
	archive_write_open_filename(a, path);
	for (size_t i = 0; i < n; i++) {
		struct archive_entry *ae = archive_entry_new();
		archive_entry_set_pathname(ae, e[i].path);
		archive_entry_set_mtime(ae, 1000000000, 0);
		int mode = e[i].mode ? e[i].mode : 0644;
		switch (e[i].kind) {
		case REG:
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_size(ae, (la_int64_t)strlen(e[i].data));
			break;
		case DIR_:
			archive_entry_set_filetype(ae, AE_IFDIR);
			mode = e[i].mode ? e[i].mode : 0755;
			break;
		case SYMLINK:
			archive_entry_set_filetype(ae, AE_IFLNK);
			archive_entry_set_symlink(ae, e[i].data);
			break;
		case HARDLINK:
			archive_entry_set_filetype(ae, AE_IFREG);
			archive_entry_set_hardlink(ae, e[i].data);
			break;
		case CHARDEV:
			archive_entry_set_filetype(ae, AE_IFCHR);
			archive_entry_set_rdev(ae, 0x0103);
			break;
		case FIFO_:
			archive_entry_set_filetype(ae, AE_IFIFO);
			break;
		}
		archive_entry_set_perm(ae, (mode_t)mode);
		archive_write_header(a, ae);
		if (e[i].kind == REG)
			archive_write_data(a, e[i].data, strlen(e[i].data));
		archive_entry_free(ae);
	}
	archive_write_close(a);
	archive_write_free(a);
	return path;
}

struct extract_call {
	struct extract_options o;
};

static int call_extract(void *arg)
{
	return extract_archive(&((struct extract_call *)arg)->o);
}

static bool file_has(const char *path, const char *text)
{
	if (!path_exists(path))
		return false;
	char *got = read_file(path, NULL);
	bool same = got && strcmp(got, text) == 0;
	free(got);
	return same;
}

static void test_extract_good(void)
{
	const struct entry good[] = {
		{"pkg-1.0/", DIR_, NULL, 0},
		{"pkg-1.0/README", REG, "readme\n", 0},
		{"pkg-1.0/src/main.c", REG, "int main;\n", 0},
		{"pkg-1.0/src/link", SYMLINK, "main.c", 0},
		{"pkg-1.0/src/hard", HARDLINK, "pkg-1.0/src/main.c", 0},
		{"pkg-1.0/docs/manual.txt", REG, "manual\n", 0},
		{"pkg-1.0/tool.sh", REG, "#!/bin/sh\n", 0755},
	};
	const int formats[][2] = {{ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'z'},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'x'},
	                          {ARCHIVE_FORMAT_ZIP, 0}};
	for (int f = 0; f < 4; f++) {
		char name[32];
		snprintf(name, sizeof(name), "good%d.archive", f);
		char *archive = make_archive(name, formats[f][0], formats[f][1], good, 7);
		char *dest = xasprintf("%s/good%d", scratch, f);
		struct extract_options o = {.archive = archive, .dest = dest, .strip = 1};
		CHECK(extract_archive(&o) == 0);
		char *p = xasprintf("%s/src/main.c", dest);
		CHECK(file_has(p, "int main;\n"));
		free(p);
		p = xasprintf("%s/src/hard", dest);
		/* zip has no hard links */
		CHECK(formats[f][0] == ARCHIVE_FORMAT_ZIP || file_has(p, "int main;\n"));
		free(p);
		p = xasprintf("%s/tool.sh", dest);
		struct stat st;
		CHECK(stat(p, &st) == 0 && (st.st_mode & 0777) == 0755);
		free(p);
		/* the temp directory is gone */
		p = xasprintf("%s.tmp.%ld", dest, (long)getpid());
		CHECK(!path_exists(p));
		free(p);
		/* extracting onto an existing directory is refused: not the archive's fault */
		CHECK(extract_archive(&o) == EXTRACT_FAILED);
		free(dest);
		free(archive);
	}
	/* partial extraction with include and exclude patterns */
	char *archive = make_archive("partial.tar", ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0, good, 7);
	char *dest = xasprintf("%s/partial", scratch);
	struct strlist include = {0}, exclude = {0};
	strlist_add(&include, "src");
	strlist_add(&include, "*.txt");
	strlist_add(&exclude, "src/link");
	struct extract_options o = {.archive = archive, .dest = dest, .strip = 1, .include = &include,
	                            .exclude = &exclude};
	CHECK(extract_archive(&o) == 0);
	char *p = xasprintf("%s/src/main.c", dest);
	CHECK(path_exists(p));
	free(p);
	p = xasprintf("%s/docs/manual.txt", dest);
	CHECK(!path_exists(p));   /* "*.txt" does not cross '/' */
	free(p);
	p = xasprintf("%s/README", dest);
	CHECK(!path_exists(p));
	free(p);
	p = xasprintf("%s/src/link", dest);
	CHECK(!path_exists(p));
	free(p);
	strlist_release(&include);
	strlist_release(&exclude);
	free(dest);
	free(archive);
	CHECK(extract_path_matches("libcxx", "libcxx/src/a.cpp"));
	CHECK(extract_path_matches("arch/*/include/uapi", "arch/arm64/include/uapi/asm/x.h"));
	CHECK(!extract_path_matches("arch/*/include/uapi", "arch/arm64/include/asm/x.h"));
	CHECK(extract_path_matches("*/test", "libcxx/test/std/x.cpp"));
}

static void test_extract_hostile(void)
{
	struct {
		const char *name;
		struct entry e;
		const char *message;
	} cases[] = {
		{"dotdot", {"pkg/../../evil", REG, "x", 0}, "entry 'pkg/../../evil' has a '..' component"},
		{"absolute", {"/tmp/crossroot-evil", REG, "x", 0}, "has an absolute path"},
		{"symlink-abs", {"pkg/etc", SYMLINK, "/etc", 0}, "is a symbolic link to '/etc', outside"},
		{"symlink-up", {"pkg/up", SYMLINK, "../../..", 0}, "is a symbolic link to '../../..'"},
		{"hardlink-out", {"pkg/h", HARDLINK, "/etc/passwd", 0}, "is a hard link to '/etc/passwd'"},
		{"device", {"pkg/null", CHARDEV, NULL, 0}, "entry 'pkg/null' is a device node"},
		{"fifo", {"pkg/fifo", FIFO_, NULL, 0}, "entry 'pkg/fifo' is a FIFO"},
		{"setuid", {"pkg/su", REG, "x", 04755}, "entry 'pkg/su' has set-user-ID"},
	};
	const int formats[][2] = {{ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'z'},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'x'},
	                          {ARCHIVE_FORMAT_ZIP, 0}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int f = 0; f < 4; f++) {
			/* zip cannot hold devices, FIFOs or hard links */
			if (formats[f][0] == ARCHIVE_FORMAT_ZIP &&
			    (cases[c].e.kind == CHARDEV || cases[c].e.kind == FIFO_ ||
			     cases[c].e.kind == HARDLINK))
				continue;
			struct entry e[] = {{"pkg/ok", REG, "fine\n", 0}, cases[c].e};
			char name[64];
			snprintf(name, sizeof(name), "hostile-%s-%d", cases[c].name, f);
			char *archive = make_archive(name, formats[f][0], formats[f][1], e, 2);
			struct extract_call call = {{.archive = archive, .strip = 1}};
			char *dest = xasprintf("%s/out-%s-%d", scratch, cases[c].name, f);
			call.o.dest = dest;
			int rc;
			char *err = capture_stderr(call_extract, &call, &rc);
			CHECK(rc == EXTRACT_REFUSED);   /* the archive's fault: exit 3, not 1 */
			if (!strstr(err, cases[c].message)) {
				failures++;
				fprintf(stderr, "hostile archive %s (format %d): expected '%s' in:\n%s\n",
				        cases[c].name, f, cases[c].message, err);
			}
			CHECK(!path_exists(dest));
			free(err);
			free(dest);
			free(archive);
		}
	}
	CHECK(!path_exists("/tmp/crossroot-evil"));
	char *evil = xasprintf("%s/../evil", scratch);
	CHECK(!path_exists(evil));
	free(evil);
	/* limits */
	const struct entry many[] = {{"p/a", REG, "1", 0}, {"p/b", REG, "2", 0}, {"p/c", REG, "3", 0}};
	char *archive = make_archive("many.tar", ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0, many, 3);
	char *dest = xasprintf("%s/many", scratch);
	struct extract_call call = {{.archive = archive, .dest = dest, .strip = 1, .max_entries = 2}};
	int rc;
	char *err = capture_stderr(call_extract, &call, &rc);
	CHECK(rc == EXTRACT_REFUSED && strstr(err, "more than 2 entries"));
	free(err);
	call.o.max_entries = 0;
	call.o.max_bytes = 2;
	err = capture_stderr(call_extract, &call, &rc);
	CHECK(rc == EXTRACT_REFUSED && strstr(err, "takes the extracted size over 2 bytes"));
	CHECK(!path_exists(dest));
	free(err);
	free(dest);
	free(archive);
	/* a damaged archive */
	char *junk = xasprintf("%s/junk.tar.gz", scratch);
	write_text(junk, "\x1f\x8b this is not gzip data at all");
	dest = xasprintf("%s/junk", scratch);
	call.o = (struct extract_options){.archive = junk, .dest = dest, .strip = 1};
	err = capture_stderr(call_extract, &call, &rc);
	CHECK(rc == EXTRACT_REFUSED && !path_exists(dest));
	free(err);
	free(junk);
	free(dest);
}

/* Links that lead outside only when resolved as the kernel would: through `.` and `//` in
 * entry names, through links extracted earlier (or later), through a hard link. Each archive
 * must be refused with its message, leaving nothing behind. */
static void test_extract_link_escapes(void)
{
	struct {
		const char *name;
		struct entry e[3];
		size_t n;
		bool tar_only;      /* zip holds no hard links */
		const char *message;
	} cases[] = {
		{"dot-slash", {{"pkg/./l", SYMLINK, "../escape", 0}}, 1, false,
		 "entry 'pkg/./l' is a symbolic link to '../escape', outside"},
		{"dot-slashes", {{"pkg/.///l", SYMLINK, "../../../etc", 0}}, 1, false,
		 "entry 'pkg/.///l' is a symbolic link to '../../../etc', outside"},
		{"double-slash", {{"pkg/d//l", SYMLINK, "../../escape", 0}}, 1, false,
		 "entry 'pkg/d//l' is a symbolic link to '../../escape', outside"},
		{"link-to-dot", {{"pkg/a", SYMLINK, ".", 0}, {"pkg/b", SYMLINK, "a/a/a/../../..", 0}}, 2,
		 false, "entry 'pkg/b' is a symbolic link to 'a/a/a/../../..', outside"},
		{"link-up", {{"pkg/sub/d", SYMLINK, "..", 0}, {"pkg/sub/l", SYMLINK, "d/../escape", 0}},
		 2, false, "entry 'pkg/sub/l' is a symbolic link to 'd/../escape', outside"},
		{"later-link", {{"pkg/d/b", SYMLINK, "c/../..", 0}, {"pkg/d/c", SYMLINK, "..", 0}}, 2,
		 false, "entry 'pkg/d/b' is a symbolic link to 'c/../..', outside"},
		{"write-through", {{"pkg/sub/", DIR_, NULL, 0}, {"pkg/d", SYMLINK, "sub", 0},
		                   {"pkg/d/f", REG, "x", 0}}, 3, false,
		 "entry 'pkg/d/f' would be written through the symbolic link 'pkg/d'"},
		{"dir-over-link", {{"pkg/sub/", DIR_, NULL, 0}, {"pkg/d", SYMLINK, "sub", 0},
		                   {"pkg/d/", DIR_, NULL, 0}}, 3, false,
		 "entry 'pkg/d/' would replace the symbolic link 'pkg/d'"},
		{"hardlink-through", {{"pkg/sub/f", REG, "x", 0}, {"pkg/d", SYMLINK, "sub", 0},
		                      {"pkg/h", HARDLINK, "pkg/d/f", 0}}, 3, true,
		 "entry 'pkg/h' is a hard link to 'pkg/d/f' through the symbolic link 'pkg/d'"},
		{"hardlink-to-link", {{"pkg/sub/deep/s", SYMLINK, "../x", 0},
		                      {"pkg/h", HARDLINK, "pkg/sub/deep/s", 0}}, 2, true,
		 "entry 'pkg/h' is a hard link to the symbolic link 'pkg/sub/deep/s' (to '../x'), "
		 "outside"},
	};
	const int formats[][2] = {{ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'x'},
	                          {ARCHIVE_FORMAT_ZIP, 0}};
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		for (int f = 0; f < 3; f++) {
			if (formats[f][0] == ARCHIVE_FORMAT_ZIP && cases[c].tar_only)
				continue;
			struct entry e[4] = {{"pkg/ok", REG, "fine\n", 0}};
			memcpy(e + 1, cases[c].e, cases[c].n * sizeof(e[0]));
			char name[64];
			snprintf(name, sizeof(name), "escape-%s-%d", cases[c].name, f);
			char *archive = make_archive(name, formats[f][0], formats[f][1], e, cases[c].n + 1);
			char *dest = xasprintf("%s/out-%s-%d", scratch, cases[c].name, f);
			struct extract_call call = {{.archive = archive, .dest = dest, .strip = 1}};
			int rc;
			char *err = capture_stderr(call_extract, &call, &rc);
			CHECK(rc == EXTRACT_REFUSED);   /* the archive's fault: exit 3, not 1 */
			if (!strstr(err, cases[c].message)) {
				failures++;
				fprintf(stderr, "escaping links %s (format %d): rc %d, expected '%s' in:\n%s\n",
				        cases[c].name, f, rc, cases[c].message, err);
			}
			CHECK(!path_exists(dest));
			char *tmp = xasprintf("%s.tmp.%ld", dest, (long)getpid());
			CHECK(!path_exists(tmp));
			free(tmp);
			free(err);
			free(dest);
			free(archive);
			if (rc == 0) {   /* the old code let it through: do not leave the links around */
				char *out = xasprintf("%s/out-%s-%d", scratch, cases[c].name, f);
				remove_tree(out);
				free(out);
			}
		}
	}
	/* what resolves inside is fine, however it is spelled */
	const struct entry inside[] = {
		{"pkg/sub/deep/f", REG, "x", 0},
		{"pkg/d", SYMLINK, "sub/deep", 0},
		{"pkg/sub/l", SYMLINK, "../d/../f2", 0},      /* lexically up, physically sub/f2 */
		{"pkg/.//sub//g", REG, "y", 0},
		{"pkg/sub/h", HARDLINK, "pkg/./sub//deep/f", 0},
		{"pkg/sub/deep/hl", HARDLINK, "pkg/d", 0},    /* a second link to sub/deep/sub/deep */
	};
	char *archive = make_archive("inside.tar", ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0, inside, 6);
	char *dest = xasprintf("%s/inside", scratch);
	struct extract_options o = {.archive = archive, .dest = dest, .strip = 1};
	CHECK(extract_archive(&o) == 0);
	char *p = xasprintf("%s/sub/g", dest);
	CHECK(file_has(p, "y"));
	free(p);
	p = xasprintf("%s/sub/h", dest);
	CHECK(file_has(p, "x"));
	free(p);
	char target[64] = "";
	p = xasprintf("%s/sub/deep/hl", dest);
	CHECK(readlink(p, target, sizeof(target) - 1) > 0 && strcmp(target, "sub/deep") == 0);
	free(p);
	free(dest);
	free(archive);
}

/* A .tar.xz of one file of `size` zero bytes: a few kilobytes that expand to anything. */
static char *make_bomb(const char *name, long long size)
{
	char *path = xasprintf("%s/%s", scratch, name);
	struct archive *a = archive_write_new();
	archive_write_set_format(a, ARCHIVE_FORMAT_TAR_PAX_RESTRICTED);
	archive_write_add_filter_xz(a);
	archive_write_set_filter_option(a, "xz", "compression-level", "0");
	archive_write_open_filename(a, path);
	struct archive_entry *ae = archive_entry_new();
	archive_entry_set_pathname(ae, "pkg/zeros.bin");
	archive_entry_set_filetype(ae, AE_IFREG);
	archive_entry_set_perm(ae, 0644);
	archive_entry_set_size(ae, size);
	archive_write_header(a, ae);
	static char zeros[1 << 20];
	for (long long left = size; left > 0; left -= (long long)sizeof(zeros))
		archive_write_data(a, zeros, left < (long long)sizeof(zeros) ? (size_t)left : sizeof(zeros));
	archive_entry_free(ae);
	archive_write_close(a);
	archive_write_free(a);
	return path;
}

/* A tiny archive that expands to 100 MB is refused before it is decompressed, by default
 * (the bound follows the archive's own size) and with an explicit low limit. */
static void test_extract_bomb(void)
{
	char *bomb = make_bomb("bomb.tar.xz", 100LL << 20);
	struct stat st;
	CHECK(stat(bomb, &st) == 0 && st.st_size < 100000);
	char *dest = xasprintf("%s/bomb", scratch);
	struct extract_call call = {{.archive = bomb, .dest = dest, .strip = 1}};
	for (int explicit = 0; explicit < 2; explicit++) {
		call.o.max_bytes = explicit ? 1 << 20 : 0;
		double start = now_seconds();
		int rc;
		char *err = capture_stderr(call_extract, &call, &rc);
		double took = now_seconds() - start;
		CHECK(rc == EXTRACT_REFUSED);
		char *expected = xasprintf("entry 'pkg/zeros.bin' (104857600 bytes) takes the extracted "
		                           "size over %lld bytes", explicit ? 1LL << 20 :
		                           EXTRACT_MIN_BYTES);
		if (!strstr(err, expected) || !(took < 0.5)) {
			failures++;
			fprintf(stderr, "bomb (%s limit): rc %d in %.2f s, expected '%s' in:\n%s\n",
			        explicit ? "explicit" : "default", rc, took, expected, err);
		}
		CHECK(!path_exists(dest));
		remove_tree(dest);
		free(expected);
		free(err);
	}
	free(dest);
	free(bomb);
}

/* A 2 MiB tmpfs at `dir`, for running out of space on purpose; false (with a skip message)
 * where mounting is not permitted. */
static bool mount_small_tmpfs(const char *dir, const char *test)
{
	mkdir_p(dir, 0755);
	if (mount("tmpfs", dir, "tmpfs", 0, "size=2m") == 0)
		return true;
	printf("unit: skipped %s: cannot mount a tmpfs (%s; needs root)\n", test, strerror(errno));
	return false;
}

/* A full disk is an error naming the file, not a tree of zero-filled files reported done,
 * and it leaves neither the destination nor the temporary directory. */
static void test_extract_no_space(void)
{
	char *full = xasprintf("%s/full", scratch);
	if (!mount_small_tmpfs(full, "the full-disk extraction test")) {
		free(full);
		return;
	}
	size_t size = 3 << 20;
	char *big = xmalloc(size + 1);
	memset(big, 'a', size);
	big[size] = '\0';
	const struct entry e[] = {{"pkg/small.txt", REG, "small\n", 0}, {"pkg/big.bin", REG, big, 0},
	                          {"pkg/after.txt", REG, "after\n", 0}};
	const int formats[][2] = {{ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 0},
	                          {ARCHIVE_FORMAT_TAR_PAX_RESTRICTED, 'x'},
	                          {ARCHIVE_FORMAT_ZIP, 0}};
	for (int f = 0; f < 3; f++) {
		char name[32];
		snprintf(name, sizeof(name), "nospace-%d", f);
		char *archive = make_archive(name, formats[f][0], formats[f][1], e, 3);
		char *dest = xasprintf("%s/tree-%d", full, f);
		struct extract_call call = {{.archive = archive, .dest = dest, .strip = 1}};
		int rc;
		char *err = capture_stderr(call_extract, &call, &rc);
		char *expected = xasprintf("cannot write '%s/big.bin': No space left on device", dest);
		CHECK(rc == EXTRACT_FAILED);   /* the machine's fault, not the archive's */
		if (!strstr(err, expected)) {
			failures++;
			fprintf(stderr, "full disk (format %d): rc %d, expected '%s' in:\n%s\n", f, rc,
			        expected, err);
		}
		CHECK(!path_exists(dest));
		struct strlist left = {0};
		list_dir(full, &left);
		CHECK(left.n == 0);   /* no temporary directory either */
		strlist_release(&left);
		remove_tree(dest);
		free(expected);
		free(err);
		free(dest);
		free(archive);
	}
	free(big);
	CHECK(umount(full) == 0);
	free(full);
}

/* ---- fetch: the download cache is checked on every use ---- */

struct cached_call {
	struct fetch_options opts;
	struct source *source;
	char *path;
};

static int call_cached_path(void *arg)
{
	struct cached_call *c = arg;
	c->path = fetch_cached_path(&c->opts, c->source);
	return c->path ? 0 : -1;
}

static void test_fetch_cache_verify(void)
{
	const char *sha = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
	char *cache = xasprintf("%s/downloads", scratch);
	mkdir_p(cache, 0755);
	char *file = xasprintf("%s/%s", cache, sha);
	char *record = xasprintf("%s/verified/%s", cache, sha);
	write_text(file, "abc");
	struct origin origin = {.kind = ORIGIN_URL, .url = "http://127.0.0.1:1/abc"};
	memcpy(origin.sha256, sha, sizeof(origin.sha256));
	struct source source = {.name = "abc", .version = "1", .origins = &origin, .n_origins = 1};
	struct cached_call call = {{.cache_dir = cache}, &source, NULL};
	int rc;
	char *err = capture_stderr(call_cached_path, &call, &rc);
	CHECK(rc == 0 && strcmp(call.path, file) == 0);
	CHECK(path_exists(record));   /* hashed once, then recorded */
	free(call.path);
	free(err);
	/* Changed bytes whose stat data still match the record (forged here: a real write
	 * changes the ctime) pass the cheap check; `verify` hashes the file whatever the record
	 * says, and the bad file goes, with a warning naming it. */
	write_text(file, "abd");
	struct stat st;
	CHECK(stat(file, &st) == 0);
	char *forged = xasprintf("crossroot-verified 1\n%lld %lld.%09ld %lld.%09ld %llu %llu\n",
	                         (long long)st.st_size, (long long)st.st_mtim.tv_sec,
	                         st.st_mtim.tv_nsec, (long long)st.st_ctim.tv_sec,
	                         st.st_ctim.tv_nsec, (unsigned long long)st.st_ino,
	                         (unsigned long long)st.st_dev);
	write_text(record, forged);
	free(forged);
	err = capture_stderr(call_cached_path, &call, &rc);
	CHECK(rc == 0);
	free(call.path);
	free(err);
	call.opts.verify = true;
	err = capture_stderr(call_cached_path, &call, &rc);
	char *expected = xasprintf("download cache file '%s' has sha256 ", file);
	CHECK(rc < 0 && strstr(err, expected) && strstr(err, "fetching it again"));
	CHECK(!path_exists(file) && !path_exists(record));
	free(expected);
	free(err);
	free(record);
	free(file);
	free(cache);
}

/* ---- util ---- */

static void test_util(void)
{
	CHECK(edit_distance("stage", "stages") == 1);
	CHECK(edit_distance("", "abc") == 3);
	CHECK(edit_distance("kitten", "sitting") == 3);
	char *p = xasprintf("%s/a/b/c", scratch);
	CHECK(mkdir_p(p, 0755) == 0 && is_dir(p));
	char *f = xasprintf("%s/file", p);
	CHECK(write_file_atomic(f, "data", 4, 0600) == 0 && file_has(f, "data"));
	char *top = xasprintf("%s/a", scratch);
	CHECK(remove_tree(top) == 0 && !path_exists(top));
	CHECK(remove_tree(top) == 0);
	free(p);
	free(f);
	free(top);
	char out[32];
	CHECK(strcmp(format_duration(75, out), "1 min 15 s") == 0);
	CHECK(strcmp(format_size(1500000, out), "1.5 MB") == 0);
}

/* ---- scheduler ---- */

/* Fake nodes for the scheduler: each runs a child that sleeps `ms` and records, in the
 * context, the order of starts and ends and how many ran at once. */
struct fake_job {
	const char *name;
	double estimate;
	int ms;
	bool exclusive;
};

struct fake_sched {
	const struct fake_job *jobs;
	char order[256];            /* "+A" on start, "-A" on end */
	int running, most_running;
	bool other_during_exclusive; /* something started while an exclusive node ran */
	int exclusive_running;
};

static int fake_prepare(void *ctx, struct node *n)
{
	(void)ctx;
	(void)n;
	return 0;
}

static pid_t fake_start(void *ctx, struct node *n)
{
	struct fake_sched *f = ctx;
	const struct fake_job *j = &f->jobs[n->index];
	if (f->exclusive_running)
		f->other_during_exclusive = true;
	f->exclusive_running += j->exclusive;
	if (++f->running > f->most_running)
		f->most_running = f->running;
	strcat(f->order, "+");
	strcat(f->order, j->name);
	pid_t pid = fork();
	if (pid == 0) {
		usleep((useconds_t)j->ms * 1000);
		_exit(0);
	}
	return pid;
}

static pid_t fake_child_ended(void *ctx, struct node *n, int status)
{
	struct fake_sched *f = ctx;
	const struct fake_job *j = &f->jobs[n->index];
	f->running--;
	f->exclusive_running -= j->exclusive;
	strcat(f->order, "-");
	strcat(f->order, j->name);
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static bool fake_exclusive(void *ctx, const struct node *n)
{
	return ((struct fake_sched *)ctx)->jobs[n->index].exclusive;
}

static double fake_estimate(void *ctx, const struct node *n)
{
	return ((struct fake_sched *)ctx)->jobs[n->index].estimate;
}

static void fake_describe(void *ctx, const struct node *n, struct buf *out)
{
	buf_puts(out, ((struct fake_sched *)ctx)->jobs[n->index].name);
}

/* Run `count` fake jobs; edges[i] is the index of job i's one dependency, or -1. */
static int run_fake(struct fake_sched *f, const struct fake_job *jobs, const int *edges,
                    size_t count, int budget)
{
	memset(f, 0, sizeof(*f));
	f->jobs = jobs;
	struct node nodes[8] = {0};
	struct node *ptrs[8], *deps[8], *users[8][8];
	struct plan p = {.nodes = ptrs, .n_nodes = count};
	for (size_t i = 0; i < count; i++) {
		nodes[i].index = i;
		nodes[i].state = NODE_WAITING;
		nodes[i].users = users[i];
		ptrs[i] = &nodes[i];
	}
	for (size_t i = 0; i < count; i++)
		if (edges[i] >= 0) {
			struct node *d = &nodes[edges[i]];
			deps[i] = d;
			nodes[i].deps = &deps[i];
			nodes[i].n_deps = 1;
			d->users[d->n_users++] = &nodes[i];
		}
	struct jobserver js;
	if (jobserver_init(&js, budget) < 0)
		return -1;
	struct sched_ops ops = {f, fake_prepare, fake_start, fake_child_ended, fake_exclusive,
	                        fake_estimate, fake_describe};
	int rc = sched_run(&p, &ops, &js, false);
	jobserver_release(&js);
	return rc;
}

static void test_scheduler(void)
{
	struct fake_sched f;

	/* critical path first: B and its user C (20 s of work) before the short A, which comes
	 * first in file order */
	const struct fake_job chain[] = {{"A", 1, 10, false}, {"B", 10, 10, false},
	                                 {"C", 10, 10, false}};
	const int chain_edges[] = {-1, -1, 1};
	CHECK(run_fake(&f, chain, chain_edges, 3, 1) == 0);
	CHECK(strcmp(f.order, "+B-B+C-C+A-A") == 0);
	CHECK(f.most_running == 1);

	/* two slots: when the first node to start ends first, its slot goes to the next ready
	 * node while the other still runs (the slot was once tied to an idle engine) */
	const struct fake_job slots[] = {{"S", 30, 20, false}, {"L", 20, 400, false},
	                                 {"N", 10, 20, false}};
	const int slot_edges[] = {-1, -1, -1};
	CHECK(run_fake(&f, slots, slot_edges, 3, 2) == 0);
	CHECK(strncmp(f.order, "+S+L-S+N-N-L", 12) == 0);
	CHECK(f.most_running == 2);

	/* an exclusive node starts on the next free slot, not once the engine is idle, and
	 * nothing else starts while it runs */
	const struct fake_job excl[] = {{"S", 1, 20, false}, {"L", 2, 400, false},
	                                {"X", 100, 100, true}, {"Y", 0.5, 20, false}};
	const int excl_edges[] = {-1, -1, 0, -1};
	CHECK(run_fake(&f, excl, excl_edges, 4, 2) == 0);
	CHECK(strncmp(f.order, "+S+L-S+X", 8) == 0);
	CHECK(!f.other_during_exclusive);
	CHECK(strstr(f.order, "-X+Y") != NULL);
}

/* ---- searchpaths: a fake driver prints what clang -v prints ---- */

static char *fake_driver(const char *name, const char *include, const char *link_extra)
{
	char *path = xasprintf("%s/%s", scratch, name);
	char *text = xasprintf(
		"#!/bin/sh\n"
		"out=; prev=; for a in \"$@\"; do [ \"$prev\" = -o ] && out=$a; prev=$a; done\n"
		": >\"$out\"\n"
		"echo 'InstalledDir: /opt/llvm/bin' >&2\n"
		"case \" $* \" in *' -c '*)\n"
		"printf '#include <...> search starts here:\\n /opt/llvm/bin/../lib/clang/19/include\\n"
		" %s/S/bin/../usr/include\\n%sEnd of search list.\\n' >&2 ;;\n"
		"*) printf ' \"/opt/llvm/bin/ld.lld\" \"--sysroot=%s/S\" \"-dynamic-linker\" "
		"\"/lib/ld.so\" \"-o\" \"%s/out/x\" \"%s/S/usr/lib/crt1.o\" \"-L%s/S/usr/lib\" "
		"\"%s/out/x.o\" %s\"-lc\"\\n' >&2 ;;\n"
		"esac\n",
		scratch, include, scratch, scratch, scratch, scratch, scratch, link_extra);
	write_text(path, text);
	chmod(path, 0755);
	free(text);
	return path;
}

static void test_searchpaths(void)
{
	CHECK(searchpaths_under("/s/bin/../usr/include", "/s"));
	CHECK(searchpaths_under("/s", "/s/"));
	CHECK(!searchpaths_under("/s/../usr/include", "/s"));
	CHECK(!searchpaths_under("/sx/usr", "/s"));
	char *sysroot = xasprintf("%s/S", scratch);
	char *out = xasprintf("%s/out", scratch);
	mkdir_p(sysroot, 0755);
	mkdir_p(out, 0755);
	char *src = xasprintf("%s/x.c", out), *exe = xasprintf("%s/x", out);
	write_text(src, "int main(void) { return 0; }\n");
	const struct {
		const char *include, *link, *expect;
	} cases[] = {
		{"", "", NULL},
		{" /usr/include\\n", "", "include directory outside the sysroot: /usr/include"},
		{" /usr/local/include\\n", "", "outside the sysroot: /usr/local/include"},
		{"", "\"-L/usr/lib/x86_64-linux-gnu\" ",
		 "link search directory outside the sysroot: /usr/lib/x86_64-linux-gnu"},
		{"", "\"/usr/lib/gcc/x86_64-linux-gnu/12/crtbegin.o\" ",
		 "link input outside the sysroot: /usr/lib/gcc/x86_64-linux-gnu/12/crtbegin.o"},
		{"", "\"-L/S/../../usr/lib\" ", "search directory outside the sysroot"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char name[32];
		snprintf(name, sizeof(name), "driver%zu", i);
		char *driver = fake_driver(name, cases[i].include, cases[i].link);
		struct buf report = {0};
		int rc = searchpaths_check(driver, src, exe, false, sysroot, &report);
		if (cases[i].expect)
			CHECK(rc == -1 && report.s && strstr(report.s, cases[i].expect));
		else
			CHECK(rc == 0 && report.len == 0);
		buf_release(&report);
		free(driver);
	}
	free(src);
	free(exe);
	free(out);
	free(sysroot);
}

/* ---- sign, and publishing a result made elsewhere ---- */

static int sign_generate_again(void *path)
{
	char pub[SIGN_PUBLIC_LEN + 1];
	return sign_generate(path, pub);
}

static int load_key(void *path)
{
	struct sign_key *k = sign_load(path);
	sign_key_free(k);
	return k ? 0 : -1;
}

static void test_sign(void)
{
	char *path = xasprintf("%s/keys/k.pem", scratch);
	char pub[SIGN_PUBLIC_LEN + 1], again[SIGN_PUBLIC_LEN + 1], sig[SIGN_SIGNATURE_LEN + 1];
	CHECK(sign_generate(path, pub) == 0);
	CHECK(sign_public_valid(pub) && strncmp(pub, "ed25519:", 8) == 0);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600);
	int rc;
	free(capture_stderr(sign_generate_again, path, &rc));
	CHECK(rc < 0);   /* never overwritten */
	struct sign_key *k = sign_load(path);
	CHECK(k != NULL);
	if (!k)
		return;
	sign_public(k, again);
	CHECK(strcmp(pub, again) == 0);
	const char msg[] = "crossroot-remote-entry 1\nkey abc\n";
	CHECK(sign_data(k, msg, strlen(msg), sig) == 0 && strlen(sig) == SIGN_SIGNATURE_LEN);
	CHECK(sign_verify(pub, sig, msg, strlen(msg)));
	CHECK(!sign_verify(pub, sig, msg, strlen(msg) - 1));       /* other data */
	char bad[SIGN_SIGNATURE_LEN + 1];
	memcpy(bad, sig, sizeof(bad));
	bad[0] = bad[0] == '0' ? '1' : '0';
	CHECK(!sign_verify(pub, bad, msg, strlen(msg)));           /* other signature */
	char other[SIGN_PUBLIC_LEN + 1];
	char *path2 = xasprintf("%s/keys/other.pem", scratch);
	CHECK(sign_generate(path2, other) == 0);
	CHECK(!sign_verify(other, sig, msg, strlen(msg)));         /* another key */
	CHECK(!sign_verify("ed25519:12", sig, msg, strlen(msg)));  /* malformed key text */
	CHECK(!sign_public_valid("ed25519:ABCDEF"));
	/* a key others may read is refused */
	chmod(path2, 0644);
	char *err = capture_stderr(load_key, path2, &rc);
	CHECK(rc < 0 && err && strstr(err, "may be read by others"));
	free(err);
	sign_key_free(k);
	free(path);
	free(path2);
}

static void test_publish_expected(void)
{
	char *dir = xasprintf("%s/stages", scratch);
	char *tree = xasprintf("%s/tree", scratch);
	char *file = xasprintf("%s/tree/usr/a.txt", scratch);
	char *sub = xasprintf("%s/tree/usr", scratch);
	struct strlist inputs = {0};
	char output[DIGEST_HEX_LEN + 1], *why = NULL;
	mkdir_p(sub, 0755);
	write_text(file, "hello\n");
	CHECK(cache_publish(dir, "k1", tree, &inputs, "t s", 1, output) == 0);
	char *manifest_path = xasprintf("%s/k1/manifest", dir);
	char *manifest = read_file(manifest_path, NULL);
	/* the same tree again, under another key: published, same output id */
	char output2[DIGEST_HEX_LEN + 1];
	mkdir_p(sub, 0755);
	write_text(file, "hello\n");
	CHECK(cache_publish_expected(dir, "k2", tree, manifest, &why, &inputs, "t s", output2) == 1);
	CHECK(why == NULL && strcmp(output, output2) == 0);
	/* one byte differs: not published, the difference named, the tree removed */
	mkdir_p(sub, 0755);
	write_text(file, "hellO\n");
	CHECK(cache_publish_expected(dir, "k3", tree, manifest, &why, &inputs, "t s", output2) == 0);
	CHECK(why && strstr(why, "usr/a.txt"));
	char *k3 = xasprintf("%s/k3", dir);
	CHECK(!path_exists(k3) && !path_exists(tree));
	free(why);
	free(k3);
	free(manifest);
	free(manifest_path);
	free(dir);
	free(tree);
	free(file);
	free(sub);
}

/* A step with RUN_NO_NETWORK cannot reach a port that the same step without it reaches (the
 * listening socket's backlog completes the connection; nothing needs to accept it). */
static void test_run_network(void)
{
	int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(addr);
	CHECK(listener >= 0 && bind(listener, (struct sockaddr *)&addr, len) == 0 &&
	      listen(listener, 8) == 0 && getsockname(listener, (struct sockaddr *)&addr, &len) == 0);
	char *cmd = xasprintf("python3 -c \"import socket; socket.create_connection(('127.0.0.1', "
	                      "%d), 3)\" 2>/dev/null", ntohs(addr.sin_port));
	char *env[] = {"PATH=/usr/bin:/bin", NULL};
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	pid_t pid = run_shell(cmd, scratch, env, devnull, 0);
	CHECK(pid > 0 && run_wait(pid) == 0);
	if (run_isolation()) {
		pid = run_shell(cmd, scratch, env, devnull, RUN_NO_NETWORK);
		int status = pid > 0 ? run_wait(pid) : 0;
		CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 1);
		pid = run_shell("pwd >pwd.txt; echo $X >>pwd.txt", scratch, (char *[]){"X=kept", NULL},
		                devnull, RUN_NO_NETWORK);
		CHECK(pid > 0 && run_wait(pid) == 0);
		char *path = xasprintf("%s/pwd.txt", scratch);
		char *text = read_file(path, NULL);
		char *want = xasprintf("%s\nkept\n", scratch);
		CHECK(text && strcmp(text, want) == 0);
		free(want);
		free(text);
		free(path);
	} else {
		printf("unit: no network namespace here: the isolated half of test_run_network skipped\n");
	}
	close(devnull);
	close(listener);
	free(cmd);
}

/* More directories to show than hide_directories() can bind back is an error, never a
 * directory silently left hidden. */
static void test_run_too_many_shows(void)
{
	const char *hide[] = {"/nonexistent-hidden", NULL};
	const char *show[RUN_MAX_SHOW + 2];
	for (size_t i = 0; i < RUN_MAX_SHOW + 1; i++)
		show[i] = "/nonexistent-hidden/x";
	show[RUN_MAX_SHOW + 1] = NULL;
	struct run_sandbox sb = {.hide = hide, .show = show};
	char *env[] = {"PATH=/usr/bin:/bin", NULL};
	int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
	CHECK(run_step("true", scratch, env, devnull, &sb) == -1);
	show[RUN_MAX_SHOW] = NULL;   /* exactly the most: runs */
	pid_t pid = run_step("true", scratch, env, devnull, &sb);
	CHECK(pid > 0 && run_wait(pid) == 0);
	close(devnull);
}

/* The archives of the host's apt configuration: one-line entries with options, deb822 stanzas
 * with several URIs, no deb-src, nothing disabled, no duplicates, no unusable scheme. */
static void test_apt_archive_bases(void)
{
	char *etc = xasprintf("%s/apt-etc", scratch);
	char *parts = xasprintf("%s/sources.list.d", etc);
	CHECK(mkdir_p(parts, 0755) == 0);
	char *list = xasprintf("%s/sources.list", etc);
	const char *one_line = "# comment\ndeb [arch=amd64 signed-by=/k.gpg] http://a.example/debian/ "
	                       "bookworm main\ndeb-src http://src.example/debian bookworm main\n"
	                       "  deb\thttps://b.example/debian bookworm main # trailing\n"
	                       "deb cdrom:[Debian]/ bookworm main\n";
	CHECK(write_file_atomic(list, one_line, strlen(one_line), 0644) == 0);
	char *d822 = xasprintf("%s/x.sources", parts);
	const char *stanzas = "Types: deb deb-src\nURIs: http://a.example/debian file:///srv/mirror/\n"
	                      "Suites: bookworm\n\nTypes: deb\nURIs: http://off.example/debian\n"
	                      "Enabled: no\n\nTypes: deb-src\nURIs: http://src2.example/\n";
	CHECK(write_file_atomic(d822, stanzas, strlen(stanzas), 0644) == 0);
	setenv("CROSSROOT_APT_SOURCES", etc, 1);
	struct strlist bases = {0};
	CHECK(apt_archive_bases(&bases) == 3);
	CHECK(bases.n == 3 && strcmp(bases.v[0], "http://a.example/debian") == 0 &&
	      strcmp(bases.v[1], "https://b.example/debian") == 0 &&
	      strcmp(bases.v[2], "file:///srv/mirror") == 0);
	unsetenv("CROSSROOT_APT_SOURCES");
	strlist_release(&bases);
	free(d822);
	free(list);
	free(parts);
	free(etc);
}

/* verify against a hand-written manifest: the same, a changed byte, an extra and a missing
 * file, no manifest */
static void test_package_verify(void)
{
	char *root = xasprintf("%s/pkgtree", scratch);
	char *meta = xasprintf("%s/share/crossroot/package", root);
	CHECK(mkdir_p(meta, 0755) == 0);
	char *file = xasprintf("%s/a.txt", root);
	CHECK(write_file_atomic(file, "hello\n", 6, 0644) == 0);
	char *link = xasprintf("%s/b", root);
	CHECK(symlink("a.txt", link) == 0);
	char hex[DIGEST_HEX_LEN + 1];
	CHECK(digest_file(file, hex) == 0);
	char *manifest = xasprintf("crossroot-package 1\ntarget\tt\nf\t644\t6\t%s\ta.txt\n"
	                           "l\ta.txt\tb\nd\t755\tshare\nd\t755\tshare/crossroot\n"
	                           "d\t755\tshare/crossroot/package\n", hex);
	char *mpath = xasprintf("%s/%s", root, PACKAGE_MANIFEST);
	CHECK(write_file_atomic(mpath, manifest, strlen(manifest), 0644) == 0);
	CHECK(package_verify(root) == PACKAGE_SAME);
	CHECK(write_file_atomic(file, "hellO\n", 6, 0644) == 0);
	CHECK(package_verify(root) == PACKAGE_DIFFERS);
	CHECK(write_file_atomic(file, "hello\n", 6, 0644) == 0);
	CHECK(package_verify(root) == PACKAGE_SAME);
	CHECK(unlink(link) == 0 && symlink("elsewhere", link) == 0);
	CHECK(package_verify(root) == PACKAGE_DIFFERS);
	CHECK(unlink(link) == 0 && symlink("a.txt", link) == 0);
	CHECK(chmod(file, 0755) == 0);
	CHECK(package_verify(root) == PACKAGE_DIFFERS);
	CHECK(chmod(file, 0600) == 0);   /* a umask's doing: only the execute bit counts */
	CHECK(package_verify(root) == PACKAGE_SAME);
	CHECK(unlink(file) == 0);
	CHECK(package_verify(root) == PACKAGE_DIFFERS);
	CHECK(unlink(mpath) == 0);
	CHECK(package_verify(root) == PACKAGE_UNREADABLE);
	free(mpath);
	free(manifest);
	free(link);
	free(file);
	free(meta);
	free(root);
}

int main(void)
{
	char template[] = "/tmp/crossroot-unit.XXXXXX";
	scratch = mkdtemp(template);
	if (!scratch) {
		perror("mkdtemp");
		return 1;
	}
	test_digest();
	test_recipes();
	test_plan();
	test_scheduler();
	test_extract_good();
	test_extract_hostile();
	test_extract_link_escapes();
	test_extract_no_space();
	test_extract_bomb();
	test_fetch_cache_verify();
	test_util();
	test_searchpaths();
	test_sign();
	test_publish_expected();
	test_run_network();
	test_run_too_many_shows();
	test_apt_archive_bases();
	test_package_verify();
	remove_tree(scratch);
	printf("unit: %d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
