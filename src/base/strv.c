/* SPDX-License-Identifier: Apache-2.0
 *
 * strv.c — freeing, measuring and copying arrays of owned strings (strv.h).
 */
#include "base/strv.h"
#include "base/strbuf.h"

char **dp_strv_free(char **v) {
        for (size_t i = 0; v && v[i]; i++)
                free(v[i]);
        free(v);
        return NULL;
}

char **dp_strv_free_n(char **v, size_t n) {
        for (size_t i = 0; v && i < n; i++)
                free(v[i]);
        free(v);
        return NULL;
}

size_t dp_strv_length(char *const *v) {
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

char **dp_strv_copy_n(char *const *v, size_t n) {
        assert(v || n == 0);
        if (n >= SIZE_MAX / sizeof(char *)) return NULL;
        char **c = calloc(n + 1, sizeof *c);
        for (size_t i = 0; c && i < n; i++)
                if (!(c[i] = dp_strdup(v[i]))) return dp_strv_free_n(c, i);
        return c;
}

int dp_strv_push_n(char ***v, size_t *n, const char *s) {
        _cleanup_free_ char *copy = dp_strdup(s);
        if (!copy) return -ENOMEM;
        char **grown = realloc(*v, (*n + 1) * sizeof(char *));
        if (!grown) return -ENOMEM;
        *v = grown;
        grown[(*n)++] = TAKE_PTR(copy);
        return 0;
}
