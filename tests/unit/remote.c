/* Unit tests of remote: pulls and pushes through an in-memory fake transport, and
 * plan_pull writing the node states. */
#define _GNU_SOURCE
#include "unit.h"

#include <archive.h>
#include <archive_entry.h>

#include "cache.h"
#include "digest.h"
#include "plan.h"
#include "remote.h"
#include "sign.h"

/* An in-memory server: names to bytes, every call logged ("GET k.sig"; a temporary upload's
 * random tail shows as "part-*"), and failures on demand. */
struct fake_file {
	char *name;
	struct buf body;
};
struct fake_transport {
	struct remote_transport base;
	struct fake_file files[64];
	size_t n;
	struct buf calls;
	const char *fail_method;        /* this method fails ... */
	const char *fail_suffix;        /* ... for a name ending so (NULL: every name) */
	enum remote_outcome fail_as;
	const char *fail_why;
	long long cut_after;            /* > 0: a GET ends unreachable after this many bytes */
};

static struct fake_file *fake_find(struct fake_transport *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->files[i].name, name) == 0)
			return &f->files[i];
	return NULL;
}

static struct fake_file *fake_create(struct fake_transport *f, const char *name)
{
	struct fake_file *file = fake_find(f, name);
	if (file) {
		file->body.len = 0;
		return file;
	}
	if (f->n == sizeof(f->files) / sizeof(f->files[0]))
		abort();   /* a test making more: make files[] larger */
	file = &f->files[f->n++];
	file->name = xstrdup(name);
	file->body = (struct buf){0};
	buf_puts(&file->body, "");
	return file;
}

static void fake_remove(struct fake_transport *f, struct fake_file *file)
{
	free(file->name);
	buf_release(&file->body);
	*file = f->files[--f->n];
}

/* Log the call; true if it is to fail. */
static bool fake_call(struct fake_transport *f, const char *method, const char *name,
                      const char *to, char *why)
{
	buf_printf(&f->calls, "%s %.*s%s", method, (int)(strstr(name, ".part-") ?
	           strstr(name, ".part-") - name + 6 : (long)strlen(name)), name,
	           strstr(name, ".part-") ? "*" : "");
	if (to)
		buf_printf(&f->calls, " %s", to);
	buf_puts(&f->calls, "\n");
	size_t len = strlen(name), tail = f->fail_suffix ? strlen(f->fail_suffix) : 0;
	if (!f->fail_method || strcmp(f->fail_method, method) != 0 ||
	    (f->fail_suffix && (len < tail || strcmp(name + len - tail, f->fail_suffix) != 0)))
		return false;
	snprintf(why, REMOTE_WHY_SIZE, "%s", f->fail_why);
	return true;
}

static enum remote_outcome fake_get(struct remote_transport *t, const char *name,
                                    remote_sink *sink, void *arg, char *why)
{
	struct fake_transport *f = (struct fake_transport *)t;
	if (fake_call(f, "GET", name, NULL, why))
		return f->fail_as;
	struct fake_file *file = fake_find(f, name);
	if (!file) {
		snprintf(why, REMOTE_WHY_SIZE, "HTTP status 404");
		return REMOTE_MISSING;
	}
	size_t end = file->body.len;
	if (f->cut_after > 0 && (size_t)f->cut_after < end)
		end = (size_t)f->cut_after;
	for (size_t off = 0; off < end; off += 1000)
		if (!sink(arg, file->body.s + off, end - off < 1000 ? end - off : 1000)) {
			snprintf(why, REMOTE_WHY_SIZE, "Failure writing output to destination");
			return REMOTE_STOPPED;
		}
	if (end < file->body.len) {
		snprintf(why, REMOTE_WHY_SIZE, "transfer closed with outstanding read data remaining");
		return REMOTE_UNREACHABLE;
	}
	return REMOTE_OK;
}

static enum remote_outcome fake_put(struct remote_transport *t, const char *name, FILE *from,
                                    long long size, char *why)
{
	struct fake_transport *f = (struct fake_transport *)t;
	if (fake_call(f, "PUT", name, NULL, why))
		return f->fail_as;
	struct fake_file *file = fake_create(f, name);
	char chunk[4096];
	size_t got;
	while ((got = fread(chunk, 1, sizeof(chunk), from)) > 0)
		buf_add(&file->body, chunk, got);
	if ((long long)file->body.len != size) {
		snprintf(why, REMOTE_WHY_SIZE, "the upload was %zu bytes, not %lld", file->body.len,
		         size);
		return REMOTE_STOPPED;
	}
	return REMOTE_OK;
}

