/* lazylib: libcurl and libarchive, loaded when one of their functions is first called rather
 * than when crossroot starts.
 *
 * Why: the two libraries and what they need (GnuTLS, Kerberos, LDAP, libxml2 with ICU, ...)
 * are about 40 shared objects, and mapping and relocating them was most of the time of a
 * run with nothing to fetch, extract or pack: a no-op `build` and `plan` (tests/bench/noop.py)
 * never call either library now and never map them.
 *
 * How: crossroot is not linked with them (see the Makefile's LDLIBS). The engine calls their
 * functions by their own names, as their headers declare them; lazylib.c defines each
 * function the engine uses with the header's exact prototype (the compiler checks it against
 * the header), and each opens its library with dlopen() on the first call, looks up the real
 * function once and calls it. The variadic curl_easy_setopt() and curl_easy_getinfo() pass
 * their one argument on by the type libcurl reads for that option (CURLOPTTYPE_*).
 *
 * Contract: a library that cannot be loaded, or that lacks a function, stops crossroot at that
 * call with the dynamic loader's message and status 127: what the loader did at start-up
 * before (the libraries are the ones the build was made against: libcurl.so.4,
 * libarchive.so.13). Calling another function of either library means adding its line to
 * lazylib.c: until then the link fails, naming it. The fuzz targets link the libraries
 * themselves and leave this module out. */
#ifndef CROSSROOT_LAZYLIB_H
#define CROSSROOT_LAZYLIB_H

#include <stdbool.h>

/* Has the library with this soname ("libcurl.so.4", "libarchive.so.13") been loaded by this
 * process? For tests and the benchmark's claims; never loads anything. */
bool lazylib_loaded(const char *soname);

#endif
