/* SPDX-License-Identifier: Apache-2.0
 * The device manager's ledger: resources with their device lists, the
 * allocation entries, and reservations for Allocate calls in flight. Sizes
 * are small (a node has tens of resources and hundreds of containers), so
 * everything is a plain array searched linearly. */
#include <stdio.h>

#include "base/strbuf.h"
#include "node/devmgr.h"

typedef struct reservation {
        char *pod_uid, *container, *resource;
        char **ids;
        size_t n_ids;
} reservation;

struct dp_devmgr {
        dp_nm_resource *res;
        size_t n_res, cap_res;
        dp_nm_alloc *allocs;
        size_t n_allocs, cap_allocs;
        reservation *resv;
        size_t n_resv, cap_resv;
        dp_nm_unproven *unproven;
        size_t n_unproven, cap_unproven;
};

static void device_done(dp_nm_device *d) { dp_free_many(d->id, d->numa); }

static void resource_done(dp_nm_resource *r) {
        dp_free_many(r->name, r->endpoint);
        for (size_t i = 0; i < r->n_devices; i++)
                device_done(&r->devices[i]);
        free(r->devices);
}

dp_nm_alloc *dp_nm_alloc_done(dp_nm_alloc *a) {
        if (!a) return NULL;
        dp_free_many(a->pod_uid, a->container, a->resource);
        for (size_t i = 0; i < a->n_ids; i++)
                free(a->ids[i].id);
        dp_free_many(a->ids, a->resp);
        *a = (dp_nm_alloc){0};
        return NULL;
}

static void reservation_done(reservation *r) {
        dp_free_many(r->pod_uid, r->container, r->resource);
        for (size_t i = 0; i < r->n_ids; i++)
                free(r->ids[i]);
        free(r->ids);
}

static void unproven_done(dp_nm_unproven *u) {
        dp_free_many(u->pod_uid, u->resource);
        for (size_t i = 0; i < u->n_ids; i++)
                free(u->ids[i]);
        free(u->ids);
}

dp_devmgr *dp_devmgr_new(void) { return calloc(1, sizeof(dp_devmgr)); }

dp_devmgr *dp_devmgr_free(dp_devmgr *m) {
        if (!m) return NULL;
        for (size_t i = 0; i < m->n_res; i++)
                resource_done(&m->res[i]);
        for (size_t i = 0; i < m->n_allocs; i++)
                dp_nm_alloc_done(&m->allocs[i]);
        for (size_t i = 0; i < m->n_resv; i++)
                reservation_done(&m->resv[i]);
        for (size_t i = 0; i < m->n_unproven; i++)
                unproven_done(&m->unproven[i]);
        dp_free_many(m->unproven, m->res, m->allocs, m->resv);
        free(m);
        return NULL;
}

/* ---- resource names ------------------------------------------------------ */

static bool is_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }
static bool is_lower_alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

/* DNS-1123 subdomain: lower-case labels of [a-z0-9-] starting and ending
 * alphanumeric, joined by '.', at most 253 characters. */
static bool is_dns_subdomain(const char *s, size_t len) {
        if (len == 0 || len > 253) return false;
        size_t label = 0;
        for (size_t i = 0; i < len; i++) {
                char c = s[i];
                if (c == '.') {
                        if (label == 0 || s[i - 1] == '-') return false;
                        label = 0;
                } else if (c == '-') {
                        if (label == 0) return false;
                        label++;
                } else if (is_lower_alnum(c)) {
                        label++;
                } else {
                        return false;
                }
        }
        return label > 0 && s[len - 1] != '-';
}

/* Qualified-name name part: [A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?, <= 63. */
static bool is_qualified_name_part(const char *s) {
        size_t len = strlen(s);
        if (len == 0 || len > 63) return false;
        if (!is_alnum(s[0]) || !is_alnum(s[len - 1])) return false;
        for (size_t i = 0; i < len; i++)
                if (!is_alnum(s[i]) && s[i] != '-' && s[i] != '_' && s[i] != '.') return false;
        return true;
}