static enum remote_outcome fake_move(struct remote_transport *t, const char *from,
                                     const char *to, char *why)
{
	struct fake_transport *f = (struct fake_transport *)t;
	if (fake_call(f, "MOVE", from, to, why))
		return f->fail_as;
	struct fake_file *file = fake_find(f, from);
	if (!file) {
		snprintf(why, REMOTE_WHY_SIZE, "HTTP status 404");
		return REMOTE_MISSING;
	}
	struct fake_file *old = fake_find(f, to);
	if (old) {
		buf_release(&old->body);
		old->body = file->body;
		file->body = (struct buf){0};
		fake_remove(f, file);
	} else {
		free(file->name);
		file->name = xstrdup(to);
	}
	return REMOTE_OK;
}

static enum remote_outcome fake_delete(struct remote_transport *t, const char *name, char *why)
{
	struct fake_transport *f = (struct fake_transport *)t;
	if (fake_call(f, "DELETE", name, NULL, why))
		return f->fail_as;
	struct fake_file *file = fake_find(f, name);
	if (!file) {
		snprintf(why, REMOTE_WHY_SIZE, "HTTP status 404");
		return REMOTE_MISSING;
	}
	fake_remove(f, file);
	return REMOTE_OK;
}

static void fake_free(struct remote_transport *t)
{
	struct fake_transport *f = (struct fake_transport *)t;
	while (f->n)
		fake_remove(f, &f->files[0]);
	buf_release(&f->calls);
}

static const struct remote_transport_ops fake_ops = {fake_get, fake_put, fake_move, fake_delete,
                                                     fake_free};

/* A file's bytes on the fake server, as a string ("" if it is not there). */
static const char *fake_body(struct fake_transport *f, const char *name)
{
	struct fake_file *file = fake_find(f, name);
	return file ? file->body.s : "";
}

static void fake_set(struct fake_transport *f, const char *name, const char *data, size_t n)
{
	struct fake_file *file = fake_create(f, name);
	buf_add(&file->body, data, n);
}

static void fake_reset(struct fake_transport *f)
{
	f->calls.len = 0;
	if (f->calls.s)
		f->calls.s[0] = '\0';
	f->fail_method = f->fail_suffix = NULL;
	f->cut_after = 0;
}

/* What the remote tests share: the fake server, a writer signing with key A, and a stage
 * cache holding result "k1" (a file, a link, an executable and 100 KB of other bytes). */
struct remote_test {
	struct fake_transport server;
	struct remote_cache writer, reader;
	char pub_a[SIGN_PUBLIC_LEN + 1], pub_b[SIGN_PUBLIC_LEN + 1];
	char *cache_a;              /* the writer's stage cache */
	char output[DIGEST_HEX_LEN + 1];   /* k1's output id */
	struct strlist inputs;
	int pulls;                  /* each pull goes to a fresh stage cache */
};
static struct remote_test rt;

static char *make_result(const char *dir, const char *key, const char *greeting,
                         char output[DIGEST_HEX_LEN + 1])
{
	char *tree = xasprintf("%s/remote-tree", scratch);
	char *bin = xasprintf("%s/usr/bin", tree), *file = xasprintf("%s/usr/a.txt", tree);
	char *exe = xasprintf("%s/usr/bin/tool", tree), *link = xasprintf("%s/usr/link", tree);
	char *blob = xasprintf("%s/usr/blob", tree);
	mkdir_p(bin, 0755);
	write_text(file, greeting);
	write_text(exe, "#!/bin/sh\necho tool\n");
	chmod(exe, 0755);
	CHECK(symlink("a.txt", link) == 0);
	FILE *f = fopen(blob, "w");
	for (unsigned i = 0, x = 1; i < 100000; i++, x = x * 1103515245 + 12345)
		fputc((int)(x >> 16), f);
	fclose(f);
	CHECK(cache_publish(dir, key, tree, &rt.inputs, "t one", 1, output) == 0);
	free(bin);
	free(file);
	free(exe);
	free(link);
	free(blob);
	return tree;
}

