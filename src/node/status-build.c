/* SPDX-License-Identifier: Apache-2.0
 * The node's status document (docs/v1-node-path.md has the format). */
#include <stdio.h>

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

static int add_envs(dp_doc_set *s, dp_doc_node *entry, const dp_nm_alloc *a) {
        if (!a->resp) return 0;
        ProtobufCMessage *m = NULL;
        if (dp_proto_unpack(&v1beta1__container_allocate_response__descriptor, a->resp, a->resp_len, &m) < 0) return 0;
        const V1beta1__ContainerAllocateResponse *r = (const V1beta1__ContainerAllocateResponse *)m;
        int ret = 0;
        dp_doc_node *envs = dp_doc_new_map(s);
        /* map entries in key order so the output is deterministic */
        size_t n = r->n_envs;
        bool *done = calloc(n + 1, sizeof *done);
        if (!envs || !done) ret = -ENOMEM;
        for (size_t round = 0; ret >= 0 && round < n; round++) {
                size_t best = SIZE_MAX;
                for (size_t i = 0; i < n; i++)
                        if (!done[i] && r->envs[i]->key &&
                            (best == SIZE_MAX || strcmp(r->envs[i]->key, r->envs[best]->key) < 0))
                                best = i;
                if (best == SIZE_MAX) break;
                done[best] = true;
                ret = dp_doc_map_add(s, envs, r->envs[best]->key,
                                     dp_doc_new_str(s, r->envs[best]->value ? r->envs[best]->value : ""));
        }
        if (ret >= 0) ret = dp_doc_map_add(s, entry, "envs", envs);
        dp_doc_node *cdi = dp_doc_new_seq(s);
        for (size_t i = 0; ret >= 0 && cdi && i < r->n_cdi_devices; i++)
                ret = dp_doc_seq_add(s, cdi, dp_doc_new_str(s, r->cdi_devices[i]->name ? r->cdi_devices[i]->name : ""));
        if (ret >= 0 && r->n_cdi_devices) ret = dp_doc_map_add(s, entry, "cdiDevices", cdi);
        dp_doc_node *specs = dp_doc_new_seq(s);
        for (size_t i = 0; ret >= 0 && specs && i < r->n_devices; i++)
                ret = dp_doc_seq_add(s, specs,
                                     dp_doc_new_str(s, r->devices[i]->host_path ? r->devices[i]->host_path : ""));
        if (ret >= 0 && r->n_devices) ret = dp_doc_map_add(s, entry, "deviceNodes", specs);
        dp_doc_node *ann = dp_doc_new_map(s);
        for (size_t i = 0; ret >= 0 && ann && i < r->n_annotations; i++)
                ret = dp_doc_map_add(s, ann, r->annotations[i]->key ? r->annotations[i]->key : "",
                                     dp_doc_new_str(s, r->annotations[i]->value ? r->annotations[i]->value : ""));
        if (ret >= 0 && r->n_annotations) ret = dp_doc_map_add(s, entry, "annotations", ann);
        free(done);
        protobuf_c_message_free_unpacked(m, NULL);
        return ret;
}

/* "withheld": the devices of a resource nobody gets while pods whose
 * holdings cannot be proven are there (recover.c). */
static int add_withheld(const dp_kubelet *n, dp_doc_set *s, dp_doc_node *m, const char *resource) {
        const char **ids = NULL;
        if (dp_devmgr_withheld_ids(n->dm, resource, &ids) < 0) return -ENOMEM;
        dp_doc_node *seq = dp_doc_new_seq(s);
        int r = seq ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && ids[i]; i++)
                r = dp_doc_seq_add(s, seq, dp_doc_new_str(s, ids[i]));
        free(ids);
        return r < 0 ? r : dp_doc_map_add(s, m, "withheld", seq);
}

/* "unproven": the pods whose holdings the node cannot prove, per resource
 * (read back by dp_node_status_salvage when the checkpoint is lost again). */
static int build_unproven(const dp_kubelet *n, dp_doc_set *s, dp_doc_node *root) {
        if (!dp_devmgr_n_unproven(n->dm)) return 0;
        dp_doc_node *list = dp_doc_new_seq(s);
        int r = list ? 0 : -ENOMEM;
        for (size_t i = 0; r >= 0 && i < dp_devmgr_n_unproven(n->dm); i++) {
                const dp_nm_unproven *u = dp_devmgr_unproven_at(n->dm, i);
                dp_doc_node *m = dp_doc_new_map(s);
                r = dp_doc_map_add(s, m, "uid", dp_doc_new_str(s, u->pod_uid));
                for (size_t p = 0; r >= 0 && p < n->n_pods; p++)
                        if (streq(n->pods[p]->pod->uid, u->pod_uid)) {
                                r = dp_doc_map_add(s, m, "namespace", dp_doc_new_str(s, n->pods[p]->pod->ns));
                                if (r >= 0) r = dp_doc_map_add(s, m, "name", dp_doc_new_str(s, n->pods[p]->pod->name));
                                break;
                        }
                if (r >= 0) r = dp_doc_map_add(s, m, "resource", dp_doc_new_str(s, u->resource));
                if (r >= 0) r = add_withheld(n, s, m, u->resource);
                if (r >= 0) r = dp_doc_seq_add(s, list, m);
        }
        return r < 0 ? r : dp_doc_map_add(s, root, "unproven", list);
}

