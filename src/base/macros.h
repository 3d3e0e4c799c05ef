/* SPDX-License-Identifier: Apache-2.0
 *
 * macros.h — the small fixed set of helpers every devplane file uses.
 *
 * Error convention (the only one in this tree):
 *   - A function that can fail returns int: >= 0 on success, a negative errno on
 *     failure (-EINVAL bad input, -ENOMEM allocation failed, -E2BIG a Kubernetes
 *     limit exceeded, -ENOENT not found, -EIO/-EPROTO wire trouble).
 *   - Where a person must read why, the function also takes a `dp_error *err`
 *     (last argument, may be NULL) and fills it once at the point of failure;
 *     callers going up the stack prepend context with dp_error_prefix().
 *   - Out-parameters are named ret_* , come last (before err), and are left
 *     untouched on failure.
 *   - Destructors accept NULL and return NULL: `x = dp_foo_free(x);`.
 *   - Library code never aborts on OOM: it returns -ENOMEM.
 */
#pragma once

#include <assert.h>
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))
#define _unused_ __attribute__((unused))
#define _printf_(a, b) __attribute__((format(printf, a, b)))
#define _likely_(x) (__builtin_expect(!!(x), 1))
#define _unlikely_(x) (__builtin_expect(!!(x), 0))
#define _warn_unused_ __attribute__((warn_unused_result))

#define ELEMENTSOF(a) (sizeof(a) / sizeof((a)[0]))
#define DP_MIN(a, b) ((a) < (b) ? (a) : (b))
#define DP_MAX(a, b) ((a) > (b) ? (a) : (b))

/* Hand ownership on: returns the pointer and clears the variable so the
 * cleanup handler of the variable does nothing. */
#define TAKE_PTR(p)                                                            \
        ({                                                                     \
                __typeof__(p) _tp_ = (p);                                      \
                (p) = NULL;                                                    \
                _tp_;                                                          \
        })
#define TAKE_FD(fd)                                                            \
        ({                                                                     \
                int _tfd_ = (fd);                                              \
                (fd) = -1;                                                     \
                _tfd_;                                                         \
        })

static inline void freep(void *p) { free(*(void **)p); }
#define _cleanup_free_ _cleanup_(freep)

/* Free each of n pointers (NULL entries are fine). dp_free_many(x->a, x->b)
 * is the destructor's run of free()s of owned fields, as one statement
 * (systemd's free_many()). */
static inline void dp_free_many_n(void *const *p, size_t n) {
        for (size_t i = 0; i < n; i++)
                free(p[i]);
}
#define dp_free_many(...)                                                      \
        dp_free_many_n((void *const[]){__VA_ARGS__},                           \
                       sizeof((void *const[]){__VA_ARGS__}) / sizeof(void *))

static inline void closep(int *fd) {
        if (*fd >= 0) {
                int saved = errno;
                close(*fd);
                errno = saved;
        }
}
#define _cleanup_close_ _cleanup_(closep)

/* Define a `xxx_freep(T **p)` cleanup wrapper for a `T *xxx_free(T *)`. */
#define DEFINE_FREEP(type, func)                                               \
        static inline void func##p(type **p) {                                 \
                if (*p) *p = func(*p);                                         \
        }

/* Public-argument checks: return the given value instead of crashing. */
#define assert_return(expr, r)                                                 \
        do {                                                                   \
                if (_unlikely_(!(expr))) return (r);                           \
        } while (0)

static inline bool streq(const char *a, const char *b) { return strcmp(a, b) == 0; }
static inline bool streq_ptr(const char *a, const char *b) {
        if (!a || !b) return a == b;
        return strcmp(a, b) == 0;
}
static inline bool startswith(const char *s, const char *prefix) {
        return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* Grow an array so it can hold `need` elements; *allocated tracks capacity.
 * Returns 0 or -ENOMEM (array untouched). Elements beyond old capacity are
 * zeroed. */
int dp_grow(void **array, size_t *allocated, size_t need, size_t elem_size);
#define DP_GROW(arr, alloc, need) dp_grow((void **)&(arr), &(alloc), (need), sizeof(*(arr)))
/* Extend an array of *n elements to exactly `need` (a table with one entry
 * per slot of something else), the new elements zeroed; *n = need. Returns
 * 0 or -ENOMEM (array untouched); nothing happens when need <= *n. */
int dp_extend(void **array, size_t *n, size_t need, size_t elem_size);
#define DP_EXTEND(arr, n, need) dp_extend((void **)&(arr), &(n), (need), sizeof(*(arr)))
/* Remove element i of an array of *n, keeping the order of the others. */
void dp_remove_at(void *array, size_t *n, size_t i, size_t elem_size);
#define DP_REMOVE_AT(arr, n, i) dp_remove_at((arr), &(n), (i), sizeof(*(arr)))

/* Overflow-checked helpers for sizes derived from input. */
static inline bool dp_mul_overflow(size_t a, size_t b, size_t *r) {
        return __builtin_mul_overflow(a, b, r);
}