static void remote_test_setup(void)
{
	char *a = xasprintf("%s/rkeys/a.pem", scratch), *b = xasprintf("%s/rkeys/b.pem", scratch);
	CHECK(sign_generate(a, rt.pub_a) == 0 && sign_generate(b, rt.pub_b) == 0);
	rt.server.base.ops = &fake_ops;
	rt.writer = (struct remote_cache){.url = xstrdup("fake://cache"), .push = true,
	                                  .signer = sign_load(a), .transport = &rt.server.base};
	strlist_add(&rt.writer.trusted, rt.pub_a);
	rt.reader = (struct remote_cache){.url = xstrdup("fake://cache"),
	                                  .transport = &rt.server.base};
	strlist_add(&rt.reader.trusted, rt.pub_a);
	rt.cache_a = xasprintf("%s/remote-a", scratch);
	strlist_add(&rt.inputs, "engine 3");
	free(make_result(rt.cache_a, "k1", "hello\n", rt.output));
	free(a);
	free(b);
}

static void remote_test_teardown(void)
{
	fake_free(&rt.server.base);
	rt.writer.transport = rt.reader.transport = NULL;   /* not theirs to free */
	remote_release(&rt.writer);
	remote_release(&rt.reader);
	strlist_release(&rt.inputs);
	free(rt.cache_a);
}

struct pull_call {
	struct remote_cache *r;
	const char *key;
	char *dir;                  /* a fresh stage cache */
	char output[DIGEST_HEX_LEN + 1];
};

static int call_pull(void *arg)
{
	struct pull_call *c = arg;
	return remote_pull(c->r, c->dir, c->key, "one (t)", &rt.inputs, "t one", c->output);
}

/* Pull `key` with `r` into a fresh stage cache: the result, its output in *text. */
static int pull_into_fresh(struct remote_cache *r, const char *key, char **text,
                           struct pull_call *c)
{
	*c = (struct pull_call){.r = r, .key = key};
	c->dir = xasprintf("%s/remote-pull-%d", scratch, ++rt.pulls);
	mkdir_p(c->dir, 0755);
	int rc;
	*text = capture_output(call_pull, c, &rc);
	return rc;
}

/* Nothing of a refused pull stays in the stage cache: no result, no scratch. */
static bool stage_cache_empty(const char *dir)
{
	struct strlist names = {0};
	list_dir(dir, &names);
	bool empty = names.n == 0;
	strlist_release(&names);
	return empty;
}

/* A pull that must be refused with `expect` in its warning, leaving nothing behind. */
static bool refused_with(struct remote_cache *r, const char *key, const char *expect)
{
	struct pull_call c;
	char *text;
	int rc = pull_into_fresh(r, key, &text, &c);
	char *prefix = xasprintf("warning: remote cache entry fake://cache/%s refused: ", key);
	bool ok = rc == 0 && text && strstr(text, prefix) && strstr(text, expect) &&
	          strstr(text, "; building one (t) here") && stage_cache_empty(c.dir);
	if (!ok)
		fprintf(stderr, "remote pull of %s: rc %d, wanted '%s' in:\n%s", key, rc, expect,
		        text ? text : "(nothing)\n");
	free(prefix);
	free(text);
	free(c.dir);
	return ok;
}

struct push_call {
	struct remote_cache *r;
	const char *dir, *key;
};

static int call_push(void *arg)
{
	struct push_call *c = arg;
	remote_push(c->r, c->dir, c->key, "one (t)");
	return 0;
}

static char *push(struct remote_cache *r, const char *dir, const char *key)
{
	struct push_call c = {r, dir, key};
	int rc;
	return capture_output(call_push, &c, &rc);
}

/* A signature file for `key` over `manifest` and `data`, signed by the writer's key. */
static char *signature_for(const char *key, const char *manifest, const char *data, size_t size)
{
	char output[DIGEST_HEX_LEN + 1], data_sha[DIGEST_HEX_LEN + 1], sig[SIGN_SIGNATURE_LEN + 1];
	struct digest d;
	digest_init(&d);
	digest_update(&d, manifest, strlen(manifest));
	digest_final(&d, output);
	digest_init(&d);
	digest_update(&d, data, size);
	digest_final(&d, data_sha);
	char *message = xasprintf("crossroot-remote-entry 1\nkey %s\noutput %s\ndata %s %zu\n", key,
	                          output, data_sha, size);
	CHECK(sign_data(rt.writer.signer, message, strlen(message), sig) == 0);
	free(message);
	return xasprintf("crossroot-remote-signature 1\npublic-key %s\ndata %s %zu\nsignature %s\n",
	                 rt.pub_a, data_sha, size, sig);
}

