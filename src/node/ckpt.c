/* SPDX-License-Identifier: Apache-2.0 */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "devices/checkpoint.h"
#include "doc/doc.h"
#include "node/ckpt.h"
#include "node/node.h"

static int cmp_i64(const void *a, const void *b) {
        int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
        return x < y ? -1 : x > y;
}

static int add_entry(dp_checkpoint *c, const dp_nm_alloc *a) {
        /* group ids by NUMA node, numerically sorted, ids in recorded order */
        int64_t *numas = calloc(a->n_ids + 1, sizeof *numas);
        const char ***lists = calloc(a->n_ids + 1, sizeof *lists);
        size_t *counts = calloc(a->n_ids + 1, sizeof *counts);
        size_t n = 0;
        int r = -ENOMEM;
        if (!numas || !lists || !counts) goto out;
        for (size_t i = 0; i < a->n_ids; i++) {
                bool seen = false;
                for (size_t k = 0; k < n && !seen; k++)
                        seen = numas[k] == a->ids[i].numa;
                if (!seen) numas[n++] = a->ids[i].numa;
        }
        qsort(numas, n, sizeof *numas, cmp_i64);
        for (size_t k = 0; k < n; k++) {
                lists[k] = calloc(a->n_ids + 1, sizeof(char *));
                if (!lists[k]) goto out;
                for (size_t i = 0; i < a->n_ids; i++)
                        if (a->ids[i].numa == numas[k]) lists[k][counts[k]++] = a->ids[i].id;
        }
        r = dp_checkpoint_add_entry(c, a->pod_uid, a->container, a->resource, numas, (const char *const *const *)lists,
                                    counts, n, a->resp, a->resp_len);
out:
        for (size_t k = 0; lists && k < n; k++)
                free(lists[k]);
        dp_free_many(numas, lists, counts);
        return r;
}

/* An unproven pod: an entry under DP_NODE_UNPROVEN_CONTAINER naming every
 * device withheld for its resource, so that whoever reads the file (the
 * agent's V1 holds) withholds them too. */
static int add_unproven(dp_checkpoint *c, const dp_devmgr *m, const dp_nm_unproven *u) {
        const char **ids = NULL;
        int r = dp_devmgr_withheld_ids(m, u->resource, &ids);
        if (r < 0) return r;
        size_t n = 0;
        while (ids[n])
                n++;
        dp_nm_numa_id *v = calloc(n + 1, sizeof *v);
        for (size_t i = 0; v && i < n; i++)
                v[i] = (dp_nm_numa_id){-1, (char *)ids[i]};
        dp_nm_alloc a = {u->pod_uid, (char *)DP_NODE_UNPROVEN_CONTAINER, u->resource, v, n, NULL, 0};
        r = v ? add_entry(c, &a) : -ENOMEM;
        dp_free_many(v, ids);
        return r;
}

int dp_node_checkpoint_encode(const dp_devmgr *m, dp_strbuf *out) {
        assert_return(m && out, -EINVAL);
        _cleanup_(dp_checkpoint_freep) dp_checkpoint *c = dp_checkpoint_new();
        if (!c) return -ENOMEM;
        int r;
        for (size_t i = 0; i < dp_devmgr_n_allocs(m); i++)
                if ((r = add_entry(c, dp_devmgr_alloc_at(m, i))) < 0) return r;
        for (size_t i = 0; i < dp_devmgr_n_unproven(m); i++)
                if ((r = add_unproven(c, m, dp_devmgr_unproven_at(m, i))) < 0) return r;
        for (size_t i = 0; i < dp_devmgr_n_resources(m); i++) {
                const dp_nm_resource *res = dp_devmgr_resource_at(m, i);
                const char **ids = calloc(res->n_devices + 1, sizeof *ids);
                if (!ids) return -ENOMEM;
                size_t n = 0;
                for (size_t j = 0; j < res->n_devices; j++)
                        if (res->devices[j].healthy && res->connected) ids[n++] = res->devices[j].id;
                r = dp_checkpoint_set_registered(c, res->name, ids, n);
                free(ids);
                if (r < 0) return r;
        }
        return dp_state_file_marshal(&dp_checkpoint_file, c, out, NULL);
}

static int restore_unproven(dp_devmgr *m, const dp_ckpt_entry *e) {
        int r = dp_devmgr_mark_unproven(m, e->pod_uid, e->resource_name, NULL, 0);
        for (size_t k = 0; r >= 0 && k < e->n_device_ids; k++)
                r = dp_devmgr_mark_unproven(m, e->pod_uid, e->resource_name,
                                            (const char *const *)e->device_ids[k].ids.ids, e->device_ids[k].ids.n);
        return r;
}

/* Entries become allocations (unproven marks under their container name),
 * RegisteredDevices names known resources.
 * only_missing: entries for a (pod, container, resource) the ledger already
 * holds are skipped. */
