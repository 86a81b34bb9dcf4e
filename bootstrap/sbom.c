/* sbom: the SPDX 2.3 JSON document of a package. See sbom.h.
 * Built as a jansson tree and dumped with sorted keys: deterministic bytes. */
#define _GNU_SOURCE
#include "sbom.h"

#include <ctype.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tree.h"
#include "util.h"

/* SPDX identifiers allow letters, digits, '.' and '-' only */
static char *spdx_id(const char *prefix, const char *name)
{
	char *id = xasprintf("SPDXRef-%s-%s", prefix, name);
	for (char *c = id + 8; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '.' && *c != '-')
			*c = '-';
	return id;
}

static json_t *checksum(const char *algorithm, const char *value)
{
	return json_pack("{s:s, s:s}", "algorithm", algorithm, "checksumValue", value);
}

static void relate(json_t *relationships, const char *from, const char *type, const char *to)
{
	json_array_append_new(relationships, json_pack("{s:s, s:s, s:s}", "spdxElementId", from,
	                                               "relationshipType", type,
	                                               "relatedSpdxElement", to));
}

/* SPDX's package verification code: the SHA1 of the files' SHA1s, sorted, concatenated
 * (`sums` is sorted here) */
static void verification_code(struct strlist *sums, char out[41])
{
	strlist_sort(sums);
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	EVP_DigestInit_ex(ctx, EVP_sha1(), NULL);
	for (size_t i = 0; i < sums->n; i++)
		EVP_DigestUpdate(ctx, sums->v[i], strlen(sums->v[i]));
	unsigned char raw[EVP_MAX_MD_SIZE];
	unsigned len = 0;
	EVP_DigestFinal_ex(ctx, raw, &len);
	EVP_MD_CTX_free(ctx);
	for (unsigned i = 0; i < len && i < 20; i++)
		snprintf(out + 2 * i, 3, "%02x", raw[i]);
}

/* Is `path` a file of the overlay (crossroot install) that the package records? */
static bool from_overlay(const struct package_manifest *m, const char *path)
{
	struct tree_entry key = {.path = (char *)path};
	const struct tree_entry *e = !m->overlay.n ? NULL :
	                             bsearch(&key, m->overlay.entries, m->overlay.n, sizeof(key),
	                                     tree_entry_by_path);
	return e && e->kind == 'f';
}

/* The user's own files (crossroot install), when there are any: a package of the SDK's files
 * it holds (`files`, taken), which the SDK CONTAINS. */
static void add_overlay(const struct package_manifest *m, json_t *packages,
                        json_t *relationships, json_t *files, struct strlist *sums)
{
	if (!m->overlay.n) {
		json_decref(files);
		return;
	}
	char code[41] = "";
	verification_code(sums, code);
	char *info = xasprintf("%zu entries laid over the sysroot from the target's overlay, each "
	                       "recorded in the package manifest's overlay lines", m->overlay.n);
	json_array_append_new(packages,
		json_pack("{s:s, s:s, s:s, s:b, s:{s:s}, s:o, s:s, s:s, s:s, s:s}",
		          "name", "overlay", "SPDXID", "SPDXRef-Package-overlay",
		          "downloadLocation", "NOASSERTION", "filesAnalyzed", 1,
		          "packageVerificationCode", "packageVerificationCodeValue", code,
		          "hasFiles", files, "licenseConcluded", "NOASSERTION",
		          "licenseDeclared", "NOASSERTION", "copyrightText", "NOASSERTION",
		          "sourceInfo", info));
	free(info);
	relate(relationships, "SPDXRef-Package-sdk", "CONTAINS", "SPDXRef-Package-overlay");
}