/* An entry `key` made of these parts, signed by the writer's key. */
static void forge_entry(const char *key, const char *manifest, const char *data, size_t size)
{
	char *name = xasprintf("%s.manifest", key);
	fake_set(&rt.server, name, manifest, strlen(manifest));
	free(name);
	name = xasprintf("%s.tar.zst", key);
	fake_set(&rt.server, name, data, size);
	free(name);
	char *sig = signature_for(key, manifest, data, size);
	name = xasprintf("%s.sig", key);
	fake_set(&rt.server, name, sig, strlen(sig));
	free(name);
	free(sig);
}

/* Entry k1 as pushed, to make others from. */
static struct buf k1_sig, k1_manifest, k1_data;

/* A copy of entry k1 under `key`, with parts replaced (NULL: k1's). */
static void copy_entry(const char *key, const char *sig, const char *manifest, const char *data,
                       size_t size)
{
	char *name = xasprintf("%s.sig", key);
	fake_set(&rt.server, name, sig ? sig : k1_sig.s, strlen(sig ? sig : k1_sig.s));
	free(name);
	name = xasprintf("%s.manifest", key);
	manifest = manifest ? manifest : k1_manifest.s;
	fake_set(&rt.server, name, manifest, strlen(manifest));
	free(name);
	name = xasprintf("%s.tar.zst", key);
	fake_set(&rt.server, name, data ? data : k1_data.s, data ? size : k1_data.len);
	free(name);
}

/* Push in read-write mode: the transport sees the old signature deleted, the data uploaded
 * under a temporary name and moved into place, the manifest, then the signature last. */
static void test_remote_push(void)
{
	char *text = push(&rt.writer, rt.cache_a, "k1");
	CHECK(text && strstr(text, "pushed  one (t) to the remote cache"));
	free(text);
	CHECK(strcmp(rt.server.calls.s, "DELETE k1.sig\n"
	                                "PUT k1.tar.zst.part-*\n"
	                                "MOVE k1.tar.zst.part-* k1.tar.zst\n"
	                                "PUT k1.manifest\n"
	                                "PUT k1.sig\n") == 0);
	CHECK(rt.server.n == 3);   /* no temporary upload left */
	char *path = xasprintf("%s/k1/manifest", rt.cache_a);
	char *manifest = read_file(path, NULL);
	CHECK(manifest && strcmp(fake_body(&rt.server, "k1.manifest"), manifest) == 0);
	CHECK(strncmp(fake_body(&rt.server, "k1.sig"), "crossroot-remote-signature 1\npublic-key ",
	              40) == 0);
	free(manifest);
	free(path);

	/* the same files give the same bytes */
	struct buf first = {0};
	struct fake_file *data = fake_find(&rt.server, "k1.tar.zst");
	buf_add(&first, data->body.s, data->body.len);
	fake_reset(&rt.server);
	free(push(&rt.writer, rt.cache_a, "k1"));
	data = fake_find(&rt.server, "k1.tar.zst");
	CHECK(data && data->body.len == first.len && memcmp(data->body.s, first.s, first.len) == 0);
	buf_release(&first);

	/* read mode never writes */
	fake_reset(&rt.server);
	free(push(&rt.reader, rt.cache_a, "k1"));
	CHECK(rt.server.calls.len == 0);

	/* a server without MOVE gets a PUT of the final name, and the temporary one deleted */
	fake_reset(&rt.server);
	rt.server.fail_method = "MOVE";
	rt.server.fail_as = REMOTE_FAILED;
	rt.server.fail_why = "HTTP status 405";
	text = push(&rt.writer, rt.cache_a, "k1");
	CHECK(text && strstr(text, "pushed  one (t)"));
	free(text);
	CHECK(strcmp(rt.server.calls.s, "DELETE k1.sig\n"
	                                "PUT k1.tar.zst.part-*\n"
	                                "MOVE k1.tar.zst.part-* k1.tar.zst\n"
	                                "PUT k1.tar.zst\n"
	                                "DELETE k1.tar.zst.part-*\n"
	                                "PUT k1.manifest\n"
	                                "PUT k1.sig\n") == 0);
	CHECK(rt.server.n == 3);

	/* a server that cannot be reached: one warning, nothing uploaded, not asked again */
	fake_reset(&rt.server);
	rt.server.fail_method = "DELETE";
	rt.server.fail_as = REMOTE_UNREACHABLE;
	rt.server.fail_why = "Failed to connect to cache port 80: Connection refused";
	text = push(&rt.writer, rt.cache_a, "k1");
	CHECK(text && strstr(text, "warning: remote cache fake://cache cannot be reached (DELETE "
	                           ".sig fake://cache/k1.sig: Failed to connect to cache port 80: "
	                           "Connection refused): one (t) is not pushed"));
	free(text);
	CHECK(strcmp(rt.server.calls.s, "DELETE k1.sig\n") == 0 && rt.writer.unreachable);
	free(push(&rt.writer, rt.cache_a, "k1"));
	CHECK(strcmp(rt.server.calls.s, "DELETE k1.sig\n") == 0);
	rt.writer.unreachable = false;
	fake_reset(&rt.server);
	CHECK(rt.server.n == 3);   /* the pushed entry is still whole */
}