bool dp_devmgr_is_extended_resource_name(const char *name) {
        if (!name || !strchr(name, '/')) return false;
        if (strstr(name, "kubernetes.io/")) return false;
        if (startswith(name, "requests.")) return false;
        /* "requests." + name as a qualified name: prefix/name with exactly one '/'. */
        const char *slash = strchr(name, '/');
        if (strchr(slash + 1, '/')) return false;
        size_t plen = strlen("requests.") + (size_t)(slash - name);
        char prefix[300];
        if (plen >= sizeof prefix) return false;
        snprintf(prefix, sizeof prefix, "requests.%.*s", (int)(slash - name), name);
        return is_dns_subdomain(prefix, plen) && is_qualified_name_part(slash + 1);
}

int dp_devmgr_validate_register(const char *version, const char *resource_name, const char *endpoint, dp_error *err) {
        if (!version || !streq(version, DP_NODE_API_VERSION))
                return dp_error_set(
                        err, -EINVAL,
                        "requested API version \"%s\" is not supported by kubelet. Supported versions are [\"%s\"]",
                        version ? version : "", DP_NODE_API_VERSION);
        if (!dp_devmgr_is_extended_resource_name(resource_name))
                return dp_error_set(err, -EINVAL, "the ResourceName \"%s\" is invalid",
                                    resource_name ? resource_name : "");
        /* The endpoint is joined to the plugin directory: a bare file name
         * only, so a plugin cannot point the node elsewhere. */
        if (!endpoint || !*endpoint || strchr(endpoint, '/') || streq(endpoint, ".") || streq(endpoint, "..") ||
            strlen(endpoint) > 107)
                return dp_error_set(err, -EINVAL, "endpoint \"%s\" must be a socket file name in the plugin directory",
                                    endpoint ? endpoint : "");
        return 0;
}

/* ---- resources ----------------------------------------------------------- */

static dp_nm_resource *find_res(const dp_devmgr *m, const char *name) {
        for (size_t i = 0; i < m->n_res; i++)
                if (streq(m->res[i].name, name)) return &m->res[i];
        return NULL;
}

static dp_nm_resource *add_res(dp_devmgr *m, const char *name) {
        dp_nm_resource *r = find_res(m, name);
        if (r) return r;
        if (DP_GROW(m->res, m->cap_res, m->n_res + 1) < 0) return NULL;
        char *n = strdup(name);
        if (!n) return NULL;
        r = &m->res[m->n_res++];
        *r = (dp_nm_resource){.name = n};
        return r;
}

int dp_devmgr_add_known_resource(dp_devmgr *m, const char *resource) {
        assert_return(m && resource, -EINVAL);
        return add_res(m, resource) ? 0 : -ENOMEM;
}

int dp_devmgr_register(dp_devmgr *m, const char *resource, const char *endpoint, const dp_nm_options *opts) {
        assert_return(m && resource && endpoint, -EINVAL);
        char *ep = strdup(endpoint);
        if (!ep) return -ENOMEM;
        dp_nm_resource *r = add_res(m, resource);
        if (!r) {
                free(ep);
                return -ENOMEM;
        }
        free(r->endpoint);
        r->endpoint = ep;
        r->options = opts ? *opts : (dp_nm_options){0};
        r->connected = false; /* until its ListAndWatch delivers */
        r->disconnected_at_ms = 0;
        return 0;
}

int dp_devmgr_set_devices(dp_devmgr *m, const char *resource, const dp_nm_device *devs, size_t n, dp_error *err) {
        assert_return(m && resource && (devs || n == 0), -EINVAL);
        dp_nm_resource *r = find_res(m, resource);
        if (!r || !r->endpoint) return dp_error_set(err, -ENOENT, "resource %s is not registered", resource);
        if (n > DP_NODE_MAX_DEVICES)
                return dp_error_set(err, -E2BIG, "%zu devices exceed the limit of %d", n, DP_NODE_MAX_DEVICES);
        for (size_t i = 0; i < n; i++) {
                if (!devs[i].id || !*devs[i].id || strlen(devs[i].id) > DP_NODE_MAX_DEVICE_ID)
                        return dp_error_set(err, -EINVAL, "devices[%zu].ID: must be 1..%d characters", i,
                                            DP_NODE_MAX_DEVICE_ID);
                if (devs[i].n_numa > DP_NODE_MAX_NUMA_PER_DEVICE)
                        return dp_error_set(err, -E2BIG, "devices[%zu].topology.nodes: more than %d", i,
                                            DP_NODE_MAX_NUMA_PER_DEVICE);
                for (size_t j = 0; j < i; j++)
                        if (streq(devs[i].id, devs[j].id))
                                return dp_error_set(err, -EINVAL, "devices[%zu].ID: duplicate ID \"%s\"", i,
                                                    devs[i].id);
        }
        dp_nm_device *copy = calloc(n ? n : 1, sizeof *copy);
        if (!copy) return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                copy[i].id = strdup(devs[i].id);
                copy[i].healthy = devs[i].healthy;
                copy[i].n_numa = devs[i].n_numa;
                if (devs[i].n_numa) {
                        copy[i].numa = malloc(devs[i].n_numa * sizeof(int64_t));
                        if (copy[i].numa) memcpy(copy[i].numa, devs[i].numa, devs[i].n_numa * sizeof(int64_t));
                }
                if (!copy[i].id || (devs[i].n_numa && !copy[i].numa)) {
                        for (size_t j = 0; j <= i; j++)
                                device_done(&copy[j]);
                        free(copy);
                        return -ENOMEM;
                }
        }
        for (size_t i = 0; i < r->n_devices; i++)
                device_done(&r->devices[i]);
        free(r->devices);
        r->devices = copy;
        r->n_devices = n;
        r->connected = true;
        r->disconnected_at_ms = 0;
        return 0;
}

