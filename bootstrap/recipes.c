/* recipes: loading and validating target, stage and source YAML files.
 * See recipes.h for the schema's shape; README.md documents every key. */
#define _GNU_SOURCE
#include "recipes.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "yamlfile.h"

#define DEFAULT_MAX_SIZE (4LL << 30)   /* 4 GiB: far above any source, far below a full disk */

void location_error(const struct location *where, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fflush(stdout);
	fprintf(stderr, "%s:%zu:%zu: ", where->path, where->line, where->column);
	vprint_redacted(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static struct location location_of(struct yamlfile *f, const char *path, yaml_node_t *node)
{
	(void)f;
	struct location l = {path, node->start_mark.line + 1, node->start_mark.column + 1};
	return l;
}

void recipes_init(struct recipes *r, const char *root)
{
	memset(r, 0, sizeof(*r));
	r->root = xstrdup(root);
}

static void source_free(struct source *s)
{
	if (s->base) {   /* a view owns only its id and extract list */
		strlist_release(&s->extract);
		free(s->id);
		free(s);
		return;
	}
	for (size_t i = 0; i < s->n_origins; i++) {
		struct origin *o = &s->origins[i];
		free(o->url);
		free(o->package);
		free(o->version);
		free(o->arch);
		free(o->file);
		free(o->signature);
	}
	free(s->origins);
	free(s->keyring);
	free(s->member);
	strlist_release(&s->extract);
	strlist_release(&s->exclude);
	free(s->id);
	free(s->name);
	free(s->version);
	free(s->path);
	free(s);
}

static void stage_free(struct stage *s)
{
	for (size_t i = 0; i < s->n_steps; i++)
		free(s->steps[i].command);
	free(s->steps);
	strlist_release(&s->sources);
	strlist_release(&s->depends);
	strlist_release(&s->arch_depends);
	strlist_release(&s->shared_depends);
	strlist_release(&s->brings);
	strlist_release(&s->provides);
	strlist_release(&s->unsupported);
	strlist_release(&s->unsupported_fixed_in);
	strlist_release(&s->toolchain);
	strlist_release(&s->supersedes);
	strlist_release(&s->machine);
	strlist_release(&s->extract);
	strlist_release(&s->vars);
	free(s->name);
	free(s->path);
	free(s->description);
	free(s->text);
	free(s);
}

static void target_free(struct target *t)
{
	strlist_release(&t->cflags);
	strlist_release(&t->driver_cflags);
	strlist_release(&t->driver_cxxflags);
	strlist_release(&t->stages);
	strlist_release(&t->with);
	strlist_release(&t->lacks);
	strlist_release(&t->vars);
	strlist_release(&t->toolchain);
	strlist_release(&t->stage_toolchain);
	strlist_release(&t->substitute);
	free(t->libc);
	free(t->libc_headers);
	strlist_release(&t->versions);
	strlist_release(&t->patch_sets);
	free(t->linux_arch);
	free(t->cpu_family);
	free(t->cpu);
	free(t->endian);
	free(t->name);
	free(t->path);
	free(t->description);
	free(t->triple);
	free(t->qemu);
	free(t->qemu_cpu);
	free(t->qemu_machine);
	free(t->emulator);
	free(t->emulator_user_dir);
	free(t->emulator_system_dir);
	free(t->text);
	free(t);
}

void recipes_release(struct recipes *r)
{
	for (size_t i = 0; i < r->n_targets; i++)
		target_free(r->targets[i]);
	for (size_t i = 0; i < r->n_stages; i++)
		stage_free(r->stages[i]);
	for (size_t i = 0; i < r->n_sources; i++)
		source_free(r->sources[i]);
	free(r->targets);
	free(r->stages);
	free(r->sources);
	free(r->root);
	memset(r, 0, sizeof(*r));
}

/* Names become file names and directory names: keep them boring. */
/* qemu's -cpu: a model and its properties (cortex-m4, rv32,f=false), written into run
 * wrappers unquoted */
static bool valid_cpu_model(const char *s)
{
	if (!isalnum((unsigned char)*s))
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+-,=", *s))
			return false;
	return true;
}

static bool valid_name(const char *s)
{
	if (!*s || *s == '.' || *s == '-')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+-", *s))
			return false;
	return true;
}

/* A Debian package or architecture name (n bytes), or with `version` a Debian version: the
 * characters Debian policy allows, none a shell or a URL would read */
static bool debian_word(const char *s, size_t n, bool version)
{
	if (n == 0 || !isalnum((unsigned char)*s))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr(version ? ".+-~:" : ".+-", s[i]))
			return false;
	return true;
}

static char *scalar_copy(struct yamlfile *f, yaml_node_t *map, const char *key)
{
	const char *s = yamlfile_scalar(f, yamlfile_get(f, map, key), key);
	return s ? xstrdup(s) : NULL;
}

static char *recipe_path(const struct recipes *r, const char *dir, const char *name)
{
	return xasprintf("%s/%s/%s.yaml", r->root, dir, name);
}

/* Open a recipe file, reporting "no such target/stage" at the mention if it is missing. */
static int open_recipe(struct yamlfile *f, const struct recipes *r, const char *dir,
                       const char *kind, const char *name, const struct location *from)
{
	memset(f, 0, sizeof(*f));
	char *path = recipe_path(r, dir, name);
	if (!valid_name(name)) {
		if (from)
			location_error(from, "invalid %s name '%s'", kind, name);
		else
			error("invalid %s name '%s'", kind, name);
		free(path);
		return -1;
	}
	if (!path_exists(path)) {
		if (from)
			location_error(from, "unknown %s '%s' (no file '%s')", kind, name, path);
		else
			error("unknown %s '%s': no file '%s'", kind, name, path);
		free(path);
		return -1;
	}
	int rc = yamlfile_load(f, path);
	free(path);
	return rc;
}

static void check_name(struct yamlfile *f, yaml_node_t *root, const char *expected)
{
	yaml_node_t *node = yamlfile_get(f, root, "name");
	const char *name = yamlfile_scalar(f, node, "name");
	if (name && strcmp(name, expected) != 0)
		yamlfile_error(f, node, "name '%s' does not match the file name '%s'", name, expected);
}

static long long parse_size(struct yamlfile *f, yaml_node_t *node)
{
	const char *s = yamlfile_scalar(f, node, "max-size");
	if (!s)
		return DEFAULT_MAX_SIZE;
	char *end;
	long long v = strtoll(s, &end, 10);
	long long unit = 1;
	if (*end == 'K' || *end == 'k')
		unit = 1LL << 10, end++;
	else if (*end == 'M')
		unit = 1LL << 20, end++;
	else if (*end == 'G')
		unit = 1LL << 30, end++;
	if (end == s || *end || v <= 0) {
		yamlfile_error(f, node, "max-size must be a positive number of bytes, "
		               "optionally with K, M or G (got '%s')", s);
		return DEFAULT_MAX_SIZE;
	}
	return v * unit;
}

/* A file name of Debian's archive: a name, where Debian versions also put '~'
 * (wasi-libc_0.0~git20220510.9886d3d.orig.tar.xz); URLs take it as it is. */
static bool debian_file_name(const char *s)
{
	if (!*s || *s == '.' || *s == '-' || *s == '~')
		return false;
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("._+-~", *s))
			return false;
	return true;
}

/* A pool origin's path: component/prefix/package/file, nothing that leaves pool/. */
static bool valid_pool_path(const char *path)
{
	int parts = 0;
	for (const char *p = path; *p; parts++) {
		size_t n = strcspn(p, "/");
		char *part = xstrndup(p, n);
		bool ok = n > 0 && debian_file_name(part) && strcmp(part, ".") && strcmp(part, "..");
		free(part);
		if (!ok)
			return false;
		p += n;
		if (*p == '/' && !*++p)
			return false;
	}
	return parts == 4;
}

