/* SPDX-License-Identifier: Apache-2.0
 * The DevicePlugin service of one resource: GetDevicePluginOptions,
 * ListAndWatch, GetPreferredAllocation, Allocate, PreStartContainer. The
 * decisions are devices/v1.h's; this file turns them into messages. */
#include <stdio.h>

#include "agent/agent-internal.h"
#include "base/log.h"
#include "proto/proto.h"

static const dp_v1_resource *plugin_resource(const plugin *p) { return dp_v1_plan_find(p->agent->plan, p->resource); }

/* ---- ListAndWatch ------------------------------------------------------------- */

/* A device held through V2 (a prepared claim, not admin access) or whose
 * state is unknown leaves V1 while it is so: listed Unhealthy rather than
 * omitted, so the kubelet keeps counting it in capacity (it is installed)
 * but not in allocatable, and never offers it to GetPreferredAllocation or
 * Allocate (docs/dra-driver.md, "V2-held devices leave V1"). */
static bool withdrawn(const dp_agent *a, const char *id) {
        return a->ledger && dp_ledger_withdrawn(a->ledger, id, DP_LEDGER_V1);
}

/* FNV-1a over the withdrawn positions: what changed since the last send. */
static uint64_t withdrawn_sig(const dp_agent *a, const dp_v1_resource *r) {
        uint64_t h = 0xcbf29ce484222325ull;
        for (size_t i = 0; r && a->ledger && i < r->n_devices; i++)
                if (withdrawn(a, r->devices[i].id)) {
                        h ^= (uint64_t)i + 1;
                        h *= 0x100000001b3ull;
                }
        return h;
}

static int pack_list(const dp_agent *a, const dp_v1_resource *r, uint8_t **ret, size_t *ret_len) {
        size_t n = r ? r->n_devices : 0;
        V1beta1__Device *devs = calloc(n + 1, sizeof *devs);
        V1beta1__Device **ptrs = calloc(n + 1, sizeof *ptrs);
        V1beta1__TopologyInfo *topo = calloc(n + 1, sizeof *topo);
        V1beta1__NUMANode *numa = calloc(n + 1, sizeof *numa);
        V1beta1__NUMANode **numa_ptrs = calloc(n + 1, sizeof *numa_ptrs);
        int ret_code = -ENOMEM;
        if (!devs || !ptrs || !topo || !numa || !numa_ptrs) goto out;
        for (size_t i = 0; i < n; i++) {
                const dp_v1_device *d = &r->devices[i];
                devs[i] = (V1beta1__Device)V1BETA1__DEVICE__INIT;
                devs[i].id = d->id;
                devs[i].health = (char *)dp_health_to_string(withdrawn(a, d->id) ? DP_HEALTH_UNHEALTHY : d->health);
                if (d->numa_node >= 0) {
                        numa[i] = (V1beta1__NUMANode)V1BETA1__NUMANODE__INIT;
                        numa[i].id = d->numa_node;
                        numa_ptrs[i] = &numa[i];
                        topo[i] = (V1beta1__TopologyInfo)V1BETA1__TOPOLOGY_INFO__INIT;
                        topo[i].nodes = &numa_ptrs[i];
                        topo[i].n_nodes = 1;
                        devs[i].topology = &topo[i];
                }
                ptrs[i] = &devs[i];
        }
        V1beta1__ListAndWatchResponse resp = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
        resp.devices = ptrs;
        resp.n_devices = n;
        ret_code = dp_proto_pack(&resp.base, ret, ret_len);
out:
        dp_free_many(devs, ptrs, topo, numa, numa_ptrs);
        return ret_code;
}

static void on_stream_cancel(dp_grpc_call *call, int status, void *ud) {
        plugin *p = ud;
        dp_grpc_streams_remove(&p->streams, call);
        dp_grpc_call_finish(call, status, NULL);
}

