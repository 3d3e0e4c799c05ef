/* SPDX-License-Identifier: Apache-2.0
 * recover.c — prepared claims back from the CDI specs the driver wrote, and
 * which files are its own (contract in recover.h). */
#include <stdio.h>

#include "doc/doc.h"
#include "dra/cdi.h"
#include "dra/recover.h"

/* "<vendor>-<class>_" for the kind: the spec name of an empty id, less ".json". */
static char *spec_prefix(const char *kind) {
        char *s = dp_dra_cdi_spec_file_name(kind, "");
        if (s) s[strlen(s) - strlen(".json")] = 0;
        return s;
}

int dp_dra_spec_file_uid(const char *cdi_kind, const char *name, char **ret_uid) {
        assert_return(cdi_kind && name && ret_uid, -EINVAL);
        _cleanup_free_ char *pre = spec_prefix(cdi_kind);
        if (!pre) return -ENOMEM;
        size_t np = strlen(pre), n = strlen(name), ns = strlen(".json");
        if (n <= np + ns || strncmp(name, pre, np) != 0 || !streq(name + n - ns, ".json")) return 0;
        const char *uid = name + np;
        size_t nu = n - np - ns;
        for (size_t i = 0; i < nu; i++)
                if (uid[i] == '/' || uid[i] == '.') return 0; /* never in a uid we wrote */
        char *u = strndup(uid, nu);
        if (!u) return -ENOMEM;
        *ret_uid = u;
        return 1;
}

bool dp_dra_own_temp_file(const char *cdi_kind, const char *checkpoint_name, const char *name) {
        if (!name || name[0] != '.') return false;
        size_t n = strlen(name);
        if (n < 1 + 1 + 7 || name[n - 7] != '.') return false; /* ".<x>.XXXXXX" */
        for (size_t i = n - 6; i < n; i++)
                if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= 'A' && name[i] <= 'Z') ||
                      (name[i] >= '0' && name[i] <= '9')))
                        return false;
        _cleanup_free_ char *inner = strndup(name + 1, n - 1 - 7);
        if (!inner) return false;
        if (checkpoint_name && streq(inner, checkpoint_name)) return true;
        _cleanup_free_ char *uid = NULL;
        return cdi_kind && dp_dra_spec_file_uid(cdi_kind, inner, &uid) > 0;
}

/* The value of NAME in an env list ("NAME=VALUE"), NULL when absent. */
static const char *env_get(const dp_doc_node *env, const char *name) {
        size_t nl = strlen(name);
        for (size_t i = 0; env && env->type == DP_DOC_SEQ && i < env->n; i++) {
                const dp_doc_node *e = env->items[i];
                if (e->type != DP_DOC_SCALAR || !e->str) continue;
                if (strncmp(e->str, name, nl) == 0 && e->str[nl] == '=') return e->str + nl + 1;
        }
        return NULL;
}

/* The value of the first "<anything>_SHARE_ID=" entry. */
static const char *env_share_id(const dp_doc_node *env) {
        for (size_t i = 0; env && env->type == DP_DOC_SEQ && i < env->n; i++) {
                const dp_doc_node *e = env->items[i];
                if (e->type != DP_DOC_SCALAR || !e->str) continue;
                const char *eq = strchr(e->str, '=');
                if (eq && eq - e->str >= 9 && strncmp(eq - 9, "_SHARE_ID", 9) == 0) return eq + 1;
        }
        return NULL;
}

static bool inventory_has(const dp_dra_inventory *inv, const char *device) {
        for (size_t i = 0; i < inv->n_devices; i++)
                if (streq_ptr(inv->devices[i].name, device)) return true;
        return false;
}

static int recover_device(const dp_dra_inventory *inv, const char *uid, const dp_doc_node *dev, size_t i,
                          dp_dra_prepared_device *pd, dp_error *err) {
        const dp_doc_node *name = dp_doc_get(dev, "name");
        const dp_doc_node *env = dp_doc_get(dp_doc_get(dev, "containerEdits"), "env");
        if (!name || name->type != DP_DOC_SCALAR || !env || env->type != DP_DOC_SEQ || !env->n ||
            env->items[0]->type != DP_DOC_SCALAR)
                return dp_error_set(err, -EBADMSG, "devices[%zu]: not a device this driver wrote", i);
        /* the first env entry is <PREFIX>_<ID>=<device> (prepare.h) */
        const char *eq = strchr(env->items[0]->str, '=');
        const char *device = eq ? eq + 1 : "";
        size_t nu = strlen(uid), nd = strlen(device);
        if (!inventory_has(inv, device))
                return dp_error_set(err, -EBADMSG, "devices[%zu]: device \"%s\" is not in the inventory", i, device);
        if (strncmp(name->str, uid, nu) != 0 || name->str[nu] != '-' || strncmp(name->str + nu + 1, device, nd) != 0)
                return dp_error_set(err, -EBADMSG, "devices[%zu].name: \"%s\" is not \"%s-%s\"", i, name->str, uid,
                                    device);
        const char *share = env_share_id(env);
        pd->pool = dp_strdup(inv->pool);
        pd->device = dp_strdup(device);
        pd->cdi_ids = calloc(2, sizeof(char *));
        pd->share_id = share ? dp_strdup(share) : NULL;
        if (!pd->pool || !pd->device || !pd->cdi_ids || (share && !pd->share_id)) return -ENOMEM;
        if (!(pd->cdi_ids[0] = dp_dra_cdi_qualified_name(inv->cdi_kind, name->str))) return -ENOMEM;
        pd->n_cdi_ids = 1;
        return 0;
}

