/* package: deterministic SDK packages with their manifest and SBOM, their verification and
 * comparison. See package.h for the format and what makes the bytes the same. */
#define _GNU_SOURCE
#include "package.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crossfiles.h"
#include "overlay.h"
#include "run.h"
#include "sbom.h"
#include "sysroot.h"
#include "tree.h"
#include "util.h"

#define STAMP_NAME SYSROOT_STAMP

void package_manifest_release(struct package_manifest *m)
{
	for (size_t i = 0; i < m->n; i++) {
		free(m->entries[i].path);
		free(m->entries[i].link);
		free(m->entries[i].from);
		free(m->entries[i].text);
	}
	free(m->entries);
	free(m->target);
	free(m->triple);
	free(m->version);
	free(m->epoch_how);
	free(m->host_bin);
	free(m->host_identity);
	free(m->host_clang);
	free(m->flags);
	strlist_release(&m->sources);
	strlist_release(&m->patches);
	strlist_release(&m->stages);
	tree_manifest_release(&m->overlay);
	memset(m, 0, sizeof(*m));
}

static struct package_entry *add_entry(struct package_manifest *m, char kind, const char *path)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->entries = xrealloc(m->entries, m->cap * sizeof(*m->entries));
	}
	struct package_entry *e = &m->entries[m->n++];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->path = xstrdup(path);
	e->mode = kind == 'l' ? 0777 : 0755;
	return e;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct package_entry *)a)->path, ((const struct package_entry *)b)->path);
}

static unsigned normal_mode(mode_t mode)
{
	return S_ISDIR(mode) || (mode & 0111) ? 0755 : 0644;
}

/* ---- hashing ---- */

/* A mode no sysroot or package holds: set-id, sticky, group or other writable. */
static bool unsafe_mode(mode_t mode)
{
	return (mode & (S_ISUID | S_ISGID | S_ISVTX | S_IWGRP | S_IWOTH)) != 0;
}

static void hash_bytes(const void *data, size_t len, char sha256[DIGEST_HEX_LEN + 1], char sha1[41])
{
	struct digest d;
	digest_init(&d);
	digest_update(&d, data, len);
	digest_final(&d, sha256);
	unsigned char raw[EVP_MAX_MD_SIZE];
	unsigned n = 0;
	EVP_Digest(data, len, raw, &n, EVP_sha1(), NULL);
	for (unsigned i = 0; i < n && i < 20; i++)
		snprintf(sha1 + 2 * i, 3, "%02x", raw[i]);
}

/* An entry's bytes: its generated text, or its file mapped. Release with entry_data_release. */
static void *entry_data(const struct package_entry *e, size_t *len)
{
	if (e->text) {
		*len = strlen(e->text);
		return e->text;
	}
	return map_file(e->from, len);
}

static void entry_data_release(const struct package_entry *e, void *data, size_t len)
{
	if (!e->text)
		unmap_file(data, len);
}

/* ---- what goes in: the sysroot's entries ---- */

static int walk_visit(const struct tree_item *it, void *arg)
{
	struct package_manifest *m = arg;
	if (strcmp(it->path, STAMP_NAME) == 0)
		return TREE_SKIP;
	if (!S_ISLNK(it->st.st_mode) && unsafe_mode(it->st.st_mode)) {
		error("'%s/%s' has mode %o (set-id, sticky, or writable by group or others): a "
		      "package never holds it", it->root, it->path, (unsigned)(it->st.st_mode & 07777));
		return -1;
	}
	if (S_ISDIR(it->st.st_mode)) {
		add_entry(m, 'd', it->path);
	} else if (S_ISREG(it->st.st_mode)) {
		struct package_entry *e = add_entry(m, 'f', it->path);
		e->mode = normal_mode(it->st.st_mode);
		e->from = xasprintf("%s/%s", it->root, it->path);
	} else if (S_ISLNK(it->st.st_mode)) {
		char target[4096];
		if (tree_read_link(it, target, sizeof(target)) < 0)
			return -1;
		add_entry(m, 'l', it->path)->link = xstrdup(target);
	} else {
		error("'%s/%s' is neither a file, a directory nor a link: it cannot be packaged",
		      it->root, it->path);
		return -1;
	}
	return TREE_NEXT;
}

/* The sysroot's entries (tree.h: never through a link). */
static int walk(struct package_manifest *m, const char *root)
{
	return tree_walk(root, NULL, walk_visit, m);
}