static void publish(plugin *p) {
        const dp_v1_resource *r = plugin_resource(p);
        uint8_t *buf = NULL;
        size_t len = 0;
        uint64_t sig = withdrawn_sig(p->agent, r);
        if (pack_list(p->agent, r, &buf, &len) < 0) {
                log_error("ListAndWatch %s: out of memory", p->resource);
                return;
        }
        size_t dropped = dp_grpc_streams_send(&p->streams, NULL, buf, len, "stream dropped");
        if (dropped)
                log_warning("ListAndWatch %s: dropped %zu stream(s) that could not take the list", p->resource,
                            dropped);
        if (r) p->sent_generation = r->generation;
        p->sent_withdrawn = sig;
        free(buf);
}

void agent_publish_all(dp_agent *a) {
        for (size_t i = 0; i < a->n_plugins; i++) {
                plugin *p = a->plugins[i];
                const dp_v1_resource *r = plugin_resource(p);
                if (!r || (r->generation == p->sent_generation && withdrawn_sig(a, r) == p->sent_withdrawn)) continue;
                size_t held = 0;
                for (size_t k = 0; k < r->n_devices; k++)
                        held += withdrawn(a, r->devices[k].id);
                log_info("%s: %zu of %zu devices healthy, %zu held through DRA or unknown, sending the list to %zu "
                         "watcher(s)",
                         p->resource, dp_v1_resource_count_healthy(r), dp_v1_resource_count(r), held, p->streams.n);
                publish(p);
        }
}

static void on_list_and_watch(dp_grpc_call *call, void *ud) {
        plugin *p = ud;
        if (dp_grpc_streams_add(&p->streams, call) < 0) {
                dp_grpc_call_finish(call, DP_GRPC_RESOURCE_EXHAUSTED, "out of memory");
                return;
        }
        dp_grpc_call_set_cancel_handler(call, on_stream_cancel, p);
        const dp_v1_resource *r = plugin_resource(p);
        uint8_t *buf = NULL;
        size_t len = 0;
        if (pack_list(p->agent, r, &buf, &len) < 0 || dp_grpc_call_send(call, buf, len) < 0) {
                dp_grpc_streams_remove(&p->streams, call);
                dp_grpc_call_finish(call, DP_GRPC_INTERNAL, "cannot send the device list");
        }
        free(buf);
        log_debug("ListAndWatch %s: watcher added (%zu open)", p->resource, p->streams.n);
}

/* ---- unary methods --------------------------------------------------------------- */

static void on_get_options(dp_grpc_call *call, void *ud) {
        V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
        o.pre_start_required = true;
        o.get_preferred_allocation_available = true;
        dp_grpc_call_reply_msg(call, &o.base);
}