char *sbom_spdx_json(const struct package_manifest *m)
{
	char created[32];
	time_t when = (time_t)m->epoch;
	struct tm tm;
	gmtime_r(&when, &tm);
	strftime(created, sizeof(created), "%Y-%m-%dT%H:%M:%SZ", &tm);
	char *name = xasprintf("%s-%s", m->target, m->version);
	char *namespace = xasprintf("https://spdx.org/spdxdocs/crossroot-%s-%s", m->target,
	                            m->version);
	char *tool = xasprintf("Tool: crossroot-%s", CROSSROOT_VERSION);
	json_t *doc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:{s:s, s:[s]}}",
	                        "spdxVersion", "SPDX-2.3", "dataLicense", "CC0-1.0",
	                        "SPDXID", "SPDXRef-DOCUMENT", "name", name,
	                        "documentNamespace", namespace,
	                        "creationInfo", "created", created, "creators", tool);
	json_t *packages = json_array(), *files = json_array(), *relationships = json_array();
	json_t *has_files = json_array();
	relate(relationships, "SPDXRef-DOCUMENT", "DESCRIBES", "SPDXRef-Package-sdk");

	json_t *overlay_files = json_array();
	struct strlist sums = {0}, overlay_sums = {0};
	size_t file_number = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct package_entry *e = &m->entries[i];
		if (e->kind != 'f')
			continue;
		char *id = xasprintf("SPDXRef-File-%zu", ++file_number);
		char *file_name = xasprintf("./%s", e->path);
		json_t *checksums = json_pack("[o, o]", checksum("SHA1", e->sha1),
		                              checksum("SHA256", e->sha256));
		json_t *file = json_pack("{s:s, s:s, s:o, s:s, s:s}", "fileName", file_name, "SPDXID",
		                         id, "checksums", checksums, "licenseConcluded", "NOASSERTION",
		                         "copyrightText", "NOASSERTION");
		if (from_overlay(m, e->path)) {
			json_object_set_new(file, "comment", json_string("installed with crossroot "
			                                                 "install (the overlay)"));
			json_array_append_new(overlay_files, json_string(id));
			strlist_add(&overlay_sums, e->sha1);
		}
		json_array_append_new(files, file);
		json_array_append_new(has_files, json_string(id));
		strlist_add(&sums, e->sha1);
		free(file_name);
		free(id);
	}
	char code[41] = "";
	verification_code(&sums, code);
	char *summary = xasprintf("sysroot, clang configuration, compiler wrappers and build-system "
	                          "files for %s (%s), built by crossroot from the sources below",
	                          m->target, m->triple);
	json_array_append_new(packages,
		json_pack("{s:s, s:s, s:s, s:s, s:b, s:{s:s}, s:o, s:s, s:s, s:s, s:s, s:s}",
		          "name", m->target, "SPDXID", "SPDXRef-Package-sdk", "versionInfo", m->version,
		          "downloadLocation", "NOASSERTION", "filesAnalyzed", 1,
		          "packageVerificationCode", "packageVerificationCodeValue", code,
		          "hasFiles", has_files, "licenseConcluded", "NOASSERTION",
		          "licenseDeclared", "NOASSERTION", "copyrightText", "NOASSERTION",
		          "summary", summary, "primaryPackagePurpose", "LIBRARY"));
	free(summary);

	add_overlay(m, packages, relationships, overlay_files, &overlay_sums);
	strlist_release(&sums);
	strlist_release(&overlay_sums);

	/* one package per source; origins of one source are alternatives for the same bytes */
	for (size_t i = 0; i + 3 < m->sources.n; i += 4) {
		const char *source = m->sources.v[i], *version = m->sources.v[i + 1];
		char *id = spdx_id("Source", source);
		bool first = true;
		for (size_t j = 0; j < i; j += 4)
			first &= strcmp(m->sources.v[j], source) != 0;
		if (!first) {
			free(id);
			continue;
		}
		struct buf patches = {0};
		char *prefix = xasprintf("%s/%s/", source, version);
		for (size_t k = 0; k + 1 < m->patches.n; k += 2)
			if (strncmp(m->patches.v[k], prefix, strlen(prefix)) == 0)
				buf_printf(&patches, "%s%s (sha256 %s)", patches.len ? ", " : "patched with ",
				           m->patches.v[k], m->patches.v[k + 1]);
		free(prefix);
		const char *origin = m->sources.v[i + 3];
		bool url = strncmp(origin, "http", 4) == 0 || strncmp(origin, "ftp", 3) == 0;
		json_t *pkg = json_pack("{s:s, s:s, s:s, s:s, s:b, s:[o], s:s, s:s, s:s}", "name",
		                        source, "SPDXID", id, "versionInfo", version, "downloadLocation",
		                        url ? origin : "NOASSERTION", "filesAnalyzed", 0, "checksums",
		                        checksum("SHA256", m->sources.v[i + 2]), "licenseConcluded",
		                        "NOASSERTION", "licenseDeclared", "NOASSERTION",
		                        "copyrightText", "NOASSERTION");
		struct buf info = {0};
		buf_printf(&info, "origins:");
		for (size_t j = i; j + 3 < m->sources.n; j += 4)
			if (strcmp(m->sources.v[j], source) == 0)
				buf_printf(&info, " %s", m->sources.v[j + 3]);
		if (patches.len)
			buf_printf(&info, "; %s", patches.s);
		json_object_set_new(pkg, "sourceInfo", json_string(info.s));
		buf_release(&info);
		buf_release(&patches);
		json_array_append_new(packages, pkg);
		relate(relationships, "SPDXRef-Package-sdk", "GENERATED_FROM", id);
		free(id);
	}
	if (m->host_bin) {   /* else the compiler is one of the stages above (toolchain/) */
		char *comment = xasprintf("the host LLVM at %s, identity sha256 %s (clang, lld, "
		                          "llvm-ar and LLVM's libraries): the wrappers run it",
		                          m->host_bin, m->host_identity);
		json_array_append_new(packages,
			json_pack("{s:s, s:s, s:s, s:s, s:b, s:s, s:s, s:s, s:s}", "name", "host-llvm",
			          "SPDXID", "SPDXRef-Package-host-llvm", "versionInfo", m->host_clang,
			          "downloadLocation", "NOASSERTION", "filesAnalyzed", 0, "comment",
			          comment, "licenseConcluded", "NOASSERTION", "licenseDeclared",
			          "NOASSERTION", "copyrightText", "NOASSERTION"));
		free(comment);
		relate(relationships, "SPDXRef-Package-host-llvm", "BUILD_TOOL_OF",
		       "SPDXRef-Package-sdk");
	}
	json_object_set_new(doc, "packages", packages);
	json_object_set_new(doc, "files", files);
	json_object_set_new(doc, "relationships", relationships);
	char *text = json_dumps(doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(doc);
	free(name);
	free(namespace);
	free(tool);
	if (!text) {
		error("cannot write the SPDX document of %s-%s", m->target, m->version);
		return NULL;
	}
	char *out = xasprintf("%s\n", text);
	free(text);
	return out;
}
