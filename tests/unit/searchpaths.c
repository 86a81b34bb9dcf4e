/* Unit tests of searchpaths: what a compiler searches must lie inside the sysroot; a fake
 * driver prints what clang -v prints. */
#define _GNU_SOURCE
#include "unit.h"

#include "searchpaths.h"

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

TEST(searchpaths)
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
