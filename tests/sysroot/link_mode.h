/* link_mode.h: included by link_static.c and link_dynamic.c. Reports how the running
 * program was linked, from its own program headers, the auxiliary vector and the list
 * of loaded objects, so a "static" build that is really dynamic (or the reverse) fails. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

static int objects;
static int ldso_loaded;
static char interp[256];

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (objects++ == 0) {
		/* the first object is the program itself */
		for (int i = 0; i < info->dlpi_phnum; i++)
			if (info->dlpi_phdr[i].p_type == PT_INTERP)
				snprintf(interp, sizeof interp, "%s",
				         (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr));
	} else if (info->dlpi_name && strstr(info->dlpi_name, "ld-musl-")) {
		ldso_loaded = 1;
	}
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static void report_link_mode(void)
{
	dl_iterate_phdr(visit, NULL);
	if (interp[0])
		printf("PT_INTERP: present, %s\n",
		       strncmp(interp, "/lib/ld-musl-", 13) == 0 && ends_with(interp, ".so.1")
		               ? "/lib/ld-musl-*.so.1"
		               : "NOT THE MUSL LOADER");
	else
		printf("PT_INTERP: none\n");
	printf("AT_BASE (interpreter load address): %s\n", getauxval(AT_BASE) ? "set" : "zero");
	if (objects == 1)
		printf("loaded objects: 1\n");
	else
		printf("loaded objects: 2 or more, musl loader %s\n", ldso_loaded ? "among them" : "MISSING");
	printf("linked: %s\n", interp[0] ? "dynamic" : "static");
}
