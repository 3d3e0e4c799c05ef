/* SPDX-License-Identifier: Apache-2.0
 * dra-state.c — the node's DRA claim table and its checkpoint encoding
 * (format in dra-state.h): ownership, encode, strict decode with checksum. */
#include <stdio.h>

#include "base/strv.h"
#include "doc/state-file.h"
#include "node/dra-state.h"

static void devs_free(dp_node_dra_device *v, size_t n) {
        for (size_t i = 0; v && i < n; i++) {
                dp_free_many(v[i].pool, v[i].device);
                dp_strv_free_n(v[i].requests, v[i].n_requests);
                dp_strv_free_n(v[i].cdi, v[i].n_cdi);
        }
        free(v);
}

void dp_node_dra_claim_done(dp_node_dra_claim *c) {
        if (!c) return;
        dp_free_many(c->uid, c->ns, c->name, c->driver);
        for (size_t i = 0; i < c->n_pods; i++)
                dp_free_many(c->pods[i].uid, c->pods[i].ns, c->pods[i].name);
        free(c->pods);
        devs_free(c->devs, c->n_devs);
        free(c->error);
        *c = (dp_node_dra_claim){0};
}

/* Length of the character at s that the state file can hold, 0 when none:
 * well-formed UTF-8 of a character YAML may carry (C0 controls are escaped by
 * the emitter; DEL, C1 controls, surrogates, U+FFFE/FFFF are not allowed in
 * a YAML stream, and NEL, U+2028, U+2029 are line breaks the parser folds). Strings come from drivers, so this is checked
 * before they are stored: the node must be able to read back what it writes. */
static size_t storable_char(const unsigned char *s) {
        uint32_t c = s[0];
        size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
        if (!n) return 0;
        if (n > 1) c &= 0x3fu >> (n - 1);
        for (size_t i = 1; i < n; i++) {
                if ((s[i] & 0xc0) != 0x80) return 0;
                c = c << 6 | (s[i] & 0x3fu);
        }
        static const uint32_t min[] = {0, 0, 0x80, 0x800, 0x10000};
        if (c < min[n] || c > 0x10ffff) return 0; /* overlong or beyond Unicode */
        if (c == 0x7f || (c >= 0x80 && c < 0xa0) || c == 0x2028 || c == 0x2029 || (c >= 0xd800 && c < 0xe000) ||
            c == 0xfffe || c == 0xffff)
                return 0;
        return n;
}

static bool storable(const char *s) {
        for (const unsigned char *p = (const unsigned char *)s; *p;) {
                size_t n = storable_char(p);
                if (!n) return false;
                p += n;
        }
        return true;
}

/* A copy with every character the file cannot hold replaced by '?'. */
static char *storable_dup(const char *s) {
        char *v = dp_strdup(s);
        if (!v) return NULL;
        for (unsigned char *p = (unsigned char *)v; *p;) {
                size_t n = storable_char(p);
                if (n) {
                        p += n;
                        continue;
                }
                *p++ = '?';
        }
        return v;
}

dp_node_dra_state *dp_node_dra_state_new(void) { return calloc(1, sizeof(dp_node_dra_state)); }

dp_node_dra_state *dp_node_dra_state_free(dp_node_dra_state *s) {
        if (!s) return NULL;
        for (size_t i = 0; i < s->n_claims; i++)
                dp_node_dra_claim_done(&s->claims[i]);
        free(s->claims);
        for (size_t i = 0; i < s->n_unknown; i++)
                dp_free_many(s->unknown[i].driver, s->unknown[i].reason);
        free(s->unknown);
        free(s);
        return NULL;
}

dp_node_dra_claim *dp_node_dra_state_find(const dp_node_dra_state *s, const char *uid, const char *driver) {
        for (size_t i = 0; s && i < s->n_claims; i++)
                if (streq(s->claims[i].uid, uid) && streq(s->claims[i].driver, driver)) return &s->claims[i];
        return NULL;
}

