/* SPDX-License-Identifier: Apache-2.0
 *
 * hashmap.h — open-addressing map from NUL-terminated string keys to void*.
 * The map does not own keys or values unless the caller arranges it (keys
 * must stay valid while stored). Iteration order is insertion order, so
 * anything printed from a map is deterministic.
 */
#pragma once

#include "base/macros.h"

typedef struct dp_hashmap dp_hashmap;

dp_hashmap *dp_hashmap_new(void);
dp_hashmap *dp_hashmap_free(dp_hashmap *m);
DEFINE_FREEP(dp_hashmap, dp_hashmap_free)

/* 0 on insert, -EEXIST if present (value untouched), -ENOMEM. */
int dp_hashmap_put(dp_hashmap *m, const char *key, void *value);
/* Insert or replace. */
int dp_hashmap_replace(dp_hashmap *m, const char *key, void *value);
void *dp_hashmap_get(const dp_hashmap *m, const char *key);
bool dp_hashmap_contains(const dp_hashmap *m, const char *key);
/* Returns the removed value or NULL. */
void *dp_hashmap_remove(dp_hashmap *m, const char *key);
size_t dp_hashmap_size(const dp_hashmap *m);
/* Room for n entries in all without growing (the arrays sized exactly, not
 * doubled): 0 or -ENOMEM (the map unchanged). */
int dp_hashmap_reserve(dp_hashmap *m, size_t n);
/* Iterate: i starts at 0; returns false at the end. Insertion order. */
bool dp_hashmap_iter(const dp_hashmap *m, size_t *i, const char **ret_key, void **ret_value);

uint64_t dp_hash_string(const char *s);
