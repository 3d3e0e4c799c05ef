/* SPDX-License-Identifier: Apache-2.0
 * snapshot.c — building and freezing the interned snapshot: strings, nodes,
 * slices, devices; pools resolved at freeze (highest generation, validity,
 * sort order); per-node device lists gathered on first use; the selector
 * result cache. */
#include <stdarg.h>
#include <stdio.h>

#include "alloc/internal.h"

uint32_t snap_lookup(const dp_alloc_snapshot *s, const char *str) {
        void *v = dp_hashmap_get(s->strmap, str);
        return v ? (uint32_t)((uintptr_t)v - 1) : NONE_ID;
}

/* Interned strings live in chunks of this size (one allocation for many
 * short names, freed together); a longer string gets a chunk of its own. */
#define STR_CHUNK (32u << 10)

static char *str_copy(dp_alloc_snapshot *s, const char *str, size_t len) {
        if (len + 1 > s->str_left) {
                size_t size = len + 1 > STR_CHUNK / 4 ? len + 1 : STR_CHUNK;
                if (DP_GROW(s->blocks, s->cap_blocks, s->n_blocks + 1) < 0) return NULL;
                char *chunk = malloc(size);
                if (!chunk) return NULL;
                s->blocks[s->n_blocks++] = chunk;
                if (size != STR_CHUNK) {
                        memcpy(chunk, str, len + 1);
                        return chunk;
                }
                s->str_next = chunk;
                s->str_left = size;
        }
        char *copy = s->str_next;
        memcpy(copy, str, len + 1);
        s->str_next += len + 1;
        s->str_left -= len + 1;
        return copy;
}

uint32_t snap_intern(dp_alloc_snapshot *s, const char *str) {
        if (!str) str = "";
        uint32_t id = snap_lookup(s, str);
        if (id != NONE_ID) return id;
        if (s->n_strs >= UINT32_MAX - 1 || DP_GROW(s->strs, s->cap_strs, s->n_strs + 1) < 0) return NONE_ID;
        size_t len = strlen(str);
        char *copy = str_copy(s, str, len);
        if (!copy) return NONE_ID;
        /* a copy left behind by a failed put is only unused chunk space */
        if (dp_hashmap_put(s->strmap, copy, (void *)(uintptr_t)(s->n_strs + 1)) < 0) return NONE_ID;
        s->bytes += len + 1 + 48;
        s->strs[s->n_strs] = copy;
        return (uint32_t)s->n_strs++;
}

void *snap_alloc(dp_alloc_snapshot *s, size_t size) {
        if (DP_GROW(s->blocks, s->cap_blocks, s->n_blocks + 1) < 0) return NULL;
        void *p = calloc(1, size ? size : 1);
        if (!p) return NULL;
        s->bytes += size;
        s->blocks[s->n_blocks++] = p;
        return p;
}

dp_alloc_snapshot *dp_alloc_snapshot_new(void) {
        dp_alloc_snapshot *s = calloc(1, sizeof(*s));
        if (!s) return NULL;
        if (!(s->strmap = dp_hashmap_new()) || !(s->nodemap = dp_hashmap_new()) || !(s->devmap = dp_hashmap_new()) ||
            !(s->frontier = dp_hashmap_new()))
                return dp_alloc_snapshot_free(s);
        return s;
}

dp_alloc_snapshot *dp_alloc_snapshot_free(dp_alloc_snapshot *s) {
        if (!s) return NULL;
        /* the strings themselves are in blocks */
        dp_free_many_n(s->blocks, s->n_blocks);
        for (size_t i = 0; i < s->n_sels; i++)
                dp_free_many(s->sels[i].known, s->sels[i].value);
        for (size_t i = 0; i < s->n_nodes; i++)
                dp_free_many(s->nodes[i].pools, s->nodes[i].devs, s->nodes[i].bad_pools);
        for (size_t i = 0; i < s->n_caps; i++)
                free((void *)s->caps[i].spec.valid_values);
        for (size_t i = 0; i < s->n_pools; i++)
                dp_free_many(s->pools[i].slices, s->pools[i].invalid_why);
        for (size_t i = 0; i < s->n_sets; i++)
                free(s->sets[i].users);
        dp_free_many(s->strs, s->blocks, s->sels, s->nodes, s->labels, s->slices, s->devs, s->attrs, s->caps, s->cons,
                     s->amounts, s->taints, s->strlist, s->rawsets, s->rawctrs, s->pools, s->global_pools, s->sets,
                     s->ctrs, s->stamp, s->stamp_cnt, s->lists, s->list_elems, s->dev_stamp, s->scratch, s->ctr_stamp,
                     s->ctr_cnt, s->ctr_last, s->ctr_min);
        dp_free_many(s->search_pl, s->search_amounts, s->search_rqs, s->search_cs, s->search_cs_off, s->search_cand);
        dp_hashmap_free(s->strmap);
        dp_hashmap_free(s->nodemap);
        dp_hashmap_free(s->devmap);
        dp_hashmap_free(s->frontier);
        free(s);
        return NULL;
}

void dp_alloc_set_selector_fn(dp_alloc_snapshot *s, dp_alloc_selector_fn fn, void *userdata) {
        if (!s) return;
        s->sel_fn = fn;
        s->sel_userdata = userdata;
}

int alloc_oom(dp_error *err, const char *fmt, ...) {
        if (!err || (err->code == -ENOMEM && err->msg[0])) return -ENOMEM;
        char what[512];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof what, fmt, ap);
        va_end(ap);
        return dp_error_set(err, -ENOMEM, "out of memory while %s", what);
}

static int sel_bits(dp_alloc_snapshot *s, selector *sel) {
        size_t words = (s->n_devs + 63) / 64 + 1;
        sel->known = calloc(words, sizeof(uint64_t));
        sel->value = calloc(words, sizeof(uint64_t));
        if (!sel->known || !sel->value) return -ENOMEM;
        s->bytes += 2 * words * sizeof(uint64_t);
        return 0;
}

int dp_alloc_add_selector(dp_alloc_snapshot *s, void *user, uint32_t *ret_id) {
        assert_return(s && ret_id, -EINVAL);
        if (DP_GROW(s->sels, s->cap_sels, s->n_sels + 1) < 0) return -ENOMEM;
        selector *sel = &s->sels[s->n_sels];
        *sel = (selector){.user = user};
        if (s->frozen && sel_bits(s, sel) < 0) {
                free(sel->known);
                free(sel->value);
                *sel = (selector){0};
                return -ENOMEM;
        }
        *ret_id = (uint32_t)s->n_sels++;
        return 0;
}