/* Hash every file, and find the ones that name a place on the build machine. */
static int hash_entries(struct package_manifest *m, const char *const build_dirs[],
                        const char *host_bin, const char *target)
{
	int rc = 0;
	struct strlist host_users = {0};
	char *wrapper_prefix = xasprintf("bin/%s-", target);
	for (size_t i = 0; i < m->n && rc == 0; i++) {
		struct package_entry *e = &m->entries[i];
		if (e->kind != 'f')
			continue;
		size_t len = 0;
		void *data = entry_data(e, &len);
		if (!data)
			return -1;
		e->size = (long long)len;
		hash_bytes(data, len, e->sha256, e->sha1);
		for (size_t j = 0; build_dirs[j]; j++)
			if (memmem(data, len, build_dirs[j], strlen(build_dirs[j]))) {
				error("'%s' names '%s', a directory of this build: the package would not work "
				      "anywhere else (write paths relative to the sysroot, or find them at run "
				      "time)", e->from ? e->from : e->path, build_dirs[j]);
				rc = -1;
				break;
			}
		if (host_bin && memmem(data, len, host_bin, strlen(host_bin)) &&
		    strncmp(e->path, wrapper_prefix, strlen(wrapper_prefix)) != 0)
			strlist_add(&host_users, e->path);
		entry_data_release(e, data, len);
	}
	if (rc == 0 && host_users.n) {
		struct buf names = {0};
		for (size_t i = 0; i < host_users.n && i < 10; i++)
			buf_printf(&names, "\n  %s", host_users.v[i]);
		warn("%zu packaged files besides the wrappers name the host LLVM '%s' (the package "
		     "needs it at that path):%s%s", host_users.n, host_bin, names.s,
		     host_users.n > 10 ? "\n  ..." : "");
		buf_release(&names);
	}
	free(wrapper_prefix);
	strlist_release(&host_users);
	return rc;
}

/* The overlay's records say what went in: each of its files and links is in the package as
 * recorded (`m`'s entries sorted by path). A difference is an overlay changed since the
 * sysroot was assembled. */
static int check_overlay(const struct package_manifest *m)
{
	for (size_t i = 0; i < m->overlay.n; i++) {
		const struct tree_entry *o = &m->overlay.entries[i];
		struct package_entry key = {.path = o->path};
		const struct package_entry *e = bsearch(&key, m->entries, m->n, sizeof(key), by_path);
		if (o->kind == 'd' || (e && e->kind == o->kind &&
		                       strcmp(o->kind == 'f' ? e->sha256 : e->link, o->value) == 0))
			continue;
		error("the overlay's '%s' is not what the sysroot holds: the overlay changed since the "
		      "sysroot was assembled (package again)", o->path);
		return -1;
	}
	return 0;
}

/* ---- what went in: sources, patches, stages, the compiler, the date ---- */

static void add_line_file(struct strlist *files, const char *path)
{
	if (path && !strlist_has(files, path))
		strlist_add(files, path);
}

/* SOURCE_DATE_EPOCH: see package.h. `inputs` are the recipe files and patches. */
static void choose_epoch(const struct plan *p, const struct strlist *inputs,
                         struct package_manifest *m)
{
	const char *env = getenv("SOURCE_DATE_EPOCH");
	if (env && *env && strspn(env, "0123456789") == strlen(env) && strlen(env) < 12) {
		m->epoch = atoll(env);
		m->epoch_how = xstrdup("SOURCE_DATE_EPOCH of the caller");
		return;
	}
	m->epoch = 1;
	m->epoch_how = xstrdup("1: the inputs have no clean git history");
	size_t n = inputs->n;
	char **status = xcalloc(n + 8, sizeof(char *));
	char **log = xcalloc(n + 10, sizeof(char *));
	const char *status_head[] = {"git", "-C", p->dirs.root, "status", "--porcelain",
	                             "--untracked-files=all", "--"};
	const char *log_head[] = {"git", "-C", p->dirs.root, "log", "-1", "--format=%ct", "--"};
	for (size_t i = 0; i < 7; i++) {
		status[i] = (char *)status_head[i];
		log[i] = (char *)log_head[i];
	}
	for (size_t i = 0; i < n; i++)
		status[7 + i] = log[7 + i] = inputs->v[i];
	struct buf out = {0}, err = {0};
	int st = run_capture(status, &out, &err);
	bool clean = st == 0 && out.len == 0;
	buf_release(&out);
	buf_release(&err);
	if (clean && run_capture(log, &out, &err) == 0 && out.len && isdigit((unsigned char)out.s[0])) {
		m->epoch = atoll(out.s);
		free(m->epoch_how);
		m->epoch_how = xasprintf("the newest git commit of the %zu recipe and patch files", n);
	}
	buf_release(&out);
	buf_release(&err);
	free(status);
	free(log);
}

static char *host_clang_version(const char *bin)
{
	char *clang = path_join(bin, "clang");
	char *argv[] = {clang, "--version", NULL};
	struct buf out = {0}, err = {0};
	int st = run_capture(argv, &out, &err);
	free(clang);
	buf_release(&err);
	char *line = xstrdup(st == 0 && out.s ? out.s : "unknown");
	line[strcspn(line, "\n")] = '\0';
	buf_release(&out);
	return line;
}

