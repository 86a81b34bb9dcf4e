/* lazylib: the libcurl and libarchive functions the engine calls, each loading its library on
 * first use. See lazylib.h. */
#define _GNU_SOURCE
#include "lazylib.h"

#include <archive.h>
#include <archive_entry.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct library {
	const char *soname;
	void *handle;
};
static struct library curl_library = {"libcurl.so.4", NULL};
static struct library archive_library = {"libarchive.so.13", NULL};

/* The real function `name` of `lib`, loading the library first. Stops crossroot as the
 * dynamic loader would have at start-up (lazylib.h). */
static void *resolve(struct library *lib, const char *name)
{
	if (!lib->handle)
		lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_LOCAL);
	void *fn = lib->handle ? dlsym(lib->handle, name) : NULL;
	if (!fn) {
		fprintf(stderr, "crossroot: error while loading shared libraries: %s\n", dlerror());
		exit(127);
	}
	return fn;
}

bool lazylib_loaded(const char *soname)
{
	/* RTLD_NOLOAD: a handle only if it is mapped already (by us or anyone) */
	void *h = dlopen(soname, RTLD_NOW | RTLD_NOLOAD);
	if (h)
		dlclose(h);
	return h != NULL;
}

/* A function of `lib` returning `ret`, with the header's parameters and the argument names
 * to pass on. The pointer is stored through a void * (POSIX's way to keep a dlsym() result
 * as a function pointer). */