/* A good signed entry is pulled: published with the writer's output id, by three GETs. */
static void test_remote_pull_good(void)
{
	fake_reset(&rt.server);
	struct pull_call c;
	char *text;
	CHECK(pull_into_fresh(&rt.reader, "k1", &text, &c) == 1);
	CHECK(text && strstr(text, "pulled  one (t) from the remote cache (") &&
	      !strstr(text, "warning"));
	CHECK(strcmp(c.output, rt.output) == 0);
	CHECK(strcmp(rt.server.calls.s, "GET k1.sig\nGET k1.manifest\nGET k1.tar.zst\n") == 0);
	char found[DIGEST_HEX_LEN + 1];
	CHECK(cache_lookup(c.dir, "k1", true, found) == 1 && strcmp(found, rt.output) == 0);
	char *link = xasprintf("%s/k1/files/usr/link", c.dir);
	char target[16] = {0};
	CHECK(readlink(link, target, sizeof(target) - 1) == 5 && strcmp(target, "a.txt") == 0);
	char *exe = xasprintf("%s/k1/files/usr/bin/tool", c.dir);
	struct stat st;
	CHECK(stat(exe, &st) == 0 && (st.st_mode & 0111) == 0111);
	/* only the result: the pull's scratch is gone */
	struct strlist names = {0};
	list_dir(c.dir, &names);
	CHECK(names.n == 1 && strcmp(names.v[0], "k1") == 0);
	strlist_release(&names);
	free(exe);
	free(link);
	free(text);
	free(c.dir);

	/* no entry: silent, nothing built into the cache */
	fake_reset(&rt.server);
	CHECK(pull_into_fresh(&rt.reader, "nothing", &text, &c) == 0);
	CHECK(text && !*text && stage_cache_empty(c.dir));
	CHECK(strcmp(rt.server.calls.s, "GET nothing.sig\n") == 0);
	free(text);
	free(c.dir);
}

/* Keep entry k1 as pushed (k1_sig, k1_manifest, k1_data). */
static bool keep_k1(void)
{
	fake_reset(&rt.server);
	buf_puts(&k1_sig, fake_body(&rt.server, "k1.sig"));
	buf_puts(&k1_manifest, fake_body(&rt.server, "k1.manifest"));
	struct fake_file *data = fake_find(&rt.server, "k1.tar.zst");
	CHECK(data != NULL);
	if (data)
		buf_add(&k1_data, data->body.s, data->body.len);
	return data != NULL;
}

/* Entries whose signature does not hold: refused, each with a warning naming it and what
 * failed; nothing is left in the stage cache. */
