/* Unit tests of yamlfile and recipes: loading targets, stages and sources, their messages,
 * and hostile recipe files (limits). */
#define _GNU_SOURCE
#include "unit.h"

#include "recipes.h"
#include "yamlfile.h"

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

TEST(recipes)
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
	/* a deb origin: package:arch=version, its apt file name, no signature */
	project_file("sources/kern.yaml", "name: kern\nversion: 1\norigins:\n"
	             "  - deb: linux-image-x:arm64=1:6.1.176-1\n"
	             "    sha256: ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n");
	struct recipes kr;
	recipes_init(&kr, project);
	struct source *k = recipes_source(&kr, "kern", NULL);
	CHECK(k && k->origins[0].kind == ORIGIN_DEB && strcmp(k->origins[0].arch, "arm64") == 0 &&
	      strcmp(k->origins[0].package, "linux-image-x") == 0 &&
	      strcmp(k->origins[0].version, "1:6.1.176-1") == 0 &&
	      strcmp(k->origins[0].file, "linux-image-x_1%3a6.1.176-1_arm64.deb") == 0);
	recipes_release(&kr);
	project_file("sources/badkern.yaml", "name: badkern\nversion: 1\norigins:\n"
	             "  - deb: linux-image-x=6.1\n"
	             "    sha256: ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n"
	             "  - deb: 'x:arm64=1;rm'\n"
	             "    sha256: ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n"
	             "    signature: x.asc\n");
	project_file("stages/usesbadkern.yaml", "name: usesbadkern\nsources: [badkern]\nsteps: [true]\n");
	project_file("targets/badkern.yaml", "triple: a-b-c\nqemu: q\nstages: [usesbadkern]\n");
	CHECK(load_fails_with("badkern", "sources/badkern.yaml:4:10: deb must be 'package:arch=version'"));
	CHECK(load_fails_with("badkern", "sources/badkern.yaml:6:10: deb must be 'package:arch=version'"));
	CHECK(load_fails_with("badkern", "sources/badkern.yaml:8:16: a deb origin has no signature"));
	/* missing target file and unknown stage */
	CHECK(load_fails_with("nosuch", "unknown target 'nosuch'"));
	project_file("targets/nostage.yaml", "triple: a-b-c\nqemu: q\nstages: [two, three]\n");
	CHECK(load_fails_with("nostage", "targets/nostage.yaml:3:9: unknown stage 'three'"));
	/* duplicate keys */
	project_file("targets/dup.yaml", "triple: a-b-c\nqemu: q\nqemu: r\nstages: [two]\n");
	CHECK(load_fails_with("dup",
	                      "targets/dup.yaml:3:1: duplicate key 'qemu' (first given on line 2)"));
	/* the runner: qemu-user needs its qemu, wasi refuses one; lacks names known capabilities */
	project_file("targets/noqemu.yaml", "triple: a-b-c\nstages: [two]\n");
	CHECK(load_fails_with("noqemu", "targets/noqemu.yaml:1:1: missing 'qemu'"));
	project_file("targets/badrunner.yaml", "triple: a-b-c\nrunner: dosbox\nstages: [two]\n");
	CHECK(load_fails_with("badrunner", "targets/badrunner.yaml:2:9: runner must be qemu-user"));
	/* wine: Windows triples only, no qemu, a machine Windows' tools know */
	project_file("targets/winelinux.yaml", "triple: x86_64-linux-gnu\nrunner: wine\nstages: [two]\n");
	CHECK(load_fails_with("winelinux", "targets/winelinux.yaml:2:9: runner wine runs Windows programs"));
	project_file("targets/wineqemu.yaml", "triple: x86_64-w64-windows-gnu\nrunner: wine\n"
	             "qemu: qemu-x86_64\nstages: [two]\n");
	CHECK(load_fails_with("wineqemu", "targets/wineqemu.yaml:3:7: qemu and qemu_cpu are for runners"));
	project_file("targets/winemips.yaml", "triple: mips-w64-windows-gnu\nrunner: wine\nstages: [two]\n");
	CHECK(load_fails_with("winemips", "a Windows target's cpu_family is x86_64, x86, aarch64 or arm"));
	project_file("targets/noneqemu.yaml", "triple: aarch64-w64-windows-gnu\nrunner: none\n"
	             "qemu_cpu: max\nstages: [two]\n");
	CHECK(load_fails_with("noneqemu", "targets/noneqemu.yaml:3:11: qemu and qemu_cpu are for runners"));
	project_file("targets/wineok.yaml", "triple: x86_64-w64-windows-gnu\nrunner: wine\nstages: [two]\n");
	{
		struct recipes wr;
		recipes_init(&wr, project);
		struct target *wt = recipes_target(&wr, "wineok");
		CHECK(wt && wt->runner == RUNNER_WINE && strcmp(recipes_system(wt), "Windows") == 0 &&
		      strcmp(recipes_meson_system(wt), "windows") == 0 &&
		      strcmp(recipes_object_format(wt), "coff") == 0);
		const char *const *machine = wt ? recipes_windows_machine(wt) : NULL;
		CHECK(machine && strcmp(machine[0], "i386:x86-64") == 0 && strcmp(machine[1], "i386pep") == 0);
		recipes_release(&wr);
		CHECK(recipes_is_system("Windows") && recipes_is_system("Generic") &&
		      !recipes_is_system("windows") && !recipes_is_system("Darwin"));
	}
	project_file("targets/wasiqemu.yaml", "triple: wasm32-unknown-wasi\nrunner: wasi\n"
	             "stages: [two]\nqemu_cpu: max\n");
	CHECK(load_fails_with("wasiqemu", "targets/wasiqemu.yaml:4:11: qemu and qemu_cpu are for runners "
	                      "qemu-user and semihosting"));
	/* semihosting: a qemu-system binary and its board; a board is for semihosting only */
	project_file("targets/noboard.yaml", "triple: armv7em-unknown-none-eabihf\nrunner: semihosting\n"
	             "qemu: qemu-system-arm\nstages: [two]\n");
	CHECK(load_fails_with("noboard", "targets/noboard.yaml:1:1: missing 'qemu_machine'"));
	project_file("targets/userboard.yaml", "triple: a-b-c\nqemu: q\nqemu_machine: virt\nstages: [two]\n");
	CHECK(load_fails_with("userboard", "targets/userboard.yaml:3:15: qemu_machine is for runner "
	                      "semihosting"));
	project_file("targets/bare.yaml", "triple: armv7em-unknown-none-eabihf\nrunner: semihosting\n"
	             "qemu: qemu-system-arm\nqemu_machine: mps2-an386\nqemu_cpu: cortex-m4\n"
	             "stages: [two]\ndriver_cxxflags: [-D_GNU_SOURCE]\n");
	struct recipes br;
	recipes_init(&br, project);
	struct target *bt = recipes_target(&br, "bare");
	CHECK(bt && bt->runner == RUNNER_SEMIHOSTING && strcmp(bt->qemu_machine, "mps2-an386") == 0 &&
	      strcmp(bt->qemu_cpu, "cortex-m4") == 0 && strcmp(recipes_system(bt), "Generic") == 0 &&
	      strcmp(recipes_meson_system(bt), "none") == 0);
	CHECK(bt && bt->driver_cxxflags.n == 1 && strcmp(bt->driver_cxxflags.v[0], "-D_GNU_SOURCE") == 0);
	if (bt) {   /* the short form names the bare-metal system too */
		char *long_form = bt->triple;
		bt->triple = "arm-none-eabi";
		CHECK(strcmp(recipes_system(bt), "Generic") == 0);
		bt->triple = "aarch64-unknown-linux-musl";
		CHECK(strcmp(recipes_system(bt), "Linux") == 0);
		bt->triple = long_form;
	}
	recipes_release(&br);
	/* emulator: a tools stage that provides qemu_user_dir, for runner qemu-user; its
	 * directories are the target's */
	project_file("stages/emu.yaml", "sources: [src]\ninstalls: tools\nmachine: []\nprovides:\n"
	             "  qemu_user_dir: bin\n  qemu_system_dir: sbin\nsteps: [make]\n");
	project_file("targets/emulated.yaml", "triple: aarch64-unknown-linux-musl\n"
	             "qemu: qemu-aarch64-static\nemulator: emu\nstages: [two]\n");
	struct recipes er;
	recipes_init(&er, project);
	struct target *et = recipes_target(&er, "emulated");
	CHECK(et && strcmp(et->emulator, "emu") == 0 && strcmp(et->emulator_user_dir, "bin") == 0 &&
	      strcmp(et->emulator_system_dir, "sbin") == 0);
	recipes_release(&er);
	project_file("targets/emunotools.yaml", "triple: a-b-c\nqemu: q\nemulator: two\nstages: [two]\n");
	CHECK(load_fails_with("emunotools", "targets/emunotools.yaml:3:11: emulator stage 'two' must "
	                      "say 'installs: tools' and provide qemu_user_dir"));
	project_file("targets/emupath.yaml", "triple: a-b-c\nqemu: /usr/bin/q\nemulator: emu\n"
	             "stages: [two]\n");
	CHECK(load_fails_with("emupath", "targets/emupath.yaml:3:11: with an emulator stage, qemu "
	                      "names its binary, not a path"));
	project_file("targets/emuwasi.yaml", "triple: wasm32-unknown-wasi\nrunner: wasi\n"
	             "emulator: emu\nstages: [two]\n");
	CHECK(load_fails_with("emuwasi", "targets/emuwasi.yaml:3:11: emulator is for runner qemu-user"));
	project_file("targets/rvcpu.yaml", "triple: riscv32-unknown-none-elf\nrunner: semihosting\n"
	             "qemu: qemu-system-riscv32\nqemu_machine: virt\nqemu_cpu: 'rv32,f=false;reboot'\n"
	             "stages: [two]\ndriver_cxxflags: ['$(id)']\n");
	CHECK(load_fails_with("rvcpu", "targets/rvcpu.yaml:5:11: qemu_cpu must be a CPU model"));
	CHECK(load_fails_with("rvcpu", "targets/rvcpu.yaml:7:18: flag '$(id)' holds a character"));
	project_file("targets/badlacks.yaml", "triple: wasm32-unknown-wasi\nrunner: wasi\n"
	             "stages: [two]\nlacks: [threads, fpu]\n");
	CHECK(load_fails_with("badlacks", "targets/badlacks.yaml:4:8: lacks names what the platform "
	                      "does not have"));
	CHECK(load_fails_with("badlacks", "(got 'fpu')"));
	project_file("targets/wasi.yaml", "triple: wasm32-unknown-wasi\nrunner: wasi\n"
	             "stages: [two]\nlacks: [threads, fenv]\n");
	struct recipes wr;
	recipes_init(&wr, project);
	struct target *wt = recipes_target(&wr, "wasi");
	CHECK(wt && wt->runner == RUNNER_WASI && !wt->qemu && wt->lacks.n == 2 &&
	      strcmp(recipes_system(wt), "WASI") == 0);
	recipes_release(&wr);
	test_recipe_limits();
}
