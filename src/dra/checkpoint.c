/* SPDX-License-Identifier: Apache-2.0
 * checkpoint.c — prepared claims and the driver checkpoint (format in
 * prepared.h): ownership, encode, strict decode with checksum. */
#include <stdio.h>

#include "base/strv.h"
#include "doc/state-file.h"
#include "dra/prepared.h"

void dp_dra_prepared_claim_done(dp_dra_prepared_claim *c) {
        if (!c) return;
        dp_free_many(c->uid, c->namespace, c->name);
        for (size_t i = 0; i < c->n_devices; i++) {
                dp_dra_prepared_device *d = &c->devices[i];
                dp_strv_free_n(d->requests, d->n_requests);
                dp_free_many(d->pool, d->device);
                dp_strv_free_n(d->cdi_ids, d->n_cdi_ids);
                free(d->share_id);
        }
        dp_free_many(c->devices, c->cdi_spec_file, c->cdi_spec_text);
        for (size_t i = 0; i < c->n_metadata; i++)
                dp_free_many(c->metadata[i].request, c->metadata[i].path, c->metadata[i].container_path);
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
                    dup_opt(&y->device, x->device) < 0 || dup_opt(&y->share_id, x->share_id) < 0)
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
        dp_free_many(c->driver, c->node);
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

/* ---- the file: DATA of the checksummed envelope (doc/state-file.h) ---- */

static dp_doc_node *claim_node(dp_doc_builder *b, const dp_dra_prepared_claim *c) {
        dp_doc_node *m = dp_doc_b_map(b);
        dp_doc_b_put_str(b, m, "uid", c->uid ? c->uid : "");
        dp_doc_b_put_str(b, m, "namespace", c->namespace ? c->namespace : "");
        dp_doc_b_put_str(b, m, "name", c->name ? c->name : "");
        dp_doc_node *devs = dp_doc_b_seq(b);
        for (size_t i = 0; devs && i < c->n_devices; i++) {
                const dp_dra_prepared_device *d = &c->devices[i];
                dp_doc_node *x = dp_doc_b_map(b);
                dp_doc_b_put_strv(b, x, "requests", d->requests, d->n_requests);
                dp_doc_b_put_str(b, x, "pool", d->pool ? d->pool : "");
                dp_doc_b_put_str(b, x, "device", d->device ? d->device : "");
                dp_doc_b_put_strv(b, x, "cdiDeviceIDs", d->cdi_ids, d->n_cdi_ids);
                dp_doc_b_put_str(b, x, "shareID", d->share_id);
                dp_doc_b_push(b, devs, x);
        }
        dp_doc_b_put(b, m, "devices", devs);
        dp_doc_b_put_str(b, m, "cdiSpecFile", c->cdi_spec_file);
        dp_doc_b_put_str(b, m, "cdiSpec", c->cdi_spec_text);
        dp_doc_node *md = dp_doc_b_seq(b);
        for (size_t i = 0; md && i < c->n_metadata; i++) {
                const dp_dra_metadata_file *f = &c->metadata[i];
                dp_doc_node *x = dp_doc_b_map(b);
                dp_doc_b_put_str(b, x, "request", f->request ? f->request : "");
                dp_doc_b_put_str(b, x, "path", f->path ? f->path : "");
                dp_doc_b_put_str(b, x, "containerPath", f->container_path ? f->container_path : "");
                dp_doc_b_push(b, md, x);
        }
        dp_doc_b_put(b, m, "metadataFiles", md);
        dp_doc_b_put_int(b, m, "metadataGeneration", c->metadata_generation);
        return m;
}

static dp_doc_node *data_node(dp_doc_builder *b, const void *obj) {
        const dp_dra_checkpoint *c = obj;
        dp_doc_node *m = dp_doc_b_map(b);
        dp_doc_b_put_str(b, m, "driver", c->driver ? c->driver : "");
        dp_doc_b_put_str(b, m, "node", c->node ? c->node : "");
        dp_doc_b_put_int(b, m, "version", DP_DRA_CHECKPOINT_VERSION);
        dp_doc_node *claims = dp_doc_b_seq(b);
        for (size_t i = 0; claims && i < c->n_claims; i++)
                dp_doc_b_push(b, claims, claim_node(b, &c->claims[i]));
        dp_doc_b_put(b, m, "claims", claims);
        return m;
}