static char *origin_text(const struct origin *o)
{
	if (o->kind == ORIGIN_APT)
		return xasprintf("apt:%s=%s/%s", o->package, o->version, o->file);
	if (o->kind == ORIGIN_POOL)
		return xasprintf("debian-pool:%s", o->file);
	if (o->kind == ORIGIN_DEB)
		return xasprintf("deb:%s:%s=%s", o->package, o->arch, o->version);
	return xstrdup(o->url);
}

/* Does the package need the host's LLVM: a stage was compiled by it, or the wrappers run it
 * (no toolchain stage gives the target its own LLVM in toolchain/)? */
static bool runs_host_llvm(struct node *const *stages, size_t n, struct node *const *tools,
                           size_t n_tools)
{
	bool own_llvm = false;
	for (size_t i = 0; i < n_tools; i++)
		own_llvm |= toolchain_var(&tools[i]->stage->provides, "llvm_bin") != NULL;
	for (size_t i = 0; i < n; i++)
		if (stages[i]->host_llvm)
			return true;
	return !own_llvm;
}

static int describe_inputs(const struct plan *p, const struct target *t, struct package_manifest *m)
{
	struct node **stages, **tools;
	size_t n = plan_target_stages(p, t, &stages);
	size_t n_tools = plan_toolchain_stages(p, t, &tools);
	struct strlist files = {0};
	add_line_file(&files, t->path);
	int rc = 0;
	for (size_t pass = 0; pass < 2; pass++) {
		struct node **list = pass ? tools : stages;
		for (size_t i = 0; i < (pass ? n_tools : n); i++) {
			const struct node *s = list[i];
			bool seen = false;
			for (size_t k = 0; k + 2 < m->stages.n; k += 3)
				seen |= strcmp(m->stages.v[k + 1], s->key) == 0;
			if (seen)
				continue;
			if (!s->key[0] || !s->output[0]) {
				error("stage %s has no result yet: build the target first", s->label);
				rc = -1;
			}
			strlist_add(&m->stages, s->stage->name);
			strlist_add(&m->stages, s->key);
			strlist_add(&m->stages, s->output);
			add_line_file(&files, s->stage->path);
			for (size_t j = 0; j < s->stage->sources.n; j++) {
				const struct node *tree = s->trees[j];
				const struct source *src = tree->source;
				add_line_file(&files, src->path);
				add_line_file(&files, src->keyring);
				bool listed = false;
				for (size_t k = 0; k + 3 < m->sources.n; k += 4)
					listed |= strcmp(m->sources.v[k], src->name) == 0 &&
					          strcmp(m->sources.v[k + 1], src->version) == 0;
				for (size_t o = 0; o < src->n_origins && !listed; o++) {
					strlist_add(&m->sources, src->name);
					strlist_add(&m->sources, src->version);
					strlist_add(&m->sources, src->member ? src->member_sha256
					                                     : src->origins[o].sha256);
					strlist_take(&m->sources, origin_text(&src->origins[o]));
				}
				for (size_t k = 0; k < tree->patches.n; k++) {
					const char *abs = tree->patches.v[k];
					char *rel = xasprintf("%s/%s/%s", src->name, src->version,
					                      strrchr(abs, '/') + 1);
					if (strlist_has(&m->patches, rel)) {
						free(rel);
						continue;
					}
					char hex[DIGEST_HEX_LEN + 1];
					if (digest_file(abs, hex) < 0)
						rc = -1;
					strlist_take(&m->patches, rel);
					strlist_add(&m->patches, hex);
					add_line_file(&files, abs);
				}
			}
		}
	}
	m->target = xstrdup(t->name);
	m->triple = xstrdup(t->triple);
	if (runs_host_llvm(stages, n, tools, n_tools)) {
		m->host_bin = xstrdup(p->host->bin);
		m->host_identity = xstrdup(p->host->identity);
		m->host_clang = host_clang_version(p->host->bin);
	}
	struct buf flags = {0};
	for (size_t i = 0; i < t->cflags.n; i++)
		buf_printf(&flags, "%s%s", i ? " " : "", t->cflags.v[i]);
	for (size_t i = 0; i < t->driver_cflags.n; i++)
		buf_printf(&flags, "%s%s", flags.len ? " " : "", t->driver_cflags.v[i]);
	for (size_t i = 0; i < t->driver_cxxflags.n; i++)
		buf_printf(&flags, "%sc++:%s", flags.len ? " " : "", t->driver_cxxflags.v[i]);
	if (t->static_only)
		buf_printf(&flags, "%sstatic-only", flags.len ? " " : "");
	m->flags = buf_detach(&flags);
	/* the user's own files over the sysroot (crossroot install): inputs like the sources */
	char *overlay = sysroot_overlay_dir(&p->dirs, t->name);
	if (overlay_manifest(overlay, &m->overlay) < 0)
		rc = -1;
	if (m->overlay.n)
		qsort(m->overlay.entries, m->overlay.n, sizeof(*m->overlay.entries), tree_entry_compare);
	free(overlay);
	choose_epoch(p, &files, m);
	strlist_release(&files);
	free(stages);
	free(tools);
	return rc;
}

/* ---- the manifest's text ---- */

