/* SPDX-License-Identifier: Apache-2.0
 * checkpoint.c — prepared claims and the driver checkpoint (format in
 * prepared.h): ownership, encode, strict decode with checksum. */
#include <stdio.h>

#include "base/strv.h"
#include "doc/doc.h"
#include "dra/prepared.h"

void dp_dra_prepared_claim_done(dp_dra_prepared_claim *c) {
        if (!c) return;
        free(c->uid);
        free(c->namespace);
        free(c->name);
        for (size_t i = 0; i < c->n_devices; i++) {
                dp_dra_prepared_device *d = &c->devices[i];
                dp_strv_free_n(d->requests, d->n_requests);
                free(d->pool);
                free(d->device);
                dp_strv_free_n(d->cdi_ids, d->n_cdi_ids);
                free(d->share_id);
        }
        free(c->devices);
        free(c->cdi_spec_file);
        free(c->cdi_spec_text);
        for (size_t i = 0; i < c->n_metadata; i++) {
                free(c->metadata[i].request);
                free(c->metadata[i].path);
                free(c->metadata[i].container_path);
        }
        free(c->metadata);
        memset(c, 0, sizeof(*c));
}

dp_dra_prepared_claim *dp_dra_prepared_claim_free(dp_dra_prepared_claim *c) {
        dp_dra_prepared_claim_done(c);
        free(c);
        return NULL;
}

static int dup_opt(char **dst, const char *src) {
        if (!src) return 0;
        return (*dst = dp_strdup(src)) ? 0 : -ENOMEM;
}

static int claim_copy(dp_dra_prepared_claim *d, const dp_dra_prepared_claim *s) {
        if (dup_opt(&d->uid, s->uid) < 0 || dup_opt(&d->namespace, s->namespace) < 0 ||
            dup_opt(&d->name, s->name) < 0 || dup_opt(&d->cdi_spec_file, s->cdi_spec_file) < 0 ||
            dup_opt(&d->cdi_spec_text, s->cdi_spec_text) < 0)
                return -ENOMEM;
        d->metadata_generation = s->metadata_generation;
        if (s->n_devices && !(d->devices = calloc(s->n_devices, sizeof(*d->devices)))) return -ENOMEM;
        for (size_t i = 0; i < s->n_devices; i++) {
                const dp_dra_prepared_device *x = &s->devices[i];
                dp_dra_prepared_device *y = &d->devices[i];
                d->n_devices++;
                y->requests = dp_strv_copy_n(x->requests, y->n_requests = x->n_requests);
                y->cdi_ids = dp_strv_copy_n(x->cdi_ids, y->n_cdi_ids = x->n_cdi_ids);
                if (!y->requests || !y->cdi_ids || dup_opt(&y->pool, x->pool) < 0 ||
                    dup_opt(&y->device, x->device) < 0 ||
                    dup_opt(&y->share_id, x->share_id) < 0)
                        return -ENOMEM;
        }
        if (s->n_metadata && !(d->metadata = calloc(s->n_metadata, sizeof(*d->metadata)))) return -ENOMEM;
        for (size_t i = 0; i < s->n_metadata; i++) {
                d->n_metadata++;
                if (dup_opt(&d->metadata[i].request, s->metadata[i].request) < 0 ||
                    dup_opt(&d->metadata[i].path, s->metadata[i].path) < 0 ||
                    dup_opt(&d->metadata[i].container_path, s->metadata[i].container_path) < 0)
                        return -ENOMEM;
        }
        return 0;
}

int dp_dra_prepared_claim_copy(dp_dra_prepared_claim *dst, const dp_dra_prepared_claim *src) {
        assert_return(dst && src, -EINVAL);
        memset(dst, 0, sizeof(*dst));
        int r = claim_copy(dst, src);
        if (r < 0) dp_dra_prepared_claim_done(dst);
        return r;
}

dp_dra_checkpoint *dp_dra_checkpoint_new(const char *driver, const char *node) {
        dp_dra_checkpoint *c = calloc(1, sizeof(*c));
        if (!c) return NULL;
        c->driver = dp_strdup(driver ? driver : "");
        c->node = dp_strdup(node ? node : "");
        if (!c->driver || !c->node) return dp_dra_checkpoint_free(c);
        return c;
}

dp_dra_checkpoint *dp_dra_checkpoint_free(dp_dra_checkpoint *c) {
        if (!c) return NULL;
        free(c->driver);
        free(c->node);
        for (size_t i = 0; i < c->n_claims; i++)
                dp_dra_prepared_claim_done(&c->claims[i]);
        free(c->claims);
        free(c);
        return NULL;
}