static const char *const claim_keys[] = {
        "uid", "namespace", "name", "devices", "cdiSpecFile", "cdiSpec", "metadataFiles", "metadataGeneration", NULL};
static const char *const dev_keys[] = {"requests", "pool", "device", "cdiDeviceIDs", "shareID", NULL};
static const char *const md_keys[] = {"request", "path", "containerPath", NULL};

#define OPT DP_DOC_DEC_OPTIONAL

static int decode_device(const dp_doc_decoder *d, const dp_doc_node *n, const char *p, dp_dra_prepared_device *x) {
        int r = dp_doc_dec_only_keys(d, n, p, dev_keys);
        if (r >= 0) r = dp_doc_dec_strv(d, n, "requests", 64, p, &x->requests, &x->n_requests);
        if (r >= 0) r = dp_doc_dec_str(d, n, "pool", 0, p, &x->pool);
        if (r >= 0) r = dp_doc_dec_str(d, n, "device", 0, p, &x->device);
        if (r >= 0) r = dp_doc_dec_strv(d, n, "cdiDeviceIDs", 64, p, &x->cdi_ids, &x->n_cdi_ids);
        if (r >= 0) r = dp_doc_dec_str(d, n, "shareID", OPT, p, &x->share_id);
        return r;
}

static int decode_metadata(const dp_doc_decoder *d, const dp_doc_node *n, const char *p, dp_dra_metadata_file *x) {
        int r = dp_doc_dec_only_keys(d, n, p, md_keys);
        if (r >= 0) r = dp_doc_dec_str(d, n, "request", 0, p, &x->request);
        if (r >= 0) r = dp_doc_dec_str(d, n, "path", 0, p, &x->path);
        if (r >= 0) r = dp_doc_dec_str(d, n, "containerPath", 0, p, &x->container_path);
        /* paths are relative and stay below the metadata directory */
        if (r >= 0 && (x->path[0] == '/' || strstr(x->path, "..")))
                r = dp_doc_dec_bad(d, n, p, "path must be relative without ..");
        return r;
}

static int decode_claim(const dp_doc_decoder *d, const dp_doc_node *m, const char *path, dp_dra_prepared_claim *c) {
        int r = dp_doc_dec_only_keys(d, m, path, claim_keys);
        if (r >= 0) r = dp_doc_dec_str(d, m, "uid", DP_DOC_DEC_NONEMPTY, path, &c->uid);
        if (r >= 0) r = dp_doc_dec_str(d, m, "namespace", 0, path, &c->namespace);
        if (r >= 0) r = dp_doc_dec_str(d, m, "name", 0, path, &c->name);
        if (r >= 0) r = dp_doc_dec_str(d, m, "cdiSpecFile", OPT, path, &c->cdi_spec_file);
        if (r >= 0) r = dp_doc_dec_str(d, m, "cdiSpec", OPT, path, &c->cdi_spec_text);
        if (r < 0) return r;
        const dp_doc_node *g = dp_doc_get(m, "metadataGeneration");
        if (!g || dp_doc_get_int64(g, &c->metadata_generation, NULL) < 0 || c->metadata_generation < 0)
                return dp_doc_dec_bad(d, g ? g : m, path, "metadataGeneration: expected a non-negative integer");
        const dp_doc_node *devs = NULL, *md = NULL;
        if ((r = dp_doc_dec_seq(d, m, "devices", DP_DRA_MAX_RESULTS, path, &devs)) < 0 ||
            (r = dp_doc_dec_seq(d, m, "metadataFiles", DP_DRA_MAX_RESULTS, path, &md)) < 0)
                return r;
        if (!(c->devices = calloc(devs->n + 1, sizeof(*c->devices))) ||
            !(c->metadata = calloc(md->n + 1, sizeof(*c->metadata))))
                return dp_doc_dec_oom(d);
        for (size_t i = 0; i < devs->n; i++) {
                char p[256];
                snprintf(p, sizeof(p), "%s.devices[%zu]", path, i);
                if ((r = decode_device(d, devs->items[i], p, &c->devices[c->n_devices++])) < 0) return r;
        }
        for (size_t i = 0; i < md->n; i++) {
                char p[256];
                snprintf(p, sizeof(p), "%s.metadataFiles[%zu]", path, i);
                if ((r = decode_metadata(d, md->items[i], p, &c->metadata[c->n_metadata++])) < 0) return r;
        }
        if (c->cdi_spec_file && (strchr(c->cdi_spec_file, '/') || c->cdi_spec_file[0] == '.' || !*c->cdi_spec_file))
                return dp_doc_dec_bad(d, m, path, "cdiSpecFile must be a plain file name");
        return 0;
}

