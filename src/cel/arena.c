/* SPDX-License-Identifier: Apache-2.0
 * A bump allocator: chunks freed all at once. A limit caps what one
 * evaluation may allocate (input-driven memory must be bounded). */
#include "cel/cel-internal.h"

struct cel_arena_chunk {
        cel_arena_chunk *next;
        size_t used, cap;
        max_align_t data[];
};

/* The CEL failmalloc test builds these sources with CEL_ARENA_EXACT: every
 * arena allocation is then its own malloc, so failing each allocation in
 * turn reaches every caller of cel_alloc, not only the few that open a chunk. */
#ifdef CEL_ARENA_EXACT
#define CHUNK_MIN 0u
#else
#define CHUNK_MIN (16u * 1024)
#endif

void *cel_alloc(cel_arena *a, size_t n) {
        if (a->failed) return NULL;
        n = (n + 15) & ~(size_t)15;
        if (n == 0) n = 16;
        if (a->limit && (n > a->limit || a->total > a->limit - n)) {
                a->failed = true;
                return NULL;
        }
        cel_arena_chunk *c = a->head;
        if (!c || c->cap - c->used < n) {
                size_t cap = DP_MAX(n, (size_t)CHUNK_MIN);
                if (CHUNK_MIN && c && cap < c->cap * 2 && c->cap < (1u << 20)) cap = c->cap * 2;
                if (cap < n) cap = n;
                cel_arena_chunk *nc = malloc(sizeof(*nc) + cap);
                if (!nc) {
                        a->failed = true;
                        return NULL;
                }
                nc->used = 0;
                nc->cap = cap;
                nc->next = a->head;
                a->head = nc;
                c = nc;
        }
        void *p = (char *)c->data + c->used;
        c->used += n;
        a->total += n;
        memset(p, 0, n);
        return p;
}

char *cel_strndup(cel_arena *a, const char *s, size_t n) {
        char *p = cel_alloc(a, n + 1);
        if (!p) return NULL;
        if (n) memcpy(p, s, n);
        p[n] = 0;
        return p;
}

void cel_arena_done(cel_arena *a) {
        while (a->head) {
                cel_arena_chunk *n = a->head->next;
                free(a->head);
                a->head = n;
        }
        a->total = 0;
        a->failed = false;
}