static void header_lines(const struct package_manifest *m, struct buf *b, bool with_version)
{
	buf_printf(b, "crossroot-package 1\ntarget\t%s\ntriple\t%s\n", m->target, m->triple);
	if (with_version)
		buf_printf(b, "version\t%s\n", m->version);
	buf_printf(b, "source-date-epoch\t%lld\t%s\n", m->epoch, m->epoch_how);
	buf_printf(b, "engine\tcrossroot %s\t%s\n", CROSSROOT_VERSION, CROSSROOT_ENGINE_VERSION);
	if (m->host_bin)
		buf_printf(b, "host-llvm\t%s\t%s\t%s\n", m->host_bin, m->host_identity, m->host_clang);
	else   /* its compiler is a stage of the package (toolchain/) */
		buf_puts(b, "host-llvm\tnone\n");
	buf_printf(b, "flags\t%s\n", m->flags);
	for (size_t i = 0; i + 3 < m->sources.n; i += 4)
		buf_printf(b, "source\t%s\t%s\t%s\t%s\n", m->sources.v[i], m->sources.v[i + 1],
		           m->sources.v[i + 2], m->sources.v[i + 3]);
	for (size_t i = 0; i + 1 < m->patches.n; i += 2)
		buf_printf(b, "patch\t%s\t%s\n", m->patches.v[i], m->patches.v[i + 1]);
	for (size_t i = 0; i + 2 < m->stages.n; i += 3)
		buf_printf(b, "stage\t%s\t%s\t%s\n", m->stages.v[i], m->stages.v[i + 1],
		           m->stages.v[i + 2]);
	for (size_t i = 0; i < m->overlay.n; i++) {
		buf_puts(b, "overlay\t");
		tree_entry_line(&m->overlay.entries[i], b);
	}
}

static void entry_line(const struct package_entry *e, struct buf *b)
{
	struct tree_entry line = {.kind = e->kind, .mode = e->mode, .size = e->size,
	                          .value = e->kind == 'l' ? e->link : (char *)e->sha256,
	                          .path = e->path};
	tree_entry_line(&line, b);
}

static char *manifest_text(const struct package_manifest *m)
{
	struct buf b = {0};
	header_lines(m, &b, true);
	for (size_t i = 0; i < m->n; i++)
		if (strcmp(m->entries[i].path, PACKAGE_MANIFEST) != 0)
			entry_line(&m->entries[i], &b);
	return buf_detach(&b);
}

/* The entries of a package manifest's text (tree.h's lines after the input records), into `m`. */
static int parse_entries(const char *text, const char *name, struct tree_manifest *m)
{
	static const char header[] = "crossroot-package 1\n";
	if (strncmp(text, header, strlen(header)) != 0) {
		error("'%s' is not a crossroot package manifest (it must start with "
		      "'crossroot-package 1')", name);
		return -1;
	}
	const char *body = text + strlen(header);
	size_t line = 2;
	while (*body && !(strchr("dfl", body[0]) && body[1] == '\t')) {
		body = strchr(body, '\n');
		if (!body) {
			error("%s:%zu: truncated manifest", name, line);
			return -1;
		}
		body++;
		line++;
	}
	char *why = NULL;
	int rc = tree_manifest_parse_body(m, name, body, line, &why);
	if (rc < 0)
		error("%s", why);
	free(why);
	return rc;
}

/* ---- the tar ---- */

static int write_entry(struct tree_tar *tar, const struct package_entry *e, const char *top)
{
	char *name = e->path[0] ? xasprintf("%s/%s", top, e->path) : xstrdup(top);
	struct tree_tar_entry te = {.kind = e->kind, .mode = e->mode, .path = name, .link = e->link,
	                            .size = e->size};
	size_t len = 0;
	void *data = e->kind == 'f' && e->size > 0 ? entry_data(e, &len) : NULL;
	int rc = 0;
	if (e->kind == 'f' && e->size > 0 && !data) {
		rc = -1;
	} else if ((long long)len != (e->kind == 'f' ? e->size : 0)) {
		error("'%s' changed while it was packaged (%zu bytes, %lld when hashed)", e->from, len,
		      e->size);
		rc = -1;
	} else {
		rc = tree_tar_add(tar, &te, data ? data : "", -1, e->from ? e->from : e->path);
	}
	if (data)
		entry_data_release(e, data, len);
	free(name);
	return rc;
}

static int write_tar(const struct package_manifest *m, const char *path, bool xz)
{
	struct tree_tar *tar = tree_tar_open(path, xz ? TREE_TAR_XZ : TREE_TAR_ZSTD, m->epoch);
	if (!tar)
		return -1;
	struct package_entry root = {.kind = 'd', .mode = 0755, .path = ""};
	int rc = write_entry(tar, &root, m->target);
	for (size_t i = 0; i < m->n && rc == 0 && !interrupted; i++)
		rc = write_entry(tar, &m->entries[i], m->target);
	return tree_tar_close(tar, rc == 0 && !interrupted);
}