int snap_eval_selector(dp_alloc_snapshot *s, uint32_t id, uint32_t dev, dp_error *err) {
        selector *sel = &s->sels[id];
        uint64_t bit = 1ULL << (dev & 63);
        size_t w = dev >> 6;
        if (sel->known[w] & bit) return (sel->value[w] & bit) ? 1 : 0;
        if (!s->sel_fn) return dp_error_set(err, -EINVAL, "no selector evaluator configured");
        s->stats.selector_evals++;
        int r = s->sel_fn(s->sel_userdata, sel->user, s->devs[dev].user, err);
        if (r < 0) return r;
        sel->known[w] |= bit;
        if (r) sel->value[w] |= bit;
        return r ? 1 : 0;
}

int snap_node_index(dp_alloc_snapshot *s, const char *name) {
        void *v = dp_hashmap_get(s->nodemap, name);
        return v ? (int)((uintptr_t)v - 1) : -ENOENT;
}

/* arr to exactly n elements (zeroed past the used ones), unless it has them */
#define RESERVE(arr, cap, n) DP_EXTEND(arr, cap, n)

int dp_alloc_reserve(dp_alloc_snapshot *s, const dp_alloc_sizes *n) {
        assert_return(s && n, -EINVAL);
        if (s->frozen) return -EBUSY;
        if (RESERVE(s->nodes, s->cap_nodes, s->n_nodes + n->nodes) < 0 ||
            RESERVE(s->labels, s->cap_labels, s->n_labels + 2 * n->labels) < 0 ||
            RESERVE(s->slices, s->cap_slices, s->n_slices + n->slices) < 0 ||
            RESERVE(s->devs, s->cap_devs, s->n_devs + n->devices) < 0 ||
            RESERVE(s->attrs, s->cap_attrs, s->n_attrs + n->attributes) < 0 ||
            RESERVE(s->caps, s->cap_caps, s->n_caps + n->capacities) < 0 ||
            RESERVE(s->taints, s->cap_taints, s->n_taints + n->taints) < 0)
                return -ENOMEM;
        return 0;
}

static int add_node_internal(dp_alloc_snapshot *s, const char *name, const dp_alloc_label *labels, size_t n_labels,
                             bool explicit_add) {
        int idx = snap_node_index(s, name);
        if (idx >= 0) {
                if (!explicit_add || n_labels == 0) return 0;
                node *n = &s->nodes[idx];
                if (n->n_labels) return -EEXIST;
                n->label_off = (uint32_t)s->n_labels;
        } else {
                if (s->frozen) return -EBUSY;
                if (DP_GROW(s->nodes, s->cap_nodes, s->n_nodes + 1) < 0) return -ENOMEM;
                uint32_t nm = snap_intern(s, name);
                if (nm == NONE_ID) return -ENOMEM;
                if (dp_hashmap_put(s->nodemap, s->strs[nm], (void *)(uintptr_t)(s->n_nodes + 1)) < 0) return -ENOMEM;
                idx = (int)s->n_nodes++;
                s->nodes[idx] = (node){.name = nm, .label_off = (uint32_t)s->n_labels};
        }
        if (DP_GROW(s->labels, s->cap_labels, s->n_labels + 2 * n_labels) < 0) return -ENOMEM;
        for (size_t i = 0; i < n_labels; i++) {
                uint32_t k = snap_intern(s, labels[i].key), v = snap_intern(s, labels[i].value);
                if (k == NONE_ID || v == NONE_ID) return -ENOMEM;
                s->labels[s->n_labels++] = k;
                s->labels[s->n_labels++] = v;
        }
        s->nodes[idx].n_labels = (uint32_t)n_labels;
        return 0;
}

int dp_alloc_add_node(dp_alloc_snapshot *s, const char *name, const dp_alloc_label *labels, size_t n_labels) {
        assert_return(s && name, -EINVAL);
        assert_return(labels || n_labels == 0, -EINVAL);
        return add_node_internal(s, name, labels, n_labels, true);
}

static int push_strlist(dp_alloc_snapshot *s, const char *const *list, size_t n, uint32_t *ret_off) {
        if (DP_GROW(s->strlist, s->cap_strlist, s->n_strlist + n) < 0) return -ENOMEM;
        *ret_off = (uint32_t)s->n_strlist;
        for (size_t i = 0; i < n; i++) {
                uint32_t id = snap_intern(s, list[i]);
                if (id == NONE_ID) return -ENOMEM;
                s->strlist[s->n_strlist++] = s->strs[id];
        }
        return 0;
}

/* The node a slice or device names (NULL or "": none, NONE_ID), interned
 * into *ret and known as a node from here on. 0 or a negative errno. */
static int intern_node_name(dp_alloc_snapshot *s, const char *name, uint32_t *ret) {
        *ret = NONE_ID;
        if (!name || !name[0]) return 0;
        if ((*ret = snap_intern(s, name)) == NONE_ID) return -ENOMEM;
        int r = add_node_internal(s, name, NULL, 0, false);
        return r < 0 ? r : 0;
}

int dp_alloc_add_slice(dp_alloc_snapshot *s, const dp_alloc_slice_spec *sp, uint32_t *ret_slice) {
        assert_return(s && sp && sp->driver && sp->pool, -EINVAL);
        if (s->frozen) return -EBUSY;
        if (DP_GROW(s->slices, s->cap_slices, s->n_slices + 1) < 0) return -ENOMEM;
        slice sl = {
                .name = snap_intern(s, sp->name ? sp->name : ""),
                .driver = snap_intern(s, sp->driver),
                .pool_name = snap_intern(s, sp->pool),
                .pool = NONE_ID,
                .generation = sp->generation,
                .slice_count = sp->slice_count,
                .all_nodes = sp->all_nodes,
                .per_device = sp->per_device_node_selection,
                .dev_off = (uint32_t)s->n_devs,
        };
        if (sl.name == NONE_ID || sl.driver == NONE_ID || sl.pool_name == NONE_ID) return -ENOMEM;
        int r = intern_node_name(s, sp->node_name, &sl.node_name);
        if (r < 0) return r;
        if (sp->node_selector) {
                sl.node_selector = nodesel_copy(s, sp->node_selector);
                if (!sl.node_selector) return -ENOMEM;
        }
        sl.set_off = (uint32_t)s->n_rawsets;
        if (DP_GROW(s->rawsets, s->cap_rawsets, s->n_rawsets + sp->n_counter_sets) < 0) return -ENOMEM;
        for (size_t i = 0; i < sp->n_counter_sets; i++) {
                const dp_alloc_counter_set *cs = &sp->counter_sets[i];
                rawset rs = {.name = snap_intern(s, cs->name), .ctr_off = (uint32_t)s->n_rawctrs,
                             .n_ctrs = (uint32_t)cs->n_counters};
                if (rs.name == NONE_ID || DP_GROW(s->rawctrs, s->cap_rawctrs, s->n_rawctrs + cs->n_counters) < 0)
                        return -ENOMEM;
                for (size_t j = 0; j < cs->n_counters; j++) {
                        uint32_t nm = snap_intern(s, cs->counters[j].name);
                        if (nm == NONE_ID) return -ENOMEM;
                        s->rawctrs[s->n_rawctrs++] = (dp_alloc_counter){s->strs[nm], cs->counters[j].value};
                }
                s->rawsets[s->n_rawsets++] = rs;
        }
        sl.n_sets = (uint32_t)sp->n_counter_sets;
        if (push_strlist(s, sp->skip_node_operations, sp->n_skip_node_operations, &sl.skip_off) < 0) return -ENOMEM;
        sl.n_skip = (uint32_t)sp->n_skip_node_operations;
        s->slices[s->n_slices] = sl;
        s->bytes += sizeof(slice);
        if (ret_slice) *ret_slice = (uint32_t)s->n_slices;
        s->n_slices++;
        return 0;
}

