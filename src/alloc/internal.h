/* SPDX-License-Identifier: Apache-2.0
 *
 * internal.h — the interned snapshot shared by the alloc module sources (not installed).
 *
 * Every name and attribute value is a uint32 id into one string table; an
 * attribute value is interned with a one-letter type prefix ("i:3", "s:a100",
 * "v:1.0.0", "b:true") so that value equality (type and value, as
 * matchAttribute wants) is id equality. Devices, attributes, capacities,
 * counter consumptions and taints live in flat arrays indexed by ranges.
 */
#pragma once

#include "alloc/alloc.h"
#include "alloc/oom.h"
#include "base/hashmap.h"

#define NONE_ID UINT32_MAX

typedef struct attr_ent {
        uint32_t name;  /* qualified name id */
        uint32_t value; /* typed value id */
} attr_ent;

typedef struct cap_ent {
        dp_alloc_capacity spec; /* valid_values copied, name points into the table */
        __int128 consumed;      /* committed + this attempt */
        __int128 committed;     /* by existing claims only */
        uint32_t name;
} cap_ent;

typedef struct amount_ent {
        uint32_t name;    /* counter name id */
        uint32_t counter; /* global counter index (after freeze; NONE_ID if unknown) */
        __int128 amount;
} amount_ent;

typedef struct cons_ent {
        uint32_t set_name;
        uint32_t set; /* global counter-set index after freeze */
        uint32_t amount_off, n_amounts;
        uint32_t groups[DP_ALLOC_GROUPS_MAX];
        uint32_t n_groups;
} cons_ent;

typedef struct taint_ent {
        const char *key, *value, *effect;
        bool blocking; /* NoSchedule or NoExecute */
} taint_ent;

typedef struct device {
        uint32_t name, slice, pool;
        uint32_t attr_off, n_attrs;
        uint32_t cap_off, n_caps;
        uint32_t cons_off, n_cons;
        uint32_t taint_off, n_taints;
        uint32_t bc_off, n_bc, bfc_off, n_bfc; /* into strlist */
        bool multi, binds_to_node, has_blocking_taint;
        bool has_node_sel; /* per-device selection fields present */
        uint32_t node_name;
        bool all_nodes;
        dp_alloc_node_selector *node_selector;
        void *user;
        /* state */
        uint32_t committed; /* allocations (shares) held by existing claims */
        uint32_t holder;    /* first holder's name (snap_add_parts: compare the strings), for reasons */
        uint32_t attempt;   /* uses in the allocation being searched */
        uint32_t attempt_admin; /* of which adminAccess uses */
} device;

typedef struct slice {
        uint32_t name, driver, pool_name, pool;
        int64_t generation, slice_count;
        uint32_t node_name;
        bool all_nodes, per_device;
        dp_alloc_node_selector *node_selector;
        uint32_t dev_off, n_devs;
        uint32_t set_off, n_sets; /* raw counter sets (index into rawsets) */
        uint32_t skip_off, n_skip;
} slice;

typedef struct rawset {
        uint32_t name;
        uint32_t ctr_off, n_ctrs; /* into rawctrs (name, value) */
} rawset;

typedef struct counter {
        uint32_t name;
        __int128 value;
        __int128 consumed;
} counter;

typedef struct counter_set {
        uint32_t pool, name;
        uint32_t ctr_off, n_ctrs;
        uint32_t *users; /* devices holding counters here (committed, then attempt) */
        size_t n_users, cap_users;
} counter_set;

typedef struct pool {
        uint32_t driver, name;
        int64_t generation, slice_count;
        uint32_t *slices; /* at the highest generation, sorted by name */
        size_t n_slices, cap_slices;
        bool incomplete, invalid, has_binding;
        bool groups_gated; /* incomplete because DRADeviceCompatibilityGroups is off */
        char *invalid_why;
        uint32_t set_off, n_sets; /* into sets */
} pool;

typedef struct node {
        uint32_t name;
        uint32_t label_off, n_labels;
        bool gathered;
        uint32_t *pools; /* pools with a slice naming this node, ascending (freeze) */
        size_t n_pools, cap_pools;
        uint32_t *devs; /* reachable devices in search order */
        size_t n_devs;
        uint32_t *bad_pools; /* reachable pools skipped: incomplete or invalid */
        size_t n_bad_pools;
} node;

