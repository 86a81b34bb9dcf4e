/* remote: the stage cache shared over a transport (HTTP, remote_http.h): configuration, pull
 * (verify, unpack, publish), push (pack, sign, upload), key files. See remote.h. */
#define _GNU_SOURCE
#include "remote.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache.h"
#include "digest.h"
#include "remote_http.h"
#include "tree.h"

#define SIG_HEADER "crossroot-remote-signature 1\n"
#define MAX_SIG_BYTES (64LL << 10)
#define MAX_MANIFEST_BYTES (256LL << 20)

/* ---- configuration ---- */

/* $XDG_CONFIG_HOME/crossroot or ~/.config/crossroot, or NULL */
static char *config_dir(void)
{
	const char *config = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	if (config && *config)
		return xasprintf("%s/crossroot", config);
	if (home && *home)
		return xasprintf("%s/.config/crossroot", home);
	return NULL;
}

static char *trim(char *s)
{
	s += strspn(s, " \t");
	char *end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

/* A path named in the configuration file: ~/ is $HOME, a relative one is relative to the
 * file's directory. */
static char *config_file_path(const char *config, const char *value)
{
	const char *home = getenv("HOME");
	if (value[0] == '~' && value[1] == '/' && home)
		return xasprintf("%s/%s", home, value + 2);
	if (value[0] == '/')
		return xstrdup(value);
	const char *slash = strrchr(config, '/');
	return slash ? xasprintf("%.*s/%s", (int)(slash - config), config, value) : xstrdup(value);
}

/* "4G", "512M", "1000": a size in bytes (suffixes are powers of 1024), or -1. */
static long long parse_size(const char *text)
{
	char *end;
	errno = 0;
	long long n = strtoll(text, &end, 10);
	if (errno || end == text || n <= 0 || !(*text >= '0' && *text <= '9'))
		return -1;
	const char *units = "KMGT";
	const char *unit = *end ? strchr(units, *end) : NULL;
	if (*end && (!unit || end[1]))
		return -1;
	for (const char *u = units; unit && u <= unit; u++) {
		if (n > LLONG_MAX / 1024)
			return -1;
		n *= 1024;
	}
	return n;
}

static int read_config(struct remote_cache *r, char **url, char **mode, char **key_file)
{
	char *text = read_regular_file(r->config, "remote cache configuration", NULL);
	if (!text)
		return -1;
	int rc = 0;
	size_t line_no = 0;
	for (char *line = text, *next; line && rc == 0; line = next) {
		line_no++;
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		line[strcspn(line, "#")] = '\0';
		line = trim(line);
		if (!*line)
			continue;
		char *eq = strchr(line, '=');
		if (!eq) {
			error("%s:%zu: expected 'name = value', not '%s'", r->config, line_no, line);
			rc = -1;
			break;
		}
		*eq = '\0';
		char *name = trim(line), *value = trim(eq + 1);
		char **slot = strcmp(name, "url") == 0 ? url : strcmp(name, "mode") == 0 ? mode
		              : strcmp(name, "signing-key") == 0 ? key_file : NULL;
		if (!*value) {
			error("%s:%zu: '%s' has no value", r->config, line_no, name);
			rc = -1;
		} else if (slot) {
			free(*slot);
			*slot = slot == key_file ? config_file_path(r->config, value) : xstrdup(value);
		} else if (strcmp(name, "timeout") == 0) {
			char *end;
			errno = 0;
			long seconds = strtol(value, &end, 10);
			if (errno || *end || end == value || seconds <= 0 || value[0] == '+') {
				error("%s:%zu: timeout is a number of seconds above 0, not '%s'", r->config,
				      line_no, value);
				rc = -1;
			} else
				r->timeout_seconds = seconds;
		} else if (strcmp(name, "max-entry-size") == 0) {
			long long size = parse_size(value);
			if (size < 0) {
				error("%s:%zu: max-entry-size is a size in bytes above 0, with K, M, G or T "
				      "for powers of 1024 (4G), not '%s'", r->config, line_no, value);
				rc = -1;
			} else
				r->max_entry_size = size;
		} else if (strcmp(name, "trusted-key") == 0) {
			if (!sign_public_valid(value)) {
				error("%s:%zu: '%s' is not a public key ('ed25519:' and 64 hex digits, as "
				      "'crossroot key generate' prints)", r->config, line_no, value);
				rc = -1;
			} else if (!strlist_has(&r->trusted, value))
				strlist_add(&r->trusted, value);
		} else {
			error("%s:%zu: unknown name '%s' (names: url, mode, signing-key, trusted-key, "
			      "timeout, max-entry-size)",
			      r->config, line_no, name);
			rc = -1;
		}
	}
	free(text);
	return rc;
}

int remote_configure(struct remote_cache *r, const char *url, const char *mode,
                     const char *ca_bundle, long stall_seconds)
{
	memset(r, 0, sizeof(*r));
	char *file_url = NULL, *file_mode = NULL, *key_file = NULL;
	int rc = 0;
	const char *env = getenv("CROSSROOT_REMOTE_CACHE_CONFIG");
	if (env && *env) {
		r->config = xstrdup(env);   /* named: it must exist */
	} else {
		char *dir = config_dir();
		char *path = dir ? path_join(dir, "remote-cache") : NULL;
		if (path && path_exists(path))
			r->config = path;
		else
			free(path);
		free(dir);
	}
	if (r->config)
		rc = read_config(r, &file_url, &file_mode, &key_file);
	const char *where = r->config ? r->config : "~/.config/crossroot/remote-cache";
	const char *u = url ? url : file_url;
	const char *m = mode ? mode : file_mode;
	if (rc == 0 && m && strcmp(m, "read") != 0 && strcmp(m, "read-write") != 0) {
		error("%s: the remote cache's mode is 'read' or 'read-write', not '%s'",
		      mode ? "--remote-cache-mode" : where, m);
		rc = -1;
	}
	if (rc == 0 && !u && mode) {
		error("--remote-cache-mode needs a remote cache: --remote-cache URL, or 'url = URL' in "
		      "%s", where);
		rc = -1;
	}
	if (rc == 0 && u) {
		if (strncmp(u, "http://", 7) != 0 && strncmp(u, "https://", 8) != 0) {
			error("remote cache '%s' (%s): an http:// or https:// URL is needed", u,
			      url ? "--remote-cache" : where);
			rc = -1;
		}
		r->url = xstrdup(u);
		size_t len = strlen(r->url);
		while (len > 0 && r->url[len - 1] == '/')
			r->url[--len] = '\0';
		r->push = m && strcmp(m, "read-write") == 0;
	}
	if (rc == 0 && r->url && key_file && !(r->signer = sign_load(key_file)))
		rc = -1;
	if (rc == 0 && r->url && r->push && !r->signer) {
		error("the remote cache's read-write mode needs a key to sign with: 'signing-key = FILE' "
		      "in %s ('crossroot key generate' makes one)", where);
		rc = -1;
	}
	if (rc == 0 && r->signer) {
		char own[SIGN_PUBLIC_LEN + 1];
		sign_public(r->signer, own);
		if (!strlist_has(&r->trusted, own))
			strlist_add(&r->trusted, own);
	}
	if (rc == 0 && r->url && r->trusted.n == 0) {
		error("the remote cache %s has no trusted key, so nothing from it could be used: list "
		      "one as 'trusted-key = ed25519:...' in %s", r->url, where);
		rc = -1;
	}
	if (rc == 0 && r->url)
		r->transport = remote_http_new(r->url, ca_bundle, stall_seconds > 0 ? stall_seconds : 30);
	free(file_url);
	free(file_mode);
	r->key_file = key_file;
	if (rc < 0)
		remote_release(r);
	return rc;
}

void remote_release(struct remote_cache *r)
{
	free(r->key_file);
	if (r->transport)
		r->transport->ops->free(r->transport);
	free(r->url);
	free(r->config);
	strlist_release(&r->trusted);
	sign_key_free(r->signer);
	memset(r, 0, sizeof(*r));
}

/* ---- transfers ---- */

/* Where a download goes: memory or a file, hashed, never past `limit` bytes. */
struct sink {
	struct buf b;
	int fd;                     /* -1: into b */
	struct digest d;
	long long bytes, limit;
	bool too_large;
	int write_errno;
};

static bool to_sink(void *arg, const void *data, size_t n)
{
	struct sink *s = arg;
	if (s->bytes + (long long)n > s->limit) {
		s->too_large = true;
		return false;
	}
	s->bytes += (long long)n;
	if (s->fd < 0) {
		buf_add(&s->b, data, n);
		return true;
	}
	for (size_t off = 0; off < n;) {
		ssize_t w = write(s->fd, (const char *)data + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0) {
			s->write_errno = errno;
			return false;
		}
		off += (size_t)w;
	}
	digest_update(&s->d, data, n);
	return true;
}

/* The transport's operations, with the words for a failure in `why`. */
static enum remote_outcome get(struct remote_cache *r, const char *name, struct sink *s,
                               char *why)
{
	return r->transport->ops->get(r->transport, name, to_sink, s, why);
}

static enum remote_outcome put_text(struct remote_cache *r, const char *name, const char *text,
                                    char *why)
{
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	if (!f)
		abort();
	enum remote_outcome o = r->transport->ops->put(r->transport, name, f, (long long)strlen(text),
	                                               why);
	fclose(f);
	return o;
}

/* ---- packing and unpacking (manifests are cache.h's) ---- */

/* The result's files as a deterministic tar.zst (tree.h): entries in manifest order, each made
 * from the manifest (modes, owner 0, mtime 0), nothing from the file system but the bytes. */
static int pack(const char *files, const struct tree_manifest *m, const char *out_path)
{
	struct tree_tar *tar = tree_tar_open(out_path, TREE_TAR_ZSTD, 0);
	int rc = tar ? 0 : -1;
	for (size_t i = 0; tar && i < m->n && rc == 0; i++) {
		const struct tree_entry *it = &m->entries[i];
		struct tree_tar_entry te = {.kind = it->kind, .mode = it->mode, .path = it->path,
		                            .link = it->value, .size = it->size};
		char *from = path_join(files, it->path);
		int fd = -1;
		if (it->kind == 'f' && (fd = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
			error("cannot open '%s':", from);
			rc = -1;
		} else {
			rc = tree_tar_add(tar, &te, NULL, fd, from);
		}
		if (fd >= 0)
			close(fd);
		free(from);
	}
	return tar ? tree_tar_close(tar, rc == 0) : -1;
}

/* The extractor failed to write an entry: our disk's fault (-1, said), or the entry's (1: the
 * extractor refused it, as libarchive's secure flags do a path through a link, so the entry is
 * refused, with the reason in `why`). */

/* The message a signature is over: see remote.h. */
static char *signed_message(const char *key, const char *output, const char *data_sha,
                            long long data_size)
{
	return xasprintf("crossroot-remote-entry 1\nkey %s\noutput %s\ndata %s %lld\n", key, output,
	                 data_sha, data_size);
}

static void text_digest(const char *text, size_t len, char hex[DIGEST_HEX_LEN + 1])
{
	struct digest d;
	digest_init(&d);
	digest_update(&d, text, len);
	digest_final(&d, hex);
}

/* ---- pull ---- */

struct signature_file {
	char public_key[SIGN_PUBLIC_LEN + 1];
	char data_sha[DIGEST_HEX_LEN + 1];
	long long data_size;
	char signature[SIGN_SIGNATURE_LEN + 1];
};

static bool parse_signature_file(const char *text, struct signature_file *s)
{
	return sscanf(text, SIG_HEADER "public-key %72s\ndata %64s %lld\nsignature %128s",
	              s->public_key, s->data_sha, &s->data_size, s->signature) == 4 &&
	       strncmp(text, SIG_HEADER, strlen(SIG_HEADER)) == 0 &&
	       sign_public_valid(s->public_key) && digest_is_valid_hex(s->data_sha) &&
	       s->data_size >= 0 && strlen(s->signature) == SIGN_SIGNATURE_LEN;
}

static long timeout_of(const struct remote_cache *r)
{
	return r->timeout_seconds > 0 ? r->timeout_seconds : REMOTE_DEFAULT_TIMEOUT;
}

static long long max_entry_size_of(const struct remote_cache *r)
{
	return r->max_entry_size > 0 ? r->max_entry_size : REMOTE_DEFAULT_MAX_ENTRY_SIZE;
}

static const char *config_name(const struct remote_cache *r)
{
	return r->config ? r->config : "~/.config/crossroot/remote-cache";
}

/* The request `what` for `name` failed (`o`, `why`): a warning naming its URL, and a server
 * that cannot be reached is not asked again in this run. */
static void request_failed(struct remote_cache *r, const char *name, const char *what,
                           enum remote_outcome o, const char *why, const char *label,
                           bool pulling)
{
	if (interrupted)
		return;   /* the run stops; it says so itself */
	char *entry = xasprintf("%s/%s", r->url, name);
	double deadline = r->transport->deadline;
	if (pulling && deadline > 0 && now_seconds() >= deadline - 0.01) {
		/* a server this slow would hold every stage as long: not asked again */
		r->unreachable = true;
		warn("remote cache entry %s: not pulled within the remote cache's timeout of %ld "
		     "seconds (%s; 'timeout' in %s); building %s here, and not asking the remote cache "
		     "again in this run", entry, timeout_of(r), what, config_name(r), label);
	} else if (o == REMOTE_UNREACHABLE) {
		r->unreachable = true;
		if (pulling)
			warn("remote cache %s cannot be reached (%s of entry %s: %s); building %s here, "
			     "and not asking the remote cache again in this run", r->url, what, entry, why,
			     label);
		else
			warn("remote cache %s cannot be reached (%s %s: %s): %s is not pushed, and the "
			     "remote cache is not used again in this run", r->url, what, entry, why, label);
	} else if (pulling)
		warn("remote cache entry %s: %s failed: %s; building %s here", entry, what, why, label);
	else
		warn("cannot push %s to the remote cache: %s %s failed: %s", label, what, entry, why);
	free(entry);
}

/* One pull in progress: what was fetched, and why the entry is refused if it is. */
struct pull {
	struct remote_cache *r;
	const char *key, *label;
	struct signature_file sig;
	struct buf manifest;        /* the signed manifest's text */
	struct tree_manifest entries;   /* the same, parsed, sorted by path */
	struct buf refused;
};

/* The signature file and the manifest, and the signature over them and the key: 1 if it
 * verifies by a trusted key, 0 if not (no entry; refused or a failed request: said). */
static int fetch_signed(struct pull *pl)
{
	struct remote_cache *r = pl->r;
	struct sink sig = {.fd = -1, .limit = MAX_SIG_BYTES};
	long long max = max_entry_size_of(r);
	struct sink manifest = {.fd = -1, .limit = max < MAX_MANIFEST_BYTES ? max
	                                                                      : MAX_MANIFEST_BYTES};
	char why[REMOTE_WHY_SIZE], id[DIGEST_HEX_LEN + 1];
	char *sig_name = xasprintf("%s.sig", pl->key), *manifest_name = NULL, *message = NULL;
	char *malformed = NULL;
	int rc = 0;
	enum remote_outcome o = get(r, sig_name, &sig, why);
	if (o == REMOTE_MISSING)
		goto out;   /* not there: nothing to say */
	if (o != REMOTE_OK) {
		if (sig.too_large)
			buf_printf(&pl->refused, "its signature file is larger than %lld bytes",
			           MAX_SIG_BYTES);
		else
			request_failed(r, pl->key, "GET .sig", o, why, pl->label, true);
		goto out;
	}
	struct signature_file *s = &pl->sig;
	if (!sig.b.s || memchr(sig.b.s, '\0', sig.b.len) || !parse_signature_file(sig.b.s, s)) {
		buf_puts(&pl->refused, "its signature file is malformed");
		goto out;
	}
	if (!strlist_has(&r->trusted, s->public_key)) {
		buf_printf(&pl->refused, "it is signed by %s, which is not a trusted key (trusted-key "
		           "in %s)", s->public_key, config_name(r));
		goto out;
	}
	if (s->data_size > max) {
		buf_printf(&pl->refused, "its data is %lld bytes, more than the remote cache's "
		           "max-entry-size of %lld bytes ('max-entry-size' in %s)", s->data_size, max,
		           config_name(r));
		goto out;
	}
	manifest_name = xasprintf("%s.manifest", pl->key);
	o = get(r, manifest_name, &manifest, why);
	if (o != REMOTE_OK) {
		if (manifest.too_large)
			buf_printf(&pl->refused, "its manifest is larger than %lld bytes%s",
			           manifest.limit, manifest.limit < MAX_MANIFEST_BYTES
			           ? " (the remote cache's max-entry-size)" : "");
		else
			request_failed(r, pl->key, "GET .manifest", o, why, pl->label, true);
		goto out;
	}
	pl->manifest = manifest.b;
	manifest.b = (struct buf){0};
	if (!pl->manifest.s)
		buf_puts(&pl->manifest, "");   /* an empty body is text too */
	text_digest(pl->manifest.s, pl->manifest.len, id);
	message = signed_message(pl->key, id, s->data_sha, s->data_size);
	if (!sign_verify(s->public_key, s->signature, message, strlen(message))) {
		buf_printf(&pl->refused, "its signature by %s does not verify over its key, manifest "
		           "and data hash", s->public_key);
		goto out;
	}
	if (memchr(pl->manifest.s, '\0', pl->manifest.len)) {
		buf_puts(&pl->refused, "its signed manifest is malformed (a NUL byte in it)");
		goto out;
	}
	if (tree_manifest_parse(&pl->entries, manifest_name, pl->manifest.s, &malformed) < 0) {
		buf_printf(&pl->refused, "its signed manifest is malformed (%s)", malformed);
		goto out;
	}
	qsort(pl->entries.entries, pl->entries.n, sizeof(*pl->entries.entries), tree_entry_by_path);
	rc = 1;
out:
	buf_release(&sig.b);
	buf_release(&manifest.b);
	free(sig_name);
	free(manifest_name);
	free(message);
	free(malformed);
	return rc;
}

/* The data into the file `path`: streamed, hashed, never read past its signed size. 1 if it
 * has its signed hash, 0 if not (refused or a failed request: said), -1 on a local error. */
static int fetch_data(struct pull *pl, const char *path)
{
	const struct signature_file *s = &pl->sig;
	struct sink body = {.limit = s->data_size};
	char why[REMOTE_WHY_SIZE], data_sha[DIGEST_HEX_LEN + 1];
	body.fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (body.fd < 0) {
		error("cannot create '%s':", path);
		return -1;
	}
	digest_init(&body.d);
	char *name = xasprintf("%s.tar.zst", pl->key);
	enum remote_outcome o = get(pl->r, name, &body, why);
	free(name);
	close(body.fd);
	digest_final(&body.d, data_sha);
	if (body.write_errno) {
		errno = body.write_errno;
		error("cannot write '%s':", path);
		return -1;
	}
	if (o != REMOTE_OK && !body.too_large) {
		request_failed(pl->r, pl->key, "GET .tar.zst", o, why, pl->label, true);
		return 0;
	}
	if (body.too_large) {
		buf_printf(&pl->refused, "its data is larger than its signed size, %lld bytes",
		           s->data_size);
		return 0;
	}
	if (body.bytes != s->data_size || strcmp(data_sha, s->data_sha) != 0) {
		buf_printf(&pl->refused, "its data does not match its signature (%lld bytes, sha256 "
		           "%s; signed: %lld bytes, sha256 %s)", body.bytes, data_sha, s->data_size,
		           s->data_sha);
		return 0;
	}
	return 1;
}

int remote_pull(struct remote_cache *r, const char *stage_cache, const char *key,
                const char *label, const struct strlist *inputs, const char *owner,
                char output[DIGEST_HEX_LEN + 1])
{
	if (!r || !r->url || r->unreachable || interrupted)
		return 0;
	struct pull pl = {.r = r, .key = key, .label = label};
	char *tmp = cache_scratch_dir(stage_cache, "pull", key);
	char *data = path_join(tmp, "data.tar.zst"), *files = path_join(tmp, "files");
	char *difference = NULL;
	int rc = 0;
	double started = now_seconds();
	r->transport->deadline = started + (double)timeout_of(r);
	if (fetch_signed(&pl) <= 0)
		goto out;
	rc = -1;
	if (remove_tree(tmp) < 0 || mkdir_p(files, 0755) < 0)
		goto out;
	rc = fetch_data(&pl, data);
	if (rc <= 0)
		goto out;
	rc = tree_tar_unpack(data, files, &pl.entries, &pl.refused);
	if (rc != 0) {
		rc = rc < 0 ? -1 : 0;
		goto out;
	}
	rc = cache_publish_expected(stage_cache, key, files, pl.manifest.s, &difference, inputs,
	                            owner, output);
	if (rc == 0)
		buf_printf(&pl.refused, "its files differ from its signed manifest (%s)", difference);
	if (rc == 1) {
		char size[32], took[32];
		info("pulled  %s from the remote cache (%s in %s, signed by %.20s...)", label,
		     format_size((double)pl.sig.data_size, size),
		     format_duration(now_seconds() - started, took), pl.sig.public_key);
	}
out:
	r->transport->deadline = 0;
	if (pl.refused.len)
		warn("remote cache entry %s/%s refused: %s; building %s here", r->url, key,
		     pl.refused.s, label);
	if (rc < 0)
		error("cannot take %s from the remote cache into the stage cache '%s'", label,
		      stage_cache);
	remove_tree(tmp);
	buf_release(&pl.manifest);
	buf_release(&pl.refused);
	tree_manifest_release(&pl.entries);
	free(difference);
	free(tmp);
	free(data);
	free(files);
	return rc;
}

/* Is the remote cache still worth asking in this run? */
static bool available(void *ctx)
{
	struct remote_cache *r = ctx;
	return !r->unreachable && !interrupted;
}

static int take(void *ctx, const struct plan *p, const struct node *n,
                char output[DIGEST_HEX_LEN + 1])
{
	char *owner = xasprintf("%s %s", n->target->name, n->stage->name);
	int rc = remote_pull(ctx, p->dirs.stage_cache, n->key, n->label, &n->inputs, owner, output);
	free(owner);
	return rc;
}

int remote_pull_stage(struct remote_cache *r, struct plan *p, struct node *n)
{
	if (!r || !r->url)
		return 0;
	return plan_pull_stage(p, n, &(struct plan_source){r, available, take});
}

int remote_pull_plan(struct remote_cache *r, struct plan *p)
{
	if (!r || !r->url)
		return 0;
	return plan_pull(p, &(struct plan_source){r, available, take});
}

/* ---- push ---- */

/* Upload the data under a temporary name, then move it into place. */
static bool upload_data(struct remote_cache *r, const char *key, const char *data,
                        long long size, const char *label)
{
	const struct remote_transport_ops *t = r->transport->ops;
	unsigned char noise[4] = {0};
	if (getrandom(noise, sizeof(noise), 0) < 0)
		noise[0] = (unsigned char)now_seconds();
	char *final = xasprintf("%s.tar.zst", key);
	char *part = xasprintf("%s.part-%ld-%02x%02x%02x%02x", final, (long)getpid(), noise[0],
	                       noise[1], noise[2], noise[3]);
	char why[REMOTE_WHY_SIZE];
	enum remote_outcome o;
	bool ok = false;
	FILE *f = fopen(data, "re");
	if (!f) {
		warn("cannot push %s to the remote cache: cannot open '%s': %s", label, data,
		     strerror(errno));
		goto out;
	}
	o = t->put(r->transport, part, f, size, why);
	if (o != REMOTE_OK) {
		request_failed(r, part, "PUT data", o, why, label, false);
		goto out;
	}
	o = t->move(r->transport, part, final, why);
	if (o == REMOTE_OK) {
		ok = true;
		goto out;
	}
	if (o == REMOTE_UNREACHABLE) {
		request_failed(r, part, "MOVE data", o, why, label, false);
		goto out;
	}
	/* a server without MOVE (Bazel's and ccache's HTTP caches): the final name at once */
	rewind(f);
	o = t->put(r->transport, final, f, size, why);
	if (o != REMOTE_OK)
		request_failed(r, final, "PUT data", o, why, label, false);
	else
		ok = true;
	if (!r->unreachable)
		t->delete(r->transport, part, why);
out:
	if (f)
		fclose(f);
	free(final);
	free(part);
	return ok;
}

void remote_push(struct remote_cache *r, const char *stage_cache, const char *key,
                 const char *label)
{
	if (!r || !r->url || !r->push || r->unreachable || interrupted)
		return;
	double started = now_seconds();
	char *manifest_path = cache_result_manifest(stage_cache, key);
	char *files = cache_result_files(stage_cache, key);
	char *tmp = cache_scratch_dir(stage_cache, "push", key);
	char *data = path_join(tmp, "data.tar.zst");
	char *sig_name = xasprintf("%s.sig", key), *manifest_name = xasprintf("%s.manifest", key);
	char *text = read_file(manifest_path, NULL);
	char *message = NULL, *sig_text = NULL, *malformed = NULL;
	struct tree_manifest m = {0};
	char why[REMOTE_WHY_SIZE];
	enum remote_outcome o;
	struct stat st;
	char output[DIGEST_HEX_LEN + 1], data_sha[DIGEST_HEX_LEN + 1];
	char public_key[SIGN_PUBLIC_LEN + 1], signature[SIGN_SIGNATURE_LEN + 1];
	if (!text || tree_manifest_parse(&m, manifest_path, text, &malformed) < 0) {
		warn("cannot push %s to the remote cache: its manifest '%s' cannot be read%s%s%s", label,
		     manifest_path, malformed ? " (" : "", malformed ? malformed : "",
		     malformed ? ")" : "");
		goto out;
	}
	text_digest(text, strlen(text), output);
	if (remove_tree(tmp) < 0 || mkdir_p(tmp, 0755) < 0 || pack(files, &m, data) < 0 ||
	    digest_file(data, data_sha) < 0 || stat(data, &st) < 0) {
		warn("cannot push %s to the remote cache: its data could not be packed", label);
		goto out;
	}
	message = signed_message(key, output, data_sha, (long long)st.st_size);
	if (sign_data(r->signer, message, strlen(message), signature) < 0)
		goto out;
	sign_public(r->signer, public_key);
	sig_text = xasprintf(SIG_HEADER "public-key %s\ndata %s %lld\nsignature %s\n", public_key,
	                     data_sha, (long long)st.st_size, signature);
	/* an older signature goes first, so no reader pairs it with the new data */
	o = r->transport->ops->delete(r->transport, sig_name, why);
	if (o == REMOTE_UNREACHABLE) {
		request_failed(r, sig_name, "DELETE .sig", o, why, label, false);
		goto out;
	}
	if (!upload_data(r, key, data, (long long)st.st_size, label))
		goto out;
	o = put_text(r, manifest_name, text, why);
	if (o != REMOTE_OK) {
		request_failed(r, manifest_name, "PUT .manifest", o, why, label, false);
		goto out;
	}
	o = put_text(r, sig_name, sig_text, why);   /* last: the entry now exists */
	if (o != REMOTE_OK) {
		request_failed(r, sig_name, "PUT .sig", o, why, label, false);
		goto out;
	}
	char size[32], took[32];
	info("pushed  %s to the remote cache (%s in %s)", label,
	     format_size((double)st.st_size, size), format_duration(now_seconds() - started, took));
out:
	remove_tree(tmp);
	tree_manifest_release(&m);
	free(text);
	free(message);
	free(sig_text);
	free(malformed);
	free(manifest_path);
	free(files);
	free(tmp);
	free(data);
	free(sig_name);
	free(manifest_name);
}

void remote_push_stage(struct remote_cache *r, const struct plan *p, const struct node *n)
{
	remote_push(r, p->dirs.stage_cache, n->key, n->label);
}

/* ---- crossroot key ---- */

int remote_key_command(int argc, char **argv)
{
	char public_key[SIGN_PUBLIC_LEN + 1];
	if (argc >= 1 && strcmp(argv[0], "generate") == 0 && argc <= 2) {
		char *dir = config_dir();
		char *path = argc == 2 ? xstrdup(argv[1])
		                       : dir ? path_join(dir, "remote-cache.key") : NULL;
		free(dir);
		if (!path) {
			error("crossroot key generate: name the FILE (no $HOME to put it in)");
			return EXIT_CONFIG;
		}
		int rc = sign_generate(path, public_key);
		if (rc == 0) {
			printf("%s\n", public_key);
			fprintf(stderr, "crossroot: wrote the private key to '%s' (mode 0600); to push with "
			        "it and trust what it signs, add to ~/.config/crossroot/remote-cache:\n"
			        "  signing-key = %s\n  trusted-key = %s\n", path, path, public_key);
		}
		free(path);
		return rc == 0 ? EXIT_OK : EXIT_CONFIG;
	}
	if (argc == 2 && strcmp(argv[0], "public") == 0) {
		struct sign_key *k = sign_load(argv[1]);
		if (!k)
			return EXIT_CONFIG;
		sign_public(k, public_key);
		printf("%s\n", public_key);
		sign_key_free(k);
		return EXIT_OK;
	}
	error("usage: crossroot key generate [FILE] | crossroot key public FILE");
	return EXIT_CONFIG;
}