static V1beta1__ContainerAllocateResponse *to_proto(const dp_v1_container_response *r) {
        V1beta1__ContainerAllocateResponse *m = calloc(1, sizeof *m);
        if (!m) return NULL;
        *m = (V1beta1__ContainerAllocateResponse)V1BETA1__CONTAINER_ALLOCATE_RESPONSE__INIT;
        m->envs = calloc(r->n_envs + 1, sizeof *m->envs);
        m->annotations = calloc(r->n_annotations + 1, sizeof *m->annotations);
        m->mounts = calloc(r->n_mounts + 1, sizeof *m->mounts);
        m->devices = calloc(r->n_devices + 1, sizeof *m->devices);
        m->cdi_devices = calloc(r->n_cdi_devices + 1, sizeof *m->cdi_devices);
        if (!m->envs || !m->annotations || !m->mounts || !m->devices || !m->cdi_devices) return m; /* caller checks */
        for (size_t i = 0; i < r->n_envs; i++) {
                V1beta1__ContainerAllocateResponse__EnvsEntry *e = calloc(1, sizeof *e);
                if (!e) return m;
                *e = (V1beta1__ContainerAllocateResponse__EnvsEntry)
                        V1BETA1__CONTAINER_ALLOCATE_RESPONSE__ENVS_ENTRY__INIT;
                e->key = r->envs[i].key;
                e->value = r->envs[i].value;
                m->envs[m->n_envs++] = e;
        }
        for (size_t i = 0; i < r->n_annotations; i++) {
                V1beta1__ContainerAllocateResponse__AnnotationsEntry *e = calloc(1, sizeof *e);
                if (!e) return m;
                *e = (V1beta1__ContainerAllocateResponse__AnnotationsEntry)
                        V1BETA1__CONTAINER_ALLOCATE_RESPONSE__ANNOTATIONS_ENTRY__INIT;
                e->key = r->annotations[i].key;
                e->value = r->annotations[i].value;
                m->annotations[m->n_annotations++] = e;
        }
        for (size_t i = 0; i < r->n_mounts; i++) {
                V1beta1__Mount *e = calloc(1, sizeof *e);
                if (!e) return m;
                *e = (V1beta1__Mount)V1BETA1__MOUNT__INIT;
                e->container_path = r->mounts[i].container_path;
                e->host_path = r->mounts[i].host_path;
                e->read_only = r->mounts[i].read_only;
                m->mounts[m->n_mounts++] = e;
        }
        for (size_t i = 0; i < r->n_devices; i++) {
                V1beta1__DeviceSpec *e = calloc(1, sizeof *e);
                if (!e) return m;
                *e = (V1beta1__DeviceSpec)V1BETA1__DEVICE_SPEC__INIT;
                e->container_path = r->devices[i].container_path;
                e->host_path = r->devices[i].host_path;
                e->permissions = r->devices[i].permissions;
                m->devices[m->n_devices++] = e;
        }
        for (size_t i = 0; i < r->n_cdi_devices; i++) {
                V1beta1__CDIDevice *e = calloc(1, sizeof *e);
                if (!e) return m;
                *e = (V1beta1__CDIDevice)V1BETA1__CDIDEVICE__INIT;
                e->name = r->cdi_devices[i];
                m->cdi_devices[m->n_cdi_devices++] = e;
        }
        return m;
}

/* Frees the wrapper structs only; strings belong to the dp_v1 response. */
static void proto_free(V1beta1__ContainerAllocateResponse *m) {
        if (!m) return;
        for (size_t i = 0; i < m->n_envs; i++)
                free(m->envs[i]);
        for (size_t i = 0; i < m->n_annotations; i++)
                free(m->annotations[i]);
        for (size_t i = 0; i < m->n_mounts; i++)
                free(m->mounts[i]);
        for (size_t i = 0; i < m->n_devices; i++)
                free(m->devices[i]);
        for (size_t i = 0; i < m->n_cdi_devices; i++)
                free(m->cdi_devices[i]);
        dp_free_many(m->envs, m->annotations, m->mounts, m->devices, m->cdi_devices);
        free(m);
}

static bool proto_complete(const V1beta1__ContainerAllocateResponse *m, const dp_v1_container_response *r) {
        return m && m->n_envs == r->n_envs && m->n_annotations == r->n_annotations && m->n_mounts == r->n_mounts &&
               m->n_devices == r->n_devices && m->n_cdi_devices == r->n_cdi_devices;
}

int agent_allocate_reply(const dp_agent *a, const char *resource, const V1beta1__AllocateRequest *req, uint8_t **ret,
                         size_t *ret_len, dp_error *err) {
        size_t n = req->n_container_requests;
        if (n > DP_V1_REQUEST_MAX)
                return dp_error_set(err, -E2BIG, "%zu container requests: more than %d", n, DP_V1_REQUEST_MAX);
        dp_v1_container_response **rs = calloc(n + 1, sizeof *rs);
        V1beta1__ContainerAllocateResponse **ms = calloc(n + 1, sizeof *ms);
        int r = rs && ms ? 0 : dp_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const V1beta1__ContainerAllocateRequest *cr = req->container_requests[i];
                r = dp_v1_allocate(a->plan, a->set, a->cfg, resource, (const char *const *)cr->devices_ids,
                                   cr->n_devices_ids, &rs[i], err);
                if (r >= 0) {
                        ms[i] = to_proto(rs[i]);
                        if (!proto_complete(ms[i], rs[i])) r = dp_error_set(err, -ENOMEM, "out of memory");
                }
        }
        if (r >= 0) {
                V1beta1__AllocateResponse resp = V1BETA1__ALLOCATE_RESPONSE__INIT;
                resp.container_responses = ms;
                resp.n_container_responses = n;
                r = dp_proto_pack(&resp.base, ret, ret_len);
                if (r < 0) dp_error_set(err, r, "cannot encode the reply");
        }
        for (size_t i = 0; ms && rs && i < n; i++) {
                proto_free(ms[i]);
                dp_v1_container_response_free(rs[i]);
        }
        dp_free_many(ms, rs);
        return r;
}

