/* openpgp: gpgv with a pinned keyring. See openpgp.h. */
#define _GNU_SOURCE
#include "openpgp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "digest.h"
#include "run.h"

/* gpgv reads binary keyrings only: turn an armored export into one, once per content. */
static char *binary_keyring(const char *keyring, const char *scratch_dir, struct buf *why)
{
	char *text = read_file(keyring, NULL);
	if (!text) {
		buf_printf(why, "cannot read keyring '%s'", keyring);
		return NULL;
	}
	bool armored = strncmp(text, "-----BEGIN PGP", 14) == 0;
	free(text);
	if (!armored)
		return xstrdup(keyring);
	char hex[DIGEST_HEX_LEN + 1];
	if (digest_file(keyring, hex) < 0 || mkdir_p(scratch_dir, 0755) < 0)
		return NULL;
	char *out = xasprintf("%s/%s.gpg", scratch_dir, hex);
	if (path_exists(out))
		return out;
	char *tmp = xasprintf("%s.tmp.%ld", out, (long)getpid());
	unlink(tmp);
	char *argv[] = {"gpg", "--batch", "--no-options", "--dearmor", "--output", tmp,
	                (char *)keyring, NULL};
	struct buf ignored = {0}, err = {0};
	int status = run_capture(argv, &ignored, &err);
	buf_release(&ignored);
	if (status != 0 || rename(tmp, out) < 0) {
		buf_printf(why, "cannot convert keyring '%s' with gpg --dearmor: %s", keyring,
		           err.s ? err.s : "gpg could not run (is gnupg installed?)");
		unlink(tmp);
		free(out);
		out = NULL;
	}
	buf_release(&err);
	free(tmp);
	return out;
}

int openpgp_verify(const char *keyring, const char *signature, const char *file,
                   const char *scratch_dir, struct buf *why)
{
	char *binary = binary_keyring(keyring, scratch_dir, why);
	if (!binary)
		return -1;
	char *argv[] = {"gpgv", "--keyring", binary, (char *)signature, (char *)file, NULL};
	struct buf out = {0}, err = {0};
	int status = run_capture(argv, &out, &err);
	int rc = 0;
	if (status != 0) {
		char how[96];
		buf_printf(why, "gpgv %s: %s", status < 0 ? "could not run (is gpgv installed?)"
		                                          : run_describe(status, how),
		           err.s ? err.s : "");
		rc = -1;
	}
	buf_release(&out);
	buf_release(&err);
	free(binary);
	return rc;
}