/* ---- package_write ---- */

int package_write(const struct plan *p, const struct target *t, const struct package_options *o,
                  char **written)
{
	double started = now_seconds();
	struct package_manifest m = {0};
	char *sysroot = path_join(p->dirs.out, t->name);
	char *stamp = path_join(sysroot, STAMP_NAME);
	char *zst = NULL, *xz = NULL, *beside = NULL, *spdx_path = NULL, *manifest = NULL;
	char *spdx = NULL;
	int rc = 0;
	if (!path_exists(stamp)) {
		error("'%s' is not an assembled sysroot (no %s): build the target first", sysroot,
		      STAMP_NAME);
		rc = -1;
		goto out;
	}
	if (describe_inputs(p, t, &m) < 0 || walk(&m, sysroot) < 0) {
		rc = -1;
		goto out;
	}
	/* the two generated files that name the sysroot's place (crossfiles.h) */
	size_t kept = 0;
	for (size_t i = 0; i < m.n; i++) {
		struct package_entry *e = &m.entries[i];
		char *text = NULL;
		int what = e->kind == 'f' ? crossfiles_package_text(t, e->path, &text) : CROSSFILES_AS_IS;
		if (what == CROSSFILES_LEAVE_OUT) {
			free(e->path);
			free(e->from);
			continue;
		}
		if (what == CROSSFILES_REPLACE) {
			free(e->from);
			e->from = NULL;
			e->text = text;
		}
		m.entries[kept++] = *e;
	}
	m.n = kept;
	const char *build_dirs[] = {p->dirs.root, p->dirs.work, p->dirs.out, NULL};
	if (hash_entries(&m, build_dirs, m.host_bin, t->name) < 0) {
		rc = -1;
		goto out;
	}
	qsort(m.entries, m.n, sizeof(*m.entries), by_path);
	if (check_overlay(&m) < 0) {
		rc = -1;
		goto out;
	}
	/* the version: the inputs' hash */
	struct buf head = {0};
	header_lines(&m, &head, false);
	char hex[DIGEST_HEX_LEN + 1];
	struct digest d;
	digest_init(&d);
	digest_update(&d, head.s, head.len);
	digest_final(&d, hex);
	buf_release(&head);
	m.version = xstrndup(hex, 12);
	/* the SBOM goes in as a file; the manifest lists it, and goes in itself unlisted */
	spdx = sbom_spdx_json(&m);
	if (!spdx) {
		rc = -1;
		goto out;
	}
	const char *meta[] = {"share", "share/crossroot", "share/crossroot/package"};
	for (size_t i = 0; i < 3; i++) {
		bool have = false;
		for (size_t j = 0; j < m.n; j++)
			have |= strcmp(m.entries[j].path, meta[i]) == 0;
		if (!have)
			add_entry(&m, 'd', meta[i]);
	}
	struct package_entry *sbom = add_entry(&m, 'f', PACKAGE_SBOM);
	sbom->mode = 0644;
	sbom->text = xstrdup(spdx);
	sbom->size = (long long)strlen(spdx);
	hash_bytes(spdx, strlen(spdx), sbom->sha256, sbom->sha1);
	qsort(m.entries, m.n, sizeof(*m.entries), by_path);
	manifest = manifest_text(&m);
	struct package_entry *me = add_entry(&m, 'f', PACKAGE_MANIFEST);
	me->mode = 0644;
	me->text = xstrdup(manifest);
	me->size = (long long)strlen(manifest);
	hash_bytes(manifest, strlen(manifest), me->sha256, me->sha1);
	qsort(m.entries, m.n, sizeof(*m.entries), by_path);

	if (mkdir_p(o->dir, 0755) < 0) {
		rc = -1;
		goto out;
	}
	zst = xasprintf("%s/%s-%s.tar.zst", o->dir, t->name, m.version);
	beside = xasprintf("%s/%s-%s.manifest", o->dir, t->name, m.version);
	spdx_path = xasprintf("%s/%s-%s.spdx.json", o->dir, t->name, m.version);
	rc = write_tar(&m, zst, false);
	if (rc == 0 && o->xz) {
		xz = xasprintf("%s/%s-%s.tar.xz", o->dir, t->name, m.version);
		rc = write_tar(&m, xz, true);
	}
	if (rc == 0)
		rc = write_file_atomic(beside, manifest, strlen(manifest), 0644);
	if (rc == 0)
		rc = write_file_atomic(spdx_path, spdx, strlen(spdx), 0644);
	if (rc == 0) {
		char sum[DIGEST_HEX_LEN + 1], size[32], took[32];
		struct stat st;
		for (size_t i = 0; i < 2 && rc == 0; i++) {
			const char *file = i ? xz : zst;
			if (!file)
				continue;
			rc = digest_file(file, sum);
			if (rc == 0 && stat(file, &st) == 0)
				info("package %s: %s (%s, sha256 %s)", t->name, file,
				     format_size((double)st.st_size, size), sum);
		}
		size_t files = 0;
		for (size_t i = 0; i < m.n; i++)
			files += m.entries[i].kind == 'f';
		info("package %s: %zu files, SOURCE_DATE_EPOCH %lld (%s); manifest %s, SPDX %s; %s",
		     t->name, files, m.epoch, m.epoch_how, beside, spdx_path,
		     format_duration(now_seconds() - started, took));
		if (rc == 0 && written)
			*written = xstrdup(zst);
	}
out:
	package_manifest_release(&m);
	free(manifest);
	free(spdx);
	free(zst);
	free(xz);
	free(beside);
	free(spdx_path);
	free(stamp);
	free(sysroot);
	return rc;
}