static void load_origin(struct yamlfile *f, yaml_node_t *node, struct origin *o, const char *path)
{
	static const char *const allowed[] = {"url", "apt", "deb", "pool", "file", "sha256",
	                                      "max-size", "signature", NULL};
	static const char *const required[] = {"sha256", NULL};
	memset(o, 0, sizeof(*o));
	o->where = location_of(f, path, node);
	o->max_size = DEFAULT_MAX_SIZE;
	if (node->type != YAML_MAPPING_NODE) {
		yamlfile_error(f, node, "an origin must be a mapping with 'url', 'apt', 'deb' or 'pool', "
		               "and 'sha256'");
		return;
	}
	yamlfile_check_keys(f, node, allowed, required);
	yaml_node_t *url = yamlfile_get(f, node, "url");
	yaml_node_t *apt = yamlfile_get(f, node, "apt");
	yaml_node_t *pool = yamlfile_get(f, node, "pool");
	yaml_node_t *deb = yamlfile_get(f, node, "deb");
	yaml_node_t *file = yamlfile_get(f, node, "file");
	if (!!url + !!apt + !!deb + !!pool != 1)
		yamlfile_error(f, node, "an origin needs exactly one of 'url', 'apt', 'deb' and 'pool'");
	if (file && !apt)
		yamlfile_error(f, file, "'file' belongs to 'apt' origins only");
	if (url) {
		const char *u = yamlfile_scalar(f, url, "url");
		if (u && strncmp(u, "https://", 8) && strncmp(u, "http://", 7) && strncmp(u, "file://", 7))
			yamlfile_error(f, url, "url must start with https://, http:// or file:// (got '%s')", u);
		o->kind = ORIGIN_URL;
		o->url = u ? xstrdup(u) : NULL;
	}
	if (pool) {
		const char *pp = yamlfile_scalar(f, pool, "pool");
		if (pp && !valid_pool_path(pp))
			yamlfile_error(f, pool, "pool must be a path under the archive's pool/: component/"
			               "prefix/package/file, e.g. 'main/m/musl/musl_1.2.5.orig.tar.gz' "
			               "(got '%s')", pp);
		o->kind = ORIGIN_POOL;
		o->file = pp ? xstrdup(pp) : NULL;
	}
	if (apt) {
		const char *a = yamlfile_scalar(f, apt, "apt");
		const char *eq = a ? strchr(a, '=') : NULL;
		if (a && (!eq || eq == a || !eq[1]))
			yamlfile_error(f, apt, "apt must be 'package=version', e.g. 'musl=1.2.3-1' (got '%s')", a);
		else if (a) {
			o->package = xstrndup(a, (size_t)(eq - a));
			o->version = xstrdup(eq + 1);
		}
		o->kind = ORIGIN_APT;
		if (!file)
			yamlfile_error(f, node, "an apt origin needs 'file': which file of the source package");
		const char *name = yamlfile_scalar(f, file, "file");
		if (name && (strchr(name, '/') || !debian_file_name(name)))
			yamlfile_error(f, file, "file must be a plain file name (got '%s')", name);
		o->file = name ? xstrdup(name) : NULL;
	}
	if (deb) {
		const char *d = yamlfile_scalar(f, deb, "deb");
		const char *colon = d ? strchr(d, ':') : NULL;
		const char *eq = colon ? strchr(colon, '=') : NULL;
		if (d && (!colon || colon == d || !eq || eq == colon + 1 || !eq[1] ||
		          !debian_word(d, (size_t)(colon - d), false) ||
		          !debian_word(colon + 1, (size_t)(eq - colon - 1), false) ||
		          !debian_word(eq + 1, strlen(eq + 1), true)))
			yamlfile_error(f, deb, "deb must be 'package:arch=version', e.g. "
			               "'linux-image-6.1.0-50-arm64-unsigned:arm64=6.1.176-1' (got '%s')", d);
		else if (d) {
			o->package = xstrndup(d, (size_t)(colon - d));
			o->arch = xstrndup(colon + 1, (size_t)(eq - colon - 1));
			o->version = xstrdup(eq + 1);
			/* the name apt gives the file: an epoch "1:" is "1%3a" */
			const char *epoch = strchr(o->version, ':');
			o->file = epoch ? xasprintf("%s_%.*s%%3a%s_%s.deb", o->package,
			                            (int)(epoch - o->version), o->version, epoch + 1, o->arch)
			                : xasprintf("%s_%s_%s.deb", o->package, o->version, o->arch);
		}
		o->kind = ORIGIN_DEB;
	}
	yaml_node_t *sha = yamlfile_get(f, node, "sha256");
	const char *hex = yamlfile_scalar(f, sha, "sha256");
	if (hex && !digest_is_valid_hex(hex))
		yamlfile_error(f, sha, "sha256 must be 64 lowercase hexadecimal digits (got '%s')", hex);
	else if (hex)
		memcpy(o->sha256, hex, DIGEST_HEX_LEN + 1);
	if (yamlfile_get(f, node, "max-size"))
		o->max_size = parse_size(f, yamlfile_get(f, node, "max-size"));
	yaml_node_t *sig = yamlfile_get(f, node, "signature");
	const char *sigtext = yamlfile_scalar(f, sig, "signature");
	if (sigtext && o->kind == ORIGIN_DEB)
		yamlfile_error(f, sig, "a deb origin has no signature: apt's signed index vouches for it");
	else if (sigtext && o->kind != ORIGIN_URL && (strchr(sigtext, '/') || !debian_file_name(sigtext)))
		yamlfile_error(f, sig, "for an %s origin, signature is a file name of the same %s "
		               "(got '%s')", o->kind == ORIGIN_APT ? "apt" : "pool",
		               o->kind == ORIGIN_APT ? "source package" : "pool directory", sigtext);
	else if (sigtext && o->kind == ORIGIN_URL && strncmp(sigtext, "https://", 8) &&
	         strncmp(sigtext, "http://", 7) && strncmp(sigtext, "file://", 7))
		yamlfile_error(f, sig, "signature must be a https://, http:// or file:// URL (got '%s')",
		               sigtext);
	o->signature = sigtext ? xstrdup(sigtext) : NULL;
}

/* Values reach build steps through the shell: only characters that mean nothing to it. */
static bool safe_value(const char *s)
{
	for (; *s; s++)
		if (!isalnum((unsigned char)*s) && !strchr("-_=.,/+:@% ", *s))
			return false;
	return true;
}

#define TOOL_NAMES "cc, cxx, cpp, ar, ranlib, nm, objcopy, objdump, strip, readelf, ld"

const char *recipes_patch_set(const struct target *t, const char *name)
{
	for (size_t i = 0; i + 1 < t->patch_sets.n; i += 2)
		if (strcmp(t->patch_sets.v[i], name) == 0)
			return t->patch_sets.v[i + 1];
	return NULL;
}

const char *recipes_unsupported(struct recipes *r, const struct stage *s, const struct target *t)
{
	for (size_t i = 0; i < s->sources.n; i++)
		if (recipes_patch_set(t, s->sources.v[i]))
			return NULL;
	size_t arch = strcspn(t->triple, "-");
	for (size_t i = 0; i + 1 < s->unsupported.n; i += 2) {
		const char *a = s->unsupported.v[i];
		if (strlen(a) != arch || strncmp(a, t->triple, arch) != 0)
			continue;
		for (size_t j = 0; j + 1 < s->unsupported_fixed_in.n; j += 2)
			if (strcmp(s->unsupported_fixed_in.v[j], a) == 0 && s->sources.n > 0) {
				struct source *src = recipes_source_for(r, t, s->sources.v[0], NULL);
				/* strverscmp: 9.0 < 19.1.7 < 21 (a missing source was reported already) */
				if (!src || !src->version
				    || strverscmp(src->version, s->unsupported_fixed_in.v[j + 1]) >= 0)
					return NULL;
			}
		return s->unsupported.v[i + 1];
	}
	return NULL;
}

struct source *recipes_source_for(struct recipes *r, const struct target *t, const char *name,
                                  const struct location *from)
{
	for (size_t i = 0; i + 1 < t->versions.n; i += 2)
		if (strcmp(t->versions.v[i], name) == 0) {
			char *id = xasprintf("%s-%s", name, t->versions.v[i + 1]);
			struct source *s = recipes_source(r, id, &t->versions_at);
			free(id);
			return s;
		}
	return recipes_source(r, name, from);
}

const char *recipes_substitute(const struct target *t, const char *name)
{
	for (size_t i = 0; i + 1 < t->substitute.n; i += 2)
		if (strcmp(t->substitute.v[i], name) == 0)
			return t->substitute.v[i + 1];
	if (strcmp(name, "libc") == 0 && t->libc)
		return t->libc;
	if (strcmp(name, "libc-headers") == 0 && t->libc_headers)
		return t->libc_headers;
	return name;
}