/* parts[0..n) joined into buf (size KEY_BUF), or into *ret_big when longer;
 * NULL on OOM. */
#define KEY_BUF 512
static const char *join_parts(const char *const *parts, size_t n, char *buf, char **ret_big) {
        size_t len = 0, lens[5];
        assert(n <= ELEMENTSOF(lens));
        for (size_t i = 0; i < n; i++) len += (lens[i] = strlen(parts[i]));
        char *key = buf;
        if (len >= KEY_BUF && !(key = *ret_big = malloc(len + 1))) return NULL;
        char *p = key;
        for (size_t i = 0; i < n; i++) {
                memcpy(p, parts[i], lens[i]);
                p += lens[i];
        }
        *p = 0;
        return key;
}

/* A string added to the table without a lookup (a name only printed, never
 * looked up: the holders of devices): NONE_ID on OOM. */
uint32_t snap_add_parts(dp_alloc_snapshot *s, const char *const *parts, size_t n) {
        char buf[KEY_BUF];
        _cleanup_free_ char *big = NULL;
        const char *str = join_parts(parts, n, buf, &big);
        if (!str || s->n_strs >= UINT32_MAX - 1 || DP_GROW(s->strs, s->cap_strs, s->n_strs + 1) < 0) return NONE_ID;
        size_t len = strlen(str);
        char *copy = str_copy(s, str, len);
        if (!copy) return NONE_ID;
        s->bytes += len + 1;
        s->strs[s->n_strs] = copy;
        return (uint32_t)s->n_strs++;
}

/* snap_intern of a string made of parts, built on the stack when it is
 * short (every device interns several: no allocation for those). */
uint32_t snap_intern_parts(dp_alloc_snapshot *s, const char *const *parts, size_t n) {
        char buf[KEY_BUF];
        _cleanup_free_ char *big = NULL;
        const char *key = join_parts(parts, n, buf, &big);
        return key ? snap_intern(s, key) : NONE_ID;
}

static uint32_t intern_value(dp_alloc_snapshot *s, const dp_alloc_attr *a) {
        switch (a->type) {
        case DP_ALLOC_ATTR_INT: {
                /* "i:%lld" */
                char buf[32], *p = buf + sizeof(buf);
                *--p = 0;
                uint64_t v = a->i < 0 ? -(uint64_t)a->i : (uint64_t)a->i;
                do {
                        *--p = (char)('0' + v % 10);
                        v /= 10;
                } while (v);
                if (a->i < 0) *--p = '-';
                *--p = ':';
                *--p = 'i';
                return snap_intern(s, p);
        }
        case DP_ALLOC_ATTR_BOOL: return snap_intern(s, a->b ? "b:true" : "b:false");
        case DP_ALLOC_ATTR_STRING:
        case DP_ALLOC_ATTR_VERSION: {
                const char *parts[2] = {a->type == DP_ALLOC_ATTR_STRING ? "s:" : "v:", a->s ? a->s : ""};
                return snap_intern_parts(s, parts, 2);
        }
        default: return NONE_ID;
        }
}

static uint32_t intern_list(dp_alloc_snapshot *s, const dp_alloc_attr *a);

static const struct list_ent *list_find(const dp_alloc_snapshot *s, uint32_t id) {
        size_t lo = 0, hi = s->n_lists;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (s->lists[mid].id == id) return &s->lists[mid];
                if (s->lists[mid].id < id) lo = mid + 1;
                else hi = mid;
        }
        return NULL;
}

void snap_value_elems(const dp_alloc_snapshot *s, const uint32_t *v, const uint32_t **ret, uint32_t *ret_n) {
        const struct list_ent *l = snap_value_is_list(s, *v) ? list_find(s, *v) : NULL;
        *ret = l ? s->list_elems + l->off : v;
        *ret_n = l ? l->n : 1;
}

bool snap_values_meet(const dp_alloc_snapshot *s, uint32_t a, uint32_t b) {
        if (a == NONE_ID || b == NONE_ID) return false;
        if (!snap_value_is_list(s, a) && !snap_value_is_list(s, b)) return a == b;
        const uint32_t *ea, *eb;
        uint32_t na, nb;
        snap_value_elems(s, &a, &ea, &na);
        snap_value_elems(s, &b, &eb, &nb);
        for (uint32_t i = 0; i < na; i++)
                for (uint32_t j = 0; j < nb; j++)
                        if (ea[i] == eb[j]) return true;
        return false;
}

/* A list value: its elements interned, then the list under a key made of
 * their ids ("L:" and the ids, so [1] and ["1"] differ), with its text. */