static int build_resources(const dp_kubelet *n, dp_doc_set *s, dp_doc_node *root) {
        dp_doc_node *list = dp_doc_new_seq(s);
        int r = 0;
        for (size_t i = 0; list && r >= 0 && i < dp_devmgr_n_resources(n->dm); i++) {
                const dp_nm_resource *res = dp_devmgr_resource_at(n->dm, i);
                dp_doc_node *m = dp_doc_new_map(s);
                r = dp_doc_map_add(s, m, "name", dp_doc_new_str(s, res->name));
                if (r >= 0)
                        r = dp_doc_map_add(s, m, "capacity", dp_doc_new_uint(s, dp_devmgr_capacity(n->dm, res->name)));
                if (r >= 0)
                        r = dp_doc_map_add(s, m, "allocatable",
                                           dp_doc_new_uint(s, dp_devmgr_allocatable(n->dm, res->name)));
                if (r >= 0) r = dp_doc_map_add(s, m, "inUse", dp_doc_new_uint(s, dp_devmgr_n_in_use(n->dm, res->name)));
                const char *plugin = res->connected ? "connected" : res->endpoint ? "disconnected" : "none";
                if (r >= 0) r = dp_doc_map_add(s, m, "plugin", dp_doc_new_str(s, plugin));
                if (r >= 0 && res->endpoint) r = dp_doc_map_add(s, m, "endpoint", dp_doc_new_str(s, res->endpoint));
                if (r >= 0 && dp_devmgr_is_withheld(n->dm, res->name)) r = add_withheld(n, s, m, res->name);
                dp_doc_node *devs = dp_doc_new_seq(s);
                for (size_t k = 0; devs && r >= 0 && k < res->n_devices; k++) {
                        const dp_nm_device *d = &res->devices[k];
                        dp_doc_node *dm = dp_doc_new_map(s);
                        r = dp_doc_map_add(s, dm, "id", dp_doc_new_str(s, d->id));
                        if (r >= 0)
                                r = dp_doc_map_add(
                                        s, dm, "health",
                                        dp_doc_new_str(s, d->healthy && res->connected ? "Healthy" : "Unhealthy"));
                        dp_doc_node *numa = dp_doc_new_seq(s);
                        for (size_t q = 0; numa && r >= 0 && q < d->n_numa; q++)
                                r = dp_doc_seq_add(s, numa, dp_doc_new_int(s, d->numa[q]));
                        if (r >= 0) r = dp_doc_map_add(s, dm, "numa", numa);
                        char buf[512];
                        const char *h = holder_of(n, res->name, d->id, buf, sizeof buf);
                        if (r >= 0 && h) r = dp_doc_map_add(s, dm, "holder", dp_doc_new_str(s, h));
                        if (r >= 0) r = dp_doc_seq_add(s, devs, dm);
                }
                if (r >= 0) r = dp_doc_map_add(s, m, "devices", devs);
                if (r >= 0) r = dp_doc_seq_add(s, list, m);
        }
        return r < 0 ? r : dp_doc_map_add(s, root, "resources", list);
}

