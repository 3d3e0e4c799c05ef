/* SPDX-License-Identifier: Apache-2.0
 * ledger.c — V1/V2 device ledger (contract in ledger.h). */
#include <stdio.h>

#include "base/strbuf.h"
#include "devices/device.h"
#include "dra/ledger.h"

typedef struct unit_name {
        char *name;
        size_t physical;
        int unit;
} unit_name;

typedef struct hold {
        char *holder;
        char *device; /* as given */
        dp_ledger_path path;
        unsigned flags;
        size_t physical;
        int unit;
        bool conflicted; /* replayed over another holder's hold (both kept) */
} hold;

typedef struct mark {
        char *key;
        char *reason;
        unsigned blocks;
} mark;

struct dp_ledger {
        unit_name *names; /* every resolvable name */
        size_t n_names, cap_names;
        hold *holds;
        size_t n_holds, cap_holds;
        mark *marks;
        size_t n_marks, cap_marks;
        uint64_t version;
};

const char *dp_ledger_path_name(dp_ledger_path p) { return p == DP_LEDGER_V1 ? "V1" : "V2"; }

dp_ledger *dp_ledger_free(dp_ledger *l) {
        if (!l) return NULL;
        for (size_t i = 0; i < l->n_names; i++)
                free(l->names[i].name);
        free(l->names);
        for (size_t i = 0; i < l->n_holds; i++)
                dp_free_many(l->holds[i].holder, l->holds[i].device);
        free(l->holds);
        for (size_t i = 0; i < l->n_marks; i++)
                dp_free_many(l->marks[i].key, l->marks[i].reason);
        free(l->marks);
        free(l);
        return NULL;
}

static int add_name(dp_ledger *l, const char *name, size_t physical, int unit) {
        if (!name) return 0;
        if (DP_GROW(l->names, l->cap_names, l->n_names + 1) < 0) return -ENOMEM;
        char *s = dp_strdup(name);
        if (!s) return -ENOMEM;
        l->names[l->n_names++] = (unit_name){s, physical, unit};
        return 0;
}

dp_ledger *dp_ledger_new(const dp_device_set *set, const dp_dra_inventory *inv) {
        if (!set) return NULL;
        dp_ledger *l = calloc(1, sizeof(*l));
        if (!l) return NULL;
        int r = 0;
        /* inventory names first: they are what V2 hands out */
        for (size_t i = 0; r >= 0 && inv && i < inv->n_devices; i++)
                r = add_name(l, inv->devices[i].name, inv->devices[i].physical, inv->devices[i].unit);
        for (size_t i = 0; r >= 0 && i < set->n_devices; i++) {
                const dp_hw_device *d = &set->devices[i];
                char idx[32];
                snprintf(idx, sizeof(idx), "%u", d->index);
                r = add_name(l, d->id, i, -1);
                if (r >= 0) r = add_name(l, d->uuid, i, -1);
                if (r >= 0) r = add_name(l, idx, i, -1);
                for (size_t m = 0; r >= 0 && m < d->n_migs; m++) {
                        const dp_mig_device *g = &d->migs[m];
                        snprintf(idx, sizeof(idx), "%u:%u", d->index, g->index);
                        r = add_name(l, g->id, i, (int)g->index);
                        if (r >= 0) r = add_name(l, g->uuid, i, (int)g->index);
                        /* the dotted name of earlier releases, as held state may say */
                        _cleanup_free_ char *dotted = dp_asprintf("%s-mig-%s-%u", d->id, g->profile, g->index);
                        if (r >= 0) r = dotted ? add_name(l, dotted, i, (int)g->index) : -ENOMEM;
                        if (r >= 0) r = add_name(l, idx, i, (int)g->index);
                }
        }
        if (r < 0) return dp_ledger_free(l);
        return l;
}

/* Resolve; *shared set when the id is a replica "<id>::<n>". */
static const unit_name *resolve(const dp_ledger *l, const char *device, bool *shared) {
        const char *rep = strstr(device, "::");
        size_t n = rep ? (size_t)(rep - device) : strlen(device);
        *shared = rep != NULL;
        for (size_t i = 0; i < l->n_names; i++)
                if (strlen(l->names[i].name) == n && strncmp(l->names[i].name, device, n) == 0) return &l->names[i];
        return NULL;
}

static bool overlap(size_t p1, int u1, size_t p2, int u2) { return p1 == p2 && (u1 < 0 || u2 < 0 || u1 == u2); }

