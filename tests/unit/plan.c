/* Unit tests of plan: stage keys with a fake host toolchain, so no compiler needs to be
 * installed (keys with a toolchain stage, comment edits, refused values). */
#define _GNU_SOURCE
#include "unit.h"

#include "plan.h"
#include "recipes.h"
#include "toolchain.h"

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

TEST(plan)
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
	/* the tools stage itself names no host LLVM in its steps: none in its key (so a host
	 * without clang builds it, and a clang upgrade leaves it); one that runs ${cc} has it */
	CHECK(plan_key("own", "tc", key3, cmd, sizeof(cmd)) == 0);
	project_file("stages/tc.yaml", "name: tc\ninstalls: tools\nprovides:\n  cc: bin/xcc\n"
	             "steps: ['${cc} -c x.c']\n");
	CHECK(plan_key("own", "tc", key3, cmd, sizeof(cmd)) == 1);
	project_file("stages/tc.yaml", "name: tc\ninstalls: tools\nprovides:\n  cc: bin/xcc\n"
	             "steps: [true]\n");
	CHECK(plan_key("own", "top", key3, cmd, sizeof(cmd)) == 2 && strcmp(key2, key3) == 0);
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
	CHECK(plan_key("quiet", "dflt", key1, cmd, sizeof(cmd)) == 0 &&
	      strcmp(cmd, "echo asan tsan") == 0);
	CHECK(plan_key("same", "dflt", key2, cmd, sizeof(cmd)) == 0 && strcmp(key1, key2) == 0);
	CHECK(plan_key("other", "dflt", key3, cmd, sizeof(cmd)) == 0 &&
	      strcmp(cmd, "echo ubsan") == 0 && strcmp(key1, key3) != 0);
	/* the default is part of the recipe: changing it changes the key */
	project_file("stages/dflt.yaml", "name: dflt\nvars:\n  runtimes: asan\n"
	             "steps: ['echo ${runtimes}']\n");
	CHECK(plan_key("quiet", "dflt", key2, cmd, sizeof(cmd)) == 0 && strcmp(key1, key2) != 0);
	/* a stage cannot default what crossroot sets, nor hand the shell code */
	project_file("stages/dfltbad.yaml", "name: dfltbad\nvars:\n  sysroot: /\n  y: '$(id)'\n"
	             "steps: [true]\n");
	project_file("targets/dfltbad.yaml", "triple: a-b-c\nqemu: q\nstages: [dfltbad]\n");
	CHECK(load_fails_with("dfltbad", "stages/dfltbad.yaml:3:3: variable 'sysroot' is set by "
	                      "crossroot; a recipe cannot give it a default"));
	CHECK(load_fails_with("dfltbad", "value of 'y' holds a character the shell would"));
}

/* The host GCC is asked (two processes) only when a stage of the plan may run it. The probe
 * left pending here names a hash cache; whether it was taken shows in gcc_unprobed. */
static bool plan_probes_gcc(const char *target)
{
	struct host_llvm host;
	toolchain_host_fake(&host, "/nonexistent/llvm/bin", "19", "fake-identity");
	host.gcc_identity[0] = '\0';
	host.gcc_unprobed = xasprintf("%s/gcc-hashes", scratch);
	char *work = xasprintf("%s/plan-work", scratch);
	struct dirs dirs = {project, work, work, work, work};
	struct recipes r;
	recipes_init(&r, project);
	struct target *t = recipes_target(&r, target);
	struct plan p;
	bool probed = false;
	if (t && plan_create(&p, &dirs, &host, 2, false, &t, 1, &r) == 0) {
		probed = host.gcc_unprobed == NULL;
		plan_release(&p);
	}
	recipes_release(&r);
	toolchain_host_release(&host);
	free(work);
	return probed;
}

TEST(plan_gcc_only_when_used)
{
	make_project();
	project_file("stages/c.yaml", "name: c\nsteps: ['echo ${cc}']\n");
	project_file("stages/g.yaml", "name: g\ninstalls: tools\nsteps: ['echo ${host_gxx}']\n");
	project_file("targets/plain.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\n"
	             "stages: [c]\n");
	project_file("targets/gnu.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\n"
	             "stages: [c, g]\n");
	CHECK(!plan_probes_gcc("plain"));
	CHECK(plan_probes_gcc("gnu"));
}

/* A static-only build gives the runtimes and leaves the extras (extra: true) and debug
 * information out unless `with` names them; the choice shows in the plan and the keys. */