void dp_devmgr_disconnected(dp_devmgr *m, const char *resource, uint64_t now_ms) {
        dp_nm_resource *r = m ? find_res(m, resource) : NULL;
        if (!r || !r->endpoint) return;
        if (r->connected || r->disconnected_at_ms == 0) r->disconnected_at_ms = now_ms ? now_ms : 1;
        r->connected = false;
}

size_t dp_devmgr_expire(dp_devmgr *m, uint64_t now_ms, uint64_t *ret_next_ms) {
        size_t dropped = 0;
        uint64_t next = UINT64_MAX;
        for (size_t i = 0; m && i < m->n_res;) {
                dp_nm_resource *r = &m->res[i];
                if (!r->connected && r->disconnected_at_ms) {
                        uint64_t end = r->disconnected_at_ms + DP_NODE_ENDPOINT_GRACE_MS;
                        if (now_ms >= end) {
                                resource_done(r);
                                DP_REMOVE_AT(m->res, m->n_res, i);
                                dropped++;
                                continue;
                        }
                        next = DP_MIN(next, end);
                }
                i++;
        }
        if (ret_next_ms) *ret_next_ms = next;
        return dropped;
}

size_t dp_devmgr_n_resources(const dp_devmgr *m) { return m ? m->n_res : 0; }
const dp_nm_resource *dp_devmgr_resource_at(const dp_devmgr *m, size_t i) {
        return m && i < m->n_res ? &m->res[i] : NULL;
}
const dp_nm_resource *dp_devmgr_resource(const dp_devmgr *m, const char *name) {
        return m && name ? find_res(m, name) : NULL;
}

size_t dp_devmgr_capacity(const dp_devmgr *m, const char *resource) {
        const dp_nm_resource *r = dp_devmgr_resource(m, resource);
        return r ? r->n_devices : 0;
}

size_t dp_devmgr_allocatable(const dp_devmgr *m, const char *resource) {
        const dp_nm_resource *r = dp_devmgr_resource(m, resource);
        if (!r || !r->connected) return 0;
        size_t n = 0;
        for (size_t i = 0; i < r->n_devices; i++)
                n += r->devices[i].healthy;
        return n;
}

/* ---- ledger -------------------------------------------------------------- */

static dp_nm_alloc *find_alloc(const dp_devmgr *m, const char *pod, const char *ctr, const char *res) {
        for (size_t i = 0; i < m->n_allocs; i++) {
                dp_nm_alloc *a = &m->allocs[i];
                if (streq(a->pod_uid, pod) && streq(a->container, ctr) && streq(a->resource, res)) return a;
        }
        return NULL;
}

static bool alloc_has(const dp_nm_alloc *a, const char *id) {
        for (size_t i = 0; i < a->n_ids; i++)
                if (streq(a->ids[i].id, id)) return true;
        return false;
}

static size_t alloc_unique(const dp_nm_alloc *a) {
        size_t n = 0;
        for (size_t i = 0; i < a->n_ids; i++) {
                bool seen = false;
                for (size_t j = 0; j < i && !seen; j++)
                        seen = streq(a->ids[j].id, a->ids[i].id);
                n += !seen;
        }
        return n;
}