static uint32_t intern_list(dp_alloc_snapshot *s, const dp_alloc_attr *a) {
        if (a->n_elems > DP_ALLOC_LIST_VALUES_MAX) return NONE_ID;
        uint32_t ids[DP_ALLOC_LIST_VALUES_MAX];
        _cleanup_strbuf_ dp_strbuf key = DP_STRBUF_INIT, text = DP_STRBUF_INIT;
        dp_strbuf_puts(&key, "L:");
        dp_strbuf_putc(&text, '[');
        for (size_t i = 0; i < a->n_elems; i++) {
                if (a->elems[i].type == DP_ALLOC_ATTR_LIST) return NONE_ID;
                ids[i] = intern_value(s, &a->elems[i]);
                if (ids[i] == NONE_ID) return NONE_ID;
                dp_strbuf_printf(&key, "%u,", ids[i]);
                dp_strbuf_printf(&text, "%s%s", i ? ", " : "", s->strs[ids[i]] + 2);
        }
        dp_strbuf_putc(&text, ']');
        if (dp_strbuf_failed(&key) || dp_strbuf_failed(&text)) return NONE_ID;
        size_t before = s->n_strs;
        uint32_t id = snap_intern(s, dp_strbuf_str(&key));
        if (id == NONE_ID || s->n_strs == before) return id; /* known already */
        uint32_t tid = snap_intern(s, dp_strbuf_str(&text));
        if (tid == NONE_ID || DP_GROW(s->lists, s->cap_lists, s->n_lists + 1) < 0 ||
            DP_GROW(s->list_elems, s->cap_list_elems, s->n_list_elems + a->n_elems + 1) < 0)
                return NONE_ID;
        /* new ids only grow: the table stays sorted */
        s->lists[s->n_lists++] = (struct list_ent){id, tid, (uint32_t)s->n_list_elems, (uint32_t)a->n_elems};
        memcpy(s->list_elems + s->n_list_elems, ids, a->n_elems * sizeof(uint32_t));
        s->n_list_elems += a->n_elems;
        return id;
}

const char *snap_value_text(const dp_alloc_snapshot *s, uint32_t value) {
        if (value == NONE_ID) return "(missing)";
        const struct list_ent *l = snap_value_is_list(s, value) ? list_find(s, value) : NULL;
        return l ? s->strs[l->text] : s->strs[value] + 2;
}

/* The devices of a slice name their attributes and capacities in the same
 * order, mostly with the same values: the id interned last at each position
 * is checked before hashing. */
static int qualified_name(dp_alloc_snapshot *s, name_memo *m, uint32_t driver, size_t driver_len, const char *name,
                          uint32_t *ret) {
        if (m && m->valid &&
            (m->slashed ? streq(s->strs[m->id], name) : m->driver == driver && streq(s->strs[m->id] + driver_len + 1, name))) {
                *ret = m->id;
                return 0;
        }
        bool slashed = strchr(name, '/');
        if (slashed) {
                *ret = snap_intern(s, name);
        } else {
                const char *parts[3] = {s->strs[driver], "/", name};
                *ret = snap_intern_parts(s, parts, 3);
        }
        if (*ret == NONE_ID) return -ENOMEM;
        if (m) *m = (name_memo){.valid = true, .slashed = slashed, .driver = driver, .id = *ret};
        return 0;
}

static uint32_t value_id(dp_alloc_snapshot *s, value_memo *m, const dp_alloc_attr *a) {
        if (m && m->valid && m->type == a->type) {
                switch (a->type) {
                case DP_ALLOC_ATTR_INT:
                        if (m->i == a->i) return m->id;
                        break;
                case DP_ALLOC_ATTR_BOOL:
                        if (m->i == a->b) return m->id;
                        break;
                case DP_ALLOC_ATTR_STRING:
                case DP_ALLOC_ATTR_VERSION:
                        if (streq(s->strs[m->id] + 2, a->s ? a->s : "")) return m->id;
                        break;
                case DP_ALLOC_ATTR_LIST: break; /* never memoised */
                }
        }
        uint32_t id = a->type == DP_ALLOC_ATTR_LIST ? intern_list(s, a) : intern_value(s, a);
        if (m && id != NONE_ID && a->type != DP_ALLOC_ATTR_LIST)
                *m = (value_memo){.valid = true, .type = a->type, .i = a->type == DP_ALLOC_ATTR_BOOL ? a->b : a->i, .id = id};
        return id;
}

static int cmp_attr(const void *a, const void *b) {
        const attr_ent *x = a, *y = b;
        return x->name < y->name ? -1 : x->name > y->name;
}