/* ---- verify ---- */

#define MANIFEST_MAX (64 << 20)   /* a manifest line per file: far more than any sysroot */

/* What a package or tree holds, as tree.h's entries: modes normalised (normal_mode), a file's
 * sha256 or a link's target as the value. */
static void add_held(struct tree_manifest *m, char kind, const char *path, unsigned mode,
                     long long size, const char *value)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 256;
		m->entries = xrealloc(m->entries, m->cap * sizeof(*m->entries));
	}
	m->entries[m->n] = (struct tree_entry){.kind = kind, .mode = mode, .size = size,
	                                       .value = value ? xstrdup(value) : NULL,
	                                       .path = xstrdup(path), .order = m->n};
	m->n++;
}

/* A tree unpacked from a package: its entries (hashed), and its manifest's text. */
static int read_tree(const char *root, struct tree_manifest *have, char **manifest)
{
	char *path = path_join(root, PACKAGE_MANIFEST);
	if (!path_exists(path)) {
		error("no package manifest in '%s' (%s): verify takes a package or a directory "
		      "unpacked from one", root, PACKAGE_MANIFEST);
		free(path);
		return -1;
	}
	*manifest = read_file(path, NULL);
	free(path);
	struct package_manifest found = {0};
	int rc = *manifest && walk(&found, root) == 0 ? 0 : -1;
	for (size_t i = 0; i < found.n && rc == 0; i++) {
		struct package_entry *e = &found.entries[i];
		size_t len = 0;
		void *data = e->kind == 'f' ? map_file(e->from, &len) : NULL;
		if (e->kind == 'f' && !data) {
			rc = -1;
			break;
		}
		if (data) {
			e->size = (long long)len;
			hash_bytes(data, len, e->sha256, e->sha1);
			unmap_file(data, len);
		}
		add_held(have, e->kind, e->path, e->mode, e->size, e->kind == 'l' ? e->link :
		         e->kind == 'f' ? e->sha256 : NULL);
	}
	package_manifest_release(&found);
	return rc;
}

/* A package file: its members (tree.h's reader; each hashed as it streams, only the manifest
 * kept, up to a bound), and its manifest's text. -1 unreadable, 1 with problems named, 0. */
static int read_archive(const char *file, struct tree_manifest *have, char **manifest)
{
	char *why = NULL;
	struct tree_tar_reader *r = tree_tar_read_open(file, false, &why);
	if (!r) {
		error("cannot read the package '%s': %s", file, why);
		free(why);
		return -1;
	}
	const struct tree_tar_member *mem;
	char *top = NULL;
	int rc = 0, got;
	while ((got = tree_tar_read_next(r, &mem)) > 0) {
		const char *name = mem->path;
		size_t top_len = strcspn(name, "/");
		if (!top)
			top = xstrndup(name, top_len);
		const char *rel = name + top_len;
		while (*rel == '/')
			rel++;
		if (strlen(top) != top_len || strncmp(name, top, top_len) != 0) {
			error("'%s' in '%s' is outside the package's directory '%s/'", name, file, top);
			rc = 1;
			continue;
		}
		if (!rel[0])
			continue;
		if (mem->kind != 'l' && unsafe_mode(mem->mode)) {
			error("'%s' in '%s' has mode %o (set-id, sticky, or writable by group or others): "
			      "a package never holds it", name, file, mem->mode);
			rc = 1;
		}
		if (mem->kind == 'd') {
			add_held(have, 'd', rel, normal_mode(mem->mode | S_IFDIR), 0, NULL);
		} else if (mem->kind == 'l') {
			add_held(have, 'l', rel, 0777, 0, mem->link);
		} else if (mem->kind == 'f') {
			bool is_manifest = strcmp(rel, PACKAGE_MANIFEST) == 0;
			struct buf kept = {0};
			char hex[DIGEST_HEX_LEN + 1];
			long long size = 0;
			if (tree_tar_read_data(r, hex, &size, is_manifest ? &kept : NULL, MANIFEST_MAX) < 0) {
				error("cannot read '%s' in '%s': %s", rel, file, tree_tar_read_error(r));
				rc = 1;
			}
			add_held(have, 'f', rel, normal_mode(mem->mode), size, hex);
			if (is_manifest && size > MANIFEST_MAX) {
				error("the manifest in '%s' is larger than %d MiB", file, MANIFEST_MAX >> 20);
				rc = 1;
			} else if (is_manifest) {
				free(*manifest);
				*manifest = xstrndup(kept.s ? kept.s : "", kept.len);
			}
			buf_release(&kept);
		} else {
			error("'%s' in '%s' is %s", name, file, mem->kind == 'h' ? "a hard link" :
			      "neither a file, a directory nor a link");
			rc = 1;
		}
	}
	if (got < 0) {
		error("'%s' is damaged: %s", file, tree_tar_read_error(r));
		rc = 1;
	}
	tree_tar_read_close(r);
	free(top);
	if (!*manifest) {
		error("no package manifest in '%s' (%s)", file, PACKAGE_MANIFEST);
		return -1;
	}
	return rc;
}