bool dp_devmgr_in_use(const dp_devmgr *m, const char *resource, const char *id) {
        if (!m) return false;
        for (size_t i = 0; i < m->n_allocs; i++)
                if (streq(m->allocs[i].resource, resource) && alloc_has(&m->allocs[i], id)) return true;
        for (size_t i = 0; i < m->n_resv; i++) {
                if (!streq(m->resv[i].resource, resource)) continue;
                for (size_t j = 0; j < m->resv[i].n_ids; j++)
                        if (streq(m->resv[i].ids[j], id)) return true;
        }
        return false;
}

size_t dp_devmgr_n_in_use(const dp_devmgr *m, const char *resource) {
        const dp_nm_resource *r = dp_devmgr_resource(m, resource);
        size_t n = 0;
        for (size_t i = 0; r && i < r->n_devices; i++)
                n += dp_devmgr_in_use(m, resource, r->devices[i].id);
        return n;
}

static int withheld_error(const dp_devmgr *m, const char *resource, dp_error *err) {
        _cleanup_strbuf_ dp_strbuf sb = DP_STRBUF_INIT;
        size_t n = 0;
        for (size_t i = 0; i < m->n_unproven; i++) {
                if (!streq(m->unproven[i].resource, resource)) continue;
                if (n < 4) dp_strbuf_printf(&sb, "%s%s", n ? ", " : "", m->unproven[i].pod_uid);
                n++;
        }
        if (n > 4) dp_strbuf_printf(&sb, " and %zu more", n - 4);
        return dp_error_set(err, -EBUSY,
                            "no %s device is handed out: the node lost its records and cannot prove which devices "
                            "pod%s %s may hold; they are withheld until %s",
                            resource, n == 1 ? "" : "s", dp_strbuf_str(&sb), n == 1 ? "it goes" : "they go");
}

int dp_devmgr_candidates(const dp_devmgr *m, const char *pod_uid, const char *container, const char *resource,
                         size_t count, size_t *ret_needed, const char ***ret_avail, dp_error *err) {
        assert_return(m && pod_uid && container && resource && ret_needed && ret_avail, -EINVAL);
        const dp_nm_resource *r = find_res(m, resource);
        const dp_nm_alloc *held = find_alloc(m, pod_uid, container, resource);
        size_t have = held ? alloc_unique(held) : 0;
        if (have > count)
                return dp_error_set(err, -EINVAL, "container %s holds %zu %s devices but now asks %zu", container, have,
                                    resource, count);
        size_t needed = count - have;
        if (needed == 0) {
                /* Sticky: what it holds stands, whether or not the plugin is back. */
                const char **none = calloc(1, sizeof *none);
                if (!none) return -ENOMEM;
                *ret_needed = 0;
                *ret_avail = none;
                return 0;
        }
        if (dp_devmgr_is_withheld(m, resource)) return withheld_error(m, resource, err);
        if (!r || !r->endpoint)
                return dp_error_set(err, -ENOENT, "unknown resource %s: no device plugin registered it", resource);
        const char **avail = calloc(r->n_devices + 1, sizeof *avail);
        if (!avail) return -ENOMEM;
        size_t n = 0;
        if (needed > 0 && r->connected)
                for (size_t i = 0; i < r->n_devices; i++)
                        if (r->devices[i].healthy && !dp_devmgr_in_use(m, resource, r->devices[i].id))
                                avail[n++] = r->devices[i].id;
        if (n < needed) {
                free(avail);
                return dp_error_set(err, -EBUSY,
                                    "requested number of devices unavailable for %s. Requested: %zu, Available: %zu",
                                    resource, needed, n);
        }
        *ret_needed = needed;
        *ret_avail = avail;
        return 0;
}