static const hold *conflict(const dp_ledger *l, dp_ledger_path path, const char *holder, const unit_name *u,
                            unsigned flags) {
        for (size_t i = 0; i < l->n_holds; i++) {
                const hold *h = &l->holds[i];
                if (!overlap(h->physical, h->unit, u->physical, u->unit)) continue;
                if (streq(h->holder, holder)) continue;
                if ((h->flags | flags) & DP_LEDGER_ADMIN) continue;
                if (h->path == path && (h->flags & flags & DP_LEDGER_SHARED)) continue;
                return h;
        }
        return NULL;
}

/* "device X is held through V1 by H (Allocate, as Y)" / "device X overlaps Y, held ..." */
static char *held_text(const hold *h, const char *device, const unit_name *u) {
        const char *what = h->path == DP_LEDGER_V1 ? "Allocate" : "NodePrepareResources";
        const char *pn = dp_ledger_path_name(h->path);
        if (h->unit != u->unit)
                return dp_asprintf("device %s overlaps %s, held through %s by %s (%s)", device, h->device, pn,
                                   h->holder, what);
        bool same = streq(h->device, device);
        return dp_asprintf("device %s is held through %s by %s (%s%s%s)", device, pn, h->holder, what,
                           same ? "" : ", as ", same ? "" : h->device);
}

/* The refusal (or, for a replay, the report: 1) naming the other holder. */
static int conflict_error(const hold *h, const char *device, const unit_name *u, dp_ledger_path path,
                          const char *holder, bool replay, dp_error *err) {
        _cleanup_free_ char *lead = held_text(h, device, u);
        if (!lead) return dp_error_set(err, -ENOMEM, "out of memory");
        if (!replay) return dp_error_set(err, -EBUSY, "%s; release it first", lead);
        dp_error_set(err, -EBUSY,
                     "%s and through %s by %s: both keep it (it may be in use by either); nobody new gets it "
                     "until one releases it",
                     lead, dp_ledger_path_name(path), holder);
        return 1;
}

static bool held_by(const dp_ledger *l, const char *holder, const char *device) {
        for (size_t i = 0; i < l->n_holds; i++)
                if (streq(l->holds[i].holder, holder) && streq(l->holds[i].device, device)) return true;
        return false;
}

int dp_ledger_acquire(dp_ledger *l, dp_ledger_path path, const char *holder, const char *const *devices, size_t n,
                      unsigned flags, dp_error *err) {
        assert_return(l && holder && (devices || !n), -EINVAL);
        assert_return(path == DP_LEDGER_V1 || path == DP_LEDGER_V2, -EINVAL);
        for (size_t i = 0; n && !(flags & DP_LEDGER_REPLAY) && i < l->n_marks; i++)
                if ((l->marks[i].blocks & (unsigned)path) && !streq(l->marks[i].key, holder))
                        return dp_error_set(err, -EBUSY, "device %s cannot be handed out through %s: %s", devices[0],
                                            dp_ledger_path_name(path), l->marks[i].reason);
        /* check everything first: all or nothing */
        size_t add = 0;
        int conflicts = 0;
        for (size_t i = 0; i < n; i++) {
                bool rep = false;
                const unit_name *u = resolve(l, devices[i], &rep);
                if (!u) return dp_error_set(err, -ENOENT, "unknown device %s", devices[i]);
                unsigned f = flags | (rep ? DP_LEDGER_SHARED : 0);
                const hold *h = conflict(l, path, holder, u, f);
                if (h && !(flags & DP_LEDGER_REPLAY)) return conflict_error(h, devices[i], u, path, holder, false, err);
                if (h && !conflicts++ && conflict_error(h, devices[i], u, path, holder, true, err) < 0) return -ENOMEM;
                for (size_t j = 0; j < i; j++)
                        if (streq(devices[j], devices[i])) goto dup;
                if (!held_by(l, holder, devices[i])) add++;
        dup:;
        }
        if (l->n_holds + add > DP_LEDGER_MAX_HOLDS)
                return dp_error_set(err, -E2BIG, "more than %d holds (DP_LEDGER_MAX_HOLDS)", DP_LEDGER_MAX_HOLDS);
        if (DP_GROW(l->holds, l->cap_holds, l->n_holds + add) < 0) return dp_error_set(err, -ENOMEM, "out of memory");
        size_t start = l->n_holds;
        for (size_t i = 0; i < n; i++) {
                if (held_by(l, holder, devices[i])) continue;
                bool rep = false;
                const unit_name *u = resolve(l, devices[i], &rep);
                unsigned f = (flags & ~DP_LEDGER_REPLAY) | (rep ? DP_LEDGER_SHARED : 0);
                hold h = {dp_strdup(holder),
                          dp_strdup(devices[i]),
                          path,
                          f,
                          u->physical,
                          u->unit,
                          conflicts && conflict(l, path, holder, u, f) != NULL};
                if (!h.holder || !h.device) {
                        dp_free_many(h.holder, h.device);
                        while (l->n_holds > start) {
                                l->n_holds--;
                                dp_free_many(l->holds[l->n_holds].holder, l->holds[l->n_holds].device);
                        }
                        return dp_error_set(err, -ENOMEM, "out of memory");
                }
                l->holds[l->n_holds++] = h;
        }
        if (add) l->version++;
        return conflicts;
}