static void test_remote_pull_refused_signature(void)
{
	/* a bad signature: one hex digit of it changed */
	char *bad = xstrdup(k1_sig.s);
	char *digit = strstr(bad, "\nsignature ") + strlen("\nsignature ");
	*digit = *digit == '0' ? '1' : '0';
	copy_entry("badsig", bad, NULL, NULL, 0);
	free(bad);
	CHECK(refused_with(&rt.reader, "badsig", "its signature by " ) &&
	      refused_with(&rt.reader, "badsig", "does not verify over its key, manifest and data"));

	/* an entry replayed under another key does not verify either */
	copy_entry("replayed", NULL, NULL, NULL, 0);
	CHECK(refused_with(&rt.reader, "replayed", "does not verify"));

	/* signed by a key the reader does not trust */
	struct remote_cache other = rt.reader;
	other.trusted = (struct strlist){0};
	strlist_add(&other.trusted, rt.pub_b);
	char *untrusted = xasprintf("it is signed by %s, which is not a trusted key", rt.pub_a);
	CHECK(refused_with(&other, "k1", untrusted));
	free(untrusted);
	strlist_release(&other.trusted);

	/* the manifest changed on the server: the signature is over the old one */
	char *changed = xasprintf("%sd\t755\textra\n", k1_manifest.s);
	copy_entry("k1", NULL, changed, NULL, 0);
	CHECK(refused_with(&rt.reader, "k1", "does not verify over its key, manifest and data"));
	free(changed);
	copy_entry("k1", NULL, NULL, NULL, 0);   /* k1 as pushed again */

	/* a huge signature file, and a malformed one */
	char *huge = xcalloc(70000, 1);
	memset(huge, 'x', 69999);
	copy_entry("hugesig", huge, NULL, NULL, 0);
	free(huge);
	CHECK(refused_with(&rt.reader, "hugesig", "its signature file is larger than 65536 bytes"));
	copy_entry("garbled", "crossroot-remote-signature 1\npublic-key nonsense\n", NULL, NULL, 0);
	CHECK(refused_with(&rt.reader, "garbled", "its signature file is malformed"));
}

/* Entries signed by a trusted key whose manifest or data is refused all the same. */
static void test_remote_pull_refused_content(void)
{
	/* a signed manifest the files do not match: k1's manifest with another tree's data */
	char *other_dir = xasprintf("%s/remote-other", scratch);
	char other_output[DIGEST_HEX_LEN + 1];
	free(make_result(other_dir, "k2", "hellO\n", other_output));
	free(push(&rt.writer, other_dir, "k2"));
	struct fake_file *data2 = fake_find(&rt.server, "k2.tar.zst");
	struct buf copy2 = {0};
	buf_add(&copy2, data2->body.s, data2->body.len);
	forge_entry("forged", k1_manifest.s, copy2.s, copy2.len);
	buf_release(&copy2);
	CHECK(refused_with(&rt.reader, "forged", "its files differ from its signed manifest") &&
	      refused_with(&rt.reader, "forged", "usr/a.txt"));
	free(other_dir);

	/* a signed manifest that does not list what the data holds */
	char *fewer = xstrdup(k1_manifest.s);
	char *line = strstr(fewer, "l\ta.txt\tusr/link\n");
	CHECK(line != NULL);
	if (line)
		memmove(line, line + strlen("l\ta.txt\tusr/link\n"),
		        strlen(line + strlen("l\ta.txt\tusr/link\n")) + 1);
	forge_entry("fewer", fewer, k1_data.s, k1_data.len);
	CHECK(refused_with(&rt.reader, "fewer", "its data holds 'usr/link', which the signed "
	                                        "manifest does not list"));
	free(fewer);

	/* a signed manifest that is malformed: cache's parser says where */
	forge_entry("malformed", "crossroot-manifest 2\nd\t755\tusr\nx\tnonsense\n", k1_data.s,
	            k1_data.len);
	CHECK(refused_with(&rt.reader, "malformed", "its signed manifest is malformed "
	                                             "(malformed.manifest:3: malformed manifest line)"));
	forge_entry("escape", "crossroot-manifest 2\nd\t755\t../up\n", k1_data.s, k1_data.len);
	CHECK(refused_with(&rt.reader, "escape", "path '../up' leaves its directory"));

	/* a truncated body: fewer bytes than signed (k1's own entry, its data cut) */
	copy_entry("k1", NULL, NULL, k1_data.s, k1_data.len / 2);
	char *mismatch = xasprintf("its data does not match its signature (%zu bytes, sha256 ",
	                           k1_data.len / 2);
	CHECK(refused_with(&rt.reader, "k1", mismatch));
	free(mismatch);

	/* oversize: more bytes than signed (never read past the signed size) */
	struct buf longer = {0};
	buf_add(&longer, k1_data.s, k1_data.len);
	buf_puts(&longer, "more");
	copy_entry("k1", NULL, NULL, longer.s, longer.len);
	buf_release(&longer);
	CHECK(refused_with(&rt.reader, "k1", "its data is larger than its signed size"));
	copy_entry("k1", NULL, NULL, NULL, 0);
}

/* A tar.zst of a directory "usr", a link "usr/l" to "..", and a file "usr/l/x" through it: a
 * signed manifest may list that, but the extractor refuses to write through a link. */