dp_dra_prepared_claim *dp_dra_checkpoint_find(const dp_dra_checkpoint *c, const char *uid) {
        if (!c || !uid) return NULL;
        for (size_t i = 0; i < c->n_claims; i++)
                if (streq_ptr(c->claims[i].uid, uid)) return &c->claims[i];
        return NULL;
}

int dp_dra_checkpoint_put(dp_dra_checkpoint *c, const dp_dra_prepared_claim *claim) {
        assert_return(c && claim && claim->uid, -EINVAL);
        dp_dra_prepared_claim copy;
        int r = dp_dra_prepared_claim_copy(&copy, claim);
        if (r < 0) return r;
        dp_dra_prepared_claim *old = dp_dra_checkpoint_find(c, claim->uid);
        if (old) {
                dp_dra_prepared_claim_done(old);
                *old = copy;
                return 0;
        }
        if (c->n_claims >= DP_DRA_CHECKPOINT_MAX_CLAIMS || DP_GROW(c->claims, c->cap, c->n_claims + 1) < 0) {
                dp_dra_prepared_claim_done(&copy);
                return c->n_claims >= DP_DRA_CHECKPOINT_MAX_CLAIMS ? -E2BIG : -ENOMEM;
        }
        c->claims[c->n_claims++] = copy;
        return 0;
}

int dp_dra_checkpoint_remove(dp_dra_checkpoint *c, const char *uid, dp_dra_prepared_claim **ret) {
        assert_return(c && uid, -EINVAL);
        dp_dra_prepared_claim *e = dp_dra_checkpoint_find(c, uid);
        if (!e) return -ENOENT;
        if (ret) {
                dp_dra_prepared_claim *x = malloc(sizeof(*x));
                if (!x) return -ENOMEM;
                *x = *e;
                *ret = x;
        } else
                dp_dra_prepared_claim_done(e);
        size_t i = (size_t)(e - c->claims);
        memmove(&c->claims[i], &c->claims[i + 1], (c->n_claims - i - 1) * sizeof(*c->claims));
        c->n_claims--;
        return 0;
}

/* ---- encode ---- */

typedef struct enc {
        dp_doc_set *s;
        int r;
} enc;

static dp_doc_node *chk(enc *e, dp_doc_node *n) {
        if (!n) e->r = -ENOMEM;
        return n;
}

static void put(enc *e, dp_doc_node *m, const char *k, dp_doc_node *v) {
        if (e->r < 0) return;
        if (!m || !v || dp_doc_map_add(e->s, m, k, v) < 0) e->r = -ENOMEM;
}

static void put_str(enc *e, dp_doc_node *m, const char *k, const char *v) {
        if (v) put(e, m, k, chk(e, dp_doc_new_str(e->s, v)));
}

static void put_strv(enc *e, dp_doc_node *m, const char *k, char *const *v, size_t n) {
        dp_doc_node *q = chk(e, dp_doc_new_seq(e->s));
        for (size_t i = 0; q && i < n; i++)
                if (dp_doc_seq_add(e->s, q, chk(e, dp_doc_new_str(e->s, v[i]))) < 0) e->r = -ENOMEM;
        put(e, m, k, q);
}

static dp_doc_node *claim_node(enc *e, const dp_dra_prepared_claim *c) {
        dp_doc_node *m = chk(e, dp_doc_new_map(e->s));
        put_str(e, m, "uid", c->uid ? c->uid : "");
        put_str(e, m, "namespace", c->namespace ? c->namespace : "");
        put_str(e, m, "name", c->name ? c->name : "");
        dp_doc_node *devs = chk(e, dp_doc_new_seq(e->s));
        for (size_t i = 0; devs && i < c->n_devices; i++) {
                const dp_dra_prepared_device *d = &c->devices[i];
                dp_doc_node *x = chk(e, dp_doc_new_map(e->s));
                put_strv(e, x, "requests", d->requests, d->n_requests);
                put_str(e, x, "pool", d->pool ? d->pool : "");
                put_str(e, x, "device", d->device ? d->device : "");
                put_strv(e, x, "cdiDeviceIDs", d->cdi_ids, d->n_cdi_ids);
                put_str(e, x, "shareID", d->share_id);
                if (e->r >= 0 && dp_doc_seq_add(e->s, devs, x) < 0) e->r = -ENOMEM;
        }
        put(e, m, "devices", devs);
        put_str(e, m, "cdiSpecFile", c->cdi_spec_file);
        put_str(e, m, "cdiSpec", c->cdi_spec_text);
        dp_doc_node *md = chk(e, dp_doc_new_seq(e->s));
        for (size_t i = 0; md && i < c->n_metadata; i++) {
                dp_doc_node *x = chk(e, dp_doc_new_map(e->s));
                put_str(e, x, "request", c->metadata[i].request ? c->metadata[i].request : "");
                put_str(e, x, "path", c->metadata[i].path ? c->metadata[i].path : "");
                put_str(e, x, "containerPath", c->metadata[i].container_path ? c->metadata[i].container_path : "");
                if (e->r >= 0 && dp_doc_seq_add(e->s, md, x) < 0) e->r = -ENOMEM;
        }
        put(e, m, "metadataFiles", md);
        put(e, m, "metadataGeneration", chk(e, dp_doc_new_int(e->s, c->metadata_generation)));
        return m;
}

