/* link_mode.h: included by link_static.c and link_dynamic.c. Reports how the running
 * program was linked, from its own program headers, the auxiliary vector and the list
 * of loaded objects, so a "static" build that is really dynamic (or the reverse) fails. */
#define _GNU_SOURCE
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>

/* the C library's dynamic loader: glibc's /lib/ld-linux-<arch>.so.<n> (x86-64's psABI puts it
 * in /lib64), else musl's /lib/ld-musl-<arch>.so.1 (musl defines no macro of its own) */
#ifdef __GLIBC__
#define LOADER "/lib/ld-linux-"
#define LOADER_LIB64 "/lib64/ld-linux-"
#else
#define LOADER "/lib/ld-musl-"
#define LOADER_LIB64 LOADER
#endif

static int objects;
static int ldso_loaded;
static char interp[256];

/* The kernel's vDSO, which glibc lists among the loaded objects even in a static program (a
 * kernel maps one; qemu-user 7.2 does not): not an object the link brought */
static int is_vdso(const struct dl_phdr_info *info)
{
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	return vdso && (const char *)info->dlpi_phdr ==
	                   (const char *)vdso + ((const ElfW(Ehdr) *)vdso)->e_phoff;
}

static int visit(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (is_vdso(info))
		return 0;
	if (objects++ == 0) {
		/* the first object is the program itself */
		for (int i = 0; i < info->dlpi_phnum; i++)
			if (info->dlpi_phdr[i].p_type == PT_INTERP)
				snprintf(interp, sizeof interp, "%s",
				         (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr));
	} else if (info->dlpi_name && strstr(info->dlpi_name, &LOADER[5])) {
		ldso_loaded = 1;
	}
	return 0;
}

static int is_loader(const char *path)
{
	const char *so = strstr(path, ".so.");
	int named = strncmp(path, LOADER, strlen(LOADER)) == 0 ||
	            strncmp(path, LOADER_LIB64, strlen(LOADER_LIB64)) == 0;
	return named && so && so[4] >= '1' && so[4] <= '9' && so[5] == '\0';
}

static void report_link_mode(void)
{
	dl_iterate_phdr(visit, NULL);
	if (interp[0])
		printf("PT_INTERP: present, %s\n",
		       is_loader(interp) ? "the C library's loader" : "NOT THE C LIBRARY'S LOADER");
	else
		printf("PT_INTERP: none\n");
	printf("AT_BASE (interpreter load address): %s\n", getauxval(AT_BASE) ? "set" : "zero");
	if (objects == 1)
		printf("loaded objects: 1\n");
	else
		printf("loaded objects: 2 or more, the loader %s\n", ldso_loaded ? "among them" : "MISSING");
	printf("linked: %s\n", interp[0] ? "dynamic" : "static");
}
