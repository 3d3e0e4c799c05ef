/* SPDX-License-Identifier: Apache-2.0
 * store.c — the cluster store (store.h): objects by key, revisions, the
 * claim device ledger. */
#include <stdio.h>

#include "base/hashmap.h"
#include "base/strbuf.h"
#include "sched/store.h"

#define STORE_KINDS 32 /* dp_kind values indexed per kind (all of them today) */

typedef struct entry {
        char *key;
        dp_object obj; /* hdr NULL once deleted */
        uint64_t rv;
        dp_kind kind;
} entry;

/* The slots of one kind, in slot (insertion) order, and how many are live. */
typedef struct kind_index {
        uint32_t *slots;
        size_t n, cap, live;
} kind_index;

struct dp_store {
        entry *items;
        size_t n, cap;
        dp_hashmap *index; /* key -> entry position + 1 */
        uint64_t rev;
        kind_index kinds[STORE_KINDS];
        uint32_t *changes; /* the slot of every write, in order */
        size_t n_changes, cap_changes;
        bool changes_lost; /* the log could not grow: readers rebuild every time */
        struct ledger *ledger; /* device -> claims holding it, for the ledger check */
};

bool dp_kind_namespaced(dp_kind k) {
        return k == DP_KIND_POD || k == DP_KIND_RESOURCE_CLAIM || k == DP_KIND_RESOURCE_CLAIM_TEMPLATE ||
               k == DP_KIND_POD_GROUP || (k >= DP_KIND_DEPLOYMENT && k <= DP_KIND_LAST);
}

const char *dp_store_ns_of(dp_object o) {
        if (!dp_kind_namespaced(o.hdr->kind)) return "";
        const dp_object_meta *m = dp_object_meta_of(o);
        return m->namespace && m->namespace[0] ? m->namespace : "default";
}

/* ---- the device ledger's index ----
 * Per device ("driver\x1fpool\x1fdevice"): the slots of the claims whose
 * allocation names it (admin-access results left out). Brought up to date
 * from the change log before each check, so a check looks at the few claims
 * holding the devices asked for, not at every claim. */

typedef struct holders {
        char *key;
        uint32_t *slots;
        size_t n, cap;
} holders;

typedef struct slot_held {
        holders **h; /* one per result added */
        size_t n;
} slot_held;

typedef struct ledger {
        dp_hashmap *devs; /* key -> holders */
        slot_held *slots;
        size_t n_slots;
        size_t pos; /* in the change log */
} ledger;

static void ledger_free(ledger *l) {
        if (!l) return;
        size_t i = 0;
        void *v;
        while (dp_hashmap_iter(l->devs, &i, NULL, &v)) {
                holders *h = v;
                free(h->slots);
                free(h->key);
                free(h);
        }
        dp_hashmap_free(l->devs);
        for (size_t k = 0; k < l->n_slots; k++)
                free(l->slots[k].h);
        free(l->slots);
        free(l);
}

static char *dev_key(char *buf, size_t size, const dp_device_allocation_result *x) {
        int n = snprintf(buf, size, "%s\x1f%s\x1f%s", x->driver ? x->driver : "\x01", x->pool ? x->pool : "\x01",
                         x->device ? x->device : "\x01");
        return n >= 0 && (size_t)n < size ? buf : NULL;
}

static bool excluded_result(const dp_device_allocation_result *x) { return x->has_admin_access && x->admin_access; }