static struct node *planned(struct plan *p, struct host_llvm *host, struct recipes *r,
                            const char *target, bool static_only, const char *with)
{
	toolchain_host_fake(host, "/nonexistent/llvm/bin", "19", "fake-identity");
	char *work = xasprintf("%s/plan-work", scratch);
	struct dirs dirs = {project, work, work, work, work};
	recipes_init(r, project);
	struct target *t = recipes_target(r, target);
	struct node *n = NULL;
	if (t) {
		t->static_only = static_only;
		struct strlist names = {0};
		if (with)
			strlist_add(&names, with);
		if (recipes_add_with(r, t, &names, true) == 0 &&
		    plan_create(p, &dirs, host, 2, false, &t, 1, r) == 0)
			n = stage_of(p, "rt");
		strlist_release(&names);
	}
	free(work);
	return n;
}

static void unplan(struct plan *p, struct host_llvm *host, struct recipes *r)
{
	plan_release(p);
	recipes_release(r);
	toolchain_host_release(host);
}

TEST(plan_static_only_extras)
{
	make_project();
	project_file("stages/rt.yaml", "name: rt\ndebug: split\nsteps: ['cc ${debug_flag} -c x.c']\n");
	project_file("stages/san.yaml", "name: san\nextra: true\ndepends: [rt]\nsteps: [true]\n");
	project_file("targets/t.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\n"
	             "stages: [rt, san]\n");
	struct plan p;
	struct host_llvm host;
	struct recipes r;
	/* shared: everything, -g, no debug line in the key */
	struct node *n = planned(&p, &host, &r, "t", false, NULL);
	CHECK(n && stage_of(&p, "san") && !has_line(&n->inputs, "debug "));
	char *cmd = n ? plan_expand(n, n->stage->steps[0].command, &n->stage->steps[0].where) : NULL;
	CHECK(cmd && strcmp(cmd, "cc -g -c x.c") == 0);
	free(cmd);
	CHECK(p.left_out[0].n == 0);
	unplan(&p, &host, &r);
	/* static-only: the extra and debug information left out, said, and in the key */
	n = planned(&p, &host, &r, "t", true, NULL);
	CHECK(n && !stage_of(&p, "san") && has_line(&n->inputs, "debug none"));
	cmd = n ? plan_expand(n, n->stage->steps[0].command, &n->stage->steps[0].where) : NULL;
	CHECK(cmd && strcmp(cmd, "cc  -c x.c") == 0);
	free(cmd);
	CHECK(strlist_has(&p.left_out[0], "san") && strlist_has(&p.left_out[0], "debug information"));
	unplan(&p, &host, &r);
	/* asked for: built again, and -g with its own key line */
	n = planned(&p, &host, &r, "t", true, "san");
	CHECK(n && stage_of(&p, "san") && has_line(&n->inputs, "debug none"));
	unplan(&p, &host, &r);
	n = planned(&p, &host, &r, "t", true, "debug");
	CHECK(n && !stage_of(&p, "san") && has_line(&n->inputs, "debug -g"));
	unplan(&p, &host, &r);
	/* a patch set for a source only the left-out extra builds from is still the target's: its
	 * static-only plan is no error (it was: "patches names source ..., which no stage uses") */
	project_file("sources/sansrc.yaml", "name: sansrc\nversion: 1\norigins:\n"
	             "  - url: http://127.0.0.1:1/s.tar.gz\n    sha256: "
	             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n");
	project_file("stages/san2.yaml", "name: san2\nextra: true\nsources: [sansrc]\n"
	             "depends: [rt]\nsteps: [true]\n");
	project_file("patches/sansrc/1/fix/series", "");
	project_file("targets/tp.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\n"
	             "stages: [rt, san2]\npatches: {sansrc: fix}\n");
	n = planned(&p, &host, &r, "tp", true, NULL);
	CHECK(n && !stage_of(&p, "san2") && strlist_has(&p.left_out[0], "san2"));
	unplan(&p, &host, &r);
	n = planned(&p, &host, &r, "tp", false, NULL);
	CHECK(n && stage_of(&p, "san2"));
	unplan(&p, &host, &r);
	/* one that names a source no stage of the target builds from is still refused */
	project_file("targets/tq.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\n"
	             "stages: [rt]\npatches: {sansrc: fix}\n");
	CHECK(!planned(&p, &host, &r, "tq", true, NULL));
	recipes_release(&r);
	toolchain_host_release(&host);
	/* a name that is neither debug nor an extra stage is refused; one that no stage file has too */
	CHECK(!planned(&p, &host, &r, "t", true, "rt"));
	recipes_release(&r);
	toolchain_host_release(&host);
	CHECK(!planned(&p, &host, &r, "t", true, "nosuch"));
	recipes_release(&r);
	toolchain_host_release(&host);
	/* a target's own with: is checked against its stages at its line */
	project_file("targets/w.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\n"
	             "stages: [rt]\nwith: [san]\n");
	CHECK(load_fails_with("w", "with names 'san'"));
	project_file("stages/bad.yaml", "name: bad\nextra: maybe\nsteps: [true]\n");
	project_file("targets/b.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\nstages: [bad]\n");
	CHECK(load_fails_with("b", "extra must be true or false"));
}

static bool depends_on(struct plan *p, const char *stage, const char *dep)
{
	struct node *n = stage_of(p, stage);
	for (size_t i = 0; n && i < n->n_stage_deps; i++)
		if (strcmp(n->stage_deps[i]->stage->name, dep) == 0)
			return true;
	return false;
}

/* arch_depends: only targets of that architecture wait for it; shared_depends: only targets
 * with shared libraries; brings: in the graph without an edge */
TEST(plan_conditional_depends)
{
	make_project();
	project_file("stages/hdr.yaml", "name: hdr\nsteps: [true]\n");
	project_file("stages/kern.yaml", "name: kern\nsteps: [true]\n");
	project_file("stages/rt.yaml", "name: rt\ndepends: [hdr]\n"
	             "arch_depends: {riscv64: kern}\nsteps: [true]\n");
	project_file("stages/uapi.yaml", "name: uapi\nsteps: [true]\n");
	project_file("stages/libc.yaml", "name: libc\ndepends: [hdr]\nshared_depends: [rt]\n"
	             "brings: [uapi]\nsteps: [true]\n");
	project_file("targets/arm.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\n"
	             "stages: [libc, rt]\n");
	project_file("targets/rv.yaml", "triple: riscv64-unknown-linux-musl\nqemu: q\n"
	             "stages: [libc, rt]\n");
	const char *targets[] = {"arm", "rv"};
	for (int i = 0; i < 2; i++)
		for (int static_only = 0; static_only < 2; static_only++) {
			struct plan p;
			struct host_llvm host;
			struct recipes r;
			toolchain_host_fake(&host, "/nonexistent/llvm/bin", "19", "fake-identity");
			char *work = xasprintf("%s/plan-work", scratch);
			struct dirs dirs = {project, work, work, work, work};
			recipes_init(&r, project);
			struct target *t = recipes_target(&r, targets[i]);
			CHECK(t != NULL);
			if (t) {
				t->static_only = static_only;
				CHECK(plan_create(&p, &dirs, &host, 2, false, &t, 1, &r) == 0);
				CHECK(depends_on(&p, "rt", "hdr"));
				CHECK(depends_on(&p, "rt", "kern") == (i == 1));
				CHECK(depends_on(&p, "libc", "rt") == !static_only);
				/* brought: in the target's graph (its sysroot), waited for by nothing */
				CHECK(stage_of(&p, "uapi") && !depends_on(&p, "libc", "uapi"));
				plan_release(&p);
			}
			recipes_release(&r);
			toolchain_host_release(&host);
			free(work);
		}
	/* an arch_depends key that is not an architecture */
	project_file("stages/bad.yaml", "name: bad\narch_depends: {riscv64-linux: kern}\nsteps: [true]\n");
	project_file("targets/b.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\nstages: [bad]\n");
	CHECK(load_fails_with("b", "is not an architecture"));
}

/* A patch keys (and is applied to) only the trees whose extract list holds a file it touches:
 * libc++'s build patch is not the compiler's, whose view has no libcxx/ */
TEST(plan_patches_in_view)
{
	make_project();
	project_file("sources/mono.yaml", "name: mono\nversion: 1\nextract: [a, b]\norigins:\n"
	             "  - url: http://127.0.0.1:1/m.tar.gz\n    sha256: "
	             "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n");
	project_file("patches/mono/1/0001-b.patch",
	             "--- a/b/CMakeLists.txt\t2026-01-01\n+++ b/b/CMakeLists.txt\t2026-01-01\n"
	             "@@ -1 +1 @@\n-x\n+y\n");
	/* rt: the whole source; part: a view without b/ */
	project_file("stages/rt.yaml", "name: rt\nsources: [mono]\nsteps: [true]\n");
	project_file("stages/part.yaml", "name: part\nsources: [mono]\nextract: [a]\nsteps: [true]\n");
	project_file("targets/m.yaml", "triple: aarch64-unknown-linux-musl\nqemu: q\n"
	             "stages: [rt, part]\n");
	struct plan p;
	struct host_llvm host;
	struct recipes r;
	struct node *whole = planned(&p, &host, &r, "m", false, NULL);
	struct node *part = whole ? stage_of(&p, "part") : NULL;
	CHECK(whole && whole->trees[0]->patches.n == 1 &&
	      has_line(&whole->trees[0]->inputs, "patch:mono/0001-b.patch "));
	CHECK(part && part->trees[0]->patches.n == 0 && part->trees[0]->inputs.n == 0);
	if (whole) {
		unplan(&p, &host, &r);
	} else {
		recipes_release(&r);
		toolchain_host_release(&host);
	}
}