typedef struct selector {
        void *user;
        uint64_t *known, *value; /* bitsets over devices */
} selector;

/* snapshot.c: the name and value interned last at one attribute or
 * capacity position of a device */
typedef struct name_memo {
        bool valid, slashed; /* slashed: the name was qualified already */
        uint32_t driver, id;
} name_memo;
typedef struct value_memo {
        bool valid;
        dp_alloc_attr_type type;
        int64_t i; /* INT: the value; BOOL: 0 or 1 */
        uint32_t id;
} value_memo;

struct dp_alloc_snapshot {
        /* strings */
        char **strs;
        size_t n_strs, cap_strs;
        dp_hashmap *strmap;
        /* blocks owned by the snapshot (copied specs, string chunks) */
        void **blocks;
        size_t n_blocks, cap_blocks;
        char *str_next; /* free room in the current string chunk */
        size_t str_left;
        name_memo attr_names[32], cap_names[32];
        value_memo attr_values[32];

        dp_alloc_selector_fn sel_fn;
        void *sel_userdata;
        selector *sels;
        size_t n_sels, cap_sels;

        node *nodes;
        size_t n_nodes, cap_nodes;
        dp_hashmap *nodemap; /* name -> index + 1 */
        uint32_t *labels; /* key, value pairs of ids */
        size_t n_labels, cap_labels;

        slice *slices;
        size_t n_slices, cap_slices;
        device *devs;
        size_t n_devs, cap_devs;
        attr_ent *attrs;
        size_t n_attrs, cap_attrs;
        cap_ent *caps;
        size_t n_caps, cap_caps;
        cons_ent *cons;
        size_t n_cons, cap_cons;
        amount_ent *amounts;
        size_t n_amounts, cap_amounts;
        taint_ent *taints;
        size_t n_taints, cap_taints;
        const char **strlist;
        size_t n_strlist, cap_strlist;
        rawset *rawsets;
        size_t n_rawsets, cap_rawsets;
        dp_alloc_counter *rawctrs;
        size_t n_rawctrs, cap_rawctrs;

        /* list values (DP_ALLOC_ATTR_LIST): interned as "L:" + typed
         * elements, the elements kept here by list id, ascending */
        struct list_ent {
                uint32_t id, text; /* text: "[a, b]" for reasons */
                uint32_t off, n;   /* into list_elems */
        } *lists;
        size_t n_lists, cap_lists;
        uint32_t *list_elems;
        size_t n_list_elems, cap_list_elems;

        bool frozen;
        bool groups_off; /* DRADeviceCompatibilityGroups off (dp_alloc_set_compat_groups) */
        pool *pools; /* sorted: (driver, pool), binding-condition pools last */
        size_t n_pools;
        uint32_t *global_pools; /* pools with slices not bound to one node name, ascending */
        size_t n_global_pools, cap_global_pools;
        counter_set *sets;
        size_t n_sets;
        counter *ctrs;
        size_t n_ctrs;
        dp_hashmap *devmap; /* "driver\npool\ndevice" -> device + 1 (current generation), made on first use */
        bool devmap_built;

        /* scratch for the search, sized at freeze */
        uint32_t *stamp; /* per string id below n_stamp */
        size_t n_stamp;
        uint32_t *stamp_cnt;
        uint32_t epoch;
        uint32_t *dev_stamp; /* per device */
        uint32_t *scratch;   /* n_devs + 1 entries */
        uint32_t *ctr_stamp, *ctr_cnt, *ctr_last; /* per counter, for the counting prune */
        __int128 *ctr_min;
        uint32_t ctr_epoch;
        uint32_t dev_epoch;
        /* the search's placements and their amounts, kept from one
         * dp_alloc_allocate to the next (search.c: setup) */
        void *search_pl;
        __int128 *search_amounts;
        size_t search_cap_pl;
        void *search_rqs, *search_cs;
        uint32_t *search_cs_off; /* cs_off, then claim_devs */
        uint32_t *search_cand;
        size_t search_cap_rqs, search_cap_cs, search_cap_claims, search_cap_cand;