/* The claim in `slot` changed: drop what it held, add what it holds now. */
static int ledger_slot(dp_store *s, ledger *l, size_t slot) {
        if (slot >= l->n_slots) {
                size_t n = s->n;
                slot_held *v = realloc(l->slots, n * sizeof(*v));
                if (!v) return -ENOMEM;
                memset(v + l->n_slots, 0, (n - l->n_slots) * sizeof(*v));
                l->slots = v;
                l->n_slots = n;
        }
        slot_held *sh = &l->slots[slot];
        for (size_t i = 0; i < sh->n; i++) {
                holders *h = sh->h[i];
                for (size_t k = 0; k < h->n; k++)
                        if (h->slots[k] == slot) {
                                memmove(h->slots + k, h->slots + k + 1, (h->n - k - 1) * sizeof(*h->slots));
                                h->n--;
                                break;
                        }
        }
        free(sh->h);
        *sh = (slot_held){0};
        const entry *e = &s->items[slot];
        if (e->kind != DP_KIND_RESOURCE_CLAIM || !e->obj.hdr || !e->obj.claim->allocation) return 0;
        const dp_allocation_result *a = e->obj.claim->allocation;
        if (!(sh->h = calloc(a->n_results + 1, sizeof(*sh->h)))) return -ENOMEM;
        for (size_t i = 0; i < a->n_results; i++) {
                const dp_device_allocation_result *x = &a->results[i];
                if (excluded_result(x)) continue;
                char buf[768];
                _cleanup_free_ char *heap = NULL;
                const char *key = dev_key(buf, sizeof(buf), x);
                if (!key)
                        key = heap = dp_asprintf("%s\x1f%s\x1f%s", x->driver ? x->driver : "\x01",
                                                 x->pool ? x->pool : "\x01", x->device ? x->device : "\x01");
                if (!key) return -ENOMEM;
                holders *h = dp_hashmap_get(l->devs, key);
                if (!h) {
                        if (!(h = calloc(1, sizeof(*h))) || !(h->key = dp_strdup(key))) {
                                free(h);
                                return -ENOMEM;
                        }
                        if (dp_hashmap_put(l->devs, h->key, h) < 0) {
                                free(h->key);
                                free(h);
                                return -ENOMEM;
                        }
                }
                if (DP_GROW(h->slots, h->cap, h->n + 1) < 0) return -ENOMEM;
                h->slots[h->n++] = (uint32_t)slot;
                sh->h[sh->n++] = h;
        }
        return 0;
}

/* The index as of now; NULL when it could not be built (the check then
 * looks at every claim). */
static ledger *ledger_sync(dp_store *s) {
        ledger *l = s->ledger;
        if (l && !s->changes_lost) {
                for (; l->pos < s->n_changes; l->pos++) {
                        size_t slot = s->changes[l->pos];
                        if (s->items[slot].kind != DP_KIND_RESOURCE_CLAIM) continue;
                        if (ledger_slot(s, l, slot) < 0) {
                                ledger_free(l);
                                return s->ledger = NULL;
                        }
                }
                return l;
        }
        ledger_free(l);
        s->ledger = NULL;
        if (s->changes_lost) return NULL;
        if (!(l = calloc(1, sizeof(*l))) || !(l->devs = dp_hashmap_new())) {
                free(l);
                return NULL;
        }
        const kind_index *ki = &s->kinds[DP_KIND_RESOURCE_CLAIM];
        for (size_t i = 0; i < ki->n; i++)
                if (ledger_slot(s, l, ki->slots[i]) < 0) {
                        ledger_free(l);
                        return NULL;
                }
        l->pos = s->n_changes;
        return s->ledger = l;
}

dp_store *dp_store_new(void) {
        dp_store *s = calloc(1, sizeof(*s));
        if (!s) return NULL;
        if (!(s->index = dp_hashmap_new())) {
                free(s);
                return NULL;
        }
        return s;
}

dp_store *dp_store_free(dp_store *s) {
        if (!s) return NULL;
        for (size_t i = 0; i < s->n; i++) {
                if (s->items[i].obj.hdr) dp_object_free(s->items[i].obj);
                free(s->items[i].key);
        }
        free(s->items);
        for (size_t k = 0; k < STORE_KINDS; k++)
                free(s->kinds[k].slots);
        free(s->changes);
        ledger_free(s->ledger);
        dp_hashmap_free(s->index);
        free(s);
        return NULL;
}

