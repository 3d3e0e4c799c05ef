/* SPDX-License-Identifier: Apache-2.0
 * dra-state.c — the node's DRA claim table and its checkpoint encoding
 * (format in dra-state.h): ownership, encode, strict decode with checksum. */
#include <stdio.h>

#include "base/strv.h"
#include "doc/doc.h"
#include "node/dra-state.h"

static void devs_free(dp_node_dra_device *v, size_t n) {
        for (size_t i = 0; v && i < n; i++) {
                free(v[i].pool);
                free(v[i].device);
                dp_strv_free_n(v[i].requests, v[i].n_requests);
                dp_strv_free_n(v[i].cdi, v[i].n_cdi);
        }
        free(v);
}

void dp_node_dra_claim_done(dp_node_dra_claim *c) {
        if (!c) return;
        free(c->uid);
        free(c->ns);
        free(c->name);
        free(c->driver);
        for (size_t i = 0; i < c->n_pods; i++) {
                free(c->pods[i].uid);
                free(c->pods[i].ns);
                free(c->pods[i].name);
        }
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
        for (size_t i = 0; i < s->n_unknown; i++) {
                free(s->unknown[i].driver);
                free(s->unknown[i].reason);
        }
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
                free(p.uid);
                free(p.ns);
                free(p.name);
                return -ENOMEM;
        }
        c->pods[c->n_pods++] = p;
        return 1;
}

bool dp_node_dra_claim_remove_pod(dp_node_dra_claim *c, const char *uid) {
        for (size_t i = 0; c && i < c->n_pods; i++)
                if (streq(c->pods[i].uid, uid)) {
                        free(c->pods[i].uid);
                        free(c->pods[i].ns);
                        free(c->pods[i].name);
                        memmove(&c->pods[i], &c->pods[i + 1], (c->n_pods - i - 1) * sizeof *c->pods);
                        c->n_pods--;
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
                free(u.driver);
                free(u.reason);
                return -ENOMEM;
        }
        s->unknown[s->n_unknown++] = u;
        return 1;
}