        dp_hashmap *frontier; /* claim shape -> first node not known to fail, + 1 */

        uint64_t version; /* bumped by every mark and release (dp_alloc_version) */
        dp_alloc_stats stats;
        size_t bytes;
};

/* snapshot.c */
uint32_t snap_intern(dp_alloc_snapshot *s, const char *str); /* NONE_ID on OOM */
uint32_t snap_lookup(const dp_alloc_snapshot *s, const char *str); /* NONE_ID if absent */
/* snap_intern of parts[0..n) (n <= 5) joined, without allocating for short ones. */
uint32_t snap_intern_parts(dp_alloc_snapshot *s, const char *const *parts, size_t n);
/* Added to the table as it is, not interned: equal strings get other ids. */
uint32_t snap_add_parts(dp_alloc_snapshot *s, const char *const *parts, size_t n);
/* dp_alloc_mark_allocated with the holder added already (NONE_ID: none). */
void snap_mark(dp_alloc_snapshot *s, uint32_t dev, uint32_t holder, const dp_alloc_consumed *consumed,
               size_t n_consumed);
static inline const char *snap_str(const dp_alloc_snapshot *s, uint32_t id) {
        return id == NONE_ID ? "" : s->strs[id];
}
void *snap_alloc(dp_alloc_snapshot *s, size_t size);
int snap_gather_node(dp_alloc_snapshot *s, uint32_t n);
int snap_node_index(dp_alloc_snapshot *s, const char *name);
/* Qualified attribute lookup on a device: value id or NONE_ID. */
uint32_t snap_device_attr(const dp_alloc_snapshot *s, const device *d, uint32_t name);
/* The scalar values of value id v: a list's elements, else v alone. */
void snap_value_elems(const dp_alloc_snapshot *s, const uint32_t *v, const uint32_t **ret, uint32_t *ret_n);
static inline bool snap_value_is_list(const dp_alloc_snapshot *s, uint32_t v) {
        return v != NONE_ID && s->strs[v][0] == 'L';
}
/* Values a and b share an element (scalars: are equal). */
bool snap_values_meet(const dp_alloc_snapshot *s, uint32_t a, uint32_t b);
/* Printable form of a typed value id ("a100", "3", "true", "1.0.0", "[a, b]"). */
const char *snap_value_text(const dp_alloc_snapshot *s, uint32_t value);
/* Selector result cache: 1, 0 or a negative errno with err. */
int snap_eval_selector(dp_alloc_snapshot *s, uint32_t sel, uint32_t dev, dp_error *err);

/* nodesel.c */
bool nodesel_match(const dp_alloc_snapshot *s, const dp_alloc_node_selector *ns, const node *n);
dp_alloc_node_selector *nodesel_copy(dp_alloc_snapshot *s, const dp_alloc_node_selector *ns);

/* state.c: running totals, checked and rolled back on every step */
typedef enum {
        FIT_OK = 0,
        FIT_COUNTER,  /* a counter would go negative: detail a = set, b = counter */
        FIT_GROUPS,   /* compatibility groups: a = set, b = conflicting device */
        FIT_CAPACITY, /* consumable capacity exhausted: a = capacity index */
        FIT_POLICY,   /* capacity request violates the device's requestPolicy */
} fit_kind;
typedef struct fit_detail {
        fit_kind kind;
        uint32_t a, b;
} fit_detail;
/* Amount a request takes of capacity c of device d (after policy rounding);
 * false if the policy rejects it. */
bool state_capacity_amount(const cap_ent *c, const dp_alloc_subrequest *sr, bool multi, __int128 *ret);
bool state_capacity_requested_exists(const dp_alloc_snapshot *s, const device *d, const dp_alloc_subrequest *sr);
fit_kind state_check_counters(dp_alloc_snapshot *s, uint32_t dev, fit_detail *why);
/* Only the compatibility groups, against the current users of each set. A
 * device refused now stays refused deeper in the same branch (users only
 * get added), so the search may count it out early. */
fit_kind state_check_groups(const dp_alloc_snapshot *s, uint32_t dev, fit_detail *why);
void state_charge_counters(dp_alloc_snapshot *s, uint32_t dev, int sign);