static char *make_key(dp_kind kind, const char *ns, const char *name) {
        if (dp_kind_namespaced(kind) && (!ns || !ns[0])) ns = "default";
        if (!dp_kind_namespaced(kind)) ns = "";
        return dp_asprintf("%d/%s/%s", (int)kind, ns, name);
}

/* The key in `buf` when it fits (no allocation on lookups), else NULL. */
static const char *key_in(char *buf, size_t size, dp_kind kind, const char *ns, const char *name) {
        if (dp_kind_namespaced(kind) && (!ns || !ns[0])) ns = "default";
        if (!dp_kind_namespaced(kind)) ns = "";
        int k = (int)kind;
        size_t at = 0;
        if (k >= 10) buf[at++] = (char)('0' + k / 10 % 10);
        buf[at++] = (char)('0' + k % 10);
        buf[at++] = '/';
        size_t ln = strlen(ns), lm = strlen(name);
        if (k >= 100 || at + ln + 1 + lm + 1 > size) return NULL;
        memcpy(buf + at, ns, ln);
        at += ln;
        buf[at++] = '/';
        memcpy(buf + at, name, lm + 1);
        return buf;
}

static void log_change(dp_store *s, const entry *e) {
        /* the log only helps readers keep caches: when it cannot grow,
         * readers are told to start over (dp_store_next_change) */
        if (s->changes_lost || DP_GROW(s->changes, s->cap_changes, s->n_changes + 1) < 0) {
                s->changes_lost = true;
                return;
        }
        s->changes[s->n_changes++] = (uint32_t)(e - s->items);
}

static entry *find(const dp_store *s, dp_kind kind, const char *ns, const char *name) {
        if (!name) return NULL;
        char buf[512];
        _cleanup_free_ char *heap = NULL;
        const char *key = key_in(buf, sizeof(buf), kind, ns, name);
        if (!key) key = heap = make_key(kind, ns, name);
        if (!key) return NULL;
        uintptr_t pos = (uintptr_t)dp_hashmap_get(s->index, key);
        if (!pos) return NULL;
        entry *e = &s->items[pos - 1];
        return e->obj.hdr ? e : NULL;
}

int dp_store_add(dp_store *s, dp_object obj, uint64_t *ret_rv) {
        assert_return(s && obj.hdr, -EINVAL);
        dp_object_meta *m = dp_object_meta_of(obj);
        if (!m->name || !m->name[0]) return -EINVAL;
        dp_kind kind = obj.hdr->kind;
        if ((unsigned)kind >= STORE_KINDS) return -EINVAL;
        _cleanup_free_ char *key = make_key(kind, m->namespace, m->name);
        if (!key) return -ENOMEM;
        uintptr_t pos = (uintptr_t)dp_hashmap_get(s->index, key);
        if (pos && s->items[pos - 1].obj.hdr) return -EEXIST;
        kind_index *ki = &s->kinds[kind];
        if (pos) { /* re-create after delete: reuse the slot's key */
                entry *e = &s->items[pos - 1];
                e->obj = obj;
                e->rv = ++s->rev;
                ki->live++;
                log_change(s, e);
                if (ret_rv) *ret_rv = e->rv;
                return 0;
        }
        if (s->n >= UINT32_MAX || DP_GROW(s->items, s->cap, s->n + 1) < 0 ||
            DP_GROW(ki->slots, ki->cap, ki->n + 1) < 0)
                return -ENOMEM;
        entry *e = &s->items[s->n];
        e->key = TAKE_PTR(key);
        if (dp_hashmap_put(s->index, e->key, (void *)(uintptr_t)(s->n + 1)) < 0) {
                key = TAKE_PTR(e->key);
                return -ENOMEM;
        }
        e->obj = obj;
        e->kind = kind;
        e->rv = ++s->rev;
        ki->slots[ki->n++] = (uint32_t)s->n;
        ki->live++;
        s->n++;
        log_change(s, e);
        if (ret_rv) *ret_rv = e->rv;
        return 0;
}