int dp_node_dra_state_add(dp_node_dra_state *s, const char *uid, const char *ns, const char *name, const char *driver,
                          dp_node_dra_claim **ret) {
        assert_return(s && uid && ns && name && driver && ret, -EINVAL);
        if (!*uid || !*driver || !storable(uid) || !storable(ns) || !storable(name) || !storable(driver)) return -EINVAL;
        dp_node_dra_claim *old = dp_node_dra_state_find(s, uid, driver);
        if (old) {
                *ret = old;
                return -EEXIST;
        }
        if (s->n_claims >= DP_NODE_DRA_STATE_MAX_CLAIMS) return -E2BIG;
        if (DP_GROW(s->claims, s->cap, s->n_claims + 1) < 0) return -ENOMEM;
        dp_node_dra_claim c = {
                .uid = dp_strdup(uid), .ns = dp_strdup(ns), .name = dp_strdup(name), .driver = dp_strdup(driver)};
        if (!c.uid || !c.ns || !c.name || !c.driver) {
                dp_node_dra_claim_done(&c);
                return -ENOMEM;
        }
        s->claims[s->n_claims] = c;
        *ret = &s->claims[s->n_claims++];
        return 0;
}

void dp_node_dra_state_remove(dp_node_dra_state *s, dp_node_dra_claim *c) {
        if (!s || !c) return;
        dp_node_dra_claim_done(c);
        *c = s->claims[--s->n_claims];
}

bool dp_node_dra_claim_has_pod(const dp_node_dra_claim *c, const char *uid) {
        for (size_t i = 0; c && i < c->n_pods; i++)
                if (streq(c->pods[i].uid, uid)) return true;
        return false;
}

int dp_node_dra_claim_add_pod(dp_node_dra_claim *c, const char *uid, const char *ns, const char *name) {
        assert_return(c && uid && ns && name, -EINVAL);
        if (!*uid || !storable(uid) || !storable(ns) || !storable(name)) return -EINVAL;
        if (dp_node_dra_claim_has_pod(c, uid)) return 0;
        if (c->n_pods >= DP_NODE_DRA_STATE_MAX_PODS) return -E2BIG;
        dp_node_dra_pod *v = realloc(c->pods, (c->n_pods + 1) * sizeof *v);
        if (!v) return -ENOMEM;
        c->pods = v;
        dp_node_dra_pod p = {dp_strdup(uid), dp_strdup(ns), dp_strdup(name)};
        if (!p.uid || !p.ns || !p.name) {
                dp_free_many(p.uid, p.ns, p.name);
                return -ENOMEM;
        }
        c->pods[c->n_pods++] = p;
        return 1;
}

bool dp_node_dra_claim_remove_pod(dp_node_dra_claim *c, const char *uid) {
        for (size_t i = 0; c && i < c->n_pods; i++)
                if (streq(c->pods[i].uid, uid)) {
                        dp_free_many(c->pods[i].uid, c->pods[i].ns, c->pods[i].name);
                        DP_REMOVE_AT(c->pods, c->n_pods, i);
                        return true;
                }
        return false;
}

