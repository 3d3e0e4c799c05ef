/* SPDX-License-Identifier: Apache-2.0
 * devplane version [-o text|json|yaml] — the version, the platform, the
 * compiler and the versions of the libraries devplane runs on (read from the
 * libraries at run time, as kubectl version reports its build). */
#include <getopt.h>
#include <nghttp2/nghttp2.h>
#include <protobuf-c/protobuf-c.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <yaml.h>
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "base/macros.h"
#include "tools/devplane.h"

#if defined(__clang__)
#define DP_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define DP_COMPILER "gcc " __VERSION__
#else
#define DP_COMPILER "unknown"
#endif

static void usage(FILE *f) {
        fprintf(f, "usage: devplane version [-o text|json|yaml]\n\n"
                   "Print devplane's version; with -o json or yaml also the platform, the compiler and\n"
                   "the versions of the libraries it runs on.\n");
}

static int cmd_version(int argc, char **argv) {
        const char *out = "text";
        int ex = dp_tool_getopt_one(argc, argv, "o:h", "output", usage, &out);
        if (ex >= 0) return ex;
        if (optind != argc || !(streq(out, "text") || streq(out, "json") || streq(out, "yaml"))) {
                if (!streq(out, "text") && !streq(out, "json") && !streq(out, "yaml"))
                        fprintf(stderr, "devplane version: -o %s: expected text, json or yaml\n", out);
                usage(stderr);
                return 2;
        }
        if (streq(out, "text")) {
                printf("devplane %s\n", DP_VERSION);
                return 0;
        }
        char compiler[128];
        snprintf(compiler, sizeof compiler, "%s", DP_COMPILER);
        for (size_t n = strlen(compiler); n > 0 && compiler[n - 1] == ' '; n--) compiler[n - 1] = 0;
        struct utsname u;
        const char *machine = uname(&u) == 0 ? u.machine : "unknown";
        char pcre2[64] = "unknown";
        if (pcre2_config(PCRE2_CONFIG_VERSION, NULL) <= (int)sizeof pcre2) pcre2_config(PCRE2_CONFIG_VERSION, pcre2);
        const nghttp2_info *h2 = nghttp2_version(0);
        const char *names[] = {"libnghttp2", "libprotobuf-c", "libyaml", "libpcre2-8"};
        const char *vers[] = {h2 ? h2->version_str : "unknown", protobuf_c_version(), yaml_get_version_string(), pcre2};
        /* every value here is printable ASCII without quotes or backslashes
         * (version strings, uname's machine, the compiler's banner) */
        if (streq(out, "json")) {
                printf("{\n  \"version\": \"%s\",\n  \"platform\": \"linux/%s\",\n  \"compiler\": \"%s\",\n"
                       "  \"libraries\": {\n",
                       DP_VERSION, machine, compiler);
                for (size_t i = 0; i < ELEMENTSOF(names); i++)
                        printf("    \"%s\": \"%s\"%s\n", names[i], vers[i], i + 1 < ELEMENTSOF(names) ? "," : "");
                printf("  }\n}\n");
        } else {
                printf("version: %s\nplatform: linux/%s\ncompiler: %s\nlibraries:\n", DP_VERSION, machine, compiler);
                for (size_t i = 0; i < ELEMENTSOF(names); i++) printf("  %s: %s\n", names[i], vers[i]);
        }
        return 0;
}
DP_COMMAND("version", cmd_version, "print the version (-o json|yaml: platform, compiler, libraries)")