dp_object dp_store_get(const dp_store *s, dp_kind kind, const char *ns, const char *name, uint64_t *ret_rv) {
        entry *e = s ? find(s, kind, ns, name) : NULL;
        if (!e) return (dp_object){NULL};
        if (ret_rv) *ret_rv = e->rv;
        return e->obj;
}

int dp_store_update(dp_store *s, dp_kind kind, const char *ns, const char *name, uint64_t expected_rv,
                    dp_store_mutate_fn fn, void *userdata, uint64_t *ret_rv) {
        assert_return(s && fn, -EINVAL);
        entry *e = find(s, kind, ns, name);
        if (!e) return -ENOENT;
        if (expected_rv != DP_STORE_ANY_RV && expected_rv != e->rv) return -ESTALE;
        int r = fn(e->obj, userdata);
        if (r < 0) return r;
        e->rv = ++s->rev;
        log_change(s, e);
        if (ret_rv) *ret_rv = e->rv;
        return 0;
}

int dp_store_delete(dp_store *s, dp_kind kind, const char *ns, const char *name, uint64_t expected_rv) {
        assert_return(s, -EINVAL);
        entry *e = find(s, kind, ns, name);
        if (!e) return -ENOENT;
        if (expected_rv != DP_STORE_ANY_RV && expected_rv != e->rv) return -ESTALE;
        dp_object_free(e->obj);
        e->obj.hdr = NULL;
        e->rv = ++s->rev;
        s->kinds[e->kind].live--;
        log_change(s, e);
        return 0;
}

/* *i walks the kind's own slot list (same order as the whole store's). */
bool dp_store_next(const dp_store *s, dp_kind kind, size_t *i, dp_object *ret, uint64_t *ret_rv) {
        if ((unsigned)kind >= STORE_KINDS) return false;
        const kind_index *ki = &s->kinds[kind];
        for (; *i < ki->n; (*i)++) {
                const entry *e = &s->items[ki->slots[*i]];
                if (!e->obj.hdr) continue;
                if (ret) *ret = e->obj;
                if (ret_rv) *ret_rv = e->rv;
                (*i)++;
                return true;
        }
        return false;
}

size_t dp_store_count(const dp_store *s, dp_kind kind) {
        return (unsigned)kind < STORE_KINDS ? s->kinds[kind].live : 0;
}

bool dp_store_next_change(const dp_store *s, size_t *pos, size_t *ret_slot) {
        if (s->changes_lost) { /* the log failed to grow: start over */
                *pos = SIZE_MAX;
                return false;
        }
        if (*pos >= s->n_changes) return false;
        *ret_slot = s->changes[(*pos)++];
        return true;
}

size_t dp_store_slots(const dp_store *s) { return s->n; }

size_t dp_store_changes_end(const dp_store *s) { return s->n_changes; }

dp_kind dp_store_slot(const dp_store *s, size_t slot, dp_object *ret, uint64_t *ret_rv) {
        if (slot >= s->n) {
                if (ret) *ret = (dp_object){NULL};
                return DP_KIND_NONE;
        }
        const entry *e = &s->items[slot];
        if (ret) *ret = e->obj;
        if (ret_rv) *ret_rv = e->rv;
        return e->kind;
}

size_t dp_store_slot_of(const dp_store *s, dp_kind kind, const char *ns, const char *name) {
        const entry *e = find(s, kind, ns, name);
        return e ? (size_t)(e - s->items) : SIZE_MAX;
}

uint64_t dp_store_revision(const dp_store *s) { return s->rev; }

int dp_store_view(const dp_store *s, const dp_kind *kinds, size_t n_kinds, dp_object_list *ret) {
        dp_object_list l = {0};
        for (size_t i = 0; i < s->n; i++) {
                const entry *e = &s->items[i];
                if (!e->obj.hdr) continue;
                bool want = n_kinds == 0;
                for (size_t k = 0; k < n_kinds && !want; k++)
                        want = kinds[k] == e->obj.hdr->kind;
                if (!want) continue;
                if (DP_GROW(l.items, l.cap, l.n + 1) < 0) {
                        free(l.items);
                        return -ENOMEM;
                }
                l.items[l.n++] = e->obj;
        }
        *ret = l;
        return 0;
}

