/* SPDX-License-Identifier: Apache-2.0
 * The node's status document (docs/v1-node-path.md has the format). */
#include <stdio.h>

#include "doc/builder.h"
#include "node/node-internal.h"
#include "proto/proto.h"

static const char *holder_of(const dp_kubelet *n, const char *resource, const char *id, char *buf, size_t size) {
        for (size_t i = 0; i < dp_devmgr_n_allocs(n->dm); i++) {
                const dp_nm_alloc *a = dp_devmgr_alloc_at(n->dm, i);
                if (!streq(a->resource, resource)) continue;
                for (size_t k = 0; k < a->n_ids; k++) {
                        if (!streq(a->ids[k].id, id)) continue;
                        const char *who = a->pod_uid;
                        for (size_t p = 0; p < n->n_pods; p++)
                                if (streq(n->pods[p]->pod->uid, a->pod_uid)) {
                                        snprintf(buf, size, "%s/%s/%s", n->pods[p]->pod->ns, n->pods[p]->pod->name,
                                                 a->container);
                                        return buf;
                                }
                        snprintf(buf, size, "%s/%s", who, a->container);
                        return buf;
                }
        }
        return NULL;
}

static void add_envs(dp_doc_builder *b, dp_doc_node *entry, const dp_nm_alloc *a) {
        if (!a->resp) return;
        ProtobufCMessage *m = NULL;
        if (dp_proto_unpack(&v1beta1__container_allocate_response__descriptor, a->resp, a->resp_len, &m) < 0) return;
        const V1beta1__ContainerAllocateResponse *r = (const V1beta1__ContainerAllocateResponse *)m;
        dp_doc_node *envs = dp_doc_b_map(b);
        /* map entries in key order so the output is deterministic */
        size_t n = r->n_envs;
        bool *done = calloc(n + 1, sizeof *done);
        if (!done) dp_doc_b_check(b, NULL);
        for (size_t round = 0; b->r >= 0 && round < n; round++) {
                size_t best = SIZE_MAX;
                for (size_t i = 0; i < n; i++)
                        if (!done[i] && r->envs[i]->key &&
                            (best == SIZE_MAX || strcmp(r->envs[i]->key, r->envs[best]->key) < 0))
                                best = i;
                if (best == SIZE_MAX) break;
                done[best] = true;
                dp_doc_b_put_str(b, envs, r->envs[best]->key, r->envs[best]->value ? r->envs[best]->value : "");
        }
        dp_doc_b_put(b, entry, "envs", envs);
        if (r->n_cdi_devices) {
                dp_doc_node *cdi = dp_doc_b_seq(b);
                for (size_t i = 0; i < r->n_cdi_devices; i++)
                        dp_doc_b_push(b, cdi, dp_doc_b_str(b, r->cdi_devices[i]->name ? r->cdi_devices[i]->name : ""));
                dp_doc_b_put(b, entry, "cdiDevices", cdi);
        }
        if (r->n_devices) {
                dp_doc_node *specs = dp_doc_b_seq(b);
                for (size_t i = 0; i < r->n_devices; i++)
                        dp_doc_b_push(b, specs,
                                      dp_doc_b_str(b, r->devices[i]->host_path ? r->devices[i]->host_path : ""));
                dp_doc_b_put(b, entry, "deviceNodes", specs);
        }
        if (r->n_annotations) {
                dp_doc_node *ann = dp_doc_b_map(b);
                for (size_t i = 0; i < r->n_annotations; i++)
                        dp_doc_b_put_str(b, ann, r->annotations[i]->key ? r->annotations[i]->key : "",
                                         r->annotations[i]->value ? r->annotations[i]->value : "");
                dp_doc_b_put(b, entry, "annotations", ann);
        }
        free(done);
        protobuf_c_message_free_unpacked(m, NULL);
}

/* "withheld": the devices of a resource nobody gets while pods whose
 * holdings cannot be proven are there (recover.c). */
static void add_withheld(const dp_kubelet *n, dp_doc_builder *b, dp_doc_node *m, const char *resource) {
        const char **ids = NULL;
        if (dp_devmgr_withheld_ids(n->dm, resource, &ids) < 0) {
                dp_doc_b_check(b, NULL);
                return;
        }
        dp_doc_node *seq = dp_doc_b_seq(b);
        for (size_t i = 0; ids[i]; i++)
                dp_doc_b_push(b, seq, dp_doc_b_str(b, ids[i]));
        free(ids);
        dp_doc_b_put(b, m, "withheld", seq);
}