int dp_node_dra_claim_set_devices(dp_node_dra_claim *c, const dp_node_dra_device *devs, size_t n) {
        assert_return(c && (devs || !n), -EINVAL);
        if (n > DP_NODE_DRA_STATE_MAX_DEVICES) return -E2BIG;
        for (size_t k = 0; k < n; k++) {
                if (!devs[k].pool || !devs[k].device || !storable(devs[k].pool) || !storable(devs[k].device))
                        return -EINVAL;
                if (devs[k].n_requests > DP_NODE_DRA_STATE_MAX_STRINGS || devs[k].n_cdi > DP_NODE_DRA_STATE_MAX_STRINGS)
                        return -E2BIG;
                for (size_t i = 0; i < devs[k].n_requests; i++)
                        if (!devs[k].requests[i] || !storable(devs[k].requests[i])) return -EINVAL;
                for (size_t i = 0; i < devs[k].n_cdi; i++)
                        if (!devs[k].cdi[i] || !storable(devs[k].cdi[i])) return -EINVAL;
        }
        dp_node_dra_device *v = calloc(n + 1, sizeof *v);
        if (!v) return -ENOMEM;
        size_t k = 0;
        int r = 0;
        for (; r >= 0 && k < n; k++) {
                v[k].pool = dp_strdup(devs[k].pool);
                v[k].device = dp_strdup(devs[k].device);
                if (!v[k].pool || !v[k].device) r = -ENOMEM;
                v[k].requests = dp_strv_copy_n(devs[k].requests, v[k].n_requests = devs[k].n_requests);
                v[k].cdi = dp_strv_copy_n(devs[k].cdi, v[k].n_cdi = devs[k].n_cdi);
                if (!v[k].requests || !v[k].cdi) r = -ENOMEM;
        }
        if (r < 0) {
                devs_free(v, k);
                return r;
        }
        devs_free(c->devs, c->n_devs);
        c->devs = v;
        c->n_devs = n;
        return 0;
}

int dp_node_dra_state_set_unknown(dp_node_dra_state *s, const char *driver, const char *reason) {
        assert_return(s && driver && reason, -EINVAL);
        if (!*driver || !storable(driver)) return -EINVAL;
        for (size_t i = 0; i < s->n_unknown; i++)
                if (streq(s->unknown[i].driver, driver)) {
                        _cleanup_free_ char *r = storable_dup(reason);
                        if (!r) return -ENOMEM;
                        if (streq(s->unknown[i].reason, r)) return 0;
                        free(s->unknown[i].reason);
                        s->unknown[i].reason = TAKE_PTR(r);
                        return 1;
                }
        if (s->n_unknown >= DP_NODE_DRA_STATE_MAX_DRIVERS) return -E2BIG;
        dp_node_dra_unknown *v = realloc(s->unknown, (s->n_unknown + 1) * sizeof *v);
        if (!v) return -ENOMEM;
        s->unknown = v;
        dp_node_dra_unknown u = {dp_strdup(driver), storable_dup(reason)};
        if (!u.driver || !u.reason) {
                dp_free_many(u.driver, u.reason);
                return -ENOMEM;
        }
        s->unknown[s->n_unknown++] = u;
        return 1;
}

bool dp_node_dra_state_clear_unknown(dp_node_dra_state *s, const char *driver) {
        for (size_t i = 0; s && i < s->n_unknown; i++)
                if (streq(s->unknown[i].driver, driver)) {
                        dp_free_many(s->unknown[i].driver, s->unknown[i].reason);
                        s->unknown[i] = s->unknown[--s->n_unknown];
                        return true;
                }
        return false;
}

const char *dp_node_dra_state_unknown_reason(const dp_node_dra_state *s, const char *driver) {
        for (size_t i = 0; s && i < s->n_unknown; i++)
                if (streq(s->unknown[i].driver, driver)) return s->unknown[i].reason;
        return NULL;
}

/* ---- the file: DATA of the checksummed envelope (doc/state-file.h) ---- */