void dp_store_view_free(dp_object_list *l) {
        if (!l) return;
        free(l->items);
        *l = (dp_object_list){0};
}

/* ---- claims ---- */

static bool same_device(const dp_device_allocation_result *a, const dp_device_allocation_result *b) {
        return streq_ptr(a->driver, b->driver) && streq_ptr(a->pool, b->pool) && streq_ptr(a->device, b->device);
}

/* Does claim `e` hold a device of `alloc` in a way that forbids sharing? */
static int ledger_check_one(const entry *e, const dp_allocation_result *alloc, dp_error *err) {
        const dp_allocation_result *o = e->obj.claim->allocation;
        if (!o) return 0;
        for (size_t a = 0; a < alloc->n_results; a++) {
                const dp_device_allocation_result *x = &alloc->results[a];
                if (x->has_admin_access && x->admin_access) continue;
                for (size_t b = 0; b < o->n_results; b++) {
                        const dp_device_allocation_result *y = &o->results[b];
                        if (y->has_admin_access && y->admin_access) continue;
                        if (!same_device(x, y)) continue;
                        if (x->share_id && y->share_id) continue;
                        return dp_error_set(err, -EBUSY, "device %s/%s/%s is already allocated to claim %s/%s",
                                            x->driver, x->pool, x->device, dp_store_ns_of(e->obj),
                                            e->obj.claim->meta.name);
                }
        }
        return 0;
}

static int cmp_u32(const void *a, const void *b) {
        uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
        return x < y ? -1 : x > y;
}

/* Is a device of `alloc` held by another claim in a way that forbids
 * sharing? Claims are looked at in store order (the first one found is
 * named), through the index when there is one. */
static int ledger_check(dp_store *s, const entry *self, const dp_allocation_result *alloc, dp_error *err) {
        const kind_index *ki = &s->kinds[DP_KIND_RESOURCE_CLAIM];
        ledger *l = ledger_sync(s);
        if (!l) {
                for (size_t i = 0; i < ki->n; i++) {
                        const entry *e = &s->items[ki->slots[i]];
                        if (e == self || !e->obj.hdr) continue;
                        int r = ledger_check_one(e, alloc, err);
                        if (r < 0) return r;
                }
                return 0;
        }
        uint32_t small[16], *cand = small;
        _cleanup_free_ uint32_t *heap = NULL;
        size_t n = 0, cap = ELEMENTSOF(small);
        for (size_t a = 0; a < alloc->n_results; a++) {
                const dp_device_allocation_result *x = &alloc->results[a];
                if (excluded_result(x)) continue;
                char buf[768];
                _cleanup_free_ char *hk = NULL;
                const char *key = dev_key(buf, sizeof(buf), x);
                if (!key)
                        key = hk = dp_asprintf("%s\x1f%s\x1f%s", x->driver ? x->driver : "\x01",
                                               x->pool ? x->pool : "\x01", x->device ? x->device : "\x01");
                if (!key) return -ENOMEM;
                const holders *h = dp_hashmap_get(l->devs, key);
                for (size_t k = 0; h && k < h->n; k++) {
                        if (n == cap) {
                                uint32_t *v = malloc(2 * cap * sizeof(*v));
                                if (!v) return -ENOMEM;
                                memcpy(v, cand, n * sizeof(*v));
                                free(heap);
                                cand = heap = v;
                                cap *= 2;
                        }
                        cand[n++] = h->slots[k];
                }
        }
        if (n > 1) qsort(cand, n, sizeof(*cand), cmp_u32);
        for (size_t i = 0; i < n; i++) {
                if (i && cand[i] == cand[i - 1]) continue;
                const entry *e = &s->items[cand[i]];
                if (e == self || !e->obj.hdr) continue;
                int r = ledger_check_one(e, alloc, err);
                if (r < 0) return r;
        }
        return 0;
}

