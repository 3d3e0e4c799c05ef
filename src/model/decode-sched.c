/* SPDX-License-Identifier: Apache-2.0
 *
 * decode-sched.c — what kube-scheduler's queue and filters read beyond the
 * resources: PriorityClass objects, a pod's preemptionPolicy and
 * schedulingGates, containers' host ports, and the volumes that need
 * binding (not modelled: kept as names for a warning, never dropped
 * silently).
 */
#include <inttypes.h>

#include "base/strbuf.h"
#include "base/strv.h"
#include "model/decode-internal.h"

/* ---- PriorityClass ---- */

static int get_preemption_policy(dctx *c, const dp_doc_node *v, char **ret) {
        int r = get_str(c, v, ret);
        if (r < 0 || !*ret) return r;
        if (!streq(*ret, "PreemptLowerPriority") && !streq(*ret, "Never"))
                return dfail(c, v, -EINVAL, "must be PreemptLowerPriority or Never, got \"%.100s\"", *ret);
        return 0;
}

int decode_priority_class(dctx *c, const dp_doc_node *root, dp_priority_class *pc) {
        static const char *const top_level[] = {"apiVersion", "kind", "metadata", "description", NULL};
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "value")) r = get_int32(c, v, &pc->value);
                      else if (streq(k, "globalDefault")) r = get_bool(c, v, &pc->global_default);
                      else if (streq(k, "preemptionPolicy")) r = get_preemption_policy(c, v, &pc->preemption_policy););
        return 0;
}

/* ---- pod fields ---- */

static int decode_gate(dctx *c, const dp_doc_node *n, void *elem) {
        char **name = elem;
        DECODE_FIELDS(c, n, k, v, if (streq(k, "name")) r = get_str(c, v, name););
        if (!*name || !**name) return dfail(c, n, -EINVAL, "name: required");
        return 0;
}

/* Volume sources the scheduler's volume plugins act on (VolumeBinding,
 * VolumeRestrictions, VolumeZone, NodeVolumeLimits); the others (emptyDir,
 * configMap, secret, projected, hostPath...) do not change placement. */
static const char *const binding_sources[] = {"persistentVolumeClaim",
                                              "ephemeral",
                                              "csi",
                                              "gcePersistentDisk",
                                              "awsElasticBlockStore",
                                              "azureDisk",
                                              "azureFile",
                                              "cinder",
                                              "iscsi",
                                              "rbd",
                                              "fc",
                                              "portworxVolume",
                                              NULL};

static int add_unmodelled(dctx *c, dp_pod *p, const char *what) {
        if (dp_strv_push_n(&p->unmodelled, &p->n_unmodelled, what) < 0)
                return dp_error_set(c->err, -ENOMEM, "out of memory");
        return 0;
}

static int decode_volumes(dctx *c, const dp_doc_node *n, dp_pod *p) {
        int r = expect_seq(c, n);
        if (r <= 0) return r;
        for (size_t i = 0; i < n->n; i++) {
                const dp_doc_node *vol = n->items[i];
                if (!vol || vol->type != DP_DOC_MAP) continue;
                for (size_t k = 0; k < vol->n; k++) {
                        if (!in_list(vol->pairs[k].key, binding_sources)) continue;
                        char what[160];
                        snprintf(what, sizeof(what), "spec.volumes[%zu].%s", i, vol->pairs[k].key);
                        if ((r = add_unmodelled(c, p, what)) < 0) return r;
                }
        }
        return 0;
}

bool pod_sched_field(const char *key) {
        return streq(key, "preemptionPolicy") || streq(key, "schedulingGates") || streq(key, "volumes");
}

int decode_pod_sched_field(dctx *c, const char *key, const dp_doc_node *v, dp_pod *p) {
        if (streq(key, "preemptionPolicy")) return get_preemption_policy(c, v, &p->preemption_policy);
        if (streq(key, "schedulingGates"))
                return get_seq(c, v, (void **)&p->scheduling_gates, &p->n_scheduling_gates, sizeof(char *),
                               decode_gate);
        return decode_volumes(c, v, p);
}

/* ---- container ports: only those asking for a port of the node ---- */

typedef struct port_fields {
        int32_t container_port, host_port;
        char *host_ip, *protocol;
} port_fields;

static const decode_field port_field_table[] = {
        INT32_FIELD("containerPort", port_fields, container_port),
        INT32_FIELD("hostPort", port_fields, host_port),
        STR_FIELD("hostIP", port_fields, host_ip),
        STR_FIELD("protocol", port_fields, protocol),
        SKIP_FIELD("name"),
        {},
};

/* n is a map: get_seq refuses null entries */
static int decode_port(dctx *c, const dp_doc_node *n, void *elem) {
        port_fields *f = elem;
        int r = get_fields(c, n, f, port_field_table);
        if (r < 0) return r;
        if (f->host_port < 0 || f->host_port > 65535)
                return dfail(c, n, -EINVAL, "hostPort: must be between 0 and 65535, got %" PRId32, f->host_port);
        if (f->protocol && !streq(f->protocol, "TCP") && !streq(f->protocol, "UDP") && !streq(f->protocol, "SCTP"))
                return dfail(c, n, -EINVAL, "protocol: must be TCP, UDP or SCTP, got \"%.40s\"", f->protocol);
        return 0;
}