static dp_doc_node *claim_node(dp_doc_builder *b, const dp_node_dra_claim *c) {
        dp_doc_node *m = dp_doc_b_map(b);
        dp_doc_b_put_str(b, m, "uid", c->uid ? c->uid : "");
        dp_doc_b_put_str(b, m, "namespace", c->ns ? c->ns : "");
        dp_doc_b_put_str(b, m, "name", c->name ? c->name : "");
        dp_doc_b_put_str(b, m, "driver", c->driver ? c->driver : "");
        dp_doc_b_put_str(b, m, "state", c->phase == DP_NODE_DRA_PREPARED ? "prepared" : "preparing");
        dp_doc_b_put_bool(b, m, "skipped", c->skipped);
        dp_doc_b_put_bool(b, m, "skipUnprepare", c->skip_unprepare);
        dp_doc_node *pods = dp_doc_b_seq(b);
        for (size_t i = 0; pods && i < c->n_pods; i++) {
                dp_doc_node *p = dp_doc_b_map(b);
                dp_doc_b_put_str(b, p, "uid", c->pods[i].uid ? c->pods[i].uid : "");
                dp_doc_b_put_str(b, p, "namespace", c->pods[i].ns ? c->pods[i].ns : "");
                dp_doc_b_put_str(b, p, "name", c->pods[i].name ? c->pods[i].name : "");
                dp_doc_b_push(b, pods, p);
        }
        dp_doc_b_put(b, m, "pods", pods);
        dp_doc_node *devs = dp_doc_b_seq(b);
        for (size_t i = 0; devs && i < c->n_devs; i++) {
                const dp_node_dra_device *d = &c->devs[i];
                dp_doc_node *x = dp_doc_b_map(b);
                dp_doc_b_put_str(b, x, "pool", d->pool ? d->pool : "");
                dp_doc_b_put_str(b, x, "device", d->device ? d->device : "");
                dp_doc_b_put_strv(b, x, "requests", d->requests, d->n_requests);
                dp_doc_b_put_strv(b, x, "cdiDeviceIDs", d->cdi, d->n_cdi);
                dp_doc_b_push(b, devs, x);
        }
        dp_doc_b_put(b, m, "devices", devs);
        return m;
}

static dp_doc_node *data_node(dp_doc_builder *b, const void *obj) {
        const dp_node_dra_state *s = obj;
        dp_doc_node *m = dp_doc_b_map(b);
        dp_doc_b_put_int(b, m, "version", DP_NODE_DRA_STATE_VERSION);
        dp_doc_b_put_bool(b, m, "rebuild", s->rebuild);
        dp_doc_node *claims = dp_doc_b_seq(b);
        for (size_t i = 0; claims && i < s->n_claims; i++)
                dp_doc_b_push(b, claims, claim_node(b, &s->claims[i]));
        dp_doc_b_put(b, m, "claims", claims);
        dp_doc_node *unk = dp_doc_b_seq(b);
        for (size_t i = 0; unk && i < s->n_unknown; i++) {
                dp_doc_node *x = dp_doc_b_map(b);
                dp_doc_b_put_str(b, x, "driver", s->unknown[i].driver ? s->unknown[i].driver : "");
                dp_doc_b_put_str(b, x, "reason", s->unknown[i].reason ? s->unknown[i].reason : "");
                dp_doc_b_push(b, unk, x);
        }
        dp_doc_b_put(b, m, "unknownDrivers", unk);
        return m;
}

static const char *const claim_keys[] = {"uid",     "namespace",     "name", "driver",  "state",
                                         "skipped", "skipUnprepare", "pods", "devices", NULL};
static const char *const pod_keys[] = {"uid", "namespace", "name", NULL};
static const char *const dev_keys[] = {"pool", "device", "requests", "cdiDeviceIDs", NULL};

#define NONEMPTY DP_DOC_DEC_NONEMPTY

static int decode_pod(const dp_doc_decoder *d, const dp_doc_node *n, const char *p, dp_node_dra_pod *x) {
        int r = dp_doc_dec_only_keys(d, n, p, pod_keys);
        if (r >= 0) r = dp_doc_dec_str(d, n, "uid", NONEMPTY, p, &x->uid);
        if (r >= 0) r = dp_doc_dec_str(d, n, "namespace", 0, p, &x->ns);
        if (r >= 0) r = dp_doc_dec_str(d, n, "name", 0, p, &x->name);
        return r;
}

