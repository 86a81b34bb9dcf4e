/* remote_http: the remote cache's transport (remote.h) over HTTP(S) with libcurl: GET, PUT,
 * MOVE and DELETE of names under a base URL, on one handle so connections are reused.
 *
 * Every request gets what every crossroot transfer gets (fetch_curl_defaults, fetch.h): HTTP
 * errors as failures, http and https only (redirects too), TLS verified (a private CA bundle
 * may replace the system's), 10 s to connect, and a stall timeout: a transfer that moves no
 * byte for `stall_seconds` fails. Ctrl-C (`interrupted`) ends a transfer at once.
 *
 * Outcomes: 2xx is REMOTE_OK; 404 and 410 REMOTE_MISSING; another HTTP error REMOTE_FAILED
 * ("HTTP status 405"); the sink refusing bytes or the upload's file failing to read
 * REMOTE_STOPPED; anything else (connection refused or reset, timeout, a body cut off,
 * Ctrl-C) REMOTE_UNREACHABLE, with libcurl's words. MOVE sends `Destination: <base>/<to>`
 * and `Overwrite: T`. */
#ifndef CROSSROOT_REMOTE_HTTP_H
#define CROSSROOT_REMOTE_HTTP_H

#include "remote.h"

/* A transport for the names under `url` (http:// or https://, no trailing '/'). `ca_bundle`
 * may be NULL (the system's CA certificates). Free it through its ops. Never NULL. */
struct remote_transport *remote_http_new(const char *url, const char *ca_bundle,
                                         long stall_seconds);

#endif