bool recipes_is_role(const char *name)
{
	return strcmp(name, "libc") == 0 || strcmp(name, "libc-headers") == 0;
}

/* The triple's operating system: arch-vendor-os[-abi]'s third part, or a two-part triple's
 * second */
static const char *triple_os(const struct target *t)
{
	const char *os = strchr(t->triple, '-');
	const char *third = os ? strchr(os + 1, '-') : NULL;
	return third ? third + 1 : os ? os + 1 : t->triple;
}

const char *recipes_system(const struct target *t)
{
	/* bare metal: "none" as the OS (armv7em-unknown-none-eabihf) or, in the short form
	 * arm-none-eabi, as the vendor */
	size_t n = strlen(t->triple);
	bool none = strstr(t->triple, "-none-") || (n >= 5 && strcmp(t->triple + n - 5, "-none") == 0);
	const char *os = triple_os(t);
	if (strncmp(os, "windows", 7) == 0 || strncmp(os, "mingw32", 7) == 0)
		return "Windows";
	return strncmp(os, "wasi", 4) == 0 ? "WASI" : none ? "Generic" : "Linux";
}

/* Each system crossroot builds for: CMake's name, Meson's, and its programs' object format */
static const struct {
	const char *cmake, *meson, *object_format;
} systems[] = {
	{"Linux", "linux", "elf"}, {"WASI", "wasi", "wasm"}, {"Windows", "windows", "coff"},
	{"Generic", "none", "elf"},
};

static size_t system_index(const char *cmake_name)
{
	for (size_t i = 0; i < sizeof(systems) / sizeof(systems[0]); i++)
		if (strcmp(systems[i].cmake, cmake_name) == 0)
			return i;
	return 0;
}

bool recipes_is_system(const char *name)
{
	return strcmp(systems[system_index(name)].cmake, name) == 0;
}

const char *recipes_meson_system(const struct target *t)
{
	return systems[system_index(recipes_system(t))].meson;
}

const char *recipes_object_format(const struct target *t)
{
	return systems[system_index(recipes_system(t))].object_format;
}

const char *const *recipes_windows_machine(const struct target *t)
{
	static const char *const machines[][3] = {
		{"x86_64", "i386:x86-64", "i386pep"}, {"x86", "i386", "i386pe"},
		{"aarch64", "arm64", "arm64pe"}, {"arm", "arm", "thumb2pe"},
	};
	for (size_t i = 0; i < sizeof(machines) / sizeof(machines[0]); i++)
		if (t->cpu_family && strcmp(t->cpu_family, machines[i][0]) == 0)
			return machines[i] + 1;
	return NULL;
}

/* What a platform may lack, each a word test programs require: threads (pthreads, C11 and
 * C++ threads), dlopen (shared objects loaded at run time), exceptions (C++ throw and catch),
 * fenv (fesetround's four rounding modes and the exception flags), signals (raise, sigaction
 * and their handlers), processes (fork, exec, wait), elf (ELF executables: program headers,
 * PT_INTERP, static-PIE), files (a file system with directories: std::filesystem, and the
 * C++ file streams, which libc++ builds only with it), posix (the interfaces of POSIX and the
 * Unix C libraries beyond ISO C: iconv, gmtime_r, wcwidth, <arpa/inet.h>, a 32-bit wchar_t;
 * Windows' C runtime has none of them) */
const char recipes_capabilities[] = "threads, dlopen, exceptions, fenv, signals, processes, elf, "
                                    "files, posix";

bool recipes_is_capability(const char *name)
{
	size_t n = strlen(name);
	for (const char *word = recipes_capabilities; *word; word += strspn(word, ", ")) {
		size_t len = strcspn(word, ",");
		if (len == n && strncmp(word, name, n) == 0)
			return true;
		word += len;
	}
	return false;
}

bool recipes_is_llvm_dir(const char *name)
{
	return strcmp(name, "llvm_bin") == 0 || strcmp(name, "clang_resource_dir") == 0;
}

bool recipes_is_emulator_dir(const char *name)
{
	return strcmp(name, "qemu_user_dir") == 0 || strcmp(name, "qemu_system_dir") == 0;
}

struct source *recipes_source_view(struct recipes *r, struct source *src, const struct stage *s)
{
	if (!s->has_extract)
		return src;
	char *id = xasprintf("%s/%s", src->id, s->name);   /* no file is named so */
	for (size_t i = 0; i < r->n_sources; i++)
		if (strcmp(r->sources[i]->id, id) == 0) {
			free(id);
			return r->sources[i];
		}
	struct source *v = xmalloc(sizeof(*v));
	*v = *src;
	v->base = src;
	v->id = id;
	v->extract = (struct strlist){0};
	for (size_t i = 0; i < s->extract.n; i++)
		strlist_add(&v->extract, s->extract.v[i]);
	r->sources = xrealloc(r->sources, (r->n_sources + 1) * sizeof(*r->sources));
	r->sources[r->n_sources++] = v;
	return v;
}

bool recipes_is_tool(const char *name)
{
	static const char *const tools[] = {"cc", "cxx", "cpp", "ar", "ranlib", "nm", "objcopy",
	                                    "objdump", "strip", "readelf", "ld", "dlltool",
	                                    "windres", NULL};
	for (size_t i = 0; tools[i]; i++)
		if (strcmp(name, tools[i]) == 0)
			return true;
	return false;
}

bool recipes_reserved_variable(const char *name)
{
	static const char *const engine[] = {
		"target", "triple", "target_cflags", "cflags", "jobs", "prefix", "src", "build",
		"destdir", "sysroot", "tools", "resource_dir", "cc", "cxx", "cpp", "clang", "clangxx",
		"clang_resource_dir", "clang_version", "llvm_bin", "ar", "ranlib", "nm", "objcopy",
		"objdump", "strip", "readelf", "ld", "dlltool", "windres", "host_cc", "host_cxx", "host_gcc", "host_gxx",
		"cmake_toolchain",
		"cmake_shared", "configure_shared", "linux_arch", "cpu_family", "cpu", "endian", "libc", "qemu",
		"debug_flag", NULL};
	for (size_t i = 0; engine[i]; i++)
		if (strcmp(name, engine[i]) == 0)
			return true;
	return false;
}

static void hash_list(struct digest *d, const char *label, const struct strlist *l)
{
	char count[32];
	snprintf(count, sizeof(count), "%s %zu", label, l->n);
	digest_update_string(d, count);
	for (size_t i = 0; i < l->n; i++)
		digest_update_string(d, l->v[i]);
}

/* A `vars` map - a target's values, a stage's defaults for them: names a step says as
 * ${name}, values the shell takes literally. */
static void read_vars(struct yamlfile *f, yaml_node_t *root, const char *not_reserved,
                      struct strlist *vars)
{
	yaml_node_t *node = yamlfile_get(f, root, "vars");
	yamlfile_string_map(f, node, "vars", vars);
	for (size_t i = 0; i < vars->n; i += 2) {
		for (const char *c = vars->v[i]; *c; c++)
			if (!isalnum((unsigned char)*c) && *c != '_') {
				yamlfile_error(f, node, "variable name '%s' may hold only letters, digits and _",
				               vars->v[i]);
				break;
			}
		if (recipes_reserved_variable(vars->v[i]))
			yamlfile_error(f, node, "variable '%s' is set by crossroot; %s%s", vars->v[i],
			               not_reserved, strcmp(vars->v[i], "linux_arch") == 0 ?
			               " (use the target's 'linux_arch' key)" : "");
		if (!safe_value(vars->v[i + 1]))
			yamlfile_error(f, node, "value of '%s' holds a character the shell would interpret "
			               "(allowed: letters, digits, space and -_=.,/+:@%%)", vars->v[i]);
	}
}