static const dp_node_pod *pod_of(const dp_kubelet *n, const char *uid) {
        for (size_t p = 0; p < n->n_pods; p++)
                if (streq(n->pods[p]->pod->uid, uid)) return n->pods[p]->pod;
        return NULL;
}

/* "unproven": the pods whose holdings the node cannot prove, per resource
 * (read back by dp_node_status_salvage when the checkpoint is lost again). */
static void build_unproven(const dp_kubelet *n, dp_doc_builder *b, dp_doc_node *root) {
        if (!dp_devmgr_n_unproven(n->dm)) return;
        dp_doc_node *list = dp_doc_b_seq(b);
        for (size_t i = 0; b->r >= 0 && i < dp_devmgr_n_unproven(n->dm); i++) {
                const dp_nm_unproven *u = dp_devmgr_unproven_at(n->dm, i);
                const dp_node_pod *p = pod_of(n, u->pod_uid);
                dp_doc_node *m = dp_doc_b_map(b);
                dp_doc_b_put_str(b, m, "uid", u->pod_uid);
                dp_doc_b_put_str(b, m, "namespace", p ? p->ns : NULL);
                dp_doc_b_put_str(b, m, "name", p ? p->name : NULL);
                dp_doc_b_put_str(b, m, "resource", u->resource);
                add_withheld(n, b, m, u->resource);
                dp_doc_b_push(b, list, m);
        }
        dp_doc_b_put(b, root, "unproven", list);
}

static dp_doc_node *device_node(const dp_kubelet *n, dp_doc_builder *b, const dp_nm_resource *res,
                                const dp_nm_device *d) {
        dp_doc_node *dm = dp_doc_b_map(b);
        dp_doc_b_put_str(b, dm, "id", d->id);
        dp_doc_b_put_str(b, dm, "health", d->healthy && res->connected ? "Healthy" : "Unhealthy");
        dp_doc_node *numa = dp_doc_b_seq(b);
        for (size_t q = 0; q < d->n_numa; q++)
                dp_doc_b_push(b, numa, dp_doc_b_int(b, d->numa[q]));
        dp_doc_b_put(b, dm, "numa", numa);
        char buf[512];
        dp_doc_b_put_str(b, dm, "holder", holder_of(n, res->name, d->id, buf, sizeof buf));
        return dm;
}

static void build_resources(const dp_kubelet *n, dp_doc_builder *b, dp_doc_node *root) {
        dp_doc_node *list = dp_doc_b_seq(b);
        for (size_t i = 0; b->r >= 0 && i < dp_devmgr_n_resources(n->dm); i++) {
                const dp_nm_resource *res = dp_devmgr_resource_at(n->dm, i);
                dp_doc_node *m = dp_doc_b_map(b);
                dp_doc_b_put_str(b, m, "name", res->name);
                dp_doc_b_put_uint(b, m, "capacity", dp_devmgr_capacity(n->dm, res->name));
                dp_doc_b_put_uint(b, m, "allocatable", dp_devmgr_allocatable(n->dm, res->name));
                dp_doc_b_put_uint(b, m, "inUse", dp_devmgr_n_in_use(n->dm, res->name));
                dp_doc_b_put_str(b, m, "plugin",
                                 res->connected  ? "connected"
                                 : res->endpoint ? "disconnected"
                                                 : "none");
                dp_doc_b_put_str(b, m, "endpoint", res->endpoint);
                if (dp_devmgr_is_withheld(n->dm, res->name)) add_withheld(n, b, m, res->name);
                dp_doc_node *devs = dp_doc_b_seq(b);
                for (size_t k = 0; b->r >= 0 && k < res->n_devices; k++)
                        dp_doc_b_push(b, devs, device_node(n, b, res, &res->devices[k]));
                dp_doc_b_put(b, m, "devices", devs);
                dp_doc_b_push(b, list, m);
        }
        dp_doc_b_put(b, root, "resources", list);
}

/* One device request of a container: what it asked, the ids it holds, what
 * the plugin answered. */