static int recover(const dp_dra_inventory *inv, const char *file, const char *buf, size_t len, dp_dra_prepared_claim *c,
                   bool *admin, dp_error *err) {
        _cleanup_free_ char *uid = NULL;
        int r = dp_dra_spec_file_uid(inv->cdi_kind, file, &uid);
        if (r < 0) return r;
        if (r == 0) return dp_error_set(err, -EBADMSG, "not a CDI spec file name of kind %s", inv->cdi_kind);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return -ENOMEM;
        if ((r = dp_doc_parse(s, buf, len, file, err)) < 0) return r == -ENOMEM ? r : -EBADMSG;
        const dp_doc_node *root = dp_doc_count(s) == 1 ? dp_doc_root(s, 0) : NULL;
        const dp_doc_node *kind = dp_doc_get(root, "kind");
        if (!root || root->type != DP_DOC_MAP || !kind || kind->type != DP_DOC_SCALAR ||
            !streq(kind->str, inv->cdi_kind))
                return dp_error_set(err, kind && kind->type == DP_DOC_SCALAR ? -EXDEV : -EBADMSG, "kind: not %s",
                                    inv->cdi_kind);
        const dp_doc_node *env = dp_doc_get(dp_doc_get(root, "containerEdits"), "env");
        if (!streq_ptr(env_get(env, "DRA_RESOURCE_DRIVER_NAME"), inv->driver) ||
            !streq_ptr(env_get(env, "KUBERNETES_NODE_NAME"), inv->node_name))
                return dp_error_set(err, -EXDEV, "containerEdits.env: not written by driver %s on node %s", inv->driver,
                                    inv->node_name);
        *admin = streq_ptr(env_get(env, "DRA_ADMIN_ACCESS"), "true");
        const dp_doc_node *devs = dp_doc_get(root, "devices");
        if (!devs || devs->type != DP_DOC_SEQ || !devs->n) return dp_error_set(err, -EBADMSG, "devices: none");
        if (devs->n > DP_DRA_MAX_RESULTS)
                return dp_error_set(err, -E2BIG, "devices: more than %d (AllocationResultsMaxSize)",
                                    DP_DRA_MAX_RESULTS);
        c->uid = TAKE_PTR(uid);
        c->namespace = dp_strdup("");
        c->name = dp_strdup("");
        c->cdi_spec_file = dp_strdup(file);
        c->cdi_spec_text = dp_strndup(buf, len); /* ours and well-formed: the copy to rewrite it from */
        c->devices = calloc(devs->n, sizeof(*c->devices));
        if (!c->namespace || !c->name || !c->cdi_spec_file || !c->cdi_spec_text || !c->devices) return -ENOMEM;
        for (size_t i = 0; i < devs->n; i++) {
                r = recover_device(inv, c->uid, devs->items[i], i, &c->devices[i], err);
                c->n_devices++; /* freed by _done even when half filled */
                if (r < 0) return r;
        }
        return 0;
}

int dp_dra_recover_claim(const dp_dra_inventory *inv, const char *file, const char *buf, size_t len,
                         dp_dra_prepared_claim *ret, bool *ret_admin, dp_error *err) {
        assert_return(inv && inv->cdi_kind && file && (buf || !len) && ret, -EINVAL);
        dp_dra_prepared_claim c = {0};
        bool admin = false;
        int r = recover(inv, file, buf ? buf : "", len, &c, &admin, err);
        if (r < 0) {
                dp_dra_prepared_claim_done(&c);
                if (r == -ENOMEM) return dp_error_set(err, r, "out of memory");
                dp_error_prefix(err, "CDI spec %s", file);
                return r;
        }
        *ret = c;
        if (ret_admin) *ret_admin = admin;
        return 0;
}