/* The parsed recipe, field by field: what the build does, not how the file is laid out. */
static void stage_hash(struct stage *s)
{
	struct digest d;
	digest_init(&d);
	digest_update_string(&d, "stage 1");
	digest_update_string(&d, s->name);
	hash_list(&d, "sources", &s->sources);
	hash_list(&d, "depends", &s->depends);
	if (s->arch_depends.n)
		hash_list(&d, "arch_depends", &s->arch_depends);
	if (s->shared_depends.n)
		hash_list(&d, "shared_depends", &s->shared_depends);
	if (s->brings.n)
		hash_list(&d, "brings", &s->brings);
	hash_list(&d, "provides", &s->provides);
	/* hashed only when given, so adding these keys left the other recipes' keys alone */
	if (s->has_toolchain)
		hash_list(&d, "toolchain", &s->toolchain);
	if (s->supersedes.n)
		hash_list(&d, "supersedes", &s->supersedes);
	if (s->split_debug)
		digest_update_string(&d, "debug split");
	if (s->has_machine)
		hash_list(&d, "machine", &s->machine);
	if (s->has_extract)
		hash_list(&d, "extract", &s->extract);
	if (s->vars.n)
		hash_list(&d, "vars", &s->vars);
	digest_update_string(&d, s->exclusive ? "exclusive" : "shared");
	digest_update_string(&d, s->installs == INSTALLS_TOOLS ? "tools" : "sysroot");
	char count[32];
	snprintf(count, sizeof(count), "steps %zu", s->n_steps);
	digest_update_string(&d, count);
	for (size_t i = 0; i < s->n_steps; i++)
		digest_update_string(&d, s->steps[i].command);
	digest_final(&d, s->recipe_hash);
}

struct source *recipes_source(struct recipes *r, const char *id, const struct location *from)
{
	for (size_t i = 0; i < r->n_sources; i++)
		if (strcmp(r->sources[i]->id, id) == 0)
			return r->sources[i];
	static const char *const allowed[] = {"name", "version", "description", "origins",
	                                      "extract", "exclude", "strip", "keyring", "member",
	                                      "member-sha256", NULL};
	static const char *const required[] = {"name", "version", "origins", NULL};
	struct yamlfile f;
	if (open_recipe(&f, r, "sources", "source", id, from) < 0) {
		yamlfile_release(&f);
		return NULL;
	}
	yaml_node_t *root = yamlfile_root(&f);
	struct source *s = xcalloc(1, sizeof(*s));
	s->id = xstrdup(id);
	s->path = xstrdup(f.path);
	s->strip = 1;
	yamlfile_check_keys(&f, root, allowed, required);
	s->name = yamlfile_get(&f, root, "name") ? scalar_copy(&f, root, "name") : NULL;
	if (!s->name)
		s->name = xstrdup(id);
	s->version = scalar_copy(&f, root, "version");
	if (s->version && !valid_name(s->version))
		yamlfile_error(&f, yamlfile_get(&f, root, "version"), "invalid version '%s'", s->version);
	/* sources/musl.yaml is musl; sources/musl-1.2.5.yaml must be musl at version 1.2.5 */
	char *versioned = s->name && s->version ? xasprintf("%s-%s", s->name, s->version) : NULL;
	if (s->name && strcmp(s->name, id) != 0 && (!versioned || strcmp(versioned, id) != 0))
		yamlfile_error(&f, yamlfile_get(&f, root, "name"), "name '%s' and version '%s' do not "
		               "match the file name '%s' (sources/NAME.yaml, or NAME-VERSION.yaml for "
		               "a version a target chooses)", s->name, s->version ? s->version : "",
		               id);
	free(versioned);
	yaml_node_t **items;
	size_t n;
	if (yamlfile_sequence(&f, yamlfile_get(&f, root, "origins"), "origins", &items, &n) == 0) {
		if (n == 0 && yamlfile_get(&f, root, "origins"))
			yamlfile_error(&f, yamlfile_get(&f, root, "origins"), "origins must not be empty");
		s->origins = xcalloc(n, sizeof(*s->origins));
		s->n_origins = n;
		for (size_t i = 0; i < n; i++)
			load_origin(&f, items[i], &s->origins[i], s->path);
		free(items);
	}
	yamlfile_strings(&f, yamlfile_get(&f, root, "extract"), "extract", &s->extract);
	yamlfile_strings(&f, yamlfile_get(&f, root, "exclude"), "exclude", &s->exclude);
	yaml_node_t *strip = yamlfile_get(&f, root, "strip");
	const char *st = yamlfile_scalar(&f, strip, "strip");
	if (st) {
		char *end;
		long v = strtol(st, &end, 10);
		if (*end || end == st || v < 0 || v > 8)
			yamlfile_error(&f, strip, "strip must be a number from 0 to 8 (got '%s')", st);
		s->strip = (int)v;
	}
	yaml_node_t *keyring = yamlfile_get(&f, root, "keyring");
	const char *kr = yamlfile_scalar(&f, keyring, "keyring");
	if (kr) {
		s->keyring = kr[0] == '/' ? xstrdup(kr) : path_join(r->root, kr);
		if (!path_exists(s->keyring))
			yamlfile_error(&f, keyring, "keyring '%s' does not exist", s->keyring);
	}
	yaml_node_t *member = yamlfile_get(&f, root, "member");
	yaml_node_t *member_sha = yamlfile_get(&f, root, "member-sha256");
	const char *mem = yamlfile_scalar(&f, member, "member");
	const char *mhex = yamlfile_scalar(&f, member_sha, "member-sha256");
	if (!!member != !!member_sha)
		yamlfile_error(&f, member ? member : member_sha, "'member' and 'member-sha256' go "
		               "together: the archive inside the download, and its pin");
	if (mem && (mem[0] == '/' || strstr(mem, "..") || !safe_value(mem) || strchr(mem, ' ')))
		yamlfile_error(&f, member, "member must be a relative path inside the archive (got '%s')",
		               mem);
	else if (mem)
		s->member = xstrdup(mem);
	if (mhex && !digest_is_valid_hex(mhex))
		yamlfile_error(&f, member_sha, "member-sha256 must be 64 lowercase hexadecimal digits "
		               "(got '%s')", mhex);
	else if (mhex)
		memcpy(s->member_sha256, mhex, DIGEST_HEX_LEN + 1);
	for (size_t i = 0; i < s->n_origins; i++) {
		const struct origin *o = &s->origins[i];
		struct location w = o->where;
		if (kr && !o->signature)
			location_error(&w, "this source has a keyring, so every origin needs a "
			               "'signature'"), f.errors++;
		if (!kr && o->signature)
			location_error(&w, "a signature needs a 'keyring' in the source to check it "
			               "against"), f.errors++;
	}
	if (f.errors) {
		yamlfile_release(&f);
		source_free(s);
		return NULL;
	}
	yamlfile_release(&f);
	r->sources = xrealloc(r->sources, (r->n_sources + 1) * sizeof(*r->sources));
	r->sources[r->n_sources++] = s;
	return s;
}

/* The variables that carry facts of the target's machine, and which facts: a stage that
 * lists its facts in `machine:` may use only these of them (NULL: none may, as they carry
 * the target's name or every fact at once). */
static const char *const machine_variables[][2] = {
	{"triple", "triple"}, {"libc", "libc"}, {"target_cflags", "cflags"}, {"cflags", "cflags"},
	{"linux_arch", "linux_arch"}, {"cpu_family", "cpu_family"}, {"cpu", "cpu"},
	{"endian", "endian"}, {"cmake_shared", "static"}, {"configure_shared", "static"},
	{"target", NULL}, {"qemu", NULL}, {"cc", NULL}, {"cxx", NULL}, {"cpp", NULL},
	{"cmake_toolchain", NULL},
};

bool recipes_machine_fact(const char *name)
{
	static const char *const facts[] = {"triple", "cflags", "linux_arch", "cpu_family", "cpu",
	                                    "endian", "static", "libc", NULL};
	for (size_t i = 0; facts[i]; i++)
		if (strcmp(name, facts[i]) == 0)
			return true;
	return false;
}

/* `machine:` names facts, and the steps use no variable that carries another. */
static void check_machine(struct yamlfile *f, yaml_node_t *node, const struct stage *s)
{
	for (size_t i = 0; i < s->machine.n; i++)
		if (!recipes_machine_fact(s->machine.v[i]))   /* (yamlfile_error counts it) */
			yamlfile_error(f, node, "machine lists facts of the target's machine: triple, cflags, "
			               "linux_arch, cpu_family, cpu, endian, static (got '%s')", s->machine.v[i]);
	for (size_t i = 0; i < s->n_steps; i++)
		for (size_t k = 0; k < sizeof(machine_variables) / sizeof(machine_variables[0]); k++) {
			char *ref = xasprintf("${%s}", machine_variables[k][0]);
			const char *fact = machine_variables[k][1];
			if (strstr(s->steps[i].command, ref) && (!fact || !strlist_has(&s->machine, fact))) {
				location_error(&s->steps[i].where, "this step uses %s, which carries %s%s; "
				               "'machine' must list it (its key holds only the facts listed)",
				               ref, fact ? "the target's " : "the whole target",
				               fact ? fact : " (its name or all its facts)");
				f->errors++;
			}
			free(ref);
		}
}