static dp_doc_node *request_node(const dp_kubelet *n, dp_doc_builder *b, const dp_node_pod *p,
                                 const dp_node_container *c, size_t k) {
        dp_doc_node *e = dp_doc_b_map(b);
        dp_doc_b_put_str(b, e, "resource", c->req[k].resource);
        dp_doc_b_put_uint(b, e, "requested", c->req[k].count);
        const dp_nm_alloc *a = dp_devmgr_alloc(n->dm, p->uid, c->name, c->req[k].resource);
        dp_doc_node *ids = dp_doc_b_seq(b);
        const char **u = NULL;
        if (a && dp_nm_alloc_ids(a, &u) >= 0)
                for (size_t q = 0; u[q]; q++)
                        dp_doc_b_push(b, ids, dp_doc_b_str(b, u[q]));
        free(u);
        dp_doc_b_put(b, e, "ids", ids);
        if (a && b->r >= 0) add_envs(b, e, a);
        return e;
}

static dp_doc_node *pod_node(const dp_kubelet *n, dp_doc_builder *b, const pod_entry *pe) {
        const dp_node_pod *p = pe->pod;
        dp_doc_node *m = dp_doc_b_map(b);
        dp_doc_b_put_str(b, m, "namespace", p->ns);
        dp_doc_b_put_str(b, m, "name", p->name);
        dp_doc_b_put_str(b, m, "uid", p->uid);
        dp_doc_b_put_str(b, m, "manifest", p->source ? p->source : "");
        dp_doc_b_put_str(b, m, "phase", node_pod_phase_name(pe->phase));
        dp_doc_b_put_uint(b, m, "attempts", pe->attempts);
        dp_doc_b_put_uint(b, m, "allocateCalls", pe->allocate_calls);
        dp_doc_b_put_str(b, m, "message", pe->message);
        dp_doc_node *ctrs = dp_doc_b_seq(b);
        for (size_t i = 0; b->r >= 0 && i < p->n_containers; i++) {
                const dp_node_container *c = &p->containers[i];
                dp_doc_node *cm = dp_doc_b_map(b);
                dp_doc_b_put_str(b, cm, "name", c->name);
                dp_doc_node *devs = dp_doc_b_seq(b);
                for (size_t k = 0; b->r >= 0 && k < c->n_req; k++)
                        dp_doc_b_push(b, devs, request_node(n, b, p, c, k));
                dp_doc_b_put(b, cm, "devices", devs);
                dp_doc_b_push(b, ctrs, cm);
        }
        dp_doc_b_put(b, m, "containers", ctrs);
        return m;
}

int node_status_build(const dp_kubelet *n, bool running, dp_doc_set *s, dp_doc_node **ret) {
        dp_doc_builder b = DP_DOC_BUILDER_INIT(s);
        dp_doc_node *root = dp_doc_b_map(&b);
        dp_doc_b_put_str(&b, root, "node", n->node_name);
        dp_doc_b_put_str(&b, root, "state", running ? "running" : "stopped");
        dp_doc_b_put_int(&b, root, "pid", getpid());
        dp_doc_b_put_uint(&b, root, "generation", n->generation);
        dp_doc_b_put_uint(&b, root, "registrations", n->registrations);
        dp_doc_b_put_str(&b, root, "checkpointError", n->checkpoint_error);
        dp_doc_b_put_str(&b, root, "checkpointWriteError", n->ckpt_write_error);
        build_resources(n, &b, root);
        build_unproven(n, &b, root);
        dp_doc_node *pods = dp_doc_b_seq(&b);
        for (size_t i = 0; b.r >= 0 && i < n->n_pods; i++)
                dp_doc_b_push(&b, pods, pod_node(n, &b, n->pods[i]));
        dp_doc_b_put(&b, root, "pods", pods);
        dp_doc_node *me = dp_doc_b_seq(&b);
        for (size_t i = 0; b.r >= 0 && i < n->n_merrs; i++) {
                dp_doc_node *m = dp_doc_b_map(&b);
                dp_doc_b_put_str(&b, m, "file", n->merrs[i].file ? n->merrs[i].file : "");
                dp_doc_b_put_str(&b, m, "message", n->merrs[i].message ? n->merrs[i].message : "");
                dp_doc_b_push(&b, me, m);
        }
        dp_doc_b_put(&b, root, "manifestErrors", me);
        if (b.r < 0 || dp_node_dra_status(n->dra, s, root) < 0) return -ENOMEM;
        *ret = root;
        return 0;
}