int dp_alloc_add_device(dp_alloc_snapshot *s, uint32_t slice_id, const dp_alloc_device_spec *sp, uint32_t *ret_device) {
        assert_return(s && sp && sp->name, -EINVAL);
        assert_return(slice_id < s->n_slices, -EINVAL);
        if (s->frozen) return -EBUSY;
        /* the API caps attributes + capacities at 32 and consumptions at 2 */
        if (sp->n_attrs + sp->n_caps > 32 || sp->n_consumes > 2 || sp->n_taints > 16) return -E2BIG;
        slice *sl = &s->slices[slice_id];
        if (sl->dev_off + sl->n_devs != s->n_devs) return -EINVAL; /* devices of one slice come together */
        if (s->n_devs >= UINT32_MAX / 2 || DP_GROW(s->devs, s->cap_devs, s->n_devs + 1) < 0) return -ENOMEM;
        size_t driver_len = strlen(s->strs[sl->driver]);
        device d = {
                .name = snap_intern(s, sp->name),
                .slice = slice_id,
                .pool = NONE_ID,
                .multi = sp->allow_multiple_allocations,
                .binds_to_node = sp->binds_to_node,
                .all_nodes = sp->all_nodes,
                .user = sp->user,
                .holder = NONE_ID,
        };
        if (d.name == NONE_ID) return -ENOMEM;
        d.has_node_sel = (sp->node_name && sp->node_name[0]) || sp->all_nodes || sp->node_selector;
        int r = intern_node_name(s, sp->node_name, &d.node_name);
        if (r < 0) return r;
        if (sp->node_selector && !(d.node_selector = nodesel_copy(s, sp->node_selector))) return -ENOMEM;

        d.attr_off = (uint32_t)s->n_attrs;
        if (DP_GROW(s->attrs, s->cap_attrs, s->n_attrs + sp->n_attrs) < 0) return -ENOMEM;
        for (size_t i = 0; i < sp->n_attrs; i++) {
                attr_ent a;
                bool memo = i < ELEMENTSOF(s->attr_names);
                if (!sp->attrs[i].name || qualified_name(s, memo ? &s->attr_names[i] : NULL, sl->driver, driver_len,
                                                         sp->attrs[i].name, &a.name) < 0)
                        return -ENOMEM;
                a.value = value_id(s, memo ? &s->attr_values[i] : NULL, &sp->attrs[i]);
                if (a.value == NONE_ID) return -ENOMEM;
                /* the first of two spellings of one name wins */
                bool dup = false;
                for (size_t j = d.attr_off; j < s->n_attrs; j++)
                        if (s->attrs[j].name == a.name) dup = true;
                if (!dup) s->attrs[s->n_attrs++] = a;
        }
        d.n_attrs = (uint32_t)(s->n_attrs - d.attr_off);
        /* by name id (unique after the check above); a device has a handful */
        for (uint32_t i = 1; i < d.n_attrs; i++)
                for (attr_ent *at = s->attrs + d.attr_off, *e = at + i; e > at && cmp_attr(e - 1, e) > 0; e--) {
                        attr_ent t = e[0];
                        e[0] = e[-1];
                        e[-1] = t;
                }

        d.cap_off = (uint32_t)s->n_caps;
        if (DP_GROW(s->caps, s->cap_caps, s->n_caps + sp->n_caps) < 0) return -ENOMEM;
        for (size_t i = 0; i < sp->n_caps; i++) {
                cap_ent c = {.spec = sp->caps[i]};
                if (!sp->caps[i].name ||
                    qualified_name(s, i < ELEMENTSOF(s->cap_names) ? &s->cap_names[i] : NULL, sl->driver, driver_len,
                                   sp->caps[i].name, &c.name) < 0)
                        return -ENOMEM;
                c.spec.name = s->strs[c.name];
                c.spec.valid_values = NULL;
                if (sp->caps[i].n_valid_values) {
                        __int128 *vv = calloc(sp->caps[i].n_valid_values, sizeof(__int128));
                        if (!vv) return -ENOMEM;
                        memcpy(vv, sp->caps[i].valid_values, sp->caps[i].n_valid_values * sizeof(__int128));
                        c.spec.valid_values = vv;
                }
                s->caps[s->n_caps++] = c;
        }
        d.n_caps = (uint32_t)sp->n_caps;

        d.cons_off = (uint32_t)s->n_cons;
        if (DP_GROW(s->cons, s->cap_cons, s->n_cons + sp->n_consumes) < 0) return -ENOMEM;
        for (size_t i = 0; i < sp->n_consumes; i++) {
                const dp_alloc_consumption *cp = &sp->consumes[i];
                cons_ent c = {.set_name = snap_intern(s, cp->counter_set), .set = NONE_ID,
                              .amount_off = (uint32_t)s->n_amounts, .n_amounts = (uint32_t)cp->n_counters};
                if (c.set_name == NONE_ID || DP_GROW(s->amounts, s->cap_amounts, s->n_amounts + cp->n_counters) < 0)
                        return -ENOMEM;
                for (size_t j = 0; j < cp->n_counters; j++) {
                        amount_ent a = {.name = snap_intern(s, cp->counters[j].name), .counter = NONE_ID,
                                        .amount = cp->counters[j].value};
                        if (a.name == NONE_ID) return -ENOMEM;
                        s->amounts[s->n_amounts++] = a;
                }
                for (size_t j = 0; j < cp->n_groups && c.n_groups < DP_ALLOC_GROUPS_MAX; j++) {
                        uint32_t g = snap_intern(s, cp->groups[j]);
                        if (g == NONE_ID) return -ENOMEM;
                        c.groups[c.n_groups++] = g;
                }
                s->cons[s->n_cons++] = c;
        }
        d.n_cons = (uint32_t)sp->n_consumes;

        d.taint_off = (uint32_t)s->n_taints;
        if (DP_GROW(s->taints, s->cap_taints, s->n_taints + sp->n_taints) < 0) return -ENOMEM;
        for (size_t i = 0; i < sp->n_taints; i++) {
                uint32_t k = snap_intern(s, sp->taints[i].key), v = snap_intern(s, sp->taints[i].value),
                         e = snap_intern(s, sp->taints[i].effect);
                if (k == NONE_ID || v == NONE_ID || e == NONE_ID) return -ENOMEM;
                taint_ent t = {s->strs[k], s->strs[v], s->strs[e], false};
                /* Unknown effects count as None (API contract), so only these two block. */
                t.blocking = streq(t.effect, "NoSchedule") || streq(t.effect, "NoExecute");
                if (t.blocking) d.has_blocking_taint = true;
                s->taints[s->n_taints++] = t;
        }
        d.n_taints = (uint32_t)sp->n_taints;

        if (push_strlist(s, sp->binding_conditions, sp->n_binding_conditions, &d.bc_off) < 0 ||
            push_strlist(s, sp->binding_failure_conditions, sp->n_binding_failure_conditions, &d.bfc_off) < 0)
                return -ENOMEM;
        d.n_bc = (uint32_t)sp->n_binding_conditions;
        d.n_bfc = (uint32_t)sp->n_binding_failure_conditions;

        s->devs[s->n_devs] = d;
        s->bytes += sizeof(device);
        sl = &s->slices[slice_id];
        sl->n_devs++;
        if (ret_device) *ret_device = (uint32_t)s->n_devs;
        s->n_devs++;
        return 0;
}

uint32_t snap_device_attr(const dp_alloc_snapshot *s, const device *d, uint32_t name) {
        size_t lo = d->attr_off, hi = d->attr_off + d->n_attrs;
        while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (s->attrs[mid].name == name) return s->attrs[mid].value;
                if (s->attrs[mid].name < name) lo = mid + 1;
                else hi = mid;
        }
        return NONE_ID;
}

/* ---- freeze ---- */

static int cmp_slice_name(const void *a, const void *b, void *ctx) {
        const dp_alloc_snapshot *s = ctx;
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        int c = strcmp(s->strs[s->slices[x].name], s->strs[s->slices[y].name]);
        return c ? c : (x < y ? -1 : x > y);
}

static int cmp_pool(const void *a, const void *b, void *ctx) {
        const dp_alloc_snapshot *s = ctx;
        const pool *x = a, *y = b;
        if (x->has_binding != y->has_binding) return x->has_binding ? 1 : -1;
        int c = strcmp(s->strs[x->driver], s->strs[y->driver]);
        return c ? c : strcmp(s->strs[x->name], s->strs[y->name]);
}

static int cmp_node(const void *a, const void *b, void *ctx) {
        const dp_alloc_snapshot *s = ctx;
        return strcmp(s->strs[((const node *)a)->name], s->strs[((const node *)b)->name]);
}

static int pool_invalid(pool *p, const char *fmt, const char *a, const char *b) {
        if (p->invalid) return 0;
        p->invalid = true;
        p->invalid_why = dp_asprintf(fmt, a, b);
        return p->invalid_why ? 0 : -ENOMEM;
}

