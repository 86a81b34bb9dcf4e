/* sbom: the SPDX 2.3 JSON document of a package (package.h), which supply-chain tools read.
 * Written with jansson, keys sorted, so the same manifest gives the same bytes.
 *
 * Content: the document (SPDXRef-DOCUMENT, CC0-1.0, a namespace derived from the package's
 * name and input hash, created at SOURCE_DATE_EPOCH by "Tool: crossroot-<version>"); the
 * package SPDXRef-Package-sdk (its version, filesAnalyzed with a verification code, every
 * file with SHA1 and SHA256); one package per source (name, version, download location,
 * SHA256, its patches in sourceInfo) that the SDK is GENERATED_FROM; the overlay (files of
 * `crossroot install`, the manifest's overlay lines), when there is one, as a package the SDK
 * CONTAINS, with its files (each commented as installed so); the host LLVM as a
 * package that is BUILD_TOOL_OF the SDK. Licenses are NOASSERTION: crossroot does not
 * determine them. */
#ifndef CROSSROOT_SBOM_H
#define CROSSROOT_SBOM_H

#include "package.h"

/* The document's text (malloc'd, ending in a newline), or NULL after error(). Entries of
 * `m` with kind 'f' are the files; `m` must have every file's hashes. */
char *sbom_spdx_json(const struct package_manifest *m);

#endif
