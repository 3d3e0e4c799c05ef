/* SPDX-License-Identifier: Apache-2.0
 * sim-evict.c — the device taint eviction controller of a simulated run
 * (kube-controller-manager's DeviceTaintManager): a device taint with effect
 * NoExecute, published in a ResourceSlice (a device failure the Timeline
 * configured NoExecute) or added by a DeviceTaintRule, evicts every pod
 * whose allocated claims hold that device and do not tolerate the taint; a
 * toleration with tolerationSeconds delays the eviction that long after the
 * taint appeared. Evicted pods are deleted (their claims released and
 * deallocated when no other pod uses them) and the report says why. */
#include <stdio.h>

#include "cel/slice-device.h"
#include "sched/fmt.h"
#include "sched/sim-internal.h"

/* When each NoExecute taint was first seen on a device: "driver/pool/device
 * key=value" -> ms. Kept while the taint is there, so tolerationSeconds
 * counts from its appearance, as the controller does from timeAdded. */
struct sim_taint_seen {
        char *key;
        int64_t since_ms;
        bool live;
};

void sim_taints_seen_free(sim_run *r) {
        for (size_t i = 0; i < r->n_taints_seen; i++)
                free(r->taints_seen[i].key);
        free(r->taints_seen);
        r->taints_seen = NULL;
        r->n_taints_seen = 0;
}

static int64_t taint_since(sim_run *r, const char *key, bool *oom) {
        for (size_t i = 0; i < r->n_taints_seen; i++)
                if (streq(r->taints_seen[i].key, key)) {
                        r->taints_seen[i].live = true;
                        return r->taints_seen[i].since_ms;
                }
        sim_taint_seen *v = realloc(r->taints_seen, (r->n_taints_seen + 1) * sizeof(*v));
        char *k = dp_strdup(key);
        if (!v || !k) {
                if (v) r->taints_seen = v;
                free(k);
                *oom = true;
                return r->now;
        }
        r->taints_seen = v;
        v[r->n_taints_seen++] = (sim_taint_seen){.key = k, .since_ms = r->now, .live = true};
        return r->now;
}

/* One CEL selector against a published device; a compile or runtime error
 * is no match (as the allocator treats a rule's selectors). */
static bool cel_selects(const char *expr, const dp_resource_slice *s, const dp_device *d, bool *oom) {
        if (!expr || !s || !d) return false;
        _cleanup_free_ dp_cel_attribute *attrs = calloc(d->n_attributes + 1, sizeof(*attrs));
        _cleanup_free_ dp_cel_capacity *caps = calloc(d->n_capacity + 1, sizeof(*caps));
        if (!attrs || !caps) {
                *oom = true;
                return false;
        }
        dp_cel_device cd;
        if (dp_cel_device_from_slice(s, d, attrs, caps, &cd) < 0) return false;
        _cleanup_(dp_cel_program_freep) dp_cel_program *prog = NULL;
        dp_error err = DP_ERROR_INIT;
        dp_cel_result res = {0};
        int r = dp_cel_compile(expr, NULL, &prog, &err);
        if (r >= 0) r = dp_cel_eval(prog, &cd, &res, &err);
        if (r == -ENOMEM) *oom = true;
        return r >= 0 && res.matches;
}

/* DeviceTaintRule spec.deviceSelector: every field set must match (driver,
 * pool, device; the v1alpha3 deviceClassName's selectors and CEL selectors
 * against the published device); no selector selects nothing. */