static int resolve_pool(dp_alloc_snapshot *s, uint32_t pi) {
        pool *p = &s->pools[pi];
        qsort_r(p->slices, p->n_slices, sizeof(uint32_t), cmp_slice_name, s);
        p->incomplete = (int64_t)p->n_slices != p->slice_count;
        /* counter sets: names unique per pool */
        p->set_off = (uint32_t)s->n_sets;
        for (size_t k = 0; k < p->n_slices; k++) {
                slice *sl = &s->slices[p->slices[k]];
                sl->pool = pi;
                for (uint32_t r = sl->set_off; r < sl->set_off + sl->n_sets; r++) {
                        rawset *rs = &s->rawsets[r];
                        bool dup = false;
                        for (size_t j = p->set_off; j < s->n_sets; j++)
                                if (s->sets[j].name == rs->name) dup = true;
                        if (dup) {
                                if (pool_invalid(p, "duplicate counter set %s%s", s->strs[rs->name], "") < 0)
                                        return -ENOMEM;
                                continue;
                        }
                        counter_set cs = {.pool = pi, .name = rs->name, .ctr_off = (uint32_t)s->n_ctrs,
                                          .n_ctrs = rs->n_ctrs};
                        for (uint32_t c = rs->ctr_off; c < rs->ctr_off + rs->n_ctrs; c++) {
                                for (uint32_t c2 = rs->ctr_off; c2 < c; c2++)
                                        if (streq(s->rawctrs[c2].name, s->rawctrs[c].name) &&
                                            pool_invalid(p, "counter set %s: duplicate counter %s", s->strs[rs->name],
                                                         s->rawctrs[c].name) < 0)
                                                return -ENOMEM;
                                s->ctrs[s->n_ctrs++] = (counter){snap_lookup(s, s->rawctrs[c].name),
                                                                 s->rawctrs[c].value, 0};
                        }
                        s->sets[s->n_sets++] = cs;
                }
        }
        p->n_sets = (uint32_t)(s->n_sets - p->set_off);
        /* devices: unique names, counter references resolve */
        s->epoch++;
        for (size_t k = 0; k < p->n_slices; k++) {
                slice *sl = &s->slices[p->slices[k]];
                for (uint32_t di = sl->dev_off; di < sl->dev_off + sl->n_devs; di++) {
                        device *d = &s->devs[di];
                        d->pool = pi;
                        if (d->n_bc) p->has_binding = true;
                        if (s->stamp[d->name] == s->epoch) {
                                if (pool_invalid(p, "duplicate device name %s%s", s->strs[d->name], "") < 0)
                                        return -ENOMEM;
                        } else {
                                s->stamp[d->name] = s->epoch;
                        }
                        for (uint32_t c = d->cons_off; c < d->cons_off + d->n_cons; c++) {
                                cons_ent *ce = &s->cons[c];
                                /* gate off: a pool whose devices carry groups is
                                 * incomplete, as the 1.37 scheduler treats it */
                                if (s->groups_off && ce->n_groups && !p->groups_gated)
                                        p->incomplete = p->groups_gated = true;
                                for (uint32_t j = p->set_off; j < p->set_off + p->n_sets; j++)
                                        if (s->sets[j].name == ce->set_name) ce->set = j;
                                if (ce->set == NONE_ID) {
                                        if (pool_invalid(p, "device %s consumes unknown counter set %s",
                                                         s->strs[d->name], s->strs[ce->set_name]) < 0)
                                                return -ENOMEM;
                                        continue;
                                }
                                counter_set *cs = &s->sets[ce->set];
                                for (uint32_t a = ce->amount_off; a < ce->amount_off + ce->n_amounts; a++) {
                                        amount_ent *am = &s->amounts[a];
                                        for (uint32_t j = cs->ctr_off; j < cs->ctr_off + cs->n_ctrs; j++)
                                                if (s->ctrs[j].name == am->name) am->counter = j;
                                        if (am->counter == NONE_ID &&
                                            pool_invalid(p, "device %s consumes unknown counter %s",
                                                         s->strs[d->name], s->strs[am->name]) < 0)
                                                return -ENOMEM;
                                }
                        }
                }
        }
        return 0;
}

int dp_alloc_set_compat_groups(dp_alloc_snapshot *s, bool enabled) {
        assert_return(s, -EINVAL);
        if (s->frozen) return -EBUSY;
        s->groups_off = !enabled;
        return 0;
}

static int freeze_oom(dp_error *err) { return alloc_oom(err, "freezing the allocation snapshot"); }

