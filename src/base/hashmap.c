/* SPDX-License-Identifier: Apache-2.0
 * Entries live in an insertion-ordered array (tombstoned on removal); an index
 * table of uint32 slots with linear probing points into it. */
#include "base/hashmap.h"

typedef struct {
        const char *key;
        void *value;
        uint64_t hash;
        bool live;
} entry;

struct dp_hashmap {
        entry *entries;
        size_t n_entries, cap_entries;
        size_t n_live;
        uint32_t *index; /* 0 = empty, else entry index + 1 */
        size_t n_index;  /* power of two */
};

uint64_t dp_hash_string(const char *s) {
        uint64_t h = 0xcbf29ce484222325ULL;
        for (; *s; s++) {
                h ^= (unsigned char)*s;
                h *= 0x100000001b3ULL;
        }
        return h ^ (h >> 29);
}

dp_hashmap *dp_hashmap_new(void) { return calloc(1, sizeof(dp_hashmap)); }

dp_hashmap *dp_hashmap_free(dp_hashmap *m) {
        if (!m) return NULL;
        dp_free_many(m->entries, m->index);
        free(m);
        return NULL;
}

static size_t find_slot(const dp_hashmap *m, const char *key, uint64_t h, bool *found) {
        size_t mask = m->n_index - 1;
        for (size_t i = h & mask;; i = (i + 1) & mask) {
                uint32_t e = m->index[i];
                if (e == 0) {
                        *found = false;
                        return i;
                }
                const entry *en = &m->entries[e - 1];
                if (en->live && en->hash == h && streq(en->key, key)) {
                        *found = true;
                        return i;
                }
        }
}

static int rebuild(dp_hashmap *m, size_t n_index) {
        /* allocate first so failure leaves the map as it was; then compact
         * tombstones and rehash */
        uint32_t *idx = calloc(n_index, sizeof(uint32_t));
        if (!idx) return -ENOMEM;
        size_t w = 0;
        for (size_t r = 0; r < m->n_entries; r++)
                if (m->entries[r].live) m->entries[w++] = m->entries[r];
        m->n_entries = w;
        free(m->index);
        m->index = idx;
        m->n_index = n_index;
        for (size_t i = 0; i < m->n_entries; i++) {
                size_t mask = n_index - 1, s = m->entries[i].hash & mask;
                while (idx[s]) s = (s + 1) & mask;
                idx[s] = (uint32_t)(i + 1);
        }
        return 0;
}

int dp_hashmap_reserve(dp_hashmap *m, size_t n) {
        assert_return(m, -EINVAL);
        if (n >= UINT32_MAX - 1) return -ENOMEM;
        if (n > m->cap_entries) {
                entry *e = reallocarray(m->entries, n, sizeof(entry));
                if (!e) return -ENOMEM;
                memset(e + m->cap_entries, 0, (n - m->cap_entries) * sizeof(entry));
                m->entries = e;
                m->cap_entries = n;
        }
        /* as insert sizes the index: over twice the entries */
        size_t want = m->n_index ? m->n_index : 16;
        while ((n + 1) * 2 > want) want *= 2;
        return want > m->n_index ? rebuild(m, want) : 0;
}

static int insert(dp_hashmap *m, const char *key, void *value, bool replace) {
        if (m->n_entries >= UINT32_MAX - 1) return -ENOMEM;
        if (!m->index || (m->n_entries + 1) * 2 > m->n_index) {
                size_t n = m->n_index ? m->n_index : 16;
                while ((m->n_live + 1) * 2 > n) n *= 2;
                int r = rebuild(m, n);
                if (r < 0) return r;
        }
        uint64_t h = dp_hash_string(key);
        bool found;
        size_t s = find_slot(m, key, h, &found);
        if (found) {
                if (!replace) return -EEXIST;
                m->entries[m->index[s] - 1].value = value;
                return 0;
        }
        if (DP_GROW(m->entries, m->cap_entries, m->n_entries + 1) < 0) return -ENOMEM;
        m->entries[m->n_entries] = (entry){key, value, h, true};
        m->index[s] = (uint32_t)(++m->n_entries);
        m->n_live++;
        return 0;
}

int dp_hashmap_put(dp_hashmap *m, const char *key, void *value) { return insert(m, key, value, false); }
int dp_hashmap_replace(dp_hashmap *m, const char *key, void *value) { return insert(m, key, value, true); }

void *dp_hashmap_get(const dp_hashmap *m, const char *key) {
        if (!m || !m->index) return NULL;
        bool found;
        size_t s = find_slot(m, key, dp_hash_string(key), &found);
        return found ? m->entries[m->index[s] - 1].value : NULL;
}

bool dp_hashmap_contains(const dp_hashmap *m, const char *key) {
        if (!m || !m->index) return false;
        bool found;
        find_slot(m, key, dp_hash_string(key), &found);
        return found;
}

void *dp_hashmap_remove(dp_hashmap *m, const char *key) {
        if (!m || !m->index) return NULL;
        bool found;
        size_t s = find_slot(m, key, dp_hash_string(key), &found);
        if (!found) return NULL;
        entry *e = &m->entries[m->index[s] - 1];
        void *v = e->value;
        e->live = false;
        m->n_live--;
        /* The tombstone stays in the probe chain until the next rebuild. */
        return v;
}

size_t dp_hashmap_size(const dp_hashmap *m) { return m ? m->n_live : 0; }

bool dp_hashmap_iter(const dp_hashmap *m, size_t *i, const char **ret_key, void **ret_value) {
        if (!m) return false;
        while (*i < m->n_entries) {
                const entry *e = &m->entries[(*i)++];
                if (!e->live) continue;
                if (ret_key) *ret_key = e->key;
                if (ret_value) *ret_value = e->value;
                return true;
        }
        return false;
}