int dp_devmgr_choose(const char *const *avail, size_t needed, const char *const *preferred, size_t n_preferred,
                     const char ***ret_ids) {
        assert_return(avail && ret_ids, -EINVAL);
        size_t n_avail = 0;
        while (avail[n_avail])
                n_avail++;
        if (needed > n_avail) return -EBUSY;
        const char **out = calloc(needed + 1, sizeof *out);
        if (!out) return -ENOMEM;
        size_t n = 0;
        for (size_t p = 0; p < n_preferred && n < needed; p++) {
                if (!preferred[p]) continue;
                for (size_t i = 0; i < n_avail; i++) {
                        if (!streq(avail[i], preferred[p])) continue;
                        bool dup = false;
                        for (size_t k = 0; k < n && !dup; k++)
                                dup = out[k] == avail[i];
                        if (!dup) out[n++] = avail[i];
                        break;
                }
        }
        for (size_t i = 0; i < n_avail && n < needed; i++) {
                bool dup = false;
                for (size_t k = 0; k < n && !dup; k++)
                        dup = out[k] == avail[i];
                if (!dup) out[n++] = avail[i];
        }
        *ret_ids = out;
        return 0;
}

int dp_devmgr_reserve(dp_devmgr *m, const char *pod_uid, const char *container, const char *resource,
                      const char *const *ids) {
        assert_return(m && pod_uid && container && resource && ids, -EINVAL);
        size_t n = 0;
        while (ids[n])
                n++;
        if (DP_GROW(m->resv, m->cap_resv, m->n_resv + 1) < 0) return -ENOMEM;
        reservation r = {strdup(pod_uid), strdup(container), strdup(resource), calloc(n ? n : 1, sizeof(char *)), n};
        bool ok = r.pod_uid && r.container && r.resource && r.ids;
        for (size_t i = 0; ok && i < n; i++)
                ok = (r.ids[i] = strdup(ids[i])) != NULL;
        if (!ok) {
                reservation_done(&r);
                return -ENOMEM;
        }
        m->resv[m->n_resv++] = r;
        return 0;
}

void dp_devmgr_unreserve(dp_devmgr *m, const char *pod_uid, const char *container, const char *resource) {
        for (size_t i = 0; m && i < m->n_resv;) {
                reservation *r = &m->resv[i];
                if (streq(r->pod_uid, pod_uid) && streq(r->container, container) && streq(r->resource, resource)) {
                        reservation_done(r);
                        DP_REMOVE_AT(m->resv, m->n_resv, i);
                        continue;
                }
                i++;
        }
}

static dp_nm_alloc *ensure_alloc(dp_devmgr *m, const char *pod, const char *ctr, const char *res) {
        dp_nm_alloc *a = find_alloc(m, pod, ctr, res);
        if (a) return a;
        if (DP_GROW(m->allocs, m->cap_allocs, m->n_allocs + 1) < 0) return NULL;
        dp_nm_alloc n = {.pod_uid = strdup(pod), .container = strdup(ctr), .resource = strdup(res)};
        if (!n.pod_uid || !n.container || !n.resource) {
                dp_nm_alloc_done(&n);
                return NULL;
        }
        m->allocs[m->n_allocs] = n;
        return &m->allocs[m->n_allocs++];
}

static int alloc_add_id(dp_nm_alloc *a, int64_t numa, const char *id) {
        dp_nm_numa_id *ids = realloc(a->ids, (a->n_ids + 1) * sizeof *ids);
        if (!ids) return -ENOMEM;
        a->ids = ids;
        char *c = strdup(id);
        if (!c) return -ENOMEM;
        a->ids[a->n_ids++] = (dp_nm_numa_id){numa, c};
        return 0;
}

int dp_devmgr_commit(dp_devmgr *m, const char *pod_uid, const char *container, const char *resource,
                     const char *const *ids, const uint8_t *resp, size_t resp_len) {
        assert_return(m && pod_uid && container && resource && ids, -EINVAL);
        dp_devmgr_unreserve(m, pod_uid, container, resource);
        const dp_nm_resource *r = find_res(m, resource);
        dp_nm_alloc *a = ensure_alloc(m, pod_uid, container, resource);
        if (!a) return -ENOMEM;
        for (size_t i = 0; ids[i]; i++) {
                const dp_nm_device *d = NULL;
                for (size_t j = 0; r && j < r->n_devices && !d; j++)
                        if (streq(r->devices[j].id, ids[i])) d = &r->devices[j];
                if (d && d->n_numa) {
                        for (size_t k = 0; k < d->n_numa; k++)
                                if (alloc_add_id(a, d->numa[k], ids[i]) < 0) return -ENOMEM;
                } else if (alloc_add_id(a, -1, ids[i]) < 0) {
                        return -ENOMEM;
                }
        }
        if (resp) {
                uint8_t *c = malloc(resp_len ? resp_len : 1);
                if (!c) return -ENOMEM;
                memcpy(c, resp, resp_len);
                free(a->resp);
                a->resp = c;
                a->resp_len = resp_len;
        }
        return 0;
}