/* Compare entry lists (both sorted afterwards); each difference on stderr. Returns the count. */
static size_t compare_entries(struct tree_manifest *want, struct tree_manifest *have,
                              const char *where)
{
	if (want->n)
		qsort(want->entries, want->n, sizeof(*want->entries), tree_entry_compare);
	if (have->n)
		qsort(have->entries, have->n, sizeof(*have->entries), tree_entry_compare);
	size_t i = 0, j = 0, differences = 0;
	static const char *const kinds[] = {['d'] = "a directory", ['f'] = "a file", ['l'] = "a link"};
	while (i < want->n || j < have->n) {
		int c = i == want->n ? 1 : j == have->n ? -1
		                                          : strcmp(want->entries[i].path, have->entries[j].path);
		if (c > 0 && strcmp(have->entries[j].path, PACKAGE_MANIFEST) == 0) {
			j++;
			continue;
		}
		differences++;
		if (c < 0) {
			fprintf(stderr, "missing: %s (in the manifest, not in %s)\n", want->entries[i++].path,
			        where);
			continue;
		}
		if (c > 0) {
			fprintf(stderr, "extra:   %s (in %s, not in the manifest)\n", have->entries[j++].path,
			        where);
			continue;
		}
		const struct tree_entry *w = &want->entries[i++], *h = &have->entries[j++];
		if (w->kind != h->kind)
			fprintf(stderr, "changed: %s is %s, the manifest says %s\n", w->path,
			        kinds[(int)h->kind], kinds[(int)w->kind]);
		else if (w->kind == 'l' && strcmp(w->value, h->value) != 0)
			fprintf(stderr, "changed: %s points to '%s', the manifest says '%s'\n", w->path,
			        h->value, w->value);
		else if (w->kind == 'f' && (w->size != h->size || strcmp(w->value, h->value) != 0))
			fprintf(stderr, "changed: %s has %lld bytes, sha256 %s; the manifest says %lld "
			        "bytes, sha256 %s\n", w->path, h->size, h->value, w->size, w->value);
		else if (w->kind != 'l' && w->mode != h->mode)
			fprintf(stderr, "changed: %s has mode %o, the manifest says %o\n", w->path, h->mode,
			        w->mode);
		else
			differences--;
	}
	return differences;
}

int package_verify(const char *path)
{
	struct tree_manifest want = {0}, have = {0};
	char *manifest = NULL;
	bool tree = is_dir(path);
	int rc = tree ? read_tree(path, &have, &manifest) : read_archive(path, &have, &manifest);
	if (rc < 0 || parse_entries(manifest, tree ? PACKAGE_MANIFEST : path, &want) < 0) {
		rc = PACKAGE_UNREADABLE;
		goto out;
	}
	size_t files = 0;
	for (size_t i = 0; i < want.n; i++)
		files += want.entries[i].kind == 'f';
	size_t differences = compare_entries(&want, &have, path);
	if (differences || rc > 0) {
		error("'%s' does not match its manifest: %zu difference%s (above)", path, differences,
		      differences == 1 ? "" : "s");
		rc = PACKAGE_DIFFERS;
	} else {
		info("verified %s: %zu file%s and every directory and link as its manifest says", path,
		     files, files == 1 ? "" : "s");
		rc = PACKAGE_SAME;
	}
out:
	free(manifest);
	tree_manifest_release(&want);
	tree_manifest_release(&have);
	return rc;
}

/* ---- compare ---- */

