/* apt: locate a file of a Debian source package through the host's own apt configuration,
 * without changing it: a private state directory holds deb-src copies of the system's
 * sources and their indices; `apt-get source --print-uris` then names the file's URL and
 * the sha256 from the signed archive metadata. Nothing here downloads the file itself. */
#ifndef CROSSROOT_APT_H
#define CROSSROOT_APT_H

#include "digest.h"
#include "util.h"

/* Find `file` of source package `package` at exactly `version`. On success *url is the
 * download URL (malloc'd) and `sha256` what the archive's signed index says. The first call
 * in a state directory runs `apt-get update` on the private sources (about 2 s). Returns -1
 * after a warning when apt has no such package, version or file (another origin may have it). */
int apt_locate(const char *state_dir, const char *package, const char *version,
               const char *file, char **url, char sha256[DIGEST_HEX_LEN + 1]);

/* The same for a binary package of Debian architecture `arch` (arm64, armhf, ...), which the
 * host need not know: a private state directory below `state_dir` (binary-<arch>/) holds
 * copies of the host's 'deb' sources and their indices for `arch`; `apt-get download
 * --print-uris` names the .deb's URL and the sha256 of the signed Packages index, found by its
 * `file` name as apt gives it ("package_version_arch.deb", an epoch "1:" as "1%3a"). Returns
 * -1 after a warning when apt has no such package or version. */
int apt_locate_deb(const char *state_dir, const char *package, const char *arch,
                   const char *version, const char *file, char **url,
                   char sha256[DIGEST_HEX_LEN + 1]);

/* The archives the host's apt configuration fetches binary packages from (each 'deb' entry's
 * URI, http, https and file only, without a trailing slash), in its order, without
 * duplicates: the pool of a Debian release apt does not list is under each of them.
 * CROSSROOT_APT_SOURCES names another directory to read sources.list and sources.list.d/
 * from, instead of /etc/apt. Returns how many were found. */
size_t apt_archive_bases(struct strlist *out);

#endif