bool dp_node_dra_state_clear_unknown(dp_node_dra_state *s, const char *driver) {
        for (size_t i = 0; s && i < s->n_unknown; i++)
                if (streq(s->unknown[i].driver, driver)) {
                        free(s->unknown[i].driver);
                        free(s->unknown[i].reason);
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
        if (e->r >= 0 && (!m || !v || dp_doc_map_add(e->s, m, k, v) < 0)) e->r = -ENOMEM;
}

static void push(enc *e, dp_doc_node *q, dp_doc_node *v) {
        if (e->r >= 0 && (!q || !v || dp_doc_seq_add(e->s, q, v) < 0)) e->r = -ENOMEM;
}

static void put_str(enc *e, dp_doc_node *m, const char *k, const char *v) {
        put(e, m, k, chk(e, dp_doc_new_str(e->s, v ? v : "")));
}

static void put_strv(enc *e, dp_doc_node *m, const char *k, char *const *v, size_t n) {
        dp_doc_node *q = chk(e, dp_doc_new_seq(e->s));
        for (size_t i = 0; q && i < n; i++)
                push(e, q, chk(e, dp_doc_new_str(e->s, v[i])));
        put(e, m, k, q);
}

static dp_doc_node *claim_node(enc *e, const dp_node_dra_claim *c) {
        dp_doc_node *m = chk(e, dp_doc_new_map(e->s));
        put_str(e, m, "uid", c->uid);
        put_str(e, m, "namespace", c->ns);
        put_str(e, m, "name", c->name);
        put_str(e, m, "driver", c->driver);
        put_str(e, m, "state", c->phase == DP_NODE_DRA_PREPARED ? "prepared" : "preparing");
        put(e, m, "skipped", chk(e, dp_doc_new_bool(e->s, c->skipped)));
        put(e, m, "skipUnprepare", chk(e, dp_doc_new_bool(e->s, c->skip_unprepare)));
        dp_doc_node *pods = chk(e, dp_doc_new_seq(e->s));
        for (size_t i = 0; pods && i < c->n_pods; i++) {
                dp_doc_node *p = chk(e, dp_doc_new_map(e->s));
                put_str(e, p, "uid", c->pods[i].uid);
                put_str(e, p, "namespace", c->pods[i].ns);
                put_str(e, p, "name", c->pods[i].name);
                push(e, pods, p);
        }
        put(e, m, "pods", pods);
        dp_doc_node *devs = chk(e, dp_doc_new_seq(e->s));
        for (size_t i = 0; devs && i < c->n_devs; i++) {
                const dp_node_dra_device *d = &c->devs[i];
                dp_doc_node *x = chk(e, dp_doc_new_map(e->s));
                put_str(e, x, "pool", d->pool);
                put_str(e, x, "device", d->device);
                put_strv(e, x, "requests", d->requests, d->n_requests);
                put_strv(e, x, "cdiDeviceIDs", d->cdi, d->n_cdi);
                push(e, devs, x);
        }
        put(e, m, "devices", devs);
        return m;
}

static dp_doc_node *data_node(enc *e, const dp_node_dra_state *s) {
        dp_doc_node *m = chk(e, dp_doc_new_map(e->s));
        put(e, m, "version", chk(e, dp_doc_new_int(e->s, DP_NODE_DRA_STATE_VERSION)));
        put(e, m, "rebuild", chk(e, dp_doc_new_bool(e->s, s->rebuild)));
        dp_doc_node *claims = chk(e, dp_doc_new_seq(e->s));
        for (size_t i = 0; claims && i < s->n_claims; i++)
                push(e, claims, claim_node(e, &s->claims[i]));
        put(e, m, "claims", claims);
        dp_doc_node *unk = chk(e, dp_doc_new_seq(e->s));
        for (size_t i = 0; unk && i < s->n_unknown; i++) {
                dp_doc_node *x = chk(e, dp_doc_new_map(e->s));
                put_str(e, x, "driver", s->unknown[i].driver);
                put_str(e, x, "reason", s->unknown[i].reason);
                push(e, unk, x);
        }
        put(e, m, "unknownDrivers", unk);
        return m;
}

/* The `data` node and the checksum of its compact JSON. */
static int data_digest(const dp_node_dra_state *s, dp_doc_set *set, dp_doc_node **ret_node, char sum[17]) {
        enc e = {set, 0};
        dp_doc_node *d = data_node(&e, s);
        if (e.r < 0 || !d || dp_doc_data_checksum(d, sum) < 0) return -ENOMEM;
        *ret_node = d;
        return 0;
}

int dp_node_dra_state_encode(const dp_node_dra_state *s, dp_strbuf *out) {
        assert_return(s && out, -EINVAL);
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        if (!set) return -ENOMEM;
        enc e = {set, 0};
        dp_doc_node *d = data_node(&e, s);
        if (e.r < 0 || !d) return -ENOMEM;
        return dp_doc_emit_checksummed(set, d, out);
}

/* ---- decode ---- */

typedef struct dec {
        const char *source;
        dp_error *err;
} dec;

static int bad(dec *d, const dp_doc_node *n, const char *path, const char *rule) {
        return dp_error_set(d->err, -EBADMSG, "%s: node DRA state corrupt: %s: %s (line %u)", d->source, path, rule,
                            n ? n->line : 0);
}

static int oom(dec *d) { return dp_error_set(d->err, -ENOMEM, "%s: out of memory", d->source); }

static int only_keys(dec *d, const dp_doc_node *m, const char *path, const char *const *keys) {
        if (!m || m->type != DP_DOC_MAP) return bad(d, m, path, "expected a map");
        for (size_t i = 0; i < m->n; i++) {
                bool ok = false;
                for (size_t k = 0; keys[k] && !ok; k++)
                        ok = streq(m->pairs[i].key, keys[k]);
                if (!ok) {
                        char buf[256];
                        snprintf(buf, sizeof buf, "%s.%s", path, m->pairs[i].key);
                        return bad(d, m->pairs[i].key_node, buf, "unknown field");
                }
        }
        return 0;
}

/* A required string; non-empty unless `empty_ok`. NULs inside are refused. */
static int get_str(dec *d, const dp_doc_node *m, const char *key, bool empty_ok, const char *path, char **ret) {
        const dp_doc_node *n = dp_doc_get(m, key);
        char buf[256];
        snprintf(buf, sizeof buf, "%s.%s", path, key);
        if (!n) return bad(d, m, buf, "required");
        if (n->type != DP_DOC_SCALAR || dp_doc_kind(n) != DP_DOC_STR) return bad(d, n, buf, "expected a string");
        if (strlen(n->str) != n->len) return bad(d, n, buf, "NUL in string");
        if (!n->len && !empty_ok) return bad(d, n, buf, "empty");
        if (!(*ret = dp_strndup(n->str, n->len))) return oom(d);
        return 0;
}

static int get_bool(dec *d, const dp_doc_node *m, const char *key, const char *path, bool *ret) {
        const dp_doc_node *n = dp_doc_get(m, key);
        char buf[256];
        snprintf(buf, sizeof buf, "%s.%s", path, key);
        if (!n) return bad(d, m, buf, "required");
        if (dp_doc_kind(n) != DP_DOC_BOOL || dp_doc_get_bool(n, ret, NULL) < 0)
                return bad(d, n, buf, "expected a boolean");
        return 0;
}

/* A required list of maps or strings, at most `max` long. */
static int get_seq(dec *d, const dp_doc_node *m, const char *key, size_t max, const char *path,
                   const dp_doc_node **ret) {
        const dp_doc_node *n = dp_doc_get(m, key);
        char buf[256];
        snprintf(buf, sizeof buf, "%s.%s", path, key);
        if (!n) return bad(d, m, buf, "required");
        if (n->type != DP_DOC_SEQ) return bad(d, n, buf, "expected a list");
        if (n->n > max) return dp_error_set(d->err, -E2BIG, "%s: %s: more than %zu entries", d->source, buf, max);
        *ret = n;
        return 0;
}

static int get_strv(dec *d, const dp_doc_node *m, const char *key, const char *path, char ***ret, size_t *ret_n) {
        const dp_doc_node *n = NULL;
        int r = get_seq(d, m, key, DP_NODE_DRA_STATE_MAX_STRINGS, path, &n);
        if (r < 0) return r;
        if (!(*ret = calloc(n->n + 1, sizeof(char *)))) return oom(d);
        for (size_t i = 0; i < n->n; i++) {
                char p[280];
                snprintf(p, sizeof p, "%s.%s[%zu]", path, key, i);
                const dp_doc_node *x = n->items[i];
                if (x->type != DP_DOC_SCALAR || dp_doc_kind(x) != DP_DOC_STR || strlen(x->str) != x->len)
                        return bad(d, x, p, "expected a string");
                if (!((*ret)[i] = dp_strndup(x->str, x->len))) return oom(d);
                (*ret_n)++;
        }
        return 0;
}

static const char *const claim_keys[] = {"uid",     "namespace",     "name", "driver",  "state",
                                         "skipped", "skipUnprepare", "pods", "devices", NULL};
static const char *const pod_keys[] = {"uid", "namespace", "name", NULL};
static const char *const dev_keys[] = {"pool", "device", "requests", "cdiDeviceIDs", NULL};

static int decode_claim(dec *d, const dp_doc_node *m, const char *path, dp_node_dra_claim *c) {
        char *state = NULL;
        int r = only_keys(d, m, path, claim_keys);
        if (r >= 0) r = get_str(d, m, "uid", false, path, &c->uid);
        if (r >= 0) r = get_str(d, m, "namespace", true, path, &c->ns);
        if (r >= 0) r = get_str(d, m, "name", true, path, &c->name);
        if (r >= 0) r = get_str(d, m, "driver", false, path, &c->driver);
        if (r >= 0) r = get_str(d, m, "state", false, path, &state);
        if (r >= 0 && !streq(state, "prepared") && !streq(state, "preparing"))
                r = bad(d, dp_doc_get(m, "state"), path, "state: expected prepared or preparing");
        if (r >= 0) c->phase = streq(state, "prepared") ? DP_NODE_DRA_PREPARED : DP_NODE_DRA_PREPARING;
        free(state);
        if (r >= 0) r = get_bool(d, m, "skipped", path, &c->skipped);
        if (r >= 0) r = get_bool(d, m, "skipUnprepare", path, &c->skip_unprepare);
        const dp_doc_node *pods = NULL, *devs = NULL;
        if (r >= 0) r = get_seq(d, m, "pods", DP_NODE_DRA_STATE_MAX_PODS, path, &pods);
        if (r >= 0) r = get_seq(d, m, "devices", DP_NODE_DRA_STATE_MAX_DEVICES, path, &devs);
        if (r < 0) return r;
        if (!(c->pods = calloc(pods->n + 1, sizeof *c->pods)) || !(c->devs = calloc(devs->n + 1, sizeof *c->devs)))
                return oom(d);
        for (size_t i = 0; i < pods->n; i++) {
                char p[256];
                snprintf(p, sizeof p, "%s.pods[%zu]", path, i);
                dp_node_dra_pod *x = &c->pods[c->n_pods++];
                const dp_doc_node *n = pods->items[i];
                r = only_keys(d, n, p, pod_keys);
                if (r >= 0) r = get_str(d, n, "uid", false, p, &x->uid);
                if (r >= 0) r = get_str(d, n, "namespace", true, p, &x->ns);
                if (r >= 0) r = get_str(d, n, "name", true, p, &x->name);
                if (r < 0) return r;
                for (size_t k = 0; k < i; k++)
                        if (streq(c->pods[k].uid, x->uid)) return bad(d, n, p, "duplicate pod uid");
        }
        for (size_t i = 0; i < devs->n; i++) {
                char p[256];
                snprintf(p, sizeof p, "%s.devices[%zu]", path, i);
                dp_node_dra_device *x = &c->devs[c->n_devs++];
                const dp_doc_node *n = devs->items[i];
                r = only_keys(d, n, p, dev_keys);
                if (r >= 0) r = get_str(d, n, "pool", true, p, &x->pool);
                if (r >= 0) r = get_str(d, n, "device", true, p, &x->device);
                if (r >= 0) r = get_strv(d, n, "requests", p, &x->requests, &x->n_requests);
                if (r >= 0) r = get_strv(d, n, "cdiDeviceIDs", p, &x->cdi, &x->n_cdi);
                if (r < 0) return r;
        }
        return 0;
}

static const char *const root_keys[] = {"checksum", "data", NULL};
static const char *const data_keys[] = {"version", "rebuild", "claims", "unknownDrivers", NULL};
static const char *const unknown_keys[] = {"driver", "reason", NULL};

static int decode(dec *d, const dp_doc_node *root, dp_node_dra_state *s, char **ret_sum) {
        int r = only_keys(d, root, "", root_keys);
        if (r >= 0) r = get_str(d, root, "checksum", false, "", ret_sum);
        if (r < 0) return r;
        const dp_doc_node *data = dp_doc_get(root, "data");
        if ((r = only_keys(d, data, "data", data_keys)) < 0) return r;
        int64_t v = 0;
        const dp_doc_node *vn = dp_doc_get(data, "version");
        if (!vn || dp_doc_kind(vn) != DP_DOC_INT || dp_doc_get_int64(vn, &v, NULL) < 0 ||
            v != DP_NODE_DRA_STATE_VERSION)
                return bad(d, vn ? vn : data, "data.version", "unsupported version");
        if ((r = get_bool(d, data, "rebuild", "data", &s->rebuild)) < 0) return r;
        const dp_doc_node *claims = NULL, *unk = NULL;
        if ((r = get_seq(d, data, "claims", DP_NODE_DRA_STATE_MAX_CLAIMS, "data", &claims)) < 0 ||
            (r = get_seq(d, data, "unknownDrivers", DP_NODE_DRA_STATE_MAX_DRIVERS, "data", &unk)) < 0)
                return r;
        if (claims->n && DP_GROW(s->claims, s->cap, claims->n) < 0) return oom(d);
        for (size_t i = 0; i < claims->n; i++) {
                char p[64];
                snprintf(p, sizeof p, "data.claims[%zu]", i);
                s->n_claims++;
                if ((r = decode_claim(d, claims->items[i], p, &s->claims[i])) < 0) return r;
                for (size_t j = 0; j < i; j++)
                        if (streq(s->claims[j].uid, s->claims[i].uid) &&
                            streq(s->claims[j].driver, s->claims[i].driver))
                                return bad(d, claims->items[i], p, "duplicate uid and driver");
        }
        if (!(s->unknown = calloc(unk->n + 1, sizeof *s->unknown))) return oom(d);
        for (size_t i = 0; i < unk->n; i++) {
                char p[64];
                snprintf(p, sizeof p, "data.unknownDrivers[%zu]", i);
                dp_node_dra_unknown *x = &s->unknown[s->n_unknown++];
                const dp_doc_node *n = unk->items[i];
                r = only_keys(d, n, p, unknown_keys);
                if (r >= 0) r = get_str(d, n, "driver", false, p, &x->driver);
                if (r >= 0) r = get_str(d, n, "reason", true, p, &x->reason);
                if (r < 0) return r;
                for (size_t j = 0; j < i; j++)
                        if (streq(s->unknown[j].driver, x->driver)) return bad(d, n, p, "duplicate driver");
        }
        return 0;
}

int dp_node_dra_state_decode(const char *buf, size_t len, const char *source, dp_node_dra_state **ret, dp_error *err) {
        assert_return(buf && ret, -EINVAL);
        dec d = {source ? source : "node DRA state", err};
        if (len > DP_NODE_DRA_STATE_MAX_INPUT)
                return dp_error_set(err, -E2BIG, "%s: larger than %u bytes", d.source, DP_NODE_DRA_STATE_MAX_INPUT);
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = dp_doc_set_new();
        _cleanup_(dp_node_dra_state_freep) dp_node_dra_state *s = dp_node_dra_state_new();
        if (!set || !s) return oom(&d);
        dp_error pe = DP_ERROR_INIT;
        int r = dp_doc_parse(set, buf, len, d.source, &pe);
        if (r == -ENOMEM) return oom(&d);
        if (r < 0 || dp_doc_count(set) != 1)
                return dp_error_set(err, -EBADMSG, "%s: node DRA state corrupt: %s", d.source,
                                    r < 0 ? dp_error_msg(&pe) : "expected one JSON document");
        _cleanup_free_ char *sum = NULL;
        if ((r = decode(&d, dp_doc_root(set, 0), s, &sum)) < 0) return r;
        /* The checksum covers what was decoded, re-encoded: any change shows. */
        _cleanup_(dp_doc_set_freep) dp_doc_set *again = dp_doc_set_new();
        dp_doc_node *node = NULL;
        char want[17];
        if (!again || data_digest(s, again, &node, want) < 0) return oom(&d);
        if (!streq(sum, want))
                return dp_error_set(err, -EBADMSG,
                                    "%s: node DRA state corrupt: checksum mismatch: file says %s, "
                                    "content hashes to %s",
                                    d.source, sum, want);
        *ret = TAKE_PTR(s);
        return 0;
}