/* `unsupported:` maps an architecture to why the stage cannot build for it: a string, or
 * {why: ..., fixed_in: VERSION} where a later version of the stage's first source can. */
static void parse_unsupported(struct yamlfile *f, yaml_node_t *node, struct stage *s)
{
	if (!node)
		return;
	if (node->type != YAML_MAPPING_NODE) {
		yamlfile_error(f, node, "'unsupported' must map architectures to reasons");
		return;
	}
	for (size_t i = 0; i < yamlfile_map_size(node); i++) {
		yaml_node_t *key = yamlfile_map_key(f, node, i), *value = yamlfile_map_value(f, node, i);
		const char *arch = yamlfile_scalar(f, key, "unsupported");
		if (!arch || !value)
			continue;
		if (!valid_name(arch) || strchr(arch, '-'))
			yamlfile_error(f, key, "'%s' is not an architecture (the first part of a "
			               "triple, like s390x)", arch);
		const char *why = NULL;
		if (value->type == YAML_MAPPING_NODE) {
			static const char *const keys[] = {"why", "fixed_in", NULL};
			yamlfile_check_keys(f, value, keys, keys);
			yaml_node_t *w = yamlfile_get(f, value, "why");
			yaml_node_t *fixed = yamlfile_get(f, value, "fixed_in");
			why = w ? yamlfile_scalar(f, w, "why") : NULL;
			const char *version = fixed ? yamlfile_scalar(f, fixed, "fixed_in") : NULL;
			if (version && !safe_value(version))
				yamlfile_error(f, fixed, "'%s' is not a version", version);
			else if (version) {
				strlist_add(&s->unsupported_fixed_in, arch);
				strlist_add(&s->unsupported_fixed_in, version);
			}
		} else {
			why = yamlfile_scalar(f, value, "unsupported");
		}
		if (why) {
			strlist_add(&s->unsupported, arch);
			strlist_add(&s->unsupported, why);
		}
	}
}

struct stage *recipes_stage(struct recipes *r, const char *name, const struct location *from)
{
	for (size_t i = 0; i < r->n_stages; i++)
		if (strcmp(r->stages[i]->name, name) == 0)
			return r->stages[i];
	static const char *const allowed[] = {"name", "description", "sources", "depends",
	                                      "steps", "exclusive", "installs", "provides",
	                                      "unsupported", "toolchain", "supersedes", "debug",
	                                      "machine", "vars", "extract", "resume", "extra",
	                                      "arch_depends", "shared_depends", "brings", "chroot", NULL};
	static const char *const required[] = {"steps", NULL};   /* the name is the file's */
	struct yamlfile f;
	if (open_recipe(&f, r, "stages", "stage", name, from) < 0) {
		yamlfile_release(&f);
		return NULL;
	}
	yaml_node_t *root = yamlfile_root(&f);
	struct stage *s = xcalloc(1, sizeof(*s));
	s->name = xstrdup(name);
	s->path = xstrdup(f.path);
	s->text = xstrdup(f.text);
	yamlfile_check_keys(&f, root, allowed, required);
	check_name(&f, root, name);
	if (yamlfile_get(&f, root, "description"))
		s->description = scalar_copy(&f, root, "description");
	yaml_node_t *exclusive = yamlfile_get(&f, root, "exclusive");
	const char *ex = yamlfile_scalar(&f, exclusive, "exclusive");
	if (ex && strcmp(ex, "true") && strcmp(ex, "false"))
		yamlfile_error(&f, exclusive, "exclusive must be true or false (got '%s')", ex);
	s->exclusive = ex && strcmp(ex, "true") == 0;
	/* not in the key: it says how an interrupted build goes on, not what it makes */
	yaml_node_t *resume = yamlfile_get(&f, root, "resume");
	const char *re = yamlfile_scalar(&f, resume, "resume");
	if (re && strcmp(re, "true") && strcmp(re, "false"))
		yamlfile_error(&f, resume, "resume must be true or false (got '%s')", re);
	s->resume = re && strcmp(re, "true") == 0;
	/* not in the key either: how the steps may run, not what they make */
	yaml_node_t *chroot = yamlfile_get(&f, root, "chroot");
	const char *ch = yamlfile_scalar(&f, chroot, "chroot");
	if (ch && strcmp(ch, "true") && strcmp(ch, "false"))
		yamlfile_error(&f, chroot, "chroot must be true or false (got '%s')", ch);
	s->chroot = ch && strcmp(ch, "true") == 0;
	yaml_node_t *debug = yamlfile_get(&f, root, "debug");
	const char *dbg = yamlfile_scalar(&f, debug, "debug");
	if (dbg && strcmp(dbg, "split") && strcmp(dbg, "keep"))
		yamlfile_error(&f, debug, "debug must be 'split' (into usr/lib/debug) or 'keep' "
		               "(got '%s')", dbg);
	s->split_debug = dbg && strcmp(dbg, "split") == 0;
	/* not in the recipe's hash: it says whether a static-only build wants the stage, not how
	 * the stage is built */
	yaml_node_t *extra = yamlfile_get(&f, root, "extra");
	const char *xv = yamlfile_scalar(&f, extra, "extra");
	if (xv && strcmp(xv, "true") && strcmp(xv, "false"))
		yamlfile_error(&f, extra, "extra must be true or false (got '%s')", xv);
	s->extra = xv && strcmp(xv, "true") == 0;
	yaml_node_t *installs = yamlfile_get(&f, root, "installs");
	const char *in = yamlfile_scalar(&f, installs, "installs");
	if (in && strcmp(in, "sysroot") && strcmp(in, "tools"))
		yamlfile_error(&f, installs, "installs must be 'sysroot' or 'tools' (got '%s')", in);
	s->installs = in && strcmp(in, "tools") == 0 ? INSTALLS_TOOLS : INSTALLS_SYSROOT;
	yaml_node_t *provides = yamlfile_get(&f, root, "provides");
	yamlfile_string_map(&f, provides, "provides", &s->provides);
	if (provides && s->installs != INSTALLS_TOOLS)
		yamlfile_error(&f, provides, "only a stage with 'installs: tools' provides tools");
	for (size_t i = 0; i + 1 < s->provides.n; i += 2) {
		if (!recipes_is_tool(s->provides.v[i]) && !recipes_is_llvm_dir(s->provides.v[i]) &&
		    !recipes_is_emulator_dir(s->provides.v[i]))
			yamlfile_error(&f, provides, "unknown tool '%s' (tools: %s; directories: "
			               "llvm_bin, clang_resource_dir, qemu_user_dir, qemu_system_dir)",
			               s->provides.v[i], TOOL_NAMES);
		/* ${triple} (GCC names its drivers by it) and ${major} (the major version of the
		 * stage's first source: clang names its resource directory by it) are the variables
		 * a path may hold */
		char *rel = xstrdup(s->provides.v[i + 1]);
		for (char *v; (v = strstr(rel, "${triple}"));)
			memmove(v, v + 9, strlen(v + 9) + 1);
		for (char *v; (v = strstr(rel, "${major}"));)
			memmove(v, v + 8, strlen(v + 8) + 1);
		bool bad = rel[0] == '/' || strstr(rel, "..") || !safe_value(rel);
		free(rel);
		if (bad)
			yamlfile_error(&f, provides, "tool '%s' must be a path inside the stage's prefix "
			               "(got '%s')", s->provides.v[i], s->provides.v[i + 1]);
	}
	yaml_node_t *unsupported = yamlfile_get(&f, root, "unsupported");
	parse_unsupported(&f, unsupported, s);
	if (unsupported)
		s->unsupported_where = location_of(&f, s->path, unsupported);
	yaml_node_t *sources = yamlfile_get(&f, root, "sources");
	yaml_node_t *depends = yamlfile_get(&f, root, "depends");
	yaml_node_t *toolchain = yamlfile_get(&f, root, "toolchain");
	yamlfile_strings(&f, sources, "sources", &s->sources);
	yamlfile_strings(&f, depends, "depends", &s->depends);
	yaml_node_t *arch_depends = yamlfile_get(&f, root, "arch_depends");
	yamlfile_string_map(&f, arch_depends, "arch_depends", &s->arch_depends);
	for (size_t i = 0; i + 1 < s->arch_depends.n; i += 2)
		if (!valid_name(s->arch_depends.v[i]) || strchr(s->arch_depends.v[i], '-'))
			yamlfile_error(&f, arch_depends, "'%s' is not an architecture (the first part of a "
			               "triple, like riscv64)", s->arch_depends.v[i]);
	yamlfile_strings(&f, yamlfile_get(&f, root, "shared_depends"), "shared_depends",
	                 &s->shared_depends);
	yamlfile_strings(&f, yamlfile_get(&f, root, "brings"), "brings", &s->brings);
	yamlfile_strings(&f, toolchain, "toolchain", &s->toolchain);
	s->has_toolchain = toolchain != NULL;
	if (toolchain && s->installs == INSTALLS_TOOLS)
		yamlfile_error(&f, toolchain, "a tools stage is built with the host clang; "
		               "'toolchain' is for sysroot stages");
	yamlfile_strings(&f, yamlfile_get(&f, root, "supersedes"), "supersedes", &s->supersedes);
	yaml_node_t **items;
	size_t n;
	if (yamlfile_sequence(&f, yamlfile_get(&f, root, "steps"), "steps", &items, &n) == 0) {
		s->steps = xcalloc(n, sizeof(*s->steps));
		for (size_t i = 0; i < n; i++) {
			const char *cmd = yamlfile_scalar(&f, items[i], "steps");
			if (!cmd)
				continue;
			struct step *st = &s->steps[s->n_steps++];
			st->command = xstrdup(cmd);
			st->where = location_of(&f, s->path, items[i]);
		}
		free(items);
	}
	yaml_node_t *machine = yamlfile_get(&f, root, "machine");
	yamlfile_strings(&f, machine, "machine", &s->machine);
	s->has_machine = machine != NULL;
	if (machine)
		check_machine(&f, machine, s);
	yaml_node_t *extract = yamlfile_get(&f, root, "extract");
	yamlfile_strings(&f, extract, "extract", &s->extract);
	s->has_extract = extract != NULL;
	if (extract && !sources)
		yamlfile_error(&f, extract, "'extract' names parts of the stage's first source, and "
		               "it has none");
	read_vars(&f, root, "a recipe cannot give it a default", &s->vars);
	stage_hash(s);
	/* Resolve what this stage names, reporting at the mention. */
	struct location mention = sources ? location_of(&f, s->path, sources) : (struct location){0};
	int errors = f.errors;
	for (size_t i = 0; i < s->sources.n && !errors; i++)
		if (!recipes_source(r, s->sources.v[i], &mention))
			errors++;
	if (errors) {
		yamlfile_release(&f);
		stage_free(s);
		return NULL;
	}
	struct location dep_mention = depends ? location_of(&f, s->path, depends) : mention;
	yamlfile_release(&f);
	/* Register before resolving dependencies so a cycle ends instead of recursing. */
	r->stages = xrealloc(r->stages, (r->n_stages + 1) * sizeof(*r->stages));
	r->stages[r->n_stages++] = s;
	struct strlist all = {0};
	recipes_stage_depends(s, NULL, &all);
	for (size_t i = 0; i < all.n; i++)
		if (!recipes_is_role(all.v[i]) && !recipes_stage(r, all.v[i], &dep_mention)) {
			strlist_release(&all);
			return NULL;
		}
	strlist_release(&all);
	for (size_t i = 0; i < s->toolchain.n; i++) {
		struct stage *tc = recipes_stage(r, s->toolchain.v[i], &dep_mention);
		if (!tc)
			return NULL;
		if (tc->installs != INSTALLS_TOOLS) {
			location_error(&dep_mention, "toolchain stage '%s' must say 'installs: tools'",
			               tc->name);
			return NULL;
		}
	}
	return s;
}