static int restore(dp_devmgr *m, const dp_checkpoint *c, bool only_missing) {
        int r;
        for (size_t i = 0; i < c->n_entries; i++) {
                const dp_ckpt_entry *e = &c->entries[i];
                if (only_missing && dp_devmgr_alloc(m, e->pod_uid, e->container_name, e->resource_name)) continue;
                if (streq(e->container_name, DP_NODE_UNPROVEN_CONTAINER)) {
                        if ((r = restore_unproven(m, e)) < 0) return r;
                        continue;
                }
                size_t total = 0;
                for (size_t k = 0; k < e->n_device_ids; k++)
                        total += e->device_ids[k].ids.n;
                dp_nm_numa_id *ids = calloc(total + 1, sizeof *ids);
                if (!ids) return -ENOMEM;
                size_t n = 0;
                for (size_t k = 0; k < e->n_device_ids; k++)
                        for (size_t j = 0; j < e->device_ids[k].ids.n; j++)
                                ids[n++] = (dp_nm_numa_id){e->device_ids[k].numa, e->device_ids[k].ids.ids[j]};
                dp_nm_alloc a = {e->pod_uid,
                                 e->container_name,
                                 e->resource_name,
                                 ids,
                                 n,
                                 e->alloc_resp_null ? NULL : e->alloc_resp,
                                 e->alloc_resp_len};
                if (!a.resp && !e->alloc_resp_null) a.resp = (uint8_t *)"";
                r = dp_devmgr_restore(m, &a);
                free(ids);
                if (r < 0) return r;
        }
        for (size_t i = 0; i < c->n_registered; i++)
                if ((r = dp_devmgr_add_known_resource(m, c->registered[i].resource_name)) < 0) return r;
        return 0;
}

int dp_node_checkpoint_load(dp_devmgr *m, const char *buf, size_t len, dp_error *err) {
        assert_return(m && buf, -EINVAL);
        _cleanup_(dp_checkpoint_freep) dp_checkpoint *c = NULL;
        int r = dp_state_file_unmarshal(&dp_checkpoint_file, buf, len, NULL, (void **)&c, err);
        if (r < 0) return r;
        return restore(m, c, false);
}

int dp_node_checkpoint_salvage(dp_devmgr *m, const char *buf, size_t len, dp_error *err) {
        assert_return(m && buf, -EINVAL);
        _cleanup_(dp_checkpoint_freep) dp_checkpoint *c = NULL;
        int r = dp_checkpoint_decode_unverified(buf, len, &c, err);
        if (r < 0) return r;
        return restore(m, c, true);
}

static const char *scalar_of(const dp_doc_node *m, const char *key) {
        const dp_doc_node *n = dp_doc_get(m, key);
        return n && n->type == DP_DOC_SCALAR ? n->str : NULL;
}

static const dp_doc_node *seq_of(const dp_doc_node *m, const char *key) {
        const dp_doc_node *n = dp_doc_get(m, key);
        return n && n->type == DP_DOC_SEQ ? n : NULL;
}

static int salvage_container(dp_devmgr *m, const char *uid, const dp_doc_node *ctr, size_t *n_entries) {
        const char *name = scalar_of(ctr, "name");
        const dp_doc_node *devs = seq_of(ctr, "devices");
        for (size_t i = 0; name && devs && i < devs->n; i++) {
                const dp_doc_node *d = devs->items[i];
                const char *res = scalar_of(d, "resource");
                const dp_doc_node *ids = seq_of(d, "ids");
                if (!res || !ids || ids->n == 0) continue;
                _cleanup_free_ dp_nm_numa_id *v = calloc(ids->n, sizeof *v);
                if (!v) return -ENOMEM;
                size_t n = 0;
                for (size_t k = 0; k < ids->n; k++)
                        if (ids->items[k]->type == DP_DOC_SCALAR) v[n++] = (dp_nm_numa_id){-1, ids->items[k]->str};
                bool had = dp_devmgr_alloc(m, uid, name, res) != NULL;
                dp_nm_alloc a = {(char *)uid, (char *)name, (char *)res, v, n, had ? NULL : (uint8_t *)"", 0};
                int r = dp_devmgr_restore(m, &a);
                if (r < 0) return r;
                (*n_entries)++;
        }
        return 0;
}

int dp_node_status_salvage(dp_devmgr *m, const char *buf, size_t len, size_t *ret_n, dp_error *err) {
        assert_return(m && buf && ret_n, -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_doc_parse(s, buf, len, DP_NODE_STATUS_FILE, err);
        if (r < 0) return r == -ENOMEM ? r : -EINVAL;
        const dp_doc_node *root = dp_doc_count(s) == 1 ? dp_doc_root(s, 0) : NULL;
        const dp_doc_node *pods = root && root->type == DP_DOC_MAP ? seq_of(root, "pods") : NULL;
        if (!pods) return dp_error_set(err, -EINVAL, "%s: no pods list", DP_NODE_STATUS_FILE);
        size_t n = 0;
        const dp_doc_node *unproven = seq_of(root, "unproven");
        for (size_t i = 0; unproven && i < unproven->n; i++) {
                const char *uid = scalar_of(unproven->items[i], "uid");
                const char *res = scalar_of(unproven->items[i], "resource");
                const dp_doc_node *ids = seq_of(unproven->items[i], "withheld");
                if (uid && res && (r = dp_devmgr_mark_unproven(m, uid, res, NULL, 0)) < 0)
                        return dp_error_set(err, r, "out of memory");
                for (size_t k = 0; uid && res && ids && k < ids->n; k++)
                        if (ids->items[k]->type == DP_DOC_SCALAR &&
                            (r = dp_devmgr_mark_unproven(m, uid, res, (const char *const *)&ids->items[k]->str, 1)) < 0)
                                return dp_error_set(err, r, "out of memory");
                n += uid && res;
        }
        for (size_t i = 0; i < pods->n; i++) {
                const char *uid = scalar_of(pods->items[i], "uid");
                const dp_doc_node *ctrs = seq_of(pods->items[i], "containers");
                for (size_t j = 0; uid && ctrs && j < ctrs->n; j++)
                        if ((r = salvage_container(m, uid, ctrs->items[j], &n)) < 0)
                                return dp_error_set(err, r, "out of memory");
        }
        *ret_n = n;
        return 0;
}