static bool rule_selects(sim_run *r, const dp_device_taint_rule *tr, const dp_device_allocation_result *d,
                         const dp_resource_slice *s, const dp_device *dev, bool *oom) {
        if (!tr->has_device_selector) return false;
        if (tr->driver && !streq_ptr(tr->driver, d->driver)) return false;
        if (tr->pool && !streq_ptr(tr->pool, d->pool)) return false;
        if (tr->device && !streq_ptr(tr->device, d->device)) return false;
        if (tr->device_class_name) {
                const dp_device_class *cls =
                        dp_store_get(r->store, DP_KIND_DEVICE_CLASS, NULL, tr->device_class_name, NULL).device_class;
                if (!cls) return false;
                for (size_t i = 0; i < cls->n_selectors; i++)
                        if (!cel_selects(cls->selectors[i].cel_expression, s, dev, oom)) return false;
        }
        for (size_t i = 0; i < tr->n_selectors; i++)
                if (!cel_selects(tr->selectors[i].cel_expression, s, dev, oom)) return false;
        return true;
}

static const dp_device *slice_device(sim_run *r, const dp_device_allocation_result *d,
                                     const dp_resource_slice **ret_slice) {
        size_t i = 0;
        dp_object o;
        *ret_slice = NULL;
        while (dp_store_next(r->store, DP_KIND_RESOURCE_SLICE, &i, &o, NULL)) {
                const dp_resource_slice *s = o.slice;
                if (!streq_ptr(s->driver, d->driver) || !streq_ptr(s->pool_name, d->pool)) continue;
                for (size_t k = 0; k < s->n_devices; k++)
                        if (streq_ptr(s->devices[k].name, d->device)) {
                                *ret_slice = s;
                                return &s->devices[k];
                        }
        }
        return NULL;
}

/* One NoExecute taint on a device the pod holds: evict now (*when = now),
 * later (*when > now) or never (*when unchanged). */
static void consider(sim_run *r, const dp_device_allocation_result *d, const dp_taint *x, const char *origin,
                     int64_t *when, char *why, size_t why_size, bool *oom) {
        if (!x->effect || !streq(x->effect, "NoExecute")) return;
        char key[1024];
        dp_fmt(key, sizeof(key), "%s/%s/%s %s=%s", d->driver, d->pool, d->device, x->key, x->value ? x->value : "");
        int64_t since = taint_since(r, key, oom);
        int64_t at = -1;
        bool tolerated = false;
        for (size_t t = 0; t < d->n_tolerations; t++) {
                if (!dp_toleration_tolerates(&d->tolerations[t], x)) continue;
                if (!d->tolerations[t].has_toleration_seconds) {
                        tolerated = true;
                        at = -1;
                        break;
                }
                int64_t s = DP_MAX(d->tolerations[t].toleration_seconds, 0);
                int64_t due = since + s * 1000;
                if (!tolerated || due < at) at = due;
                tolerated = true;
        }
        if (tolerated && at < 0) return;
        if (!tolerated) at = r->now;
        if (*when >= 0 && *when <= at) return;
        *when = at;
        const char *eq = x->value && x->value[0] ? "=" : "", *val = x->value ? x->value : "";
        if (tolerated)
                dp_fmt(why, why_size, "device %s/%s/%s has taint %s%s%s:NoExecute (%s), tolerated for %" PRId64 "s",
                       d->driver, d->pool, d->device, x->key, eq, val, origin, (at - since) / 1000);
        else
                dp_fmt(why, why_size, "device %s/%s/%s has taint %s%s%s:NoExecute (%s), not tolerated", d->driver,
                       d->pool, d->device, x->key, eq, val, origin);
}