struct target *recipes_target(struct recipes *r, const char *name)
{
	for (size_t i = 0; i < r->n_targets; i++)
		if (strcmp(r->targets[i]->name, name) == 0)
			return r->targets[i];
	static const char *const allowed[] = {"description", "triple", "runner", "qemu", "cflags",
	                                      "driver_cflags", "driver_cxxflags", "stages",
	                                      "vars", "toolchain", "linux_arch", "cpu_family", "cpu",
	                                      "endian", "static", "stage_toolchain", "substitute",
	                                      "qemu_cpu", "versions", "patches", "libc", "with",
	                                      "lacks", "qemu_machine", "emulator", NULL};
	static const char *const required[] = {"triple", "stages", NULL};
	struct yamlfile f;
	if (open_recipe(&f, r, "targets", "target", name, NULL) < 0) {
		yamlfile_release(&f);
		return NULL;
	}
	yaml_node_t *root = yamlfile_root(&f);
	struct target *t = xcalloc(1, sizeof(*t));
	t->name = xstrdup(name);
	t->path = xstrdup(f.path);
	t->text = xstrdup(f.text);
	yamlfile_check_keys(&f, root, allowed, required);
	if (yamlfile_get(&f, root, "description"))
		t->description = scalar_copy(&f, root, "description");
	t->triple = scalar_copy(&f, root, "triple");
	yaml_node_t *runner = yamlfile_get(&f, root, "runner");
	const char *runner_name = runner ? yamlfile_scalar(&f, runner, "runner") : "qemu-user";
	if (runner_name && strcmp(runner_name, "wasi") == 0)
		t->runner = RUNNER_WASI;
	else if (runner_name && strcmp(runner_name, "semihosting") == 0)
		t->runner = RUNNER_SEMIHOSTING;
	else if (runner_name && strcmp(runner_name, "wine") == 0)
		t->runner = RUNNER_WINE;
	else if (runner_name && strcmp(runner_name, "none") == 0)
		t->runner = RUNNER_NONE;
	else if (runner_name && strcmp(runner_name, "qemu-user") != 0)
		yamlfile_error(&f, runner, "runner must be qemu-user (Linux programs, the default), "
		               "wasi (WebAssembly programs under Node.js), semihosting (bare-metal "
		               "programs on a qemu-system board), wine (Windows programs) or none "
		               "(built and linked, never run) (got '%s')",
		               runner_name);
	yaml_node_t *qemu = yamlfile_get(&f, root, "qemu");
	yaml_node_t *qemu_cpu = yamlfile_get(&f, root, "qemu_cpu");
	yaml_node_t *machine = yamlfile_get(&f, root, "qemu_machine");
	if (t->runner == RUNNER_QEMU_USER && !qemu)
		yamlfile_error(&f, root, "missing 'qemu': the qemu-user binary that runs the target's "
		               "programs (runner qemu-user)");
	else if (t->runner == RUNNER_SEMIHOSTING && (!qemu || !machine))
		yamlfile_error(&f, root, "missing '%s': runner semihosting runs programs on a "
		               "qemu-system board (qemu: the qemu-system binary, qemu_machine: its -M)",
		               qemu ? "qemu_machine" : "qemu");
	else if ((t->runner == RUNNER_WASI || t->runner == RUNNER_WINE || t->runner == RUNNER_NONE) &&
	         (qemu || qemu_cpu))
		yamlfile_error(&f, qemu ? qemu : qemu_cpu, "qemu and qemu_cpu are for runners "
		               "qemu-user and semihosting; this target's runner is %s", runner_name);
	if (machine && t->runner != RUNNER_SEMIHOSTING)
		yamlfile_error(&f, machine, "qemu_machine is for runner semihosting (a qemu-system "
		               "board); this target's runner is %s", runner_name);
	else if (machine) {
		t->qemu_machine = scalar_copy(&f, root, "qemu_machine");
		if (t->qemu_machine && !valid_name(t->qemu_machine))
			yamlfile_error(&f, machine, "qemu_machine must be a board name of qemu-system's -M "
			               "(got '%s')", t->qemu_machine);
	}
	if (qemu)
		t->qemu = scalar_copy(&f, root, "qemu");
	yaml_node_t *emulator = yamlfile_get(&f, root, "emulator");
	if (emulator && t->runner != RUNNER_QEMU_USER)
		yamlfile_error(&f, emulator, "emulator is for runner qemu-user (a tools stage whose "
		               "qemu-user runs the target's programs); this target's runner is %s",
		               runner_name);
	else if (emulator) {
		t->emulator = scalar_copy(&f, root, "emulator");
		if (t->emulator && !valid_name(t->emulator))
			yamlfile_error(&f, emulator, "emulator names a tools stage, e.g. qemu (got '%s')",
			               t->emulator);
	}
	/* the stage's qemu-user is the target's `qemu` by name, in the stage's directory */
	if (emulator && t->qemu && strchr(t->qemu, '/'))
		yamlfile_error(&f, emulator, "with an emulator stage, qemu names its binary, not a "
		               "path (got '%s')", t->qemu);
	/* it is written into run wrappers and Meson cross files, and run through a shell */
	if (t->qemu && (!*t->qemu || shell_unsafe_char(t->qemu)))
		yamlfile_error(&f, qemu,
		               "qemu must be a program name or path of letters, digits and "
		               "/._+-,=:@%% (got '%s')", t->qemu);
	yaml_node_t *lacks = yamlfile_get(&f, root, "lacks");
	yamlfile_strings(&f, lacks, "lacks", &t->lacks);
	for (size_t i = 0; i < t->lacks.n; i++)
		if (!recipes_is_capability(t->lacks.v[i]))
			yamlfile_error(&f, lacks, "lacks names what the platform does not have: %s "
			               "(got '%s')", recipes_capabilities, t->lacks.v[i]);
	if (qemu_cpu && (t->runner == RUNNER_QEMU_USER || t->runner == RUNNER_SEMIHOSTING)) {
		t->qemu_cpu = scalar_copy(&f, root, "qemu_cpu");
		if (t->qemu_cpu && !valid_cpu_model(t->qemu_cpu))
			yamlfile_error(&f, yamlfile_get(&f, root, "qemu_cpu"),
			               "qemu_cpu must be a CPU model of qemu's -cpu, with its properties if any "
			               "(cortex-m4, rv32,f=false) (got '%s')", t->qemu_cpu);
	}
	if (yamlfile_get(&f, root, "libc")) {
		t->libc = scalar_copy(&f, root, "libc");
		if (t->libc && (!valid_name(t->libc) || recipes_is_role(t->libc)))
			yamlfile_error(&f, yamlfile_get(&f, root, "libc"),
			               "libc names the stage of the target's C library, e.g. musl or glibc "
			               "(got '%s')", t->libc);
		else if (t->libc)
			t->libc_headers = xasprintf("%s-headers", t->libc);
	}
	if (t->triple && (!valid_name(t->triple) || !strchr(t->triple, '-')))
		yamlfile_error(&f, yamlfile_get(&f, root, "triple"),
		               "triple must look like arch-vendor-os-abi (got '%s')", t->triple);
	static const char *const flag_lists[] = {"cflags", "driver_cflags", "driver_cxxflags"};
	for (size_t k = 0; k < 3; k++) {
		struct strlist *into = k == 0 ? &t->cflags : k == 1 ? &t->driver_cflags
		                                                    : &t->driver_cxxflags;
		yaml_node_t *flags = yamlfile_get(&f, root, flag_lists[k]);
		yamlfile_strings(&f, flags, flag_lists[k], into);
		for (size_t i = 0; i < into->n; i++)
			if (!safe_value(into->v[i]))
				yamlfile_error(&f, flags, "flag '%s' holds a character the shell would "
				               "interpret (allowed: letters, digits and -_=.,/+:@%%)",
				               into->v[i]);
	}
	yaml_node_t *toolchain = yamlfile_get(&f, root, "toolchain");
	yamlfile_strings(&f, toolchain, "toolchain", &t->toolchain);
	yaml_node_t *stage_toolchain = yamlfile_get(&f, root, "stage_toolchain");
	yamlfile_string_map(&f, stage_toolchain, "stage_toolchain", &t->stage_toolchain);
	yaml_node_t *substitute = yamlfile_get(&f, root, "substitute");
	yamlfile_string_map(&f, substitute, "substitute", &t->substitute);
	yaml_node_t *versions = yamlfile_get(&f, root, "versions");
	yamlfile_string_map(&f, versions, "versions", &t->versions);
	for (size_t i = 0; i + 1 < t->versions.n; i += 2)
		if (!valid_name(t->versions.v[i]) || !valid_name(t->versions.v[i + 1]))
			yamlfile_error(&f, versions, "versions maps a source to a version, e.g. "
			               "'{musl: 1.2.5}' (got '%s: %s')", t->versions.v[i], t->versions.v[i + 1]);
	yaml_node_t *patch_sets = yamlfile_get(&f, root, "patches");
	yamlfile_string_map(&f, patch_sets, "patches", &t->patch_sets);
	for (size_t i = 0; i + 1 < t->patch_sets.n; i += 2)
		if (!valid_name(t->patch_sets.v[i]) || !valid_name(t->patch_sets.v[i + 1]))
			yamlfile_error(&f, patch_sets, "patches maps a source to a patch set, a directory "
			               "under patches/<source>/<version>/, e.g. '{llvm-project: "
			               "builtins-more-arches}' (got '%s: %s')", t->patch_sets.v[i],
			               t->patch_sets.v[i + 1]);
	/* Architecture facts: cpu and cpu_family default to the triple's first part. */
	char *arch = t->triple ? xstrndup(t->triple, strcspn(t->triple, "-")) : xstrdup("unknown");
	t->linux_arch = yamlfile_get(&f, root, "linux_arch") ? scalar_copy(&f, root, "linux_arch") : NULL;
	t->cpu = yamlfile_get(&f, root, "cpu") ? scalar_copy(&f, root, "cpu") : xstrdup(arch);
	t->cpu_family = yamlfile_get(&f, root, "cpu_family") ? scalar_copy(&f, root, "cpu_family")
	                                                      : xstrdup(arch);
	t->endian = yamlfile_get(&f, root, "endian") ? scalar_copy(&f, root, "endian")
	                                              : xstrdup("little");
	free(arch);
	const char *facts[] = {"linux_arch", "cpu", "cpu_family", "endian"};
	char *values[] = {t->linux_arch, t->cpu, t->cpu_family, t->endian};
	for (size_t i = 0; i < 4; i++)
		if (values[i] && (!valid_name(values[i]) || !safe_value(values[i])))
			yamlfile_error(&f, yamlfile_get(&f, root, facts[i]), "invalid %s '%s'", facts[i],
			               values[i]);
	if (t->endian && strcmp(t->endian, "little") && strcmp(t->endian, "big"))
		yamlfile_error(&f, yamlfile_get(&f, root, "endian"), "endian must be little or big "
		               "(got '%s')", t->endian);
	/* Windows: its tools know these machines (dlltool's -m, lld's PE emulations), and wine
	 * runs nothing else */
	bool windows = t->triple && strcmp(recipes_system(t), "Windows") == 0;
	if (windows && !recipes_windows_machine(t))
		yamlfile_error(&f, yamlfile_get(&f, root, "cpu_family") ? yamlfile_get(&f, root, "cpu_family")
		               : root, "a Windows target's cpu_family is x86_64, x86, aarch64 or arm "
		               "(got '%s')", t->cpu_family ? t->cpu_family : "");
	if (t->runner == RUNNER_WINE && t->triple && !windows)
		yamlfile_error(&f, runner, "runner wine runs Windows programs, and the triple '%s' is "
		               "not Windows' (x86_64-w64-windows-gnu, i686-w64-windows-gnu)", t->triple);
	yaml_node_t *st = yamlfile_get(&f, root, "static");
	const char *stv = yamlfile_scalar(&f, st, "static");
	if (stv && strcmp(stv, "true") && strcmp(stv, "false"))
		yamlfile_error(&f, st, "static must be true or false (got '%s')", stv);
	t->static_only = stv && strcmp(stv, "true") == 0;
	yaml_node_t *with = yamlfile_get(&f, root, "with");
	yamlfile_strings(&f, with, "with", &t->with);   /* checked once its stages are loaded */
	yaml_node_t *stages = yamlfile_get(&f, root, "stages");
	yamlfile_strings(&f, stages, "stages", &t->stages);
	if (stages && t->stages.n == 0)
		yamlfile_error(&f, stages, "stages must name at least one stage");
	read_vars(&f, root, "a target cannot override it", &t->vars);
	if (f.errors) {
		yamlfile_release(&f);
		target_free(t);
		return NULL;
	}
	struct location mention = location_of(&f, t->path, stages);
	t->with_at = with ? location_of(&f, t->path, with) : mention;
	struct location sub_mention = substitute ? location_of(&f, t->path, substitute) : mention;
	yaml_node_t *libc = yamlfile_get(&f, root, "libc");
	struct location libc_mention = libc ? location_of(&f, t->path, libc) : mention;
	struct location tc_mention = stage_toolchain ? location_of(&f, t->path, stage_toolchain)
	                                             : mention;
	struct location ver_mention = versions ? location_of(&f, t->path, versions) : mention;
	yaml_node_t *emulator_node = yamlfile_get(&f, root, "emulator");
	struct location emulator_mention = emulator_node ? location_of(&f, t->path, emulator_node)
	                                                 : mention;
	t->patch_sets_at = patch_sets ? location_of(&f, t->path, patch_sets) : mention;
	yamlfile_release(&f);
	r->targets = xrealloc(r->targets, (r->n_targets + 1) * sizeof(*r->targets));
	r->targets[r->n_targets++] = t;
	for (size_t i = 0; i + 1 < t->substitute.n; i += 2)
		if (!recipes_stage(r, t->substitute.v[i + 1], &sub_mention))
			return NULL;
	for (size_t i = 0; i < t->stages.n; i++)
		if (!recipes_stage(r, recipes_substitute(t, t->stages.v[i]), &mention))
			return NULL;
	if (t->libc && !recipes_stage(r, t->libc, &libc_mention))
		return NULL;
	t->stage_toolchain_at = tc_mention;
	t->versions_at = ver_mention;
	for (size_t i = 0; i + 1 < t->versions.n; i += 2) {
		char *id = xasprintf("%s-%s", t->versions.v[i], t->versions.v[i + 1]);
		struct source *s = recipes_source(r, id, &t->versions_at);
		free(id);
		if (!s)
			return NULL;
		if (strcmp(s->name, t->versions.v[i]) != 0) {
			location_error(&t->versions_at, "'%s' is source '%s', not '%s'", s->path, s->name,
			               t->versions.v[i]);
			return NULL;
		}
	}
	for (size_t i = 0; i + 1 < t->patch_sets.n; i += 2) {
		struct source *s = recipes_source_for(r, t, t->patch_sets.v[i], &t->patch_sets_at);
		if (!s)
			return NULL;
		char *dir = xasprintf("%s/patches/%s/%s/%s", r->root, s->name, s->version,
		                      t->patch_sets.v[i + 1]);
		bool found = is_dir(dir);
		if (!found)
			location_error(&t->patch_sets_at, "patch set '%s' of %s %s: no directory %s",
			               t->patch_sets.v[i + 1], s->name, s->version, dir);
		free(dir);
		if (!found)
			return NULL;
	}
	for (size_t i = 0; i + 1 < t->stage_toolchain.n; i += 2) {
		const char *tc = t->stage_toolchain.v[i + 1];
		if (!recipes_stage(r, t->stage_toolchain.v[i], &tc_mention))
			return NULL;   /* the stage whose compilers are chosen must exist too */
		if (strcmp(tc, "host") == 0)
			continue;
		struct stage *s = recipes_stage(r, tc, &tc_mention);
		if (!s)
			return NULL;
		if (s->installs != INSTALLS_TOOLS) {
			location_error(&tc_mention, "toolchain stage '%s' must say 'installs: tools' "
			               "(or say 'host' for the host clang)", s->name);
			return NULL;
		}
	}
	for (size_t i = 0; i < t->toolchain.n; i++) {
		struct stage *s = recipes_stage(r, t->toolchain.v[i], &mention);
		if (!s)
			return NULL;
		if (s->installs != INSTALLS_TOOLS) {
			location_error(&mention, "toolchain stage '%s' must say 'installs: tools'", s->name);
			return NULL;
		}
	}
	if (t->emulator) {
		struct stage *s = recipes_stage(r, t->emulator, &emulator_mention);
		if (!s)
			return NULL;
		for (size_t i = 0; i + 1 < s->provides.n; i += 2) {
			char **dir = strcmp(s->provides.v[i], "qemu_user_dir") == 0 ? &t->emulator_user_dir
			             : strcmp(s->provides.v[i], "qemu_system_dir") == 0 ? &t->emulator_system_dir
			             : NULL;
			if (dir) {
				free(*dir);
				*dir = xstrdup(s->provides.v[i + 1]);
			}
		}
		if (s->installs != INSTALLS_TOOLS || !t->emulator_user_dir) {
			location_error(&emulator_mention, "emulator stage '%s' must say 'installs: tools' "
			               "and provide qemu_user_dir (the directory of its qemu-user binaries)",
			               s->name);
			return NULL;
		}
	}
	struct strlist with_names = t->with;
	memset(&t->with, 0, sizeof(t->with));
	int added = recipes_add_with(r, t, &with_names, false);
	strlist_release(&with_names);
	return added < 0 ? NULL : t;
}