int dp_devmgr_restore(dp_devmgr *m, const dp_nm_alloc *src) {
        assert_return(m && src && src->pod_uid && src->container && src->resource, -EINVAL);
        dp_nm_alloc *a = ensure_alloc(m, src->pod_uid, src->container, src->resource);
        if (!a) return -ENOMEM;
        for (size_t i = 0; i < src->n_ids; i++)
                if (alloc_add_id(a, src->ids[i].numa, src->ids[i].id) < 0) return -ENOMEM;
        if (src->resp) {
                uint8_t *c = malloc(src->resp_len ? src->resp_len : 1);
                if (!c) return -ENOMEM;
                memcpy(c, src->resp, src->resp_len);
                free(a->resp);
                a->resp = c;
                a->resp_len = src->resp_len;
        }
        return 0;
}

size_t dp_devmgr_release_pod(dp_devmgr *m, const char *pod_uid) {
        size_t n = 0;
        for (size_t i = 0; m && i < m->n_allocs;) {
                if (streq(m->allocs[i].pod_uid, pod_uid)) {
                        dp_nm_alloc_done(&m->allocs[i]);
                        DP_REMOVE_AT(m->allocs, m->n_allocs, i);
                        n++;
                        continue;
                }
                i++;
        }
        for (size_t i = 0; m && i < m->n_resv;) {
                if (streq(m->resv[i].pod_uid, pod_uid)) {
                        reservation_done(&m->resv[i]);
                        DP_REMOVE_AT(m->resv, m->n_resv, i);
                        continue;
                }
                i++;
        }
        for (size_t i = 0; m && i < m->n_unproven;) {
                if (streq(m->unproven[i].pod_uid, pod_uid)) {
                        unproven_done(&m->unproven[i]);
                        DP_REMOVE_AT(m->unproven, m->n_unproven, i);
                        continue;
                }
                i++;
        }
        return n;
}

size_t dp_devmgr_release(dp_devmgr *m, const char *pod_uid, const char *container, const char *resource) {
        dp_nm_alloc *a = m ? find_alloc(m, pod_uid, container, resource) : NULL;
        if (!a) return 0;
        size_t i = (size_t)(a - m->allocs);
        dp_nm_alloc_done(a);
        DP_REMOVE_AT(m->allocs, m->n_allocs, i);
        return 1;
}

/* ---- unproven holdings ------------------------------------------------------ */

static dp_nm_unproven *find_unproven(const dp_devmgr *m, const char *pod_uid, const char *resource) {
        for (size_t i = 0; i < m->n_unproven; i++)
                if (streq(m->unproven[i].pod_uid, pod_uid) && streq(m->unproven[i].resource, resource))
                        return &m->unproven[i];
        return NULL;
}

static int unproven_add_id(dp_nm_unproven *u, const char *id) {
        for (size_t i = 0; i < u->n_ids; i++)
                if (streq(u->ids[i], id)) return 0;
        char **ids = realloc(u->ids, (u->n_ids + 1) * sizeof *ids);
        if (!ids) return -ENOMEM;
        u->ids = ids;
        if (!(u->ids[u->n_ids] = strdup(id))) return -ENOMEM;
        u->n_ids++;
        return 0;
}

int dp_devmgr_mark_unproven(dp_devmgr *m, const char *pod_uid, const char *resource, const char *const *ids,
                            size_t n_ids) {
        assert_return(m && pod_uid && resource && (ids || !n_ids), -EINVAL);
        dp_nm_unproven *u = find_unproven(m, pod_uid, resource);
        if (!u) {
                if (DP_GROW(m->unproven, m->cap_unproven, m->n_unproven + 1) < 0) return -ENOMEM;
                dp_nm_unproven n = {.pod_uid = strdup(pod_uid), .resource = strdup(resource)};
                if (!n.pod_uid || !n.resource) {
                        unproven_done(&n);
                        return -ENOMEM;
                }
                m->unproven[m->n_unproven] = n;
                u = &m->unproven[m->n_unproven++];
        }
        for (size_t i = 0; i < n_ids; i++)
                if (ids[i] && unproven_add_id(u, ids[i]) < 0) return -ENOMEM;
        return 0;
}