int decode_container_ports(dctx *c, const dp_doc_node *n, dp_container *ct) {
        port_fields *v = NULL;
        size_t nv = 0;
        int r = get_seq(c, n, (void **)&v, &nv, sizeof(*v), decode_port);
        for (size_t i = 0; r >= 0 && i < nv; i++) {
                if (v[i].host_port == 0) continue;
                if (!ct->host_ports && !(ct->host_ports = calloc(nv, sizeof(*ct->host_ports)))) {
                        r = dp_error_set(c->err, -ENOMEM, "out of memory");
                        break;
                }
                dp_container_port *hp = &ct->host_ports[ct->n_host_ports++];
                hp->host_port = v[i].host_port;
                hp->host_ip = TAKE_PTR(v[i].host_ip);
                hp->protocol = TAKE_PTR(v[i].protocol);
        }
        for (size_t i = 0; i < nv; i++) {
                free(v[i].host_ip);
                free(v[i].protocol);
        }
        free(v);
        return r;
}

/* ---- PodDisruptionBudget (policy/v1) ---- */

/* IntOrString: an integer, or a string "N%" (0..100). */
static int get_int_or_percent(dctx *c, const dp_doc_node *v, dp_int_or_percent *ret) {
        if (dp_doc_is_null(v)) return 0;
        if (dp_doc_kind(v) == DP_DOC_INT) {
                int r = get_int32(c, v, &ret->value);
                if (r < 0) return r;
                if (ret->value < 0) return dfail(c, v, -EINVAL, "must be greater than or equal to 0");
                ret->set = true;
                return 0;
        }
        _cleanup_free_ char *s = NULL;
        int r = get_str(c, v, &s);
        if (r < 0 || !s) return r;
        char *end = NULL;
        long pct = strtol(s, &end, 10);
        if (end == s || !end || !streq(end, "%") || pct < 0 || pct > 100)
                return dfail(c, v, -EINVAL, "must be an integer or a percentage from 0%% to 100%%, got \"%.40s\"", s);
        *ret = (dp_int_or_percent){.set = true, .percent = true, .value = (int32_t)pct};
        return 0;
}

static int decode_pdb_spec(dctx *c, const dp_doc_node *n, dp_pod_disruption_budget *b) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "selector")) r = decode_pod_label_selector(c, v, &b->selector);
                      else if (streq(k, "minAvailable")) r = get_int_or_percent(c, v, &b->min_available);
                      else if (streq(k, "maxUnavailable")) r = get_int_or_percent(c, v, &b->max_unavailable);
                      else if (streq(k, "unhealthyPodEvictionPolicy")) r = 0;);
        if (b->min_available.set && b->max_unavailable.set)
                return dfail(c, n, -EINVAL, "minAvailable and maxUnavailable cannot be both set");
        return 0;
}

/* status.disruptedPods: pod name -> time; only the names matter here. */
static int get_disrupted(dctx *c, const dp_doc_node *n, dp_pod_disruption_budget *b) {
        int r = expect_map(c, n);
        if (r <= 0) return r;
        if (n->n > DP_PDB_DISRUPTED_PODS_MAX)
                return dfail(c, n, -E2BIG, "more than %d entries", DP_PDB_DISRUPTED_PODS_MAX);
        b->disrupted_pods = calloc(n->n + 1, sizeof(char *));
        if (!b->disrupted_pods) return dp_error_set(c->err, -ENOMEM, "out of memory");
        for (size_t i = 0; i < n->n; i++) {
                if (!(b->disrupted_pods[i] = dp_strdup(n->pairs[i].key)))
                        return dp_error_set(c->err, -ENOMEM, "out of memory");
                b->n_disrupted_pods++;
        }
        return 0;
}

static const char *const pdb_status_ignored[] = {"observedGeneration", "currentHealthy", "desiredHealthy",
                                                 "expectedPods",       "conditions",     NULL};

static int decode_pdb_status(dctx *c, const dp_doc_node *n, dp_pod_disruption_budget *b) {
        DECODE_FIELDS(c, n, k, v, if (streq(k, "disruptionsAllowed")) r = get_int32(c, v, &b->disruptions_allowed);
                      else if (streq(k, "disruptedPods")) r = get_disrupted(c, v, b);
                      else if (in_list(k, pdb_status_ignored)) r = 0;);
        return 0;
}

int decode_pod_disruption_budget(dctx *c, const dp_doc_node *root, dp_pod_disruption_budget *b) {
        static const char *const top_level[] = {"apiVersion", "kind", "metadata", NULL};
        DECODE_FIELDS(c, root, k, v, if (in_list(k, top_level)) r = 0;
                      else if (streq(k, "spec")) r = decode_pdb_spec(c, v, b);
                      else if (streq(k, "status")) r = decode_pdb_status(c, v, b););
        return 0;
}
