/* toolchain: compilers, their identity, variables, PATH and generated files. See toolchain.h. */
#define _GNU_SOURCE
#include "toolchain.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run.h"
#include "util.h"

/* ---- file hashes, cached by (device, inode, size, mtime) so a no-op run hashes nothing ---- */

/* Format of the hash cache file, one file per line:
 *   crossroot-file-hashes 1            (header)
 *   <dev> <ino> <size> <mtime_ns> <sha256> <path>  */
struct hash_cache {
	const char *path;
	struct strlist lines;
	bool dirty;
};

static void hash_cache_load(struct hash_cache *c)
{
	if (!path_exists(c->path))
		return;
	char *text = read_file(c->path, NULL);
	if (!text || strncmp(text, "crossroot-file-hashes 1\n", 24) != 0) {
		free(text);
		return;
	}
	for (char *line = strtok(text + 24, "\n"); line; line = strtok(NULL, "\n"))
		strlist_add(&c->lines, line);
	free(text);
}

static int hash_file_cached(struct hash_cache *c, const char *path, char *hex)
{
	struct stat st;
	if (stat(path, &st) < 0) {
		error("cannot read '%s':", path);
		return -1;
	}
	char *prefix = xasprintf("%lu %lu %lld %lld ", (unsigned long)st.st_dev,
	                         (unsigned long)st.st_ino, (long long)st.st_size,
	                         (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec);
	size_t plen = strlen(prefix);
	for (size_t i = 0; i < c->lines.n; i++) {
		const char *l = c->lines.v[i];
		if (strncmp(l, prefix, plen) == 0 && strlen(l) > plen + DIGEST_HEX_LEN + 1 &&
		    strcmp(l + plen + DIGEST_HEX_LEN + 1, path) == 0) {
			memcpy(hex, l + plen, DIGEST_HEX_LEN);
			hex[DIGEST_HEX_LEN] = '\0';
			free(prefix);
			return 0;
		}
	}
	if (digest_file(path, hex) < 0) {
		free(prefix);
		return -1;
	}
	strlist_take(&c->lines, xasprintf("%s%s %s", prefix, hex, path));
	c->dirty = true;
	free(prefix);
	return 0;
}

static void hash_cache_save(struct hash_cache *c)
{
	if (c->dirty) {
		struct buf b = {0};
		buf_puts(&b, "crossroot-file-hashes 1\n");
		for (size_t i = 0; i < c->lines.n; i++)
			buf_printf(&b, "%s\n", c->lines.v[i]);
		write_file_atomic(c->path, b.s, b.len, 0644);
		buf_release(&b);
	}
	strlist_release(&c->lines);
}

/* ---- the host LLVM ---- */

static int identify(struct host_llvm *h, struct hash_cache *cache)
{
	const char *tools[] = {"clang", "ld.lld", "llvm-ar"};
	struct digest d;
	digest_init(&d);
	char *libdir = NULL;
	int rc = 0;
	for (size_t i = 0; i < 3 && rc == 0; i++) {
		char *tool = path_join(h->bin, tools[i]);
		char *real = realpath(tool, NULL);
		char hex[DIGEST_HEX_LEN + 1];
		if (!real) {
			h->llvm_missing = xasprintf("'%s' is not there (Debian: apt-get install "
			                            "clang-19 lld-19 llvm-19; or set CROSSROOT_LLVM_BIN "
			                            "to another LLVM's bin directory)", tool);
			rc = -1;
		} else if (hash_file_cached(cache, real, hex) < 0) {
			rc = -1;
		} else {
			digest_update_string(&d, hex);
			if (!libdir) {
				*strrchr(real, '/') = '\0';
				libdir = xasprintf("%s/../lib", real);
			}
		}
		free(tool);
		free(real);
	}
	if (rc < 0) {
		free(libdir);
		digest_release(&d);
		return -1;
	}
	/* The driver is small; the compiler lives in these libraries. */
	struct strlist names = {0};
	list_dir(libdir, &names);
	for (size_t i = 0; i < names.n; i++) {
		if ((strncmp(names.v[i], "libLLVM", 7) && strncmp(names.v[i], "libclang-cpp", 12)) ||
		    !strstr(names.v[i], ".so"))
			continue;
		char *path = path_join(libdir, names.v[i]);
		char *real = realpath(path, NULL);
		char hex[DIGEST_HEX_LEN + 1];
		if (real && hash_file_cached(cache, real, hex) == 0)
			digest_update_string(&d, hex);
		free(real);
		free(path);
	}
	strlist_release(&names);
	/* clang's resource directory is named by its major version */
	char *clang_lib = xasprintf("%s/clang", libdir);
	list_dir(clang_lib, &names);
	if (names.n == 0) {
		h->llvm_missing = xasprintf("its clang has no resource directory under '%s'", clang_lib);
		rc = -1;
	} else {
		h->clang_version = xstrdup(names.v[names.n - 1]);
		char *dir = path_join(clang_lib, h->clang_version);
		h->resource_dir = realpath(dir, NULL);
		if (!h->resource_dir)
			h->resource_dir = dir;
		else
			free(dir);
		digest_update_string(&d, h->clang_version);
	}
	strlist_release(&names);
	free(clang_lib);
	free(libdir);
	digest_final(&d, h->identity);
	return rc;
}

/* Ask a GCC driver `driver option` (-print-prog-name=cc1) for one line. Returns the answer,
 * or NULL with *why set. */
static char *ask_gcc(const char *driver, const char *option, char **why)
{
	char *argv[] = {(char *)driver, (char *)option, NULL};
	struct buf out = {0}, err = {0};
	char *answer = NULL;
	int status = run_capture(argv, &out, &err);
	if (status != 0) {
		char words[96];
		*why = xasprintf("'%s %s' %s", driver, option,
		                 status < 0 ? "could not start" : run_describe(status, words));
	} else {
		answer = xstrdup(out.s ? out.s : "");
		answer[strcspn(answer, "\n")] = '\0';
	}
	buf_release(&out);
	buf_release(&err);
	return answer;
}

/* The host GCC's drivers and the compilers they run, hashed in that order (gcc, g++, cc1,
 * cc1plus). Leaves gcc_identity empty and says why in gcc_missing where one is missing. */
static void identify_gcc(struct host_llvm *h, const char *gcc, const char *gxx,
                         struct hash_cache *cache)
{
	const char *drivers[] = {gcc, gxx};
	const char *compilers[] = {"cc1", "cc1plus"};
	char *files[4] = {0};
	char *why = NULL;
	for (size_t i = 0; i < 2 && !why; i++) {
		if (access(drivers[i], X_OK) != 0) {
			why = xasprintf("'%s' not found (make deps installs gcc and g++)", drivers[i]);
			break;
		}
		files[i] = xstrdup(drivers[i]);
		char *option = xasprintf("-print-prog-name=%s", compilers[i]);
		files[2 + i] = ask_gcc(drivers[i], option, &why);
		/* a compiler it cannot find comes back as its bare name */
		if (files[2 + i] && (files[2 + i][0] != '/' || access(files[2 + i], X_OK) != 0))
			why = xasprintf("'%s %s' names no compiler: '%s'", drivers[i], option, files[2 + i]);
		free(option);
	}
	struct digest d;
	digest_init(&d);
	for (size_t i = 0; i < 4 && !why; i++) {
		char *real = realpath(files[i], NULL);
		char hex[DIGEST_HEX_LEN + 1];
		if (!real)
			why = xasprintf("cannot resolve '%s': %s", files[i], strerror(errno));
		else if (hash_file_cached(cache, real, hex) < 0)
			why = xasprintf("cannot read '%s'", real);
		else
			digest_update_string(&d, hex);
		free(real);
	}
	for (size_t i = 0; i < 4; i++)
		free(files[i]);
	if (why) {
		digest_release(&d);
		h->gcc_missing = why;
		return;
	}
	digest_final(&d, h->gcc_identity);
	h->gcc = xstrdup(gcc);
	h->gxx = xstrdup(gxx);
}

void toolchain_host_probe_gcc(struct host_llvm *h, const char *gcc, const char *gxx,
                              const char *hash_cache)
{
	struct hash_cache cache = {.path = hash_cache};
	hash_cache_load(&cache);
	identify_gcc(h, gcc, gxx, &cache);
	hash_cache_save(&cache);
}

int toolchain_host_probe(struct host_llvm *h, const char *bin, const char *hash_cache)
{
	memset(h, 0, sizeof(*h));
	h->bin = xstrdup(bin);
	struct hash_cache cache = {.path = hash_cache};
	hash_cache_load(&cache);
	int rc = identify(h, &cache);
	hash_cache_save(&cache);
	if (rc < 0 && !h->llvm_missing)
		return -1;   /* an error of this machine (a file that cannot be read), said */
	if (rc < 0) {    /* only the stages it compiles need it: plan_create() says so */
		h->identity[0] = '\0';
		free(h->clang_version);
		free(h->resource_dir);
		h->clang_version = NULL;
		h->resource_dir = NULL;
	}
	h->gcc_unprobed = xstrdup(hash_cache);
	return 0;
}

void toolchain_host_want_gcc(struct host_llvm *h)
{
	if (!h->gcc_unprobed)
		return;
	char *hash_cache = h->gcc_unprobed;
	h->gcc_unprobed = NULL;
	toolchain_host_probe_gcc(h, HOST_GCC, HOST_GXX, hash_cache);
	free(hash_cache);
}

void toolchain_host_fake(struct host_llvm *h, const char *bin, const char *clang_version,
                         const char *identity)
{
	memset(h, 0, sizeof(*h));
	h->bin = xstrdup(bin);
	h->clang_version = xstrdup(clang_version);
	h->resource_dir = xasprintf("%s/../lib/clang/%s", bin, clang_version);
	snprintf(h->identity, sizeof(h->identity), "%s", identity);
	snprintf(h->gcc_identity, sizeof(h->gcc_identity), "%s", identity);
	h->gcc = xstrdup(HOST_GCC);
	h->gxx = xstrdup(HOST_GXX);
}

void toolchain_host_release(struct host_llvm *h)
{
	free(h->bin);
	free(h->clang_version);
	free(h->resource_dir);
	free(h->llvm_missing);
	free(h->gcc);
	free(h->gxx);
	free(h->gcc_missing);
	free(h->gcc_unprobed);
	memset(h, 0, sizeof(*h));
}

/* ---- variables of a stage ---- */

const char *toolchain_var(const struct strlist *pairs, const char *name)
{
	const char *value = NULL;
	for (size_t i = 0; pairs && i + 1 < pairs->n; i += 2)
		if (strcmp(pairs->v[i], name) == 0)
			value = pairs->v[i + 1];
	return value;
}

static void set_var(struct strlist *vars, const char *name, const char *value)
{
	strlist_add(vars, name);
	strlist_add(vars, value);
}

/* Host LLVM tools by the names stages know them. */
const char *const toolchain_llvm_tools[][2] = {
	{"ar", "llvm-ar"}, {"ranlib", "llvm-ranlib"}, {"nm", "llvm-nm"}, {"objcopy", "llvm-objcopy"},
	{"objdump", "llvm-objdump"}, {"strip", "llvm-strip"}, {"readelf", "llvm-readelf"},
	{"ld", "ld.lld"}, {"size", "llvm-size"}, {"strings", "llvm-strings"},
	{"addr2line", "llvm-addr2line"},
};
const size_t toolchain_n_llvm_tools = sizeof(toolchain_llvm_tools) / sizeof(toolchain_llvm_tools[0]);
const char *const toolchain_windows_tools[][2] = {
	{"dlltool", "llvm-dlltool"}, {"windres", "llvm-windres"},
};
const size_t toolchain_n_windows_tools =
	sizeof(toolchain_windows_tools) / sizeof(toolchain_windows_tools[0]);

char *toolchain_llvm_bin(const struct host_llvm *h, const struct strlist *provided,
                         const char *prefix)
{
	const char *rel = toolchain_var(provided, "llvm_bin");
	return rel ? path_join(prefix, rel) : xstrdup(h->bin);
}

char *toolchain_clang_version(const struct host_llvm *h, const struct strlist *provided)
{
	const char *rel = toolchain_var(provided, "clang_resource_dir");
	if (!rel)   /* "" without a host LLVM: a stage that needs it stops at plan time */
		return xstrdup(h->clang_version ? h->clang_version : "");
	const char *base = strrchr(rel, '/');
	return xstrdup(base ? base + 1 : rel);
}

char *toolchain_tool(const struct host_llvm *h, const struct strlist *provided,
                     const char *prefix, const char *name, const char *llvm_name)
{
	const char *rel = toolchain_var(provided, name);
	if (rel)
		return path_join(prefix, rel);
	char *bin = toolchain_llvm_bin(h, provided, prefix);
	char *tool = path_join(bin, llvm_name);
	free(bin);
	return tool;
}

/* Is a provided compiler a clang (takes --target and clang's runtime flags)? */
bool toolchain_is_clang(const char *driver)
{
	const char *base = strrchr(driver, '/');
	return strstr(base ? base + 1 : driver, "clang") != NULL;
}

void toolchain_stage_vars(const struct host_llvm *h, const struct target *t,
                          const struct strlist *provided, const struct stage_paths *paths,
                          int jobs, struct strlist *vars)
{
	struct buf tflags = {0}, cflags = {0};
	for (size_t i = 0; i < t->cflags.n; i++)
		buf_printf(&tflags, "%s%s", i ? " " : "", t->cflags.v[i]);
	/* Builds must not leak the work directory's path into their output. */
	buf_printf(&cflags, "%s%s-ffile-prefix-map=%s=/crossroot", tflags.s ? tflags.s : "",
	           tflags.len ? " " : "", paths->work);
	/* The clang that builds the stage: the host's, or a toolchain stage's LLVM (llvm_bin and
	 * clang_resource_dir provided), whose version names the sysroot's resource directory */
	char *llvm_bin = toolchain_llvm_bin(h, provided, paths->tools);
	char *clang_version = toolchain_clang_version(h, provided);
	const char *resource_rel = toolchain_var(provided, "clang_resource_dir");
	char *clang_resource = resource_rel ? path_join(paths->tools, resource_rel)
	                                    : xstrdup(h->resource_dir ? h->resource_dir : "");
	char *resource = xasprintf("%s/usr/lib/clang/%s", paths->sysroot, clang_version);
	char *host_cc = path_join(h->bin, "clang");
	char *host_cxx = path_join(h->bin, "clang++");
	char *clang_cc = path_join(llvm_bin, "clang");
	char *clang_cxx = path_join(llvm_bin, "clang++");
	char number[16];
	snprintf(number, sizeof(number), "%d", jobs);

	set_var(vars, "target", t->name);
	set_var(vars, "triple", t->triple);
	set_var(vars, "target_cflags", tflags.s ? tflags.s : "");
	set_var(vars, "cflags", cflags.s);
	set_var(vars, "jobs", number);
	set_var(vars, "prefix", "/usr");
	set_var(vars, "llvm_bin", llvm_bin);
	set_var(vars, "host_cc", host_cc);
	set_var(vars, "host_cxx", host_cxx);
	if (h->gcc_identity[0]) {   /* else ${host_gcc} is an unknown variable at its step */
		set_var(vars, "host_gcc", h->gcc);
		set_var(vars, "host_gxx", h->gxx);
	} else if (h->gcc_missing) {   /* which that error names */
		set_var(vars, ".host_gcc_missing", h->gcc_missing);
	}
	set_var(vars, "debug_flag", recipes_debug(t) ? "-g" : "");
	set_var(vars, "clang", clang_cc);
	set_var(vars, "clangxx", clang_cxx);
	set_var(vars, "clang_resource_dir", clang_resource);
	set_var(vars, "clang_version", clang_version);
	set_var(vars, "sysroot", paths->sysroot);
	set_var(vars, "tools", paths->tools);
	set_var(vars, "resource_dir", resource);
	set_var(vars, "destdir", paths->destdir);
	set_var(vars, "build", paths->build);
	set_var(vars, "cmake_toolchain", paths->cmake_toolchain);
	if (t->linux_arch)   /* else ${linux_arch} is an unknown variable, reported at its step */
		set_var(vars, "linux_arch", t->linux_arch);
	set_var(vars, "cpu_family", t->cpu_family);
	set_var(vars, "cpu", t->cpu);
	set_var(vars, "endian", t->endian);
	/* qemu-user runs a target program in a step (ldconfig); a board's qemu-system or Node.js
	 * would not, so there ${qemu} is an unknown variable at its step */
	if (t->runner == RUNNER_QEMU_USER)
		set_var(vars, "qemu", t->qemu);
	set_var(vars, "cmake_shared", t->static_only ? "OFF" : "ON");
	set_var(vars, "configure_shared", t->static_only ? "--disable-shared" : "--enable-shared");

	/* The compilers: a provided driver, else the clang of ${llvm_bin}. */
	char *cc_driver = toolchain_tool(h, provided, paths->tools, "cc", "clang");
	char *cxx_driver = toolchain_tool(h, provided, paths->tools, "cxx", "clang++");
	bool clang = toolchain_is_clang(cc_driver);
	char *flags = clang ? xasprintf("--target=%s --sysroot=%s -resource-dir=%s -fuse-ld=lld "
	                                "--rtlib=compiler-rt --unwindlib=none %s", t->triple,
	                                paths->sysroot, resource, cflags.s)
	                    : xasprintf("--sysroot=%s %s", paths->sysroot, cflags.s);
	char *v = xasprintf("%s %s", cc_driver, flags);
	set_var(vars, "cc", v);
	free(v);
	v = xasprintf("%s %s", cxx_driver, flags);
	set_var(vars, "cxx", v);
	free(v);
	v = xasprintf("%s -E %s", cc_driver, flags);
	set_var(vars, "cpp", v);
	free(v);
	for (size_t i = 0; i < toolchain_n_llvm_tools; i++) {
		v = toolchain_tool(h, provided, paths->tools, toolchain_llvm_tools[i][0],
		                   toolchain_llvm_tools[i][1]);
		set_var(vars, toolchain_llvm_tools[i][0], v);
		free(v);
	}
	for (size_t i = 0; i < toolchain_n_windows_tools && strcmp(recipes_system(t), "Windows") == 0; i++) {
		v = toolchain_tool(h, provided, paths->tools, toolchain_windows_tools[i][0],
		                   toolchain_windows_tools[i][1]);
		set_var(vars, toolchain_windows_tools[i][0], v);
		free(v);
	}
	/* kept for the generated CMake file; not variables of their own */
	set_var(vars, ".cc_driver", cc_driver);
	set_var(vars, ".cxx_driver", cxx_driver);
	set_var(vars, ".is_clang", clang ? "1" : "");
	for (size_t i = 0; i + 1 < t->vars.n; i += 2)
		set_var(vars, t->vars.v[i], t->vars.v[i + 1]);
	free(cc_driver);
	free(cxx_driver);
	free(flags);
	free(resource);
	free(host_cc);
	free(host_cxx);
	free(clang_cc);
	free(clang_cxx);
	free(clang_resource);
	free(clang_version);
	free(llvm_bin);
	buf_release(&tflags);
	buf_release(&cflags);
}

char *toolchain_step_path(const struct host_llvm *h, const char *tools, bool host_llvm)
{
	return xasprintf("%s/bin:%s%s/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	                 tools, host_llvm ? h->bin : "", host_llvm ? ":" : "");
}

int toolchain_write_cmake_file(const char *path, const struct target *t,
                               const struct strlist *vars)
{
	bool clang = toolchain_var(vars, ".is_clang")[0] != '\0';
	const char *resource = toolchain_var(vars, "resource_dir");
	char *headers = path_join(resource, "include");
	/* Before the builtins stage has made the sysroot's resource directory, clang's own is
	 * the only one with its headers. */
	char *rflag = clang && is_dir(headers) ? xasprintf(" -resource-dir=%s", resource)
	                                       : xstrdup("");
	struct buf b = {0};
	buf_printf(&b, "# CMake toolchain file for one crossroot stage of %s (generated)\n"
	           "set(CMAKE_SYSTEM_NAME %s)\nset(CMAKE_SYSTEM_PROCESSOR %s)\n"
	           "set(CMAKE_SYSROOT \"%s\")\n", t->name, recipes_system(t), t->cpu,
	           toolchain_var(vars, "sysroot"));
	int rc = 0;
	if (!toolchain_cmake_knows_system(t)) {
		char *dir = xstrndup(path, (size_t)(strrchr(path, '/') - path));
		buf_printf(&b, "list(APPEND CMAKE_MODULE_PATH \"%s/cmake\")\nset(CMAKE_SYSTEM_VERSION 1)\n",
		           dir);
		rc = toolchain_write_cmake_platform(dir, t);
		free(dir);
	}
	const char *launcher = toolchain_var(vars, ".launcher");
	const char *langs[][2] = {{"C", ".cc_driver"}, {"CXX", ".cxx_driver"}, {"ASM", ".cc_driver"}};
	for (size_t i = 0; i < 3; i++) {
		buf_printf(&b, "set(CMAKE_%s_COMPILER \"%s\")\n", langs[i][0], toolchain_var(vars, langs[i][1]));
		if (clang)
			buf_printf(&b, "set(CMAKE_%s_COMPILER_TARGET %s)\n", langs[i][0], t->triple);
		buf_printf(&b, "set(CMAKE_%s_FLAGS_INIT \"%s%s\")\n", langs[i][0], toolchain_var(vars, "cflags"),
		           rflag);
		buf_printf(&b, "set(CMAKE_%s_COMPILER_WORKS ON)\n", langs[i][0]);
		if (launcher)   /* launcher.h: not a key input */
			buf_printf(&b, "set(CMAKE_%s_COMPILER_LAUNCHER \"%s\")\n", langs[i][0], launcher);
	}
	const char *link = clang ? "-fuse-ld=lld --rtlib=compiler-rt --unwindlib=none" : "";
	buf_printf(&b, "set(CMAKE_EXE_LINKER_FLAGS_INIT \"%s\")\n"
	           "set(CMAKE_SHARED_LINKER_FLAGS_INIT \"%s\")\n"
	           "set(CMAKE_MODULE_LINKER_FLAGS_INIT \"%s\")\n"
	           "set(CMAKE_AR \"%s\")\nset(CMAKE_NM \"%s\")\nset(CMAKE_RANLIB \"%s\")\n"
	           "set(CMAKE_STRIP \"%s\")\nset(CMAKE_OBJCOPY \"%s\")\n"
	           "set(CMAKE_FIND_ROOT_PATH \"%s\")\n"
	           "set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)\n"
	           "set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)\n"
	           "set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)\n"
	           "set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)\n"
	           /* A build-tree RPATH names the build directory, and the linker's build ID
	            * hashes it; CMake's install then rewrites the RPATH but not the ID, so the
	            * installed libc++.so differed between work directories by its build ID alone */
	           "set(CMAKE_BUILD_WITH_INSTALL_RPATH ON)\n",
	           link, link, link, toolchain_var(vars, "ar"), toolchain_var(vars, "nm"), toolchain_var(vars, "ranlib"),
	           toolchain_var(vars, "strip"), toolchain_var(vars, "objcopy"), toolchain_var(vars, "sysroot"));
	if (rc == 0)
		rc = write_file_atomic(path, b.s, b.len, 0644);
	buf_release(&b);
	free(headers);
	free(rflag);
	return rc;
}

bool toolchain_cmake_knows_system(const struct target *t)
{
	const char *system = recipes_system(t);
	return strcmp(system, "Linux") == 0 || strcmp(system, "Generic") == 0 ||
	       strcmp(system, "Windows") == 0;
}

int toolchain_write_cmake_platform(const char *dir, const struct target *t)
{
	const char *system = recipes_system(t);
	char *platform = xasprintf("%s/cmake/Platform", dir);
	char *path = xasprintf("%s/%s.cmake", platform, system);
	char *text = xasprintf("# CMake platform %s for %s (generated by crossroot): static programs "
	                       "only\nset(%s 1)\nset_property(GLOBAL PROPERTY "
	                       "TARGET_SUPPORTS_SHARED_LIBS FALSE)\n", system, t->name, system);
	int rc = mkdir_p(platform, 0755) < 0 ? -1 : write_file_atomic(path, text, strlen(text), 0644);
	free(text);
	free(path);
	free(platform);
	return rc;
}