size_t dp_devmgr_n_unproven(const dp_devmgr *m) { return m ? m->n_unproven : 0; }
const dp_nm_unproven *dp_devmgr_unproven_at(const dp_devmgr *m, size_t i) {
        return m && i < m->n_unproven ? &m->unproven[i] : NULL;
}

bool dp_devmgr_is_withheld(const dp_devmgr *m, const char *resource) {
        for (size_t i = 0; m && i < m->n_unproven; i++)
                if (streq(m->unproven[i].resource, resource)) return true;
        return false;
}

static bool held_by_entry(const dp_devmgr *m, const char *resource, const char *id) {
        for (size_t i = 0; i < m->n_allocs; i++)
                if (streq(m->allocs[i].resource, resource) && alloc_has(&m->allocs[i], id)) return true;
        return false;
}

static void add_unique(const char **out, size_t *n, const char *id) {
        for (size_t k = 0; k < *n; k++)
                if (streq(out[k], id)) return;
        out[(*n)++] = id;
}

/* Is this id listed, and unhealthy, in the resource's current list? (The
 * agent lists a device a DRA claim holds as unhealthy: an unproven V1 pod
 * cannot hold it without a double hold that already happened.) */
static bool listed_unhealthy(const dp_nm_resource *r, const char *id) {
        for (size_t i = 0; r && i < r->n_devices; i++)
                if (streq(r->devices[i].id, id)) return !r->devices[i].healthy;
        return false;
}

int dp_devmgr_withheld_ids(const dp_devmgr *m, const char *resource, const char ***ret_ids) {
        assert_return(m && resource && ret_ids, -EINVAL);
        const dp_nm_resource *r = find_res(m, resource);
        size_t cap = r ? r->n_devices : 0;
        for (size_t i = 0; i < m->n_unproven; i++)
                if (streq(m->unproven[i].resource, resource)) cap += m->unproven[i].n_ids;
        const char **out = calloc(cap + 1, sizeof *out);
        if (!out) return -ENOMEM;
        size_t n = 0;
        if (dp_devmgr_is_withheld(m, resource)) {
                for (size_t i = 0; r && i < r->n_devices; i++)
                        if (r->devices[i].healthy && !held_by_entry(m, resource, r->devices[i].id))
                                add_unique(out, &n, r->devices[i].id);
                for (size_t i = 0; i < m->n_unproven; i++) {
                        const dp_nm_unproven *u = &m->unproven[i];
                        for (size_t k = 0; streq(u->resource, resource) && k < u->n_ids; k++)
                                if (!held_by_entry(m, resource, u->ids[k]) && !listed_unhealthy(r, u->ids[k]))
                                        add_unique(out, &n, u->ids[k]);
                }
        }
        *ret_ids = out;
        return 0;
}

bool dp_devmgr_withheld_known(const dp_devmgr *m) {
        for (size_t i = 0; m && i < m->n_unproven; i++) {
                const dp_nm_resource *r = find_res(m, m->unproven[i].resource);
                if (!m->unproven[i].n_ids && (!r || !r->n_devices)) return false;
        }
        return true;
}

size_t dp_devmgr_n_allocs(const dp_devmgr *m) { return m ? m->n_allocs : 0; }
const dp_nm_alloc *dp_devmgr_alloc_at(const dp_devmgr *m, size_t i) {
        return m && i < m->n_allocs ? &m->allocs[i] : NULL;
}
const dp_nm_alloc *dp_devmgr_alloc(const dp_devmgr *m, const char *pod_uid, const char *container,
                                   const char *resource) {
        return m ? find_alloc(m, pod_uid, container, resource) : NULL;
}

int dp_nm_alloc_ids(const dp_nm_alloc *a, const char ***ret_ids) {
        assert_return(a && ret_ids, -EINVAL);
        const char **out = calloc(a->n_ids + 1, sizeof *out);
        if (!out) return -ENOMEM;
        size_t n = 0;
        for (size_t i = 0; i < a->n_ids; i++) {
                bool seen = false;
                for (size_t k = 0; k < n && !seen; k++)
                        seen = streq(out[k], a->ids[i].id);
                if (!seen) out[n++] = a->ids[i].id;
        }
        *ret_ids = out;
        return 0;
}
