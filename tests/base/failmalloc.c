/* SPDX-License-Identifier: Apache-2.0
 * base-failmalloc — the string helpers under the one failmalloc runner
 * (../failmalloc.h): dp_asprintf, dp_vasprintf (through dp_strbuf users),
 * dp_strdup, dp_strndup and dp_strbuf. Each failed allocation must show as
 * NULL or a failed buffer, never pass unseen: dp_asprintf allocates with the
 * malloc the runner wraps (vasprintf's own allocation could not be failed). */
#include <stdarg.h>
#include <stdio.h>

#include "base/strbuf.h"

#include "failmalloc.h"

static char *via_v(const char *fmt, ...) _printf_(1, 2);
static char *via_v(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        char *r = dp_vasprintf(fmt, ap);
        va_end(ap);
        return r;
}

static bool run(void *ctx) {
        (void)ctx;
        char *a = dp_asprintf("%s/%d/%s", "node-a", 42, "a string longer than any small-buffer trick");
        char *b = a ? via_v("%s:%zu", a, strlen(a)) : NULL;
        char *c = b ? dp_strdup(b) : NULL;
        char *d = c ? dp_strndup(c, 6) : NULL;
        dp_strbuf sb = DP_STRBUF_INIT;
        if (d) dp_strbuf_printf(&sb, "%s|%s", d, c);
        static const char want[] = "node-a|node-a/42/a string longer than any small-buffer trick:53";
        bool ok = d && !dp_strbuf_failed(&sb) && streq(dp_strbuf_str(&sb), want);
        if (a && !streq(a, "node-a/42/a string longer than any small-buffer trick")) abort();
        dp_strbuf_done(&sb);
        free(a);
        free(b);
        free(c);
        free(d);
        return ok;
}

int main(void) {
        dp_failmalloc fm = {.name = "base-failmalloc", .run = run, .min_points = 5};
        dp_failmalloc_result r;
        int rc = dp_failmalloc_each(&fm, &r);
        printf("base-failmalloc: %lu allocations, each failed in turn (%lu absorbed)\n", r.points, r.absorbed);
        return rc;
}
