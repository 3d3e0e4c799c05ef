/* SPDX-License-Identifier: Apache-2.0
 * libcurl loaded at run time (see curl-api.h for why). */
#include <dlfcn.h>
#include <stdlib.h>

#include "kube/curl-api.h"
#include "kube/kube.h"

/* Process-wide, as the library it points into is (dlopen, curl_global_init). */
dp_curl_api dp_curl;
static bool curl_ready;

int dp_kube_curl_load(const char *what, dp_error *err) {
        if (curl_ready) return 0;
        if (!what) what = "the Kubernetes API client";
        const char *lib = getenv(DP_CURL_LIBRARY_ENV);
        if (!lib || !*lib) lib = DP_CURL_LIBRARY_DEFAULT;
        /* Never closed once in use: libcurl and its TLS library keep global
         * state (and exit handlers) for the life of the process. */
        void *dl = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        if (!dl) {
                const char *why = dlerror();
                return dp_error_set(err, -ENOENT,
                                    "%s needs " DP_CURL_LIBRARY_DEFAULT ": %s (install libcurl4, or point $%s at it)",
                                    what, why ? why : lib, DP_CURL_LIBRARY_ENV);
        }
        dp_curl_api f = {0};
#define X(name, ret, params)                                                                                           \
        *(void **)&f.name = dlsym(dl, "curl_" #name);                                                                  \
        if (!f.name) {                                                                                                 \
                dlclose(dl);                                                                                           \
                return dp_error_set(err, -ENOENT,                                                                      \
                                    "%s needs " DP_CURL_LIBRARY_DEFAULT ": %s has no symbol curl_" #name, what, lib);  \
        }
        DP_CURL_FUNCS(X)
#undef X
        /* Options this client sets that older libcurl lacks would be
         * ignored silently: CURLOPT_PROTOCOLS_STR and the *_BLOB ones need
         * 7.85 (Debian 12 ships 7.88). */
        if (f.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
                dlclose(dl);
                return dp_error_set(err, -EIO, "%s: curl_global_init failed (%s)", what, lib);
        }
        dp_curl = f;
        curl_ready = true;
        return 0;
}