int dp_alloc_freeze(dp_alloc_snapshot *s, dp_error *err) {
        assert_return(s, -EINVAL);
        if (s->frozen) return 0;
        /* string-indexed scratch first: resolve_pool uses it */
        size_t nstr = s->n_strs + s->n_slices + 16; /* pool keys are interned during freeze */
        s->n_stamp = nstr;
        /* those keys without doubling the string table and its map */
        if (RESERVE(s->strs, s->cap_strs, nstr) < 0 || dp_hashmap_reserve(s->strmap, nstr) < 0)
                return freeze_oom(err);
        s->stamp = calloc(nstr, sizeof(uint32_t));
        s->stamp_cnt = calloc(nstr, sizeof(uint32_t));
        s->dev_stamp = calloc(s->n_devs + 1, sizeof(uint32_t));
        s->scratch = calloc(s->n_devs + 1, sizeof(uint32_t));
        s->ctr_stamp = calloc(s->n_rawctrs + 1, sizeof(uint32_t));
        s->ctr_cnt = calloc(s->n_rawctrs + 1, sizeof(uint32_t));
        s->ctr_last = calloc(s->n_rawctrs + 1, sizeof(uint32_t));
        s->ctr_min = calloc(s->n_rawctrs + 1, sizeof(__int128));
        if (!s->scratch || !s->ctr_stamp || !s->ctr_cnt || !s->ctr_last || !s->ctr_min) return freeze_oom(err);
        s->ctrs = calloc(s->n_rawctrs + 1, sizeof(counter));
        s->sets = calloc(s->n_rawsets + 1, sizeof(counter_set));
        if (!s->stamp || !s->stamp_cnt || !s->dev_stamp || !s->ctrs || !s->sets) return freeze_oom(err);
        s->bytes += nstr * 8 + (s->n_devs + 1) * 4 + (s->n_rawctrs + 1) * sizeof(counter) +
                    (s->n_rawsets + 1) * sizeof(counter_set);

        /* group slices into pools; keep only the highest generation */
        _cleanup_(dp_hashmap_freep) dp_hashmap *pm = dp_hashmap_new();
        if (!pm) return freeze_oom(err);
        s->pools = calloc(s->n_slices + 1, sizeof(pool));
        if (!s->pools) return freeze_oom(err);
        for (size_t i = 0; i < s->n_slices; i++) {
                slice *sl = &s->slices[i];
                const char *parts[3] = {s->strs[sl->driver], "\n", s->strs[sl->pool_name]};
                uint32_t kid = snap_intern_parts(s, parts, 3);
                if (kid == NONE_ID || kid >= nstr) return freeze_oom(err);
                void *v = dp_hashmap_get(pm, s->strs[kid]);
                pool *p;
                if (!v) {
                        if (dp_hashmap_put(pm, s->strs[kid], (void *)(uintptr_t)(s->n_pools + 1)) < 0)
                                return freeze_oom(err);
                        p = &s->pools[s->n_pools++];
                        *p = (pool){.driver = sl->driver, .name = sl->pool_name, .generation = sl->generation,
                                    .slice_count = sl->slice_count};
                } else {
                        p = &s->pools[(uintptr_t)v - 1];
                        if (sl->generation < p->generation) continue;
                        if (sl->generation > p->generation) {
                                p->n_slices = 0;
                                p->generation = sl->generation;
                                p->slice_count = sl->slice_count;
                        }
                }
                if (DP_GROW(p->slices, p->cap_slices, p->n_slices + 1) < 0) return freeze_oom(err);
                p->slices[p->n_slices++] = (uint32_t)i;
        }
        for (size_t i = 0; i < s->n_pools; i++) {
                int r = resolve_pool(s, (uint32_t)i);
                if (r < 0)
                        return alloc_oom(err, "freezing pool %s of the allocation snapshot", s->strs[s->pools[i].name]);
        }
        /* each set's user list holds every consumer at most once: size it now
         * so charging never allocates */
        for (size_t i = 0; i < s->n_cons; i++)
                if (s->cons[i].set != NONE_ID) s->sets[s->cons[i].set].cap_users++;
        for (size_t i = 0; i < s->n_sets; i++) {
                s->sets[i].users = calloc(s->sets[i].cap_users + 1, sizeof(uint32_t));
                if (!s->sets[i].users) return freeze_oom(err);
                s->bytes += (s->sets[i].cap_users + 1) * 4;
        }
        /* sort pools, then renumber references */
        if (s->n_pools) qsort_r(s->pools, s->n_pools, sizeof(pool), cmp_pool, s);
        for (size_t i = 0; i < s->n_pools; i++) {
                pool *p = &s->pools[i];
                for (size_t k = 0; k < p->n_slices; k++) {
                        slice *sl = &s->slices[p->slices[k]];
                        sl->pool = (uint32_t)i;
                        for (uint32_t di = sl->dev_off; di < sl->dev_off + sl->n_devs; di++) s->devs[di].pool = (uint32_t)i;
                }
                for (uint32_t j = p->set_off; j < p->set_off + p->n_sets; j++) s->sets[j].pool = (uint32_t)i;
        }
        /* nodes in name order */
        if (s->n_nodes) qsort_r(s->nodes, s->n_nodes, sizeof(node), cmp_node, s);
        for (size_t i = 0; i < s->n_nodes; i++)
                if (dp_hashmap_replace(s->nodemap, s->strs[s->nodes[i].name], (void *)(uintptr_t)(i + 1)) < 0)
                        return freeze_oom(err);
        /* which pools a node must look at: those naming it, and the few that
         * select nodes otherwise (gathering is then linear in the fleet) */
        for (size_t i = 0; i < s->n_pools; i++) {
                pool *p = &s->pools[i];
                bool global = false;
                for (size_t k = 0; k < p->n_slices; k++) {
                        const slice *sl = &s->slices[p->slices[k]];
                        if (sl->node_name == NONE_ID) {
                                global |= sl->all_nodes || sl->node_selector || sl->per_device;
                                continue;
                        }
                        int ni = snap_node_index(s, s->strs[sl->node_name]);
                        if (ni < 0) continue;
                        node *n = &s->nodes[ni];
                        if (n->n_pools && n->pools[n->n_pools - 1] == i) continue;
                        if (DP_GROW(n->pools, n->cap_pools, n->n_pools + 1) < 0) return freeze_oom(err);
                        n->pools[n->n_pools++] = (uint32_t)i;
                }
                if (global) {
                        if (DP_GROW(s->global_pools, s->cap_global_pools, s->n_global_pools + 1) < 0)
                                return freeze_oom(err);
                        s->global_pools[s->n_global_pools++] = (uint32_t)i;
                }
        }
        for (size_t i = 0; i < s->n_sels; i++)
                if (sel_bits(s, &s->sels[i]) < 0) return freeze_oom(err);
        s->frozen = true;
        return 0;
}

static bool slice_targets(const dp_alloc_snapshot *s, const slice *sl, const node *n) {
        if (sl->node_name != NONE_ID) return sl->node_name == n->name;
        if (sl->all_nodes) return true;
        if (sl->node_selector) return nodesel_match(s, sl->node_selector, n);
        return false;
}

static bool device_targets(const dp_alloc_snapshot *s, const device *d, const node *n) {
        if (d->node_name != NONE_ID) return d->node_name == n->name;
        if (d->all_nodes) return true;
        if (d->node_selector) return nodesel_match(s, d->node_selector, n);
        return false;
}

int snap_gather_node(dp_alloc_snapshot *s, uint32_t ni) {
        node *n = &s->nodes[ni];
        if (n->gathered) return 0;
        size_t cap = 0, cap_bad = 0;
        n->n_devs = n->n_bad_pools = 0; /* a gathering that ran out of memory starts over */
        /* merge the node's own pools with the global ones, keeping pool order */
        size_t a = 0, b = 0;
        while (a < n->n_pools || b < s->n_global_pools) {
                uint32_t pi;
                if (b == s->n_global_pools || (a < n->n_pools && n->pools[a] < s->global_pools[b])) pi = n->pools[a++];
                else if (a == n->n_pools || s->global_pools[b] < n->pools[a]) pi = s->global_pools[b++];
                else {
                        pi = n->pools[a++];
                        b++;
                }
                pool *p = &s->pools[pi];
                bool reachable = false;
                size_t start = n->n_devs;
                for (size_t k = 0; k < p->n_slices; k++) {
                        slice *sl = &s->slices[p->slices[k]];
                        bool whole = !sl->per_device && slice_targets(s, sl, n);
                        for (uint32_t di = sl->dev_off; di < sl->dev_off + sl->n_devs; di++) {
                                if (!whole && !(sl->per_device && device_targets(s, &s->devs[di], n))) continue;
                                reachable = true;
                                if (DP_GROW(n->devs, cap, n->n_devs + 1) < 0) return -ENOMEM;
                                n->devs[n->n_devs++] = di;
                        }
                        if (whole) reachable = true;
                }
                if (reachable && (p->incomplete || p->invalid)) {
                        n->n_devs = start;
                        if (DP_GROW(n->bad_pools, cap_bad, n->n_bad_pools + 1) < 0) return -ENOMEM;
                        n->bad_pools[n->n_bad_pools++] = (uint32_t)pi;
                }
        }
        s->bytes += cap * 4 + cap_bad * 4;
        n->gathered = true;
        return 0;
}

size_t dp_alloc_node_count(dp_alloc_snapshot *s) { return s ? s->n_nodes : 0; }