static void on_allocate(dp_grpc_call *call, void *ud) {
        plugin *p = ud;
        dp_error e = DP_ERROR_INIT;
        uint8_t *buf = NULL;
        size_t len = 0;
        const V1beta1__AllocateRequest *req = (const V1beta1__AllocateRequest *)dp_grpc_call_request_msg(call);
        int r = agent_allocate_reply(p->agent, p->resource, req, &buf, &len, &e);
        if (r >= 0) {
                r = agent_v1_hold(p->agent, p->resource, req, &e);
                if (r < 0) {
                        free(buf);
                        buf = NULL;
                }
        }
        if (r < 0) {
                log_warning("Allocate %s refused: %s", p->resource, dp_error_msg(&e));
                dp_grpc_call_finish(call, r == -ENOMEM ? DP_GRPC_RESOURCE_EXHAUSTED : DP_GRPC_UNKNOWN,
                                    dp_error_msg(&e));
                return;
        }
        p->agent->metrics.v1_allocations += req->n_container_requests;
        if (dp_grpc_call_send(call, buf, len) < 0)
                dp_grpc_call_finish(call, DP_GRPC_UNAVAILABLE, "cannot send");
        else
                dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
        free(buf);
}

int agent_preferred_reply(const dp_agent *a, const char *resource, const V1beta1__PreferredAllocationRequest *req,
                          uint8_t **ret, size_t *ret_len, dp_error *err) {
        size_t n = req->n_container_requests;
        if (n > DP_V1_REQUEST_MAX)
                return dp_error_set(err, -E2BIG, "%zu container requests: more than %d", n, DP_V1_REQUEST_MAX);
        char ***ids = calloc(n + 1, sizeof *ids);
        const char **avail = NULL;
        V1beta1__ContainerPreferredAllocationResponse *cr = calloc(n + 1, sizeof *cr);
        V1beta1__ContainerPreferredAllocationResponse **crp = calloc(n + 1, sizeof *crp);
        int r = ids && cr && crp ? 0 : dp_error_set(err, -ENOMEM, "out of memory");
        for (size_t i = 0; r >= 0 && i < n; i++) {
                const V1beta1__ContainerPreferredAllocationRequest *q = req->container_requests[i];
                if (q->allocation_size <= 0) {
                        r = dp_error_set(err, -EINVAL, "container_requests[%zu].allocation_size: must be positive", i);
                        break;
                }
                /* devices held through V2 are never preferred */
                free(avail);
                if (!(avail = calloc(q->n_available_deviceids + 1, sizeof *avail))) {
                        r = dp_error_set(err, -ENOMEM, "out of memory");
                        break;
                }
                size_t na = 0;
                for (size_t k = 0; k < q->n_available_deviceids; k++)
                        if (!withdrawn(a, q->available_deviceids[k])) avail[na++] = q->available_deviceids[k];
                r = dp_v1_preferred_allocation(a->plan, a->set, a->cfg, resource, avail, na,
                                               (const char *const *)q->must_include_deviceids,
                                               q->n_must_include_deviceids, (size_t)q->allocation_size, &ids[i], err);
                if (r < 0) break;
                cr[i] = (V1beta1__ContainerPreferredAllocationResponse)
                        V1BETA1__CONTAINER_PREFERRED_ALLOCATION_RESPONSE__INIT;
                cr[i].deviceids = ids[i];
                while (ids[i][cr[i].n_deviceids])
                        cr[i].n_deviceids++;
                crp[i] = &cr[i];
        }
        if (r >= 0) {
                V1beta1__PreferredAllocationResponse resp = V1BETA1__PREFERRED_ALLOCATION_RESPONSE__INIT;
                resp.container_responses = crp;
                resp.n_container_responses = n;
                r = dp_proto_pack(&resp.base, ret, ret_len);
                if (r < 0) dp_error_set(err, r, "cannot encode the reply");
        }
        for (size_t i = 0; ids && i < n; i++)
                dp_v1_ids_free(ids[i]);
        dp_free_many(ids, avail, cr, crp);
        return r;
}