static int decode_device(const dp_doc_decoder *d, const dp_doc_node *n, const char *p, dp_node_dra_device *x) {
        int r = dp_doc_dec_only_keys(d, n, p, dev_keys);
        if (r >= 0) r = dp_doc_dec_str(d, n, "pool", 0, p, &x->pool);
        if (r >= 0) r = dp_doc_dec_str(d, n, "device", 0, p, &x->device);
        if (r >= 0)
                r = dp_doc_dec_strv(d, n, "requests", DP_NODE_DRA_STATE_MAX_STRINGS, p, &x->requests, &x->n_requests);
        if (r >= 0) r = dp_doc_dec_strv(d, n, "cdiDeviceIDs", DP_NODE_DRA_STATE_MAX_STRINGS, p, &x->cdi, &x->n_cdi);
        return r;
}

static int decode_claim(const dp_doc_decoder *d, const dp_doc_node *m, const char *path, dp_node_dra_claim *c) {
        _cleanup_free_ char *state = NULL;
        int r = dp_doc_dec_only_keys(d, m, path, claim_keys);
        if (r >= 0) r = dp_doc_dec_str(d, m, "uid", NONEMPTY, path, &c->uid);
        if (r >= 0) r = dp_doc_dec_str(d, m, "namespace", 0, path, &c->ns);
        if (r >= 0) r = dp_doc_dec_str(d, m, "name", 0, path, &c->name);
        if (r >= 0) r = dp_doc_dec_str(d, m, "driver", NONEMPTY, path, &c->driver);
        if (r >= 0) r = dp_doc_dec_str(d, m, "state", NONEMPTY, path, &state);
        if (r >= 0 && !streq(state, "prepared") && !streq(state, "preparing"))
                r = dp_doc_dec_bad(d, dp_doc_get(m, "state"), path, "state: expected prepared or preparing");
        if (r >= 0) c->phase = streq(state, "prepared") ? DP_NODE_DRA_PREPARED : DP_NODE_DRA_PREPARING;
        if (r >= 0) r = dp_doc_dec_bool(d, m, "skipped", path, &c->skipped);
        if (r >= 0) r = dp_doc_dec_bool(d, m, "skipUnprepare", path, &c->skip_unprepare);
        const dp_doc_node *pods = NULL, *devs = NULL;
        if (r >= 0) r = dp_doc_dec_seq(d, m, "pods", DP_NODE_DRA_STATE_MAX_PODS, path, &pods);
        if (r >= 0) r = dp_doc_dec_seq(d, m, "devices", DP_NODE_DRA_STATE_MAX_DEVICES, path, &devs);
        if (r < 0) return r;
        if (!(c->pods = calloc(pods->n + 1, sizeof *c->pods)) || !(c->devs = calloc(devs->n + 1, sizeof *c->devs)))
                return dp_doc_dec_oom(d);
        for (size_t i = 0; i < pods->n; i++) {
                char p[256];
                snprintf(p, sizeof p, "%s.pods[%zu]", path, i);
                dp_node_dra_pod *x = &c->pods[c->n_pods++];
                if ((r = decode_pod(d, pods->items[i], p, x)) < 0) return r;
                for (size_t k = 0; k < i; k++)
                        if (streq(c->pods[k].uid, x->uid))
                                return dp_doc_dec_bad(d, pods->items[i], p, "duplicate pod uid");
        }
        for (size_t i = 0; i < devs->n; i++) {
                char p[256];
                snprintf(p, sizeof p, "%s.devices[%zu]", path, i);
                if ((r = decode_device(d, devs->items[i], p, &c->devs[c->n_devs++])) < 0) return r;
        }
        return 0;
}

static const char *const data_keys[] = {"version", "rebuild", "claims", "unknownDrivers", NULL};
static const char *const unknown_keys[] = {"driver", "reason", NULL};