static size_t tar_through_link(char *out, size_t cap)
{
	struct archive *a = archive_write_new();
	struct archive_entry *e = archive_entry_new();
	size_t used = 0;
	CHECK(archive_write_add_filter_zstd(a) == ARCHIVE_OK &&
	      archive_write_set_format_pax_restricted(a) == ARCHIVE_OK &&
	      archive_write_open_memory(a, out, cap, &used) == ARCHIVE_OK);
	archive_entry_set_pathname(e, "usr");
	archive_entry_set_filetype(e, AE_IFDIR);
	archive_entry_set_perm(e, 0755);
	archive_write_header(a, e);
	archive_entry_clear(e);
	archive_entry_set_pathname(e, "usr/l");
	archive_entry_set_filetype(e, AE_IFLNK);
	archive_entry_set_perm(e, 0777);
	archive_entry_set_symlink(e, "..");
	archive_write_header(a, e);
	archive_entry_clear(e);
	archive_entry_set_pathname(e, "usr/l/x");
	archive_entry_set_filetype(e, AE_IFREG);
	archive_entry_set_perm(e, 0644);
	archive_entry_set_size(e, 3);
	archive_write_header(a, e);
	archive_write_data(a, "hi\n", 3);
	archive_write_close(a);
	archive_entry_free(e);
	archive_write_free(a);
	return used;
}

/* An entry signed by a trusted key that the extractor refuses is a miss with a warning, never
 * a failed build, and nothing escapes the scratch directory. */
static void test_remote_pull_refused_by_extractor(void)
{
	static char data[1 << 16];
	size_t n = tar_through_link(data, sizeof(data));
	CHECK(n > 0);
	forge_entry("throughlink", "crossroot-manifest 2\nd\t755\tusr\nl\t..\tusr/l\n"
	            "f\t644\t3\t98ea6e4f216f2fb4b69fff9b3a44842c38686ca685f3f55dc48c5d3fb1107be4\t"
	            "usr/l/x\n", data, n);
	CHECK(refused_with(&rt.reader, "throughlink", "the extractor refused 'usr/l/x'"));
}

/* A transport error is a miss with a clear message: an HTTP error for that entry; a server
 * that cannot be reached (or is cut off mid-body) once, and then not asked again. */
static void test_remote_pull_errors(void)
{
	struct pull_call c;
	char *text;
	fake_reset(&rt.server);
	rt.server.fail_method = "GET";
	rt.server.fail_as = REMOTE_FAILED;
	rt.server.fail_why = "HTTP status 500";
	CHECK(pull_into_fresh(&rt.reader, "k1", &text, &c) == 0 && stage_cache_empty(c.dir));
	CHECK(text && strstr(text, "warning: remote cache entry fake://cache/k1: GET .sig failed: "
	                           "HTTP status 500; building one (t) here"));
	CHECK(!rt.reader.unreachable);
	free(text);
	free(c.dir);

	fake_reset(&rt.server);
	rt.server.cut_after = 5000;   /* the data cut off in the middle */
	CHECK(pull_into_fresh(&rt.reader, "k1", &text, &c) == 0 && stage_cache_empty(c.dir));
	CHECK(text && strstr(text, "warning: remote cache fake://cache cannot be reached (GET "
	                           ".tar.zst of entry fake://cache/k1: transfer closed with "
	                           "outstanding read data remaining); building one (t) here, and "
	                           "not asking the remote cache again in this run"));
	CHECK(rt.reader.unreachable);
	free(text);
	free(c.dir);
	fake_reset(&rt.server);
	CHECK(pull_into_fresh(&rt.reader, "k1", &text, &c) == 0);
	CHECK(rt.server.calls.len == 0 && text && !*text);   /* not asked again */
	free(text);
	free(c.dir);
	rt.reader.unreachable = false;

	fake_reset(&rt.server);
	rt.server.fail_method = "GET";
	rt.server.fail_suffix = ".sig";
	rt.server.fail_as = REMOTE_UNREACHABLE;
	rt.server.fail_why = "Failed to connect to cache port 80: Connection refused";
	CHECK(pull_into_fresh(&rt.reader, "k1", &text, &c) == 0 && stage_cache_empty(c.dir));
	CHECK(text && strstr(text, "cannot be reached (GET .sig of entry fake://cache/k1: Failed to "
	                           "connect to cache port 80: Connection refused)"));
	CHECK(rt.reader.unreachable);
	free(text);
	free(c.dir);
	rt.reader.unreachable = false;
	fake_reset(&rt.server);
}