static dp_doc_node *data_node(enc *e, const dp_dra_checkpoint *c) {
        dp_doc_node *m = chk(e, dp_doc_new_map(e->s));
        put_str(e, m, "driver", c->driver ? c->driver : "");
        put_str(e, m, "node", c->node ? c->node : "");
        put(e, m, "version", chk(e, dp_doc_new_int(e->s, DP_DRA_CHECKPOINT_VERSION)));
        dp_doc_node *claims = chk(e, dp_doc_new_seq(e->s));
        for (size_t i = 0; claims && i < c->n_claims; i++)
                if (e->r >= 0 && dp_doc_seq_add(e->s, claims, claim_node(e, &c->claims[i])) < 0) e->r = -ENOMEM;
        put(e, m, "claims", claims);
        return m;
}

/* The compact JSON of `data` and its checksum text. */
static int data_digest(const dp_dra_checkpoint *c, dp_doc_set *s, dp_doc_node **ret_node, char sum[17]) {
        enc e = {s, 0};
        dp_doc_node *d = data_node(&e, c);
        if (e.r < 0 || !d || dp_doc_data_checksum(d, sum) < 0) return -ENOMEM;
        *ret_node = d;
        return 0;
}

int dp_dra_checkpoint_encode(const dp_dra_checkpoint *c, dp_strbuf *out) {
        assert_return(c && out, -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return -ENOMEM;
        enc e = {s, 0};
        dp_doc_node *d = data_node(&e, c);
        if (e.r < 0 || !d) return -ENOMEM;
        return dp_doc_emit_checksummed(s, d, out);
}

/* ---- decode ---- */

typedef struct dec {
        const char *source;
        dp_error *err;
} dec;

static int bad(dec *d, const dp_doc_node *n, const char *path, const char *rule) {
        return dp_error_set(d->err, -EBADMSG, "%s: checkpoint corrupt: %s: %s (line %u)", d->source, path, rule,
                            n ? n->line : 0);
}

/* Every key of map must be in `keys`. */
static int only_keys(dec *d, const dp_doc_node *m, const char *path, const char *const *keys) {
        if (!m || m->type != DP_DOC_MAP) return bad(d, m, path, "expected a map");
        for (size_t i = 0; i < m->n; i++) {
                bool ok = false;
                for (size_t k = 0; keys[k]; k++)
                        if (streq(m->pairs[i].key, keys[k])) ok = true;
                if (!ok) {
                        char buf[256];
                        snprintf(buf, sizeof(buf), "%s.%s", path, m->pairs[i].key);
                        return bad(d, m->pairs[i].key_node, buf, "unknown field");
                }
        }
        return 0;
}

static int get_str(dec *d, const dp_doc_node *m, const char *key, bool required, const char *path, char **ret) {
        const dp_doc_node *n = dp_doc_get(m, key);
        char buf[256];
        snprintf(buf, sizeof(buf), "%s.%s", path, key);
        if (!n) return required ? bad(d, m, buf, "required") : 0;
        if (n->type != DP_DOC_SCALAR || dp_doc_kind(n) != DP_DOC_STR) return bad(d, n, buf, "expected a string");
        if (!(*ret = dp_strndup(n->str, n->len))) return dp_error_set(d->err, -ENOMEM, "out of memory");
        return 0;
}

static int get_strv(dec *d, const dp_doc_node *m, const char *key, const char *path, char ***ret, size_t *ret_n) {
        const dp_doc_node *n = dp_doc_get(m, key);
        char buf[256];
        snprintf(buf, sizeof(buf), "%s.%s", path, key);
        if (!n) return bad(d, m, buf, "required");
        if (n->type != DP_DOC_SEQ) return bad(d, n, buf, "expected a list");
        if (n->n > 64) return bad(d, n, buf, "more than 64 entries");
        if (n->n && !(*ret = calloc(n->n, sizeof(char *)))) return dp_error_set(d->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n->n; i++) {
                const dp_doc_node *x = n->items[i];
                if (x->type != DP_DOC_SCALAR || dp_doc_kind(x) != DP_DOC_STR) return bad(d, x, buf, "expected strings");
                if (!((*ret)[i] = dp_strndup(x->str, x->len))) return dp_error_set(d->err, -ENOMEM, "out of memory");
                (*ret_n)++;
        }
        return 0;
}

static const char *const claim_keys[] = {
        "uid", "namespace", "name", "devices", "cdiSpecFile", "cdiSpec", "metadataFiles", "metadataGeneration", NULL};
static const char *const dev_keys[] = {"requests", "pool", "device", "cdiDeviceIDs", "shareID", NULL};
static const char *const md_keys[] = {"request", "path", "containerPath", NULL};

static int decode_claim(dec *d, const dp_doc_node *m, const char *path, dp_dra_prepared_claim *c) {
        int r = only_keys(d, m, path, claim_keys);
        if (r >= 0) r = get_str(d, m, "uid", true, path, &c->uid);
        if (r >= 0) r = get_str(d, m, "namespace", true, path, &c->namespace);
        if (r >= 0) r = get_str(d, m, "name", true, path, &c->name);
        if (r >= 0) r = get_str(d, m, "cdiSpecFile", false, path, &c->cdi_spec_file);
        if (r >= 0) r = get_str(d, m, "cdiSpec", false, path, &c->cdi_spec_text);
        if (r < 0) return r;
        if (!*c->uid) return bad(d, m, path, "empty uid");
        const dp_doc_node *g = dp_doc_get(m, "metadataGeneration");
        if (!g || dp_doc_get_int64(g, &c->metadata_generation, NULL) < 0 || c->metadata_generation < 0)
                return bad(d, g ? g : m, path, "metadataGeneration: expected a non-negative integer");
        const dp_doc_node *devs = dp_doc_get(m, "devices");
        if (!devs || devs->type != DP_DOC_SEQ) return bad(d, devs ? devs : m, path, "devices: expected a list");
        if (devs->n > DP_DRA_MAX_RESULTS) return bad(d, devs, path, "devices: more than 32 entries");
        if (devs->n && !(c->devices = calloc(devs->n, sizeof(*c->devices))))
                return dp_error_set(d->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < devs->n; i++) {
                char p[256];
                snprintf(p, sizeof(p), "%s.devices[%zu]", path, i);
                dp_dra_prepared_device *x = &c->devices[i];
                c->n_devices++;
                const dp_doc_node *n = devs->items[i];
                r = only_keys(d, n, p, dev_keys);
                if (r >= 0) r = get_strv(d, n, "requests", p, &x->requests, &x->n_requests);
                if (r >= 0) r = get_str(d, n, "pool", true, p, &x->pool);
                if (r >= 0) r = get_str(d, n, "device", true, p, &x->device);
                if (r >= 0) r = get_strv(d, n, "cdiDeviceIDs", p, &x->cdi_ids, &x->n_cdi_ids);
                if (r >= 0) r = get_str(d, n, "shareID", false, p, &x->share_id);
                if (r < 0) return r;
        }
        const dp_doc_node *md = dp_doc_get(m, "metadataFiles");
        if (!md || md->type != DP_DOC_SEQ) return bad(d, md ? md : m, path, "metadataFiles: expected a list");
        if (md->n > DP_DRA_MAX_RESULTS) return bad(d, md, path, "metadataFiles: more than 32 entries");
        if (md->n && !(c->metadata = calloc(md->n, sizeof(*c->metadata))))
                return dp_error_set(d->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < md->n; i++) {
                char p[256];
                snprintf(p, sizeof(p), "%s.metadataFiles[%zu]", path, i);
                dp_dra_metadata_file *x = &c->metadata[i];
                c->n_metadata++;
                const dp_doc_node *n = md->items[i];
                r = only_keys(d, n, p, md_keys);
                if (r >= 0) r = get_str(d, n, "request", true, p, &x->request);
                if (r >= 0) r = get_str(d, n, "path", true, p, &x->path);
                if (r >= 0) r = get_str(d, n, "containerPath", true, p, &x->container_path);
                if (r < 0) return r;
                /* paths are relative and stay below the metadata directory */
                if (x->path[0] == '/' || strstr(x->path, "..")) return bad(d, n, p, "path must be relative without ..");
        }
        if (c->cdi_spec_file && (strchr(c->cdi_spec_file, '/') || c->cdi_spec_file[0] == '.' || !*c->cdi_spec_file))
                return bad(d, m, path, "cdiSpecFile must be a plain file name");
        return 0;
}

static const char *const root_keys[] = {"checksum", "data", NULL};
static const char *const data_keys[] = {"driver", "node", "version", "claims", NULL};

static int decode(dec *d, const dp_doc_node *root, dp_dra_checkpoint *c, char **ret_sum) {
        int r = only_keys(d, root, "", root_keys);
        if (r >= 0) r = get_str(d, root, "checksum", true, "", ret_sum);
        if (r < 0) return r;
        const dp_doc_node *data = dp_doc_get(root, "data");
        r = only_keys(d, data, "data", data_keys);
        if (r >= 0) r = get_str(d, data, "driver", true, "data", &c->driver);
        if (r >= 0) r = get_str(d, data, "node", true, "data", &c->node);
        if (r < 0) return r;
        int64_t v = 0;
        const dp_doc_node *vn = dp_doc_get(data, "version");
        if (!vn || dp_doc_get_int64(vn, &v, NULL) < 0 || v != DP_DRA_CHECKPOINT_VERSION)
                return bad(d, vn ? vn : data, "data.version", "unsupported version");
        const dp_doc_node *claims = dp_doc_get(data, "claims");
        if (!claims || claims->type != DP_DOC_SEQ)
                return bad(d, claims ? claims : data, "data.claims", "expected a list");
        if (claims->n > DP_DRA_CHECKPOINT_MAX_CLAIMS)
                return dp_error_set(d->err, -E2BIG, "%s: more than %d claims (DP_DRA_CHECKPOINT_MAX_CLAIMS)", d->source,
                                    DP_DRA_CHECKPOINT_MAX_CLAIMS);
        if (claims->n && DP_GROW(c->claims, c->cap, claims->n) < 0)
                return dp_error_set(d->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < claims->n; i++) {
                char p[64];
                snprintf(p, sizeof(p), "data.claims[%zu]", i);
                c->n_claims++;
                if ((r = decode_claim(d, claims->items[i], p, &c->claims[i])) < 0) return r;
                for (size_t j = 0; j < i; j++)
                        if (streq(c->claims[j].uid, c->claims[i].uid))
                                return bad(d, claims->items[i], p, "duplicate uid");
        }
        return 0;
}

int dp_dra_checkpoint_decode(const char *buf, size_t len, const char *source, dp_dra_checkpoint **ret, dp_error *err) {
        assert_return((buf || !len) && ret, -EINVAL);
        if (!source) source = "checkpoint";
        if (len > DP_DRA_CHECKPOINT_MAX)
                return dp_error_set(err, -E2BIG, "%s: larger than %u bytes", source, DP_DRA_CHECKPOINT_MAX);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        if (!s) return dp_error_set(err, -ENOMEM, "out of memory");
        dp_error perr = DP_ERROR_INIT;
        int r = dp_doc_parse(s, buf ? buf : "", len, source, &perr);
        if (r == -ENOMEM) return dp_error_set(err, r, "out of memory");
        if (r < 0) return dp_error_set(err, -EBADMSG, "checkpoint corrupt: %s", perr.msg);
        if (dp_doc_count(s) != 1)
                return dp_error_set(err, -EBADMSG, "%s: checkpoint corrupt: expected one document", source);
        dec d = {source, err};
        dp_dra_checkpoint *c = calloc(1, sizeof(*c));
        if (!c) return dp_error_set(err, -ENOMEM, "out of memory");
        _cleanup_free_ char *sum = NULL;
        r = decode(&d, dp_doc_root(s, 0), c, &sum);
        if (r >= 0) {
                _cleanup_(dp_doc_set_freep) dp_doc_set *t = dp_doc_set_new();
                dp_doc_node *unused = NULL;
                char want[17];
                if (!t || data_digest(c, t, &unused, want) < 0)
                        r = dp_error_set(err, -ENOMEM, "out of memory");
                else if (!streq(want, sum))
                        r = dp_error_set(err, -EBADMSG,
                                         "%s: checkpoint corrupt: checksum %s does not match the data (%s)", source,
                                         sum, want);
        }
        if (r < 0) {
                dp_dra_checkpoint_free(c);
                return r;
        }
        *ret = c;
        return 0;
}