static int decode_unknown(const dp_doc_decoder *d, const dp_doc_node *unk, dp_node_dra_state *s) {
        if (!(s->unknown = calloc(unk->n + 1, sizeof *s->unknown))) return dp_doc_dec_oom(d);
        for (size_t i = 0; i < unk->n; i++) {
                char p[64];
                snprintf(p, sizeof p, "data.unknownDrivers[%zu]", i);
                dp_node_dra_unknown *x = &s->unknown[s->n_unknown++];
                const dp_doc_node *n = unk->items[i];
                int r = dp_doc_dec_only_keys(d, n, p, unknown_keys);
                if (r >= 0) r = dp_doc_dec_str(d, n, "driver", NONEMPTY, p, &x->driver);
                if (r >= 0) r = dp_doc_dec_str(d, n, "reason", 0, p, &x->reason);
                if (r < 0) return r;
                for (size_t j = 0; j < i; j++)
                        if (streq(s->unknown[j].driver, x->driver)) return dp_doc_dec_bad(d, n, p, "duplicate driver");
        }
        return 0;
}

static int decode_data(const dp_doc_decoder *d, const dp_doc_node *data, void *obj) {
        dp_node_dra_state *s = obj;
        int r = dp_doc_dec_only_keys(d, data, "data", data_keys);
        if (r < 0) return r;
        int64_t v = 0;
        const dp_doc_node *vn = dp_doc_get(data, "version");
        if (!vn || dp_doc_kind(vn) != DP_DOC_INT || dp_doc_get_int64(vn, &v, NULL) < 0 ||
            v != DP_NODE_DRA_STATE_VERSION)
                return dp_doc_dec_bad(d, vn ? vn : data, "data.version", "unsupported version");
        if ((r = dp_doc_dec_bool(d, data, "rebuild", "data", &s->rebuild)) < 0) return r;
        const dp_doc_node *claims = NULL, *unk = NULL;
        if ((r = dp_doc_dec_seq(d, data, "claims", DP_NODE_DRA_STATE_MAX_CLAIMS, "data", &claims)) < 0 ||
            (r = dp_doc_dec_seq(d, data, "unknownDrivers", DP_NODE_DRA_STATE_MAX_DRIVERS, "data", &unk)) < 0)
                return r;
        if (claims->n && DP_GROW(s->claims, s->cap, claims->n) < 0) return dp_doc_dec_oom(d);
        for (size_t i = 0; i < claims->n; i++) {
                char p[64];
                snprintf(p, sizeof p, "data.claims[%zu]", i);
                s->n_claims++;
                if ((r = decode_claim(d, claims->items[i], p, &s->claims[i])) < 0) return r;
                for (size_t j = 0; j < i; j++)
                        if (streq(s->claims[j].uid, s->claims[i].uid) &&
                            streq(s->claims[j].driver, s->claims[i].driver))
                                return dp_doc_dec_bad(d, claims->items[i], p, "duplicate uid and driver");
        }
        return decode_unknown(d, unk, s);
}

static const dp_state_envelope envelope = {"node DRA state", data_node, decode_data};

int dp_node_dra_state_encode(const dp_node_dra_state *s, dp_strbuf *out) {
        assert_return(s && out, -EINVAL);
        return dp_state_envelope_marshal(&envelope, s, out);
}

static int marshal(const void *obj, dp_strbuf *out) { return dp_node_dra_state_encode(obj, out); }

static int unmarshal(const char *buf, size_t len, const char *source, void **ret, dp_error *err) {
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *s = dp_node_dra_state_new();
        if (!s) return dp_error_set(err, -ENOMEM, "%s: out of memory", source);
        int r = dp_state_envelope_unmarshal(&envelope, buf, len, source, s, err);
        if (r < 0) return r;
        *ret = TAKE_PTR(s);
        return 0;
}

const dp_state_file_type dp_node_dra_state_file = {"node DRA state", DP_NODE_DRA_STATE_MAX_INPUT, marshal, unmarshal};

int dp_node_dra_state_decode(const char *buf, size_t len, const char *source, dp_node_dra_state **ret, dp_error *err) {
        assert_return(buf && ret, -EINVAL);
        return dp_state_file_unmarshal(&dp_node_dra_state_file, buf, len, source, (void **)ret, err);
}