#define LAZY(lib, ret, name, params, args)                                                 \
	ret name params                                                                        \
	{                                                                                      \
		static ret(*real) params;                                                          \
		if (!real)                                                                         \
			*(void **)&real = resolve(&lib, #name);                                        \
		return real args;                                                                  \
	}
#define LAZY_VOID(lib, name, params, args)                                                 \
	void name params                                                                       \
	{                                                                                      \
		static void(*real) params;                                                         \
		if (!real)                                                                         \
			*(void **)&real = resolve(&lib, #name);                                        \
		real args;                                                                         \
	}

/* ---- libcurl ---- */
#define C curl_library
LAZY(C, CURLcode, curl_global_init, (long flags), (flags))
LAZY_VOID(C, curl_global_cleanup, (void), ())
LAZY(C, CURL *, curl_easy_init, (void), ())
LAZY_VOID(C, curl_easy_cleanup, (CURL *curl), (curl))
LAZY_VOID(C, curl_easy_reset, (CURL *curl), (curl))
LAZY(C, CURLcode, curl_easy_perform, (CURL *curl), (curl))
LAZY(C, const char *, curl_easy_strerror, (CURLcode code), (code))
LAZY(C, CURLM *, curl_multi_init, (void), ())
LAZY(C, CURLMcode, curl_multi_cleanup, (CURLM *multi), (multi))
LAZY(C, CURLMcode, curl_multi_add_handle, (CURLM *multi, CURL *curl), (multi, curl))
LAZY(C, CURLMcode, curl_multi_remove_handle, (CURLM *multi, CURL *curl), (multi, curl))
LAZY(C, CURLMcode, curl_multi_perform, (CURLM *multi, int *running), (multi, running))
LAZY(C, CURLMsg *, curl_multi_info_read, (CURLM *multi, int *left), (multi, left))
LAZY(C, CURLMcode, curl_multi_poll,
     (CURLM *multi, struct curl_waitfd extra_fds[], unsigned int extra_nfds, int timeout_ms,
      int *ret),
     (multi, extra_fds, extra_nfds, timeout_ms, ret))
LAZY(C, struct curl_slist *, curl_slist_append, (struct curl_slist *list, const char *data),
     (list, data))
LAZY_VOID(C, curl_slist_free_all, (struct curl_slist *list), (list))

/* curl's headers wrap these two in macros of the same name (type checks) */
#undef curl_easy_setopt
#undef curl_easy_getinfo

/* One argument, read as libcurl reads it for the option's type. */
CURLcode curl_easy_setopt(CURL *curl, CURLoption option, ...)
{
	static CURLcode (*real)(CURL *, CURLoption, ...);
	if (!real)
		*(void **)&real = resolve(&C, "curl_easy_setopt");
	va_list ap;
	va_start(ap, option);
	CURLcode rc;
	if (option < CURLOPTTYPE_OBJECTPOINT)
		rc = real(curl, option, va_arg(ap, long));
	else if (option < CURLOPTTYPE_FUNCTIONPOINT)
		rc = real(curl, option, va_arg(ap, void *));
	else if (option < CURLOPTTYPE_OFF_T)
		rc = real(curl, option, va_arg(ap, void (*)(void)));
	else if (option < CURLOPTTYPE_BLOB)
		rc = real(curl, option, va_arg(ap, curl_off_t));
	else
		rc = real(curl, option, va_arg(ap, void *));
	va_end(ap);
	return rc;
}

/* Every CURLINFO_* takes a pointer to where the answer goes. */
CURLcode curl_easy_getinfo(CURL *curl, CURLINFO info, ...)
{
	static CURLcode (*real)(CURL *, CURLINFO, ...);
	if (!real)
		*(void **)&real = resolve(&C, "curl_easy_getinfo");
	va_list ap;
	va_start(ap, info);
	CURLcode rc = real(curl, info, va_arg(ap, void *));
	va_end(ap);
	return rc;
}
#undef C

/* ---- libarchive ---- */
#define A archive_library
LAZY(A, int, archive_errno, (struct archive *a), (a))
LAZY(A, const char *, archive_error_string, (struct archive *a), (a))
LAZY(A, struct archive *, archive_read_new, (void), ())
LAZY(A, int, archive_read_free, (struct archive *a), (a))
LAZY(A, int, archive_read_support_filter_all, (struct archive *a), (a))
LAZY(A, int, archive_read_support_filter_zstd, (struct archive *a), (a))
LAZY(A, int, archive_read_support_filter_program_signature,
     (struct archive *a, const char *cmd, const void *signature, size_t signature_len),
     (a, cmd, signature, signature_len))
LAZY(A, int, archive_read_support_format_all, (struct archive *a), (a))
LAZY(A, int, archive_read_support_format_tar, (struct archive *a), (a))
LAZY(A, int, archive_read_support_filter_none, (struct archive *a), (a))
LAZY(A, int, archive_read_support_format_ar, (struct archive *a), (a))
LAZY(A, int, archive_read_open,
     (struct archive *a, void *data, archive_open_callback *open, archive_read_callback *read,
      archive_close_callback *close),
     (a, data, open, read, close))
LAZY(A, int, archive_read_open_filename, (struct archive *a, const char *file, size_t block),
     (a, file, block))
LAZY(A, int, archive_read_next_header, (struct archive *a, struct archive_entry **entry),
     (a, entry))
LAZY(A, la_ssize_t, archive_read_data, (struct archive *a, void *buf, size_t size),
     (a, buf, size))
LAZY(A, int, archive_read_data_block,
     (struct archive *a, const void **buf, size_t *size, la_int64_t *offset),
     (a, buf, size, offset))
LAZY(A, struct archive *, archive_write_new, (void), ())
LAZY(A, struct archive *, archive_write_disk_new, (void), ())
LAZY(A, int, archive_write_disk_set_options, (struct archive *a, int flags), (a, flags))
LAZY(A, int, archive_write_add_filter_xz, (struct archive *a), (a))
LAZY(A, int, archive_write_add_filter_zstd, (struct archive *a), (a))
LAZY(A, int, archive_write_set_format_pax_restricted, (struct archive *a), (a))
LAZY(A, int, archive_write_set_format_cpio_newc, (struct archive *a), (a))
LAZY(A, int, archive_write_open_filename, (struct archive *a, const char *file), (a, file))
LAZY(A, int, archive_write_header, (struct archive *a, struct archive_entry *entry),
     (a, entry))
LAZY(A, la_ssize_t, archive_write_data, (struct archive *a, const void *buf, size_t size),
     (a, buf, size))
LAZY(A, la_ssize_t, archive_write_data_block,
     (struct archive *a, const void *buf, size_t size, la_int64_t offset),
     (a, buf, size, offset))
LAZY(A, int, archive_write_finish_entry, (struct archive *a), (a))
LAZY(A, int, archive_write_close, (struct archive *a), (a))
LAZY(A, int, archive_write_free, (struct archive *a), (a))
LAZY(A, struct archive_entry *, archive_entry_new, (void), ())
LAZY(A, struct archive_entry *, archive_entry_clear, (struct archive_entry *e), (e))
LAZY_VOID(A, archive_entry_free, (struct archive_entry *e), (e))
LAZY(A, const char *, archive_entry_pathname, (struct archive_entry *e), (e))
LAZY(A, const char *, archive_entry_hardlink, (struct archive_entry *e), (e))
LAZY(A, const char *, archive_entry_symlink, (struct archive_entry *e), (e))
LAZY(A, __LA_MODE_T, archive_entry_filetype, (struct archive_entry *e), (e))
LAZY(A, __LA_MODE_T, archive_entry_mode, (struct archive_entry *e), (e))
LAZY(A, __LA_MODE_T, archive_entry_perm, (struct archive_entry *e), (e))
LAZY(A, la_int64_t, archive_entry_size, (struct archive_entry *e), (e))
LAZY(A, int, archive_entry_size_is_set, (struct archive_entry *e), (e))
LAZY_VOID(A, archive_entry_set_pathname, (struct archive_entry *e, const char *p), (e, p))
LAZY_VOID(A, archive_entry_set_hardlink, (struct archive_entry *e, const char *p), (e, p))
LAZY_VOID(A, archive_entry_set_symlink, (struct archive_entry *e, const char *p), (e, p))
LAZY_VOID(A, archive_entry_set_filetype, (struct archive_entry *e, unsigned int type), (e, type))
LAZY_VOID(A, archive_entry_set_perm, (struct archive_entry *e, __LA_MODE_T mode), (e, mode))
LAZY_VOID(A, archive_entry_set_size, (struct archive_entry *e, la_int64_t size), (e, size))
LAZY_VOID(A, archive_entry_set_uid, (struct archive_entry *e, la_int64_t uid), (e, uid))
LAZY_VOID(A, archive_entry_set_gid, (struct archive_entry *e, la_int64_t gid), (e, gid))
LAZY_VOID(A, archive_entry_set_ino, (struct archive_entry *e, la_int64_t ino), (e, ino))
LAZY_VOID(A, archive_entry_set_nlink, (struct archive_entry *e, unsigned int n), (e, n))
LAZY_VOID(A, archive_entry_set_rdev, (struct archive_entry *e, dev_t dev), (e, dev))
LAZY_VOID(A, archive_entry_set_mtime, (struct archive_entry *e, time_t t, long ns), (e, t, ns))
#undef A