/* plan_pull: the plan, not the source, writes the states. */
struct fake_source {
	int asked;
	const char *has;            /* the one key it has */
};

static bool fake_available(void *ctx)
{
	(void)ctx;
	return true;
}

static int fake_take(void *ctx, const struct plan *p, const struct node *n,
                     char output[DIGEST_HEX_LEN + 1])
{
	struct fake_source *s = ctx;
	(void)p;
	s->asked++;
	if (strcmp(n->key, s->has) != 0)
		return 0;
	memset(output, 'a', DIGEST_HEX_LEN);
	output[DIGEST_HEX_LEN] = '\0';
	return 1;
}

struct pull_stage_call {
	struct plan *p;
	struct node *n;
	const struct plan_source *from;
};

static int call_pull_stage(void *arg)
{
	struct pull_stage_call *c = arg;
	return plan_pull_stage(c->p, c->n, c->from);
}

static void test_plan_pull(void)
{
	struct node tree1 = {.kind = NODE_TREE, .state = NODE_WAITING};
	struct node tree2 = {.kind = NODE_TREE, .state = NODE_WAITING};
	struct node got = {.kind = NODE_STAGE, .state = NODE_WAITING, .key = "kgot",
	                   .label = "got (t)", .why = xstrdup("not built yet")};
	struct node miss = {.kind = NODE_STAGE, .state = NODE_WAITING, .key = "kmiss",
	                    .label = "miss (t)"};
	struct node *users1[] = {&got}, *users2[] = {&miss, &got};
	tree1.users = users1;
	tree1.n_users = 1;
	tree2.users = users2;
	tree2.n_users = 2;
	struct node *nodes[] = {&tree1, &tree2, &got, &miss};
	struct plan p = {.nodes = nodes, .n_nodes = 4, .dirs.stage_cache = rt.cache_a};
	struct fake_source s = {.has = "kgot"};
	struct plan_source from = {&s, fake_available, fake_take};
	CHECK(plan_pull(&p, &from) == 0);
	CHECK(s.asked == 2);
	CHECK(got.state == NODE_CACHED && got.why == NULL && got.output[0] == 'a');
	CHECK(miss.state == NODE_WAITING);
	CHECK(tree1.state == NODE_SKIPPED && tree2.state == NODE_WAITING);
	/* a result already in the local stage cache (k1) is cached without asking */
	struct node local = {.kind = NODE_STAGE, .state = NODE_WAITING, .key = "k1",
	                     .label = "local (t)"};
	struct pull_stage_call call = {&p, &local, &from};
	int rc;
	char *text = capture_output(call_pull_stage, &call, &rc);
	CHECK(rc == 1 && local.state == NODE_CACHED && strcmp(local.output, rt.output) == 0 &&
	      s.asked == 2 && text && strstr(text, "cached  local (t)"));
	free(text);
	free(got.why);
}

static int configure_from(void *arg)
{
	struct remote_cache r;
	(void)arg;
	int rc = remote_configure(&r, NULL, NULL, NULL, 0);
	if (rc == 0)
		remote_release(&r);
	return rc;
}

/* A configuration file that is a FIFO is refused at once, never waited on. */
TEST(remote_config_fifo)
{
	char *fifo = xasprintf("%s/remote-config.fifo", scratch);
	CHECK(mkfifo(fifo, 0600) == 0);
	setenv("CROSSROOT_REMOTE_CACHE_CONFIG", fifo, 1);
	int rc;
	alarm(10);   /* a hang is a failure, not a stuck test run */
	char *err = capture_stderr(configure_from, NULL, &rc);
	alarm(0);
	unsetenv("CROSSROOT_REMOTE_CACHE_CONFIG");
	CHECK(rc < 0 && err && strstr(err, "remote-config.fifo") && strstr(err, "not a regular file"));
	free(err);
	free(fifo);
}

TEST(remote)
{
	remote_test_setup();
	test_remote_push();
	test_remote_pull_good();
	if (keep_k1()) {
		test_remote_pull_refused_signature();
		test_remote_pull_refused_content();
		test_remote_pull_refused_by_extractor();
	}
	buf_release(&k1_sig);
	buf_release(&k1_manifest);
	buf_release(&k1_data);
	test_remote_pull_errors();
	test_plan_pull();
	remote_test_teardown();
}