int package_compare(const char *a, const char *b)
{
	char sum_a[DIGEST_HEX_LEN + 1], sum_b[DIGEST_HEX_LEN + 1];
	if (digest_file(a, sum_a) < 0 || digest_file(b, sum_b) < 0)
		return PACKAGE_UNREADABLE;
	if (strcmp(sum_a, sum_b) == 0) {
		info("reproducible: %s and %s are the same bytes (sha256 %s)", a, b, sum_a);
		return PACKAGE_SAME;
	}
	struct tree_manifest ma = {0}, mb = {0}, ha = {0}, hb = {0};
	char *text_a = NULL, *text_b = NULL;
	int rc = PACKAGE_DIFFERS;
	if (read_archive(a, &ha, &text_a) < 0 || read_archive(b, &hb, &text_b) < 0 ||
	    parse_entries(text_a, a, &ma) < 0 || parse_entries(text_b, b, &mb) < 0) {
		rc = PACKAGE_UNREADABLE;
		goto out;
	}
	fprintf(stderr, "the packages differ (sha256 %s and %s); by their contents, with %s as the "
	        "manifest:\n", sum_a, sum_b, a);
	/* the files themselves, so the manifest's own difference is not all there is to see */
	size_t differences = compare_entries(&ha, &hb, b);
	char *argv[] = {"diffoscope", "--text", "-", (char *)a, (char *)b, NULL};
	struct buf out = {0};
	char *which[] = {"sh", "-c", "command -v diffoscope", NULL};
	if (run_capture(which, &out, NULL) == 0 && out.len) {
		buf_release(&out);
		info("diffoscope's report:");
		pid_t pid = run_argv(argv, NULL, -1, -1);
		if (pid > 0)
			run_wait(pid);
	} else {
		info("(diffoscope is not installed: the files above differ byte for byte)");
	}
	buf_release(&out);
	error("not reproducible: %zu difference%s between %s and %s", differences,
	      differences == 1 ? "" : "s", a, b);
out:
	free(text_a);
	free(text_b);
	tree_manifest_release(&ma);
	tree_manifest_release(&mb);
	tree_manifest_release(&ha);
	tree_manifest_release(&hb);
	return rc;
}

/* ---- build --check ---- */

int package_check(const struct plan *p, const struct target *t, const struct package_check *c)
{
	char *dir = xasprintf("%s/check/%s", p->dirs.work, t->name);
	char *first_dir = path_join(dir, "first"), *second_dir = path_join(dir, "second");
	char *work = path_join(dir, "work"), *cache = path_join(dir, "cache");
	char *out = path_join(dir, "sysroots"), *no_remote = path_join(dir, "no-remote-cache");
	char *first = NULL, *pattern = NULL;
	int rc = PACKAGE_UNREADABLE;
	if (remove_tree(dir) < 0 || mkdir_p(dir, 0755) < 0 ||
	    write_file_atomic(no_remote, "", 0, 0644) < 0)
		goto out;
	struct package_options o = {.dir = first_dir};
	if (package_write(p, t, &o, &first) < 0)
		goto out;
	/* the overlay is an input (crossroot install): the second build gets a copy of it */
	char *overlay = sysroot_overlay_dir(&p->dirs, t->name);
	struct dirs there = {.work = work};
	char *overlay_there = sysroot_overlay_dir(&there, t->name);
	char *parent = path_join(work, "overlays");
	int copied = !is_dir(overlay) ? 0 : mkdir_p(parent, 0755) == 0 ?
	             copy_tree(overlay, overlay_there, false) : -1;
	free(parent);
	free(overlay_there);
	free(overlay);
	if (copied < 0)
		goto out;
	/* a cold build: its own work directory, stage cache and output, no remote cache; the
	 * verified downloads are its mirror (a download cache is one), so nothing is fetched */
	info("check   %s: building it again in %s", t->name, work);
	char jobs[16];
	snprintf(jobs, sizeof(jobs), "%d", p->jobs);
	const char *argv[24] = {c->self, "-C", p->dirs.root, "--work", work, "--cache", cache,
	                        "--out", out, "--mirror", p->dirs.downloads, "-j", jobs};
	size_t n = 13;
	if (t->static_only)
		argv[n++] = "--static-only";
	if (c->allow_network)
		argv[n++] = "--allow-network";
	if (c->verbose)
		argv[n++] = "--verbose";
	argv[n++] = "package";
	argv[n++] = t->name;
	argv[n++] = "-o";
	argv[n++] = second_dir;
	argv[n] = NULL;
	setenv("CROSSROOT_REMOTE_CACHE_CONFIG", no_remote, 1);
	pid_t pid = run_argv((char *const *)argv, NULL, -1, -1);
	int status = pid < 0 ? -1 : run_wait(pid);
	if (status != 0) {
		char how[96];
		error("the second build of %s in '%s' failed (%s)", t->name, work,
		      status < 0 ? "could not run" : run_describe(status, how));
		goto out;
	}
	pattern = xasprintf("%s/%s-*.tar.zst", second_dir, t->name);
	glob_t g;
	if (glob(pattern, 0, NULL, &g) != 0 || g.gl_pathc != 1) {
		error("the second build left no package '%s'", pattern);
		goto out;
	}
	rc = package_compare(first, g.gl_pathv[0]);
	globfree(&g);
	if (rc == PACKAGE_SAME)
		remove_tree(dir);
	else
		info("both builds are kept in %s", dir);
out:
	free(first);
	free(pattern);
	free(dir);
	free(first_dir);
	free(second_dir);
	free(work);
	free(cache);
	free(out);
	free(no_remote);
	return rc;
}