void recipes_stage_depends(const struct stage *s, const struct target *t, struct strlist *out)
{
	size_t arch = t ? strcspn(t->triple, "-") : 0;
	for (size_t i = 0; i < s->depends.n; i++)
		strlist_add(out, s->depends.v[i]);
	for (size_t i = 0; i + 1 < s->arch_depends.n; i += 2)
		if (!t || (strlen(s->arch_depends.v[i]) == arch &&
		           strncmp(s->arch_depends.v[i], t->triple, arch) == 0))
			strlist_add(out, s->arch_depends.v[i + 1]);
	for (size_t i = 0; i < s->shared_depends.n; i++)
		if (!t || !t->static_only)
			strlist_add(out, s->shared_depends.v[i]);
}

/* Is there a stages/<name>.yaml (loaded or not)? */
static bool recipes_stage_exists(const struct recipes *r, const char *name)
{
	if (!valid_name(name))
		return false;
	char *path = xasprintf("%s/stages/%s.yaml", r->root, name);
	bool exists = path_exists(path);
	free(path);
	return exists;
}

bool recipes_wanted(const struct target *t, const struct stage *s)
{
	return !t->static_only || !s->extra || strlist_has(&t->with, s->name);
}

bool recipes_debug(const struct target *t)
{
	return !t->static_only || strlist_has(&t->with, "debug");
}

