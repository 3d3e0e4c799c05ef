/* SPDX-License-Identifier: Apache-2.0
 *
 * curl-api.h — the subset of libcurl that src/kube calls, as function
 * pointers resolved at run time (kube/curl-load.c), the way the nvml backend
 * loads NVML (docs/backends.md). devplane does not link libcurl: only an
 * agent given --kubeconfig or --in-cluster dlopen()s libcurl.so.4, so a V1
 * agent or a --slices-dir one never maps libcurl, OpenSSL, GnuTLS, Kerberos,
 * LDAP, ... (about 35 libraries, 5 MiB of RssFile; docs/benchmarks.md).
 *
 * Types, options and constants still come from <curl/curl.h> at build time
 * (libcurl's ABI is stable across the .so.4 soname). Members drop the
 * "curl_" prefix, so curl.h's type-checking macros (curl_easy_setopt, ...)
 * never expand on them; the symbol resolved is "curl_" NAME.
 */
#pragma once

#include <curl/curl.h>

#include "base/error.h"

/* The soname loaded, and the environment variable that replaces it (a path
 * or another name; tests point it at a file that does not exist). */
#define DP_CURL_LIBRARY_DEFAULT "libcurl.so.4"
#define DP_CURL_LIBRARY_ENV "DP_CURL_LIBRARY"

/* X(name, return type, parameters): every libcurl function src/kube calls. */
#define DP_CURL_FUNCS(X)                                                                                               \
        X(global_init, CURLcode, (long flags))                                                                         \
        X(easy_init, CURL *, (void))                                                                                   \
        X(easy_cleanup, void, (CURL * e))                                                                              \
        X(easy_setopt, CURLcode, (CURL * e, CURLoption opt, ...))                                                      \
        X(easy_getinfo, CURLcode, (CURL * e, CURLINFO info, ...))                                                      \
        X(easy_strerror, const char *, (CURLcode code))                                                                \
        X(easy_pause, CURLcode, (CURL * e, int bitmask))                                                               \
        X(multi_init, CURLM *, (void))                                                                                 \
        X(multi_cleanup, CURLMcode, (CURLM * m))                                                                       \
        X(multi_setopt, CURLMcode, (CURLM * m, CURLMoption opt, ...))                                                  \
        X(multi_assign, CURLMcode, (CURLM * m, curl_socket_t fd, void *p))                                             \
        X(multi_add_handle, CURLMcode, (CURLM * m, CURL * e))                                                          \
        X(multi_remove_handle, CURLMcode, (CURLM * m, CURL * e))                                                       \
        X(multi_socket_action, CURLMcode, (CURLM * m, curl_socket_t fd, int ev_bitmask, int *running))                 \
        X(multi_info_read, CURLMsg *, (CURLM * m, int *msgs_in_queue))                                                 \
        X(slist_append, struct curl_slist *, (struct curl_slist * l, const char *s))                                   \
        X(slist_free_all, void, (struct curl_slist * l))

typedef struct dp_curl_api {
#define DP_CURL_MEMBER(name, ret, params) ret(*name) params;
        DP_CURL_FUNCS(DP_CURL_MEMBER)
#undef DP_CURL_MEMBER
} dp_curl_api;

/* Filled by dp_kube_curl_load(); valid only after it returned 0. */
extern dp_curl_api dp_curl;