static bool has_consumer(const dp_resource_claim *c, const char *uid) {
        for (size_t i = 0; i < c->n_reserved_for; i++)
                if (streq_ptr(c->reserved_for[i].uid, uid)) return true;
        return false;
}

int dp_store_write_allocation(dp_store *s, const char *ns, const char *name, uint64_t expected_rv,
                              dp_allocation_result *alloc, const dp_consumer_ref *consumer, uint64_t *ret_rv,
                              dp_error *err) {
        assert_return(s && name, -EINVAL);
        entry *e = find(s, DP_KIND_RESOURCE_CLAIM, ns, name);
        if (!e) return dp_error_set(err, -ENOENT, "claim %s/%s not found", ns, name);
        if (expected_rv != DP_STORE_ANY_RV && expected_rv != e->rv)
                return dp_error_set(err, -ESTALE,
                                    "claim %s/%s changed since it was read (resourceVersion %llu, now %llu)", ns, name,
                                    (unsigned long long)expected_rv, (unsigned long long)e->rv);
        dp_resource_claim *c = e->obj.claim;
        if (alloc && c->allocation) return dp_error_set(err, -ESTALE, "claim %s/%s is already allocated", ns, name);
        if (!alloc && !c->allocation) return dp_error_set(err, -EINVAL, "claim %s/%s is not allocated", ns, name);
        if (alloc) {
                int r = ledger_check(s, e, alloc, err);
                if (r < 0) return r;
        }
        dp_consumer_ref *nr = NULL;
        if (consumer && !has_consumer(c, consumer->uid)) {
                if (c->n_reserved_for >= DP_STORE_RESERVED_FOR_MAX)
                        return dp_error_set(err, -E2BIG, "claim %s/%s: reservedFor: must have at most %d entries", ns,
                                            name, DP_STORE_RESERVED_FOR_MAX);
                nr = realloc(c->reserved_for, (c->n_reserved_for + 1) * sizeof(*nr));
                if (!nr) return -ENOMEM;
                c->reserved_for = nr;
                dp_consumer_ref *x = &nr[c->n_reserved_for];
                *x = (dp_consumer_ref){0};
                x->resource = dp_strdup(consumer->resource ? consumer->resource : "pods");
                x->name = dp_strdup(consumer->name);
                x->uid = dp_strdup(consumer->uid);
                if (!x->resource || !x->name || !x->uid) {
                        free(x->resource);
                        free(x->name);
                        free(x->uid);
                        return -ENOMEM;
                }
                c->n_reserved_for++;
        }
        if (alloc) c->allocation = alloc;
        e->rv = ++s->rev;
        log_change(s, e);
        if (ret_rv) *ret_rv = e->rv;
        return 0;
}

int dp_store_release_claim(dp_store *s, const char *ns, const char *name, const char *pod_uid) {
        entry *e = find(s, DP_KIND_RESOURCE_CLAIM, ns, name);
        if (!e) return -ENOENT;
        dp_resource_claim *c = e->obj.claim;
        for (size_t i = 0; i < c->n_reserved_for; i++) {
                if (!streq_ptr(c->reserved_for[i].uid, pod_uid)) continue;
                dp_consumer_ref *x = &c->reserved_for[i];
                free(x->api_group);
                free(x->resource);
                free(x->name);
                free(x->uid);
                memmove(x, x + 1, (c->n_reserved_for - i - 1) * sizeof(*x));
                c->n_reserved_for--;
                break;
        }
        int dealloc = 0;
        if (c->n_reserved_for == 0 && c->allocation) {
                c->allocation = dp_allocation_result_free(c->allocation);
                dealloc = 1;
        }
        e->rv = ++s->rev;
        log_change(s, e);
        return dealloc;
}