int recipes_add_with(struct recipes *r, struct target *t, const struct strlist *names,
                     bool command_line)
{
	for (size_t i = 0; i < names->n; i++) {
		const char *name = names->v[i];
		bool listed = false;
		for (size_t j = 0; j < t->stages.n && !listed; j++)
			listed = strcmp(recipes_substitute(t, t->stages.v[j]), name) == 0;
		struct stage *s = listed ? recipes_stage(r, name, &t->with_at) : NULL;
		if (strcmp(name, "debug") != 0 && !(s && s->extra)) {
			/* --with for several targets: a stage one of them does not list is not its */
			if (command_line && !listed && recipes_stage_exists(r, name))
				continue;
			if (command_line)
				error("--with %s: neither 'debug' nor an extra stage (extra: true) of target "
				      "'%s'", name, t->name);
			else
				location_error(&t->with_at, "with names '%s', which is neither 'debug' nor "
				               "an extra stage (extra: true) that target '%s' lists in its "
				               "stages", name, t->name);
			return -1;
		}
		if (!strlist_has(&t->with, name))
			strlist_add(&t->with, name);
	}
	return 0;
}

int recipes_list_targets(const struct recipes *r, struct strlist *out)
{
	char *dir = path_join(r->root, "targets");
	struct strlist names = {0};
	int rc = list_dir(dir, &names);
	for (size_t i = 0; i < names.n; i++) {
		size_t n = strlen(names.v[i]);
		if (n > 5 && strcmp(names.v[i] + n - 5, ".yaml") == 0)
			strlist_take(out, xstrndup(names.v[i], n - 5));
	}
	strlist_release(&names);
	free(dir);
	return rc;
}
