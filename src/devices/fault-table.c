/* SPDX-License-Identifier: Apache-2.0
 * fault-table.c — fault classification (Xid / ECC / lost / missing) and the
 * tracker of devices in fault with time-based and explicit recovery. */
#include <stdio.h>

#include "base/strbuf.h"
#include "devices/fault-table.h"
#include "devices/decode.h"

static const unsigned default_ignored[] = {13, 31, 43, 45, 68, 109};

void dp_fault_table_init(dp_fault_table *t) {
        memset(t, 0, sizeof *t);
        for (size_t i = 0; i < ELEMENTSOF(default_ignored); i++)
                (void)dp_fault_table_set_xid(t, default_ignored[i], true);
        t->ecc_sbe = DP_FAULT_IGNORE;
        t->ecc_dbe = DP_FAULT_IGNORE;
        t->recover_after_usec = DP_FAULT_DEFAULT_RECOVER_USEC;
        t->poll_interval_usec = DP_FAULT_DEFAULT_POLL_USEC;
}

int dp_fault_table_set_xid(dp_fault_table *t, unsigned xid, bool ignore) {
        assert_return(t, -EINVAL);
        if (xid > DP_FAULT_XID_MAX) return -ERANGE;
        uint64_t bit = 1ULL << (xid % 64);
        if (ignore)
                t->ignore_xid[xid / 64] |= bit;
        else
                t->ignore_xid[xid / 64] &= ~bit;
        return 0;
}

bool dp_fault_table_xid_ignored(const dp_fault_table *t, unsigned xid) {
        if (!t || xid > DP_FAULT_XID_MAX) return false;
        return (t->ignore_xid[xid / 64] >> (xid % 64)) & 1;
}

static void set_all_xids(dp_fault_table *t, bool ignore) {
        memset(t->ignore_xid, ignore ? 0xff : 0, sizeof t->ignore_xid);
}