static void on_preferred(dp_grpc_call *call, void *ud) {
        plugin *p = ud;
        dp_error e = DP_ERROR_INIT;
        uint8_t *buf = NULL;
        size_t len = 0;
        int r = agent_preferred_reply(p->agent, p->resource,
                                      (const V1beta1__PreferredAllocationRequest *)dp_grpc_call_request_msg(call), &buf,
                                      &len, &e);
        if (r < 0) {
                dp_grpc_call_finish(call, r == -ENOMEM ? DP_GRPC_RESOURCE_EXHAUSTED : DP_GRPC_UNKNOWN,
                                    dp_error_msg(&e));
                return;
        }
        if (dp_grpc_call_send(call, buf, len) < 0)
                dp_grpc_call_finish(call, DP_GRPC_UNAVAILABLE, "cannot send");
        else
                dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
        free(buf);
}

/* PreStartContainer: the last moment to refuse a device that turned
 * unhealthy after Allocate. */
static void on_prestart(dp_grpc_call *call, void *ud) {
        plugin *p = ud;
        const V1beta1__PreStartContainerRequest *req =
                (const V1beta1__PreStartContainerRequest *)dp_grpc_call_request_msg(call);
        const dp_v1_resource *r = plugin_resource(p);
        for (size_t i = 0; i < req->n_devices_ids; i++) {
                const dp_v1_device *d = r ? dp_v1_resource_find(r, req->devices_ids[i]) : NULL;
                if (!d) {
                        dp_grpc_call_finishf(call, DP_GRPC_UNKNOWN, "%s: unknown device %s", p->resource,
                                             req->devices_ids[i]);
                        return;
                }
                if (d->health != DP_HEALTH_HEALTHY) {
                        dp_grpc_call_finishf(call, DP_GRPC_UNKNOWN, "%s: device %s is unhealthy", p->resource,
                                             req->devices_ids[i]);
                        return;
                }
        }
        V1beta1__PreStartContainerResponse resp = V1BETA1__PRE_START_CONTAINER_RESPONSE__INIT;
        dp_grpc_call_reply_msg(call, &resp.base);
}

int agent_service_add_methods(plugin *p) {
        static const struct {
                const char *path;
                dp_grpc_kind kind;
                const ProtobufCMessageDescriptor *req;
                dp_grpc_handler_fn fn;
        } m[] = {
                {"/v1beta1.DevicePlugin/GetDevicePluginOptions", DP_GRPC_UNARY, &v1beta1__empty__descriptor,
                 on_get_options},
                {"/v1beta1.DevicePlugin/ListAndWatch", DP_GRPC_SERVER_STREAMING, &v1beta1__empty__descriptor,
                 on_list_and_watch},
                {"/v1beta1.DevicePlugin/GetPreferredAllocation", DP_GRPC_UNARY,
                 &v1beta1__preferred_allocation_request__descriptor, on_preferred},
                {"/v1beta1.DevicePlugin/Allocate", DP_GRPC_UNARY, &v1beta1__allocate_request__descriptor, on_allocate},
                {"/v1beta1.DevicePlugin/PreStartContainer", DP_GRPC_UNARY,
                 &v1beta1__pre_start_container_request__descriptor, on_prestart},
        };
        for (size_t i = 0; i < ELEMENTSOF(m); i++) {
                int r = dp_grpc_server_add_method(p->srv, m[i].path, m[i].kind, m[i].req, m[i].fn, p);
                if (r < 0) return r;
        }
        return 0;
}