int dp_ledger_release(dp_ledger *l, const char *holder) {
        assert_return(l && holder, -EINVAL);
        size_t k = 0;
        int n = 0;
        for (size_t i = 0; i < l->n_holds; i++) {
                if (streq(l->holds[i].holder, holder)) {
                        dp_free_many(l->holds[i].holder, l->holds[i].device);
                        n++;
                } else
                        l->holds[k++] = l->holds[i];
        }
        l->n_holds = k;
        if (n) l->version++;
        return n;
}

const char *dp_ledger_holder(const dp_ledger *l, const char *device, dp_ledger_path *ret_path) {
        if (!l || !device) return NULL;
        bool rep = false;
        const unit_name *u = resolve(l, device, &rep);
        if (!u) return NULL;
        for (size_t i = 0; i < l->n_holds; i++)
                if (overlap(l->holds[i].physical, l->holds[i].unit, u->physical, u->unit)) {
                        if (ret_path) *ret_path = l->holds[i].path;
                        return l->holds[i].holder;
                }
        return NULL;
}

size_t dp_ledger_count(const dp_ledger *l) { return l ? l->n_holds : 0; }

/* Two holds that may not coexist (the acquisition rule). */
static bool clash(const hold *a, const hold *b) {
        return overlap(a->physical, a->unit, b->physical, b->unit) && !streq(a->holder, b->holder) &&
               !((a->flags | b->flags) & DP_LEDGER_ADMIN) &&
               !(a->path == b->path && (a->flags & b->flags & DP_LEDGER_SHARED));
}

size_t dp_ledger_conflicts(const dp_ledger *l) {
        size_t n = 0; /* pairs, each once: a replay made every one of them */
        for (size_t i = 0; l && i < l->n_holds; i++)
                for (size_t j = 0; l->holds[i].conflicted && j < l->n_holds; j++)
                        if (j != i && (j > i || !l->holds[j].conflicted) && clash(&l->holds[i], &l->holds[j])) n++;
        return n;
}

bool dp_ledger_withdrawn(const dp_ledger *l, const char *device, dp_ledger_path path) {
        if (!l || !device) return false;
        bool rep = false;
        const unit_name *u = resolve(l, device, &rep);
        if (!u) return false;
        if (dp_ledger_unknown(l, path)) return true;
        for (size_t i = 0; i < l->n_holds; i++) {
                const hold *h = &l->holds[i];
                if (h->path != path && !(h->flags & DP_LEDGER_ADMIN) &&
                    overlap(h->physical, h->unit, u->physical, u->unit))
                        return true;
        }
        return false;
}

static mark *find_mark(const dp_ledger *l, const char *key) {
        for (size_t i = 0; i < l->n_marks; i++)
                if (streq(l->marks[i].key, key)) return &l->marks[i];
        return NULL;
}

int dp_ledger_mark_unknown(dp_ledger *l, const char *key, unsigned blocks, const char *reason) {
        assert_return(l && key && reason, -EINVAL);
        _cleanup_free_ char *r = dp_strdup(reason);
        if (!r) return -ENOMEM;
        mark *m = find_mark(l, key);
        if (m) {
                free(m->reason);
                m->reason = TAKE_PTR(r);
                m->blocks = blocks;
                l->version++;
                return 0;
        }
        if (l->n_marks >= DP_LEDGER_MAX_MARKS) return -E2BIG;
        if (DP_GROW(l->marks, l->cap_marks, l->n_marks + 1) < 0) return -ENOMEM;
        char *k = dp_strdup(key);
        if (!k) return -ENOMEM;
        l->marks[l->n_marks++] = (mark){k, TAKE_PTR(r), blocks};
        l->version++;
        return 0;
}

int dp_ledger_clear_unknown(dp_ledger *l, const char *key) {
        if (!l || !key) return 0;
        mark *m = find_mark(l, key);
        if (!m) return 0;
        dp_free_many(m->key, m->reason);
        *m = l->marks[--l->n_marks];
        l->version++;
        return 1;
}

const char *dp_ledger_unknown(const dp_ledger *l, dp_ledger_path path) {
        for (size_t i = 0; l && i < l->n_marks; i++)
                if (l->marks[i].blocks & (unsigned)path) return l->marks[i].reason;
        return NULL;
}

uint64_t dp_ledger_version(const dp_ledger *l) { return l ? l->version : 0; }