/* Apply a comma list: "all"/"xids" or Xid numbers. */
static int apply_list(dp_fault_table *t, const char *name, const char *list, bool ignore, dp_error *err) {
        if (!list || !*list) return 0;
        const char *p = list;
        while (*p) {
                const char *e = strchr(p, ',');
                size_t n = e ? (size_t)(e - p) : strlen(p);
                while (n && (*p == ' ' || *p == '\t'))
                        p++, n--;
                while (n && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                        n--;
                if (n == 3 && !strncmp(p, "all", 3)) {
                        t->disabled = ignore;
                        set_all_xids(t, ignore);
                } else if (n == 4 && !strncmp(p, "xids", 4)) {
                        if (!ignore) t->disabled = false;
                        set_all_xids(t, ignore);
                } else {
                        unsigned v = 0;
                        if (n == 0 || n > 4) goto bad;
                        for (size_t i = 0; i < n; i++) {
                                if (p[i] < '0' || p[i] > '9') goto bad;
                                v = v * 10 + (unsigned)(p[i] - '0');
                        }
                        if (v > DP_FAULT_XID_MAX) goto bad;
                        (void)dp_fault_table_set_xid(t, v, ignore);
                        if (!ignore) t->disabled = false;
                }
                p += n;
                while (*p == ' ' || *p == '\t')
                        p++;
                if (*p == ',') p++;
                continue;
        bad:
                return dp_error_set(err, -EINVAL, "%s: \"%.*s\" is not all, xids or an Xid from 0 to %d", name,
                                    (int)DP_MIN(n, 32), p, DP_FAULT_XID_MAX);
        }
        return 0;
}

int dp_fault_table_apply_env(dp_fault_table *t, const char *disable, const char *enable, dp_error *err) {
        assert_return(t, -EINVAL);
        dp_fault_table copy = *t;
        int r = apply_list(&copy, "DP_DISABLE_HEALTHCHECKS", disable, true, err);
        if (r < 0) return r;
        if ((r = apply_list(&copy, "DP_ENABLE_HEALTHCHECKS", enable, false, err)) < 0) return r;
        *t = copy;
        return 0;
}

dp_fault_action dp_fault_table_classify(const dp_fault_table *t, dp_fault_kind kind, unsigned long long code,
                                        char ret_class[DP_FAULT_CLASS_MAX]) {
        if (!t || t->disabled) return DP_FAULT_IGNORE;
        const char *cls = NULL;
        char buf[DP_FAULT_CLASS_MAX];
        switch (kind) {
        case DP_FAULT_XID:
                if (code <= DP_FAULT_XID_MAX && dp_fault_table_xid_ignored(t, (unsigned)code)) return DP_FAULT_IGNORE;
                dp_pathf(buf, sizeof buf, "xid-%llu", code > 99999999ULL ? 99999999ULL : code);
                cls = buf;
                break;
        case DP_FAULT_ECC_SBE:
                if (t->ecc_sbe == DP_FAULT_IGNORE) return DP_FAULT_IGNORE;
                cls = "ecc-sbe";
                break;
        case DP_FAULT_ECC_DBE:
                if (t->ecc_dbe == DP_FAULT_IGNORE) return DP_FAULT_IGNORE;
                cls = "ecc-dbe";
                break;
        case DP_FAULT_LOST: cls = "gpu-lost"; break;
        case DP_FAULT_MISSING: cls = "missing"; break;
        default: return DP_FAULT_IGNORE;
        }
        if (ret_class) dp_pathf(ret_class, DP_FAULT_CLASS_MAX, "%s", cls);
        return DP_FAULT_UNHEALTHY;
}

/* ---- tracker ---- */

void dp_fault_tracker_done(dp_fault_tracker *tr) {
        if (!tr) return;
        for (size_t i = 0; i < tr->n; i++)
                free(tr->items[i].device);
        free(tr->items);
        memset(tr, 0, sizeof *tr);
}

static dp_fault_entry *find(const dp_fault_tracker *tr, const char *device) {
        for (size_t i = 0; tr && device && i < tr->n; i++)
                if (streq(tr->items[i].device, device)) return &tr->items[i];
        return NULL;
}

const dp_fault_entry *dp_fault_tracker_find(const dp_fault_tracker *tr, const char *device) { return find(tr, device); }

int dp_fault_tracker_raise(dp_fault_tracker *tr, const char *device, const char *fault_class, bool sticky,
                           uint64_t now_usec) {
        assert_return(tr && device && fault_class, -EINVAL);
        dp_fault_entry *e = find(tr, device);
        bool fresh = !e;
        if (!e) {
                if (tr->n >= DP_FAULT_TRACKED_MAX) return -E2BIG;
                if (DP_GROW(tr->items, tr->cap, tr->n + 1) < 0) return -ENOMEM;
                char *d = dp_strdup(device);
                if (!d) return -ENOMEM;
                e = &tr->items[tr->n++];
                memset(e, 0, sizeof *e);
                e->device = d;
        }
        dp_pathf(e->fault_class, sizeof e->fault_class, "%s", fault_class);
        e->last_usec = now_usec;
        e->sticky = e->sticky || sticky;
        return fresh ? 1 : 0;
}

static void remove_at(dp_fault_tracker *tr, size_t i) {
        free(tr->items[i].device);
        DP_REMOVE_AT(tr->items, tr->n, i);
}

int dp_fault_tracker_clear(dp_fault_tracker *tr, const char *device) {
        assert_return(tr && device, -EINVAL);
        for (size_t i = 0; i < tr->n; i++)
                if (streq(tr->items[i].device, device)) {
                        remove_at(tr, i);
                        return 1;
                }
        return 0;
}

int dp_fault_tracker_expire(dp_fault_tracker *tr, uint64_t now_usec, uint64_t recover_after_usec) {
        assert_return(tr, -EINVAL);
        if (recover_after_usec == 0) return 0;
        int n = 0;
        for (size_t i = 0; i < tr->n;) {
                dp_fault_entry *e = &tr->items[i];
                if (!e->sticky && now_usec >= e->last_usec && now_usec - e->last_usec >= recover_after_usec) {
                        remove_at(tr, i);
                        n++;
                } else
                        i++;
        }
        return n;
}

uint64_t dp_fault_tracker_next_expiry(const dp_fault_tracker *tr, uint64_t recover_after_usec) {
        uint64_t best = 0;
        if (!tr || recover_after_usec == 0) return 0;
        for (size_t i = 0; i < tr->n; i++) {
                if (tr->items[i].sticky) continue;
                uint64_t t = tr->items[i].last_usec + recover_after_usec;
                if (t < tr->items[i].last_usec) t = UINT64_MAX;
                if (!best || t < best) best = t;
        }
        return best;
}