static int build_pod(const dp_kubelet *n, const pod_entry *pe, dp_doc_set *s, dp_doc_node *list) {
        const dp_node_pod *p = pe->pod;
        dp_doc_node *m = dp_doc_new_map(s);
        int r = dp_doc_map_add(s, m, "namespace", dp_doc_new_str(s, p->ns));
        if (r >= 0) r = dp_doc_map_add(s, m, "name", dp_doc_new_str(s, p->name));
        if (r >= 0) r = dp_doc_map_add(s, m, "uid", dp_doc_new_str(s, p->uid));
        if (r >= 0) r = dp_doc_map_add(s, m, "manifest", dp_doc_new_str(s, p->source ? p->source : ""));
        if (r >= 0) r = dp_doc_map_add(s, m, "phase", dp_doc_new_str(s, node_pod_phase_name(pe->phase)));
        if (r >= 0) r = dp_doc_map_add(s, m, "attempts", dp_doc_new_uint(s, pe->attempts));
        if (r >= 0) r = dp_doc_map_add(s, m, "allocateCalls", dp_doc_new_uint(s, pe->allocate_calls));
        if (r >= 0 && pe->message) r = dp_doc_map_add(s, m, "message", dp_doc_new_str(s, pe->message));
        dp_doc_node *ctrs = dp_doc_new_seq(s);
        for (size_t i = 0; ctrs && r >= 0 && i < p->n_containers; i++) {
                const dp_node_container *c = &p->containers[i];
                dp_doc_node *cm = dp_doc_new_map(s);
                r = dp_doc_map_add(s, cm, "name", dp_doc_new_str(s, c->name));
                dp_doc_node *devs = dp_doc_new_seq(s);
                for (size_t k = 0; devs && r >= 0 && k < c->n_req; k++) {
                        dp_doc_node *e = dp_doc_new_map(s);
                        r = dp_doc_map_add(s, e, "resource", dp_doc_new_str(s, c->req[k].resource));
                        if (r >= 0) r = dp_doc_map_add(s, e, "requested", dp_doc_new_uint(s, c->req[k].count));
                        const dp_nm_alloc *a = dp_devmgr_alloc(n->dm, p->uid, c->name, c->req[k].resource);
                        dp_doc_node *ids = dp_doc_new_seq(s);
                        const char **u = NULL;
                        if (a && dp_nm_alloc_ids(a, &u) >= 0)
                                for (size_t q = 0; ids && r >= 0 && u[q]; q++)
                                        r = dp_doc_seq_add(s, ids, dp_doc_new_str(s, u[q]));
                        free(u);
                        if (r >= 0) r = dp_doc_map_add(s, e, "ids", ids);
                        if (r >= 0 && a) r = add_envs(s, e, a);
                        if (r >= 0) r = dp_doc_seq_add(s, devs, e);
                }
                if (r >= 0) r = dp_doc_map_add(s, cm, "devices", devs);
                if (r >= 0) r = dp_doc_seq_add(s, ctrs, cm);
        }
        if (r >= 0) r = dp_doc_map_add(s, m, "containers", ctrs);
        return r < 0 ? r : dp_doc_seq_add(s, list, m);
}

int node_status_build(const dp_kubelet *n, bool running, dp_doc_set *s, dp_doc_node **ret) {
        dp_doc_node *root = dp_doc_new_map(s);
        int r = dp_doc_map_add(s, root, "node", dp_doc_new_str(s, n->node_name));
        if (r >= 0) r = dp_doc_map_add(s, root, "state", dp_doc_new_str(s, running ? "running" : "stopped"));
        if (r >= 0) r = dp_doc_map_add(s, root, "pid", dp_doc_new_int(s, getpid()));
        if (r >= 0) r = dp_doc_map_add(s, root, "generation", dp_doc_new_uint(s, n->generation));
        if (r >= 0) r = dp_doc_map_add(s, root, "registrations", dp_doc_new_uint(s, n->registrations));
        if (r >= 0 && n->checkpoint_error)
                r = dp_doc_map_add(s, root, "checkpointError", dp_doc_new_str(s, n->checkpoint_error));
        if (r >= 0 && n->ckpt_write_error)
                r = dp_doc_map_add(s, root, "checkpointWriteError", dp_doc_new_str(s, n->ckpt_write_error));
        if (r >= 0) r = build_resources(n, s, root);
        if (r >= 0) r = build_unproven(n, s, root);
        dp_doc_node *pods = dp_doc_new_seq(s);
        for (size_t i = 0; pods && r >= 0 && i < n->n_pods; i++)
                r = build_pod(n, n->pods[i], s, pods);
        if (r >= 0) r = dp_doc_map_add(s, root, "pods", pods);
        dp_doc_node *me = dp_doc_new_seq(s);
        for (size_t i = 0; me && r >= 0 && i < n->n_merrs; i++) {
                dp_doc_node *m = dp_doc_new_map(s);
                r = dp_doc_map_add(s, m, "file", dp_doc_new_str(s, n->merrs[i].file ? n->merrs[i].file : ""));
                if (r >= 0)
                        r = dp_doc_map_add(s, m, "message",
                                           dp_doc_new_str(s, n->merrs[i].message ? n->merrs[i].message : ""));
                if (r >= 0) r = dp_doc_seq_add(s, me, m);
        }
        if (r >= 0) r = dp_doc_map_add(s, root, "manifestErrors", me);
        if (r >= 0) r = dp_node_dra_status(n->dra, s, root);
        if (r < 0) return -ENOMEM;
        *ret = root;
        return 0;
}