const char *dp_alloc_node_name(dp_alloc_snapshot *s, size_t i) {
        if (!s || i >= s->n_nodes) return NULL;
        if (!s->frozen && dp_alloc_freeze(s, NULL) < 0) return NULL;
        return s->strs[s->nodes[i].name];
}

size_t dp_alloc_device_count(const dp_alloc_snapshot *s) { return s ? s->n_devs : 0; }

/* "driver\npool\ndevice" -> device + 1 for the devices of each pool's
 * current generation, the first of a duplicated name winning (as
 * resolve_pool keeps it); made on the first dp_alloc_find_device, since only
 * inputs with claims already allocated look devices up by name. */
static int build_devmap(dp_alloc_snapshot *s) {
        int r = dp_hashmap_reserve(s->devmap, s->n_devs);
        for (size_t i = 0; r >= 0 && i < s->n_pools; i++) {
                const pool *p = &s->pools[i];
                for (size_t k = 0; r >= 0 && k < p->n_slices; k++) {
                        const slice *sl = &s->slices[p->slices[k]];
                        for (uint32_t di = sl->dev_off; r >= 0 && di < sl->dev_off + sl->n_devs; di++) {
                                const char *parts[5] = {s->strs[p->driver], "\n", s->strs[p->name], "\n",
                                                        s->strs[s->devs[di].name]};
                                uint32_t kid = snap_intern_parts(s, parts, 5);
                                if (kid == NONE_ID) r = -ENOMEM;
                                else r = dp_hashmap_put(s->devmap, s->strs[kid], (void *)(uintptr_t)(di + 1));
                                if (r == -EEXIST) r = 0;
                        }
                }
        }
        if (r < 0) {
                /* start over on the next call */
                dp_hashmap *fresh = dp_hashmap_new();
                if (fresh) {
                        dp_hashmap_free(s->devmap);
                        s->devmap = fresh;
                }
                return -ENOMEM;
        }
        s->devmap_built = true;
        return 0;
}

/* dp_alloc_find_device without the map (it could not be made): the same
 * answer, the first device of that name in the pool's slice order. */
static int find_device_scan(const dp_alloc_snapshot *s, const char *driver, const char *pool_name, const char *dev,
                            uint32_t *ret) {
        for (size_t i = 0; i < s->n_pools; i++) {
                const pool *p = &s->pools[i];
                if (!streq(s->strs[p->driver], driver) || !streq(s->strs[p->name], pool_name)) continue;
                for (size_t k = 0; k < p->n_slices; k++) {
                        const slice *sl = &s->slices[p->slices[k]];
                        for (uint32_t di = sl->dev_off; di < sl->dev_off + sl->n_devs; di++)
                                if (streq(s->strs[s->devs[di].name], dev)) {
                                        *ret = di;
                                        return 0;
                                }
                }
        }
        return -ENOENT;
}

int dp_alloc_find_device(dp_alloc_snapshot *s, const char *driver, const char *pool_name, const char *dev, uint32_t *ret) {
        assert_return(s && driver && pool_name && dev && ret, -EINVAL);
        int r = dp_alloc_freeze(s, NULL);
        if (r < 0) return r;
        /* running out of memory here only costs time: callers take any
         * error for "no such device" */
        if (!s->devmap_built && build_devmap(s) < 0) return find_device_scan(s, driver, pool_name, dev, ret);
        const char *parts[5] = {driver, "\n", pool_name, "\n", dev};
        char buf[KEY_BUF];
        _cleanup_free_ char *big = NULL;
        const char *key = join_parts(parts, 5, buf, &big);
        if (!key) return find_device_scan(s, driver, pool_name, dev, ret);
        void *v = dp_hashmap_get(s->devmap, key);
        if (!v) return -ENOENT;
        *ret = (uint32_t)((uintptr_t)v - 1);
        return 0;
}

int dp_alloc_mark_allocated(dp_alloc_snapshot *s, uint32_t dev, const char *holder, const char *share_id,
                            const dp_alloc_consumed *consumed, size_t n_consumed) {
        assert_return(s && dev < s->n_devs, -EINVAL);
        int r = dp_alloc_freeze(s, NULL);
        if (r < 0) return r;
        uint32_t h = NONE_ID;
        if (s->devs[dev].holder == NONE_ID && holder) {
                h = snap_add_parts(s, &holder, 1);
                if (h == NONE_ID) return -ENOMEM;
        }
        (void)share_id;
        snap_mark(s, dev, h, consumed, n_consumed);
        return 0;
}

void snap_mark(dp_alloc_snapshot *s, uint32_t dev, uint32_t holder, const dp_alloc_consumed *consumed,
               size_t n_consumed) {
        device *d = &s->devs[dev];
        if (d->holder == NONE_ID) d->holder = holder;
        if (d->committed == 0) state_charge_counters(s, dev, +1);
        d->committed++;
        s->version++;
        if (d->multi)
                for (size_t i = 0; i < n_consumed; i++) {
                        uint32_t nm = snap_lookup(s, consumed[i].name);
                        for (uint32_t c = d->cap_off; c < d->cap_off + d->n_caps; c++)
                                if (s->caps[c].name == nm) {
                                        s->caps[c].consumed += consumed[i].value;
                                        s->caps[c].committed += consumed[i].value;
                                }
                }
}

uint64_t dp_alloc_version(const dp_alloc_snapshot *s) { return s ? s->version : 0; }

void dp_alloc_get_stats(const dp_alloc_snapshot *s, dp_alloc_stats *ret) {
        if (!s || !ret) return;
        *ret = s->stats;
        ret->peak_bytes = s->bytes;
}

int dp_alloc_release(dp_alloc_snapshot *s, uint32_t dev, const dp_alloc_consumed *consumed, size_t n_consumed) {
        assert_return(s && dev < s->n_devs, -EINVAL);
        device *d = &s->devs[dev];
        if (!s->frozen || d->committed == 0) return -EINVAL;
        if (d->multi)
                for (size_t i = 0; i < n_consumed; i++) {
                        uint32_t nm = snap_lookup(s, consumed[i].name);
                        for (uint32_t c = d->cap_off; c < d->cap_off + d->n_caps; c++)
                                if (s->caps[c].name == nm) {
                                        s->caps[c].consumed -= consumed[i].value;
                                        s->caps[c].committed -= consumed[i].value;
                                }
                }
        d->committed--;
        s->version++;
        if (d->committed == 0) {
                state_charge_counters(s, dev, -1);
                d->holder = NONE_ID;
        }
        /* frontiers assumed that nothing comes back */
        dp_hashmap *fresh = dp_hashmap_new();
        if (!fresh) return -ENOMEM;
        dp_hashmap_free(s->frontier);
        s->frontier = fresh;
        return 0;
}