/* The earliest time a NoExecute taint evicts the pod, -1 when none does. */
static int64_t pod_eviction(sim_run *r, const sim_pod *sp, char *why, size_t why_size, bool *oom) {
        sim_claim_iter it = sim_pod_claims(r, sp);
        if (!it.pod || !it.pod->node_name) return -1;
        int64_t when = -1;
        const char *cn;
        for (const dp_resource_claim *c; (c = sim_claim_next(&it, &cn));) {
                for (size_t i = 0; i < c->allocation->n_results; i++) {
                        const dp_device_allocation_result *d = &c->allocation->results[i];
                        const dp_resource_slice *sl = NULL;
                        const dp_device *dev = slice_device(r, d, &sl);
                        for (size_t t = 0; dev && t < dev->n_taints; t++)
                                consider(r, d, &dev->taints[t], "in its ResourceSlice", &when, why, why_size, oom);
                        size_t j = 0;
                        dp_object o;
                        while (dp_store_next(r->store, DP_KIND_DEVICE_TAINT_RULE, &j, &o, NULL)) {
                                if (!rule_selects(r, o.taint_rule, d, sl, dev, oom)) continue;
                                char origin[320];
                                dp_fmt(origin, sizeof(origin), "DeviceTaintRule %s", o.taint_rule->meta.name);
                                consider(r, d, &o.taint_rule->taint, origin, &when, why, why_size, oom);
                        }
                }
        }
        return when;
}

/* sim-internal.h */
int sim_evict_now(sim_run *r, sim_pod *sp, const char *why) {
        free(sp->evict_msg);
        if (!(sp->evict_msg = dp_strdup(why))) return -ENOMEM;
        dp_strbuf_printf(&r->log, "t=%" PRId64 "s %s evicted: %s\n", r->now / 1000, sp->key, why);
        int rr = sim_delete_pod(r, sp, false);
        if (rr >= 0) sp->evicted = true;
        return rr;
}

/* Whether any NoExecute device taint exists at all (most runs have none:
 * then no pod needs looking at). */
static bool any_no_execute(sim_run *r) {
        for (size_t i = 0; i < r->n_nodes; i++)
                if (r->nodes[i].n_noexec) return true;
        size_t j = 0;
        dp_object o;
        while (dp_store_next(r->store, DP_KIND_DEVICE_TAINT_RULE, &j, &o, NULL))
                if (streq_ptr(o.taint_rule->taint.effect, "NoExecute")) return true;
        j = 0;
        while (dp_store_next(r->store, DP_KIND_RESOURCE_SLICE, &j, &o, NULL))
                for (size_t k = 0; k < o.slice->n_devices; k++)
                        for (size_t t = 0; t < o.slice->devices[k].n_taints; t++)
                                if (streq_ptr(o.slice->devices[k].taints[t].effect, "NoExecute")) return true;
        return false;
}

int sim_evict(sim_run *r) {
        for (size_t i = 0; i < r->n_taints_seen; i++)
                r->taints_seen[i].live = false;
        if (!any_no_execute(r)) {
                for (size_t i = 0; i < r->n_pods; i++)
                        r->pods[i].evict_at = -1;
                sim_taints_seen_free(r);
                return 0;
        }
        bool oom = false;
        int n = 0;
        for (size_t i = 0; i < r->n_pods; i++) {
                sim_pod *sp = &r->pods[i];
                sp->evict_at = -1;
                if (!sp->created || sp->deleted) continue;
                char why[2048];
                int64_t at = pod_eviction(r, sp, why, sizeof(why), &oom);
                if (oom) return -ENOMEM;
                if (at < 0) continue;
                if (at > r->now) {
                        sp->evict_at = at;
                        continue;
                }
                int rr = sim_evict_now(r, sp, why);
                if (rr < 0) return rr;
                n++;
        }
        /* taints no longer there start afresh when they come back */
        size_t k = 0;
        for (size_t i = 0; i < r->n_taints_seen; i++) {
                if (r->taints_seen[i].live)
                        r->taints_seen[k++] = r->taints_seen[i];
                else
                        free(r->taints_seen[i].key);
        }
        r->n_taints_seen = k;
        return n;
}

int64_t sim_evict_next(const sim_run *r) {
        int64_t t = -1;
        for (size_t i = 0; i < r->n_pods; i++) {
                const sim_pod *sp = &r->pods[i];
                if (sp->created && !sp->deleted && sp->evict_at > r->now && (t < 0 || sp->evict_at < t))
                        t = sp->evict_at;
        }
        return t;
}
