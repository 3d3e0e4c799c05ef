/* SPDX-License-Identifier: Apache-2.0
 *
 * strv.h — arrays of owned strings, the one helper every module uses for
 * them (systemd's strv.h is the model).
 *
 * Two shapes live in the tree: NULL-terminated arrays (argv-like: exec
 * credentials' args, CDI paths, profiles' path lists) and counted arrays
 * (`char **v; size_t n;` beside each other in a struct, where an entry may
 * still be NULL while the array is being filled). Both are freed here:
 * dp_strv_free() stops at the first NULL, dp_strv_free_n() frees exactly n
 * entries and takes NULL entries. Copies are always NULL-terminated (one
 * slot more than the entries), so a copy serves either shape.
 */
#pragma once

#include "base/macros.h"

/* Free a NULL-terminated array and its strings; NULL is fine. Returns NULL. */
char **dp_strv_free(char **v);
/* Free the first n entries of v (NULL entries are skipped) and v; v may be NULL. Returns NULL. */
char **dp_strv_free_n(char **v, size_t n);
DEFINE_FREEP(char *, dp_strv_free)
#define _cleanup_strv_free_ _cleanup_(dp_strv_freep)

/* Entries before the first NULL (0 for NULL). */
size_t dp_strv_length(char *const *v);
/* A NULL-terminated copy of the first n entries of v (n + 1 slots, so never
 * NULL on success, n == 0 included; v may be NULL only when n is 0), or NULL
 * when an allocation failed (nothing is left allocated). */
char **dp_strv_copy_n(char *const *v, size_t n);
/* Append a copy of s to the counted array (*v, *n). 0, or -ENOMEM with the
 * entries untouched. */
int dp_strv_push_n(char ***v, size_t *n, const char *s);
/* dp_strv_copy_n() of a NULL-terminated array (NULL copies as empty). */
static inline char **dp_strv_copy(char *const *v) { return dp_strv_copy_n(v, dp_strv_length(v)); }
/* Whether one of the first n entries of v equals s. */
static inline bool dp_strv_contains_n(char *const *v, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (v[i] && streq(v[i], s)) return true;
        return false;
}