static const char *const data_keys[] = {"driver", "node", "version", "claims", NULL};

static int decode_data(const dp_doc_decoder *d, const dp_doc_node *data, void *obj) {
        dp_dra_checkpoint *c = obj;
        int r = dp_doc_dec_only_keys(d, data, "data", data_keys);
        if (r >= 0) r = dp_doc_dec_str(d, data, "driver", 0, "data", &c->driver);
        if (r >= 0) r = dp_doc_dec_str(d, data, "node", 0, "data", &c->node);
        if (r < 0) return r;
        int64_t v = 0;
        const dp_doc_node *vn = dp_doc_get(data, "version");
        if (!vn || dp_doc_get_int64(vn, &v, NULL) < 0 || v != DP_DRA_CHECKPOINT_VERSION)
                return dp_doc_dec_bad(d, vn ? vn : data, "data.version", "unsupported version");
        const dp_doc_node *claims = NULL;
        if ((r = dp_doc_dec_seq(d, data, "claims", DP_DRA_CHECKPOINT_MAX_CLAIMS, "data", &claims)) < 0) return r;
        if (claims->n && DP_GROW(c->claims, c->cap, claims->n) < 0) return dp_doc_dec_oom(d);
        for (size_t i = 0; i < claims->n; i++) {
                char p[64];
                snprintf(p, sizeof(p), "data.claims[%zu]", i);
                c->n_claims++;
                if ((r = decode_claim(d, claims->items[i], p, &c->claims[i])) < 0) return r;
                for (size_t j = 0; j < i; j++)
                        if (streq(c->claims[j].uid, c->claims[i].uid))
                                return dp_doc_dec_bad(d, claims->items[i], p, "duplicate uid");
        }
        return 0;
}

static const dp_state_envelope envelope = {"checkpoint", data_node, decode_data};

int dp_dra_checkpoint_encode(const dp_dra_checkpoint *c, dp_strbuf *out) {
        assert_return(c && out, -EINVAL);
        return dp_state_envelope_marshal(&envelope, c, out);
}

static int unmarshal(const char *buf, size_t len, const char *source, void **ret, dp_error *err) {
        _cleanup_(dp_dra_checkpoint_freep) dp_dra_checkpoint *c = calloc(1, sizeof(*c));
        if (!c) return dp_error_set(err, -ENOMEM, "out of memory");
        int r = dp_state_envelope_unmarshal(&envelope, buf, len, source, c, err);
        if (r < 0) return r;
        *ret = TAKE_PTR(c);
        return 0;
}

static int marshal(const void *obj, dp_strbuf *out) { return dp_dra_checkpoint_encode(obj, out); }

const dp_state_file_type dp_dra_checkpoint_file = {"checkpoint", DP_DRA_CHECKPOINT_MAX, marshal, unmarshal};

int dp_dra_checkpoint_decode(const char *buf, size_t len, const char *source, dp_dra_checkpoint **ret, dp_error *err) {
        assert_return((buf || !len) && ret, -EINVAL);
        return dp_state_file_unmarshal(&dp_dra_checkpoint_file, buf, len, source, (void **)ret, err);
}
