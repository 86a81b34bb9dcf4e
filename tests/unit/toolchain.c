/* Unit tests of toolchain: the host GCC, found through its drivers.
 * See unit.h for TEST and CHECK. */
#define _GNU_SOURCE
#include "unit.h"

#include <sys/stat.h>
#include <unistd.h>

#include "recipes.h"
#include "toolchain.h"

/* the host GCC found by asking its drivers where cc1 and cc1plus are, wherever they live
 * (GCC 14 keeps them in /usr/libexec/gcc/...), and the reason named where it cannot be used */
static void write_fake_gcc(const char *path, const char *prog, const char *answer)
{
	char *text = xasprintf("#!/bin/sh\n[ \"$1\" = -print-prog-name=%s ] || exit 1\necho '%s'\n",
	                       prog, answer);
	write_text(path, text);
	chmod(path, 0755);
	free(text);
}

/* a host LLVM as toolchain_host_fake() gives, but no GCC yet */
static void host_without_gcc(struct host_llvm *h)
{
	toolchain_host_fake(h, "/nonexistent/llvm/bin", "19", "fake");
	free(h->gcc);
	free(h->gxx);
	h->gcc = h->gxx = NULL;
	h->gcc_identity[0] = '\0';
}

TEST(host_gcc)
{
	char *dir = xasprintf("%s/gcc", scratch);
	char *libexec = xasprintf("%s/libexec/gcc/x86_64-linux-gnu/14", dir);
	CHECK(mkdir_p(libexec, 0755) == 0);
	char *gcc = xasprintf("%s/gcc", dir), *gxx = xasprintf("%s/g++", dir);
	char *cc1 = xasprintf("%s/cc1", libexec), *cc1plus = xasprintf("%s/cc1plus", libexec);
	char *hashes = xasprintf("%s/hashes", dir);
	write_fake_gcc(gcc, "cc1", cc1);
	write_fake_gcc(gxx, "cc1plus", cc1plus);
	write_text(cc1, "cc1 one\n");
	write_text(cc1plus, "cc1plus\n");
	chmod(cc1, 0755);
	chmod(cc1plus, 0755);

	struct host_llvm h;
	host_without_gcc(&h);
	toolchain_host_probe_gcc(&h, gcc, gxx, hashes);
	CHECK(h.gcc_identity[0] && !h.gcc_missing);
	CHECK(h.gcc && strcmp(h.gcc, gcc) == 0 && h.gxx && strcmp(h.gxx, gxx) == 0);
	char first[DIGEST_HEX_LEN + 1];
	memcpy(first, h.gcc_identity, sizeof(first));

	struct target t = {.name = "t", .triple = "x-linux-musl", .cpu_family = "x", .cpu = "x",
	                   .endian = "little", .qemu = "qemu-x"};
	struct stage_paths paths = {"/w", "/w/sysroot", "/w/tools", "/w/build", "/w/dest", "/w/tc.cmake"};
	struct strlist vars = {0};
	toolchain_stage_vars(&h, &t, NULL, &paths, 1, &vars);
	CHECK(toolchain_var(&vars, "host_gcc") && strcmp(toolchain_var(&vars, "host_gcc"), gcc) == 0);
	strlist_release(&vars);

	/* another cc1 (same size, later mtime): another identity */
	sleep(1);
	write_text(cc1, "cc1 two\n");
	toolchain_host_release(&h);
	host_without_gcc(&h);
	toolchain_host_probe_gcc(&h, gcc, gxx, hashes);
	CHECK(h.gcc_identity[0] && strcmp(h.gcc_identity, first) != 0);
	toolchain_host_release(&h);

	/* a driver that cannot find its compiler answers with the bare name */
	write_fake_gcc(gxx, "cc1plus", "cc1plus");
	host_without_gcc(&h);
	toolchain_host_probe_gcc(&h, gcc, gxx, hashes);
	CHECK(!h.gcc_identity[0] && !h.gcc && h.gcc_missing && strstr(h.gcc_missing, "names no compiler"));
	toolchain_host_release(&h);

	/* no g++ at all: named, and the stage variables carry the reason, not ${host_gcc} */
	unlink(gxx);
	host_without_gcc(&h);
	toolchain_host_probe_gcc(&h, gcc, gxx, hashes);
	CHECK(!h.gcc_identity[0] && h.gcc_missing && strstr(h.gcc_missing, "g++' not found"));
	toolchain_stage_vars(&h, &t, NULL, &paths, 1, &vars);
	CHECK(!toolchain_var(&vars, "host_gcc") && !toolchain_var(&vars, "host_gxx"));
	CHECK(toolchain_var(&vars, ".host_gcc_missing") &&
	      strstr(toolchain_var(&vars, ".host_gcc_missing"), "g++' not found"));
	strlist_release(&vars);
	toolchain_host_release(&h);
	free(hashes), free(cc1plus), free(cc1), free(gxx), free(gcc), free(libexec), free(dir);
}
