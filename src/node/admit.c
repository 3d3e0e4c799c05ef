/* SPDX-License-Identifier: Apache-2.0
 * Admission of one pod: container by container, resource by resource,
 *   candidates (healthy, unheld) -> GetPreferredAllocation (if offered)
 *   -> reserve -> Allocate -> commit + checkpoint -> PreStartContainer (if
 *   required),
 * all as asynchronous calls on the plugin's channel. Any failure leaves the
 * pod Waiting on this node with exponential backoff (devices already given to
 * its containers stay with them: they are sticky). */
#include <stdio.h>

#include "base/log.h"
#include "base/strv.h"
#include "node/node-internal.h"
#include "proto/proto.h"

#define PRESTART_TIMEOUT_USEC (30ull * 1000 * 1000)

static void job_free(admit_job *j) {
        if (!j) return;
        dp_strv_free((char **)j->avail);
        dp_strv_free((char **)j->chosen);
        free(j->reply);
        free(j);
}

static const dp_node_request *job_req(const admit_job *j) { return &j->pe->pod->containers[j->ci].req[j->ri]; }

static void admit_next(dp_kubelet *n);

static void admit_fail(dp_kubelet *n, const char *fmt, ...) _printf_(2, 3);
static void admit_fail(dp_kubelet *n, const char *fmt, ...) {
        admit_job *j = n->job;
        pod_entry *pe = j->pe;
        va_list ap;
        va_start(ap, fmt);
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_strbuf_vprintf(&sb, fmt, ap);
        va_end(ap);
        free(pe->message);
        pe->message = dp_strbuf_steal(&sb);
        if (j->ci < pe->pod->n_containers && j->ri < pe->pod->containers[j->ci].n_req)
                dp_devmgr_unreserve(n->dm, pe->pod->uid, pe->pod->containers[j->ci].name, job_req(j)->resource);
        pe->attempts++;
        uint64_t delay = dp_node_backoff_ms(n->backoff_initial_ms, n->backoff_max_ms, pe->attempts);
        pe->next_try_ms = node_now_ms() + delay;
        pe->phase = POD_WAITING;
        log_warning("pod %s/%s waits: %s (attempt %u, next try in %llu ms)", pe->pod->ns, pe->pod->name,
                    pe->message ? pe->message : "?", pe->attempts, (unsigned long long)delay);
        n->job = NULL;
        job_free(j);
        node_changed(n);
        node_kick(n);
}

bool node_admit_claims(dp_kubelet *n, pod_entry *pe) {
        const char *why = NULL;
        if (pe->pod->has_claims && !dp_node_dra_pod_ready(n->dra, pe->pod->ns, pe->pod->name, &why)) {
                _cleanup_free_ char *msg = dp_asprintf("waiting for DRA: %s", why);
                if (!msg || (pe->message && streq(pe->message, msg))) return false;
                if (pe->phase != POD_CLAIMS || !pe->message)
                        log_info("pod %s/%s: device-plugin resources allocated; %s", pe->pod->ns, pe->pod->name, msg);
                free(pe->message);
                pe->message = TAKE_PTR(msg);
                pe->phase = POD_CLAIMS;
                return true;
        }
        pe->phase = POD_RUNNING;
        pe->attempts = 0;
        free(pe->message);
        pe->message = NULL;
        log_info("pod %s/%s admitted%s", pe->pod->ns, pe->pod->name,
                 pe->pod->has_claims ? " (claims prepared)" : "");
        return true;
}

static void admit_done(dp_kubelet *n) {
        admit_job *j = n->job;
        pod_entry *pe = j->pe;
        /* No container starts before both records hold its devices. */
        const char *why = NULL;
        if (!node_flush(n, &why)) {
                admit_fail(n, "cannot start: the node cannot write its records (%s)", why ? why : "?");
                return;
        }
        pe->attempts = 0;
        node_admit_claims(n, pe);
        n->job = NULL;
        job_free(j);
        node_changed(n);
        node_kick(n);
}

/* ---- PreStartContainer --------------------------------------------------- */

/* The job's call ended: NULL (the pod failed, saying rpc) unless it ended OK. */
static admit_job *call_done(dp_kubelet *n, const char *rpc, int status, const char *message) {
        admit_job *j = n->job;
        j->cc = NULL;
        if (status == DP_GRPC_OK) return j;
        admit_fail(n, "%s failed for %s: %s: %s", rpc, job_req(j)->resource, dp_grpc_status_name(status), message);
        return NULL;
}

static void on_prestart_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        dp_kubelet *n = ud;
        admit_job *j = call_done(n, "PreStartContainer", status, message);
        if (!j) return;
        j->ri++;
        admit_next(n);
}

static void prestart(dp_kubelet *n) {
        admit_job *j = n->job;
        const dp_node_container *c = &j->pe->pod->containers[j->ci];
        const dp_nm_alloc *a = dp_devmgr_alloc(n->dm, j->pe->pod->uid, c->name, job_req(j)->resource);
        const char **ids = NULL;
        if (!a || dp_nm_alloc_ids(a, &ids) < 0) {
                admit_fail(n, "out of memory");
                return;
        }
        V1beta1__PreStartContainerRequest req = V1BETA1__PRE_START_CONTAINER_REQUEST__INIT;
        req.devices_ids = (char **)ids;
        req.n_devices_ids = dp_strv_length((char **)ids);
        uint8_t *buf = NULL;
        size_t len = 0;
        int r = dp_proto_pack(&req.base, &buf, &len);
        free(ids);
        if (r >= 0)
                r = dp_grpc_channel_start_call(j->ep->ch, "/v1beta1.DevicePlugin/PreStartContainer", buf, len,
                                               PRESTART_TIMEOUT_USEC, NULL, on_prestart_done, n, &j->cc);
        free(buf);
        if (r < 0)
                admit_fail(n, "PreStartContainer for %s: cannot call the plugin: %s", job_req(j)->resource,
                           strerror(-r));
}

/* ---- Allocate -------------------------------------------------------------- */

static void on_allocate_message(dp_grpc_client_call *cc, const uint8_t *msg, size_t len, void *ud) {
        dp_kubelet *n = ud;
        admit_job *j = n->job;
        free(j->reply);
        j->reply = malloc(len ? len : 1);
        if (j->reply) memcpy(j->reply, msg, len);
        j->reply_len = len;
        j->got_reply = j->reply != NULL;
}

static void on_allocate_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        dp_kubelet *n = ud;
        admit_job *j = n->job;
        const dp_node_request *rq = job_req(j);
        const dp_node_container *c = &j->pe->pod->containers[j->ci];
        uint8_t *reply = TAKE_PTR(j->reply);
        size_t reply_len = j->reply_len;
        bool got = j->got_reply;
        j->got_reply = false;
        j->cc = NULL;
        if (status != DP_GRPC_OK) {
                free(reply);
                admit_fail(n, "Allocate failed for %s: %s: %s", rq->resource, dp_grpc_status_name(status), message);
                return;
        }
        ProtobufCMessage *m = NULL;
        if (!got || dp_proto_unpack(&v1beta1__allocate_response__descriptor, reply, reply_len, &m) < 0) {
                free(reply);
                admit_fail(n, "Allocate for %s: undecodable reply", rq->resource);
                return;
        }
        free(reply);
        const V1beta1__AllocateResponse *resp = (const V1beta1__AllocateResponse *)m;
        if (resp->n_container_responses != 1) {
                size_t n_resp = resp->n_container_responses;
                protobuf_c_message_free_unpacked(m, NULL);
                admit_fail(n, "Allocate for %s: the plugin returned %zu container responses, expected 1", rq->resource,
                           n_resp);
                return;
        }
        uint8_t *bytes = NULL;
        size_t blen = 0;
        int r = dp_proto_pack(&resp->container_responses[0]->base, &bytes, &blen);
        protobuf_c_message_free_unpacked(m, NULL);
        if (r >= 0)
                r = dp_devmgr_commit(n->dm, j->pe->pod->uid, c->name, rq->resource, (const char *const *)j->chosen,
                                     bytes, blen);
        free(bytes);
        if (r < 0) {
                admit_fail(n, "Allocate for %s: %s", rq->resource, strerror(-r));
                return;
        }
        log_info("pod %s/%s container %s: %s allocated", j->pe->pod->ns, j->pe->pod->name, c->name, rq->resource);
        node_changed(n); /* checkpoint before the container may start */
        const char *why = node_write_error(n);
        if (why) {
                /* The kubelet fails the admission when its checkpoint write
                 * fails; the allocation is not kept either (what is not on
                 * disk is not held: the retry allocates again). */
                dp_devmgr_release(n->dm, j->pe->pod->uid, c->name, rq->resource);
                admit_fail(n, "Allocate for %s: the allocation cannot be recorded, admission failed: %s", rq->resource,
                           why ? why : "?");
                return;
        }
        if (j->ep->opts.pre_start_required) {
                prestart(n);
                return;
        }
        j->ri++;
        admit_next(n);
}

static void do_allocate(dp_kubelet *n) {
        admit_job *j = n->job;
        const dp_node_request *rq = job_req(j);
        const dp_node_container *c = &j->pe->pod->containers[j->ci];
        int r = dp_devmgr_reserve(n->dm, j->pe->pod->uid, c->name, rq->resource, (const char *const *)j->chosen);
        if (r < 0) {
                admit_fail(n, "out of memory");
                return;
        }
        V1beta1__ContainerAllocateRequest creq = V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT;
        creq.devices_ids = (char **)j->chosen;
        creq.n_devices_ids = dp_strv_length((char **)j->chosen);
        V1beta1__ContainerAllocateRequest *creqs[1] = {&creq};
        V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
        req.container_requests = creqs;
        req.n_container_requests = 1;
        uint8_t *buf = NULL;
        size_t len = 0;
        r = dp_proto_pack(&req.base, &buf, &len);
        if (r >= 0)
                r = dp_grpc_channel_start_call(j->ep->ch, "/v1beta1.DevicePlugin/Allocate", buf, len, 0,
                                               on_allocate_message, on_allocate_done, n, &j->cc);
        free(buf);
        if (r < 0) {
                admit_fail(n, "Allocate for %s: cannot call the plugin: %s", rq->resource, strerror(-r));
                return;
        }
        j->pe->allocate_calls++;
}

/* ---- GetPreferredAllocation ------------------------------------------------ */

static void on_preferred_message(dp_grpc_client_call *cc, const uint8_t *msg, size_t len, void *ud) {
        dp_kubelet *n = ud;
        admit_job *j = n->job;
        ProtobufCMessage *m = NULL;
        if (dp_proto_unpack(&v1beta1__preferred_allocation_response__descriptor, msg, len, &m) < 0) return;
        const V1beta1__PreferredAllocationResponse *resp = (const V1beta1__PreferredAllocationResponse *)m;
        const char **chosen = NULL;
        if (resp->n_container_responses >= 1 &&
            dp_devmgr_choose(j->avail, j->needed, (const char *const *)resp->container_responses[0]->deviceids,
                             resp->container_responses[0]->n_deviceids, &chosen) >= 0) {
                dp_strv_free((char **)j->chosen);
                j->chosen = (const char **)dp_strv_copy((char *const *)chosen);
                free(chosen);
        }
        protobuf_c_message_free_unpacked(m, NULL);
}

static void on_preferred_done(dp_grpc_client_call *cc, int status, const char *message, void *ud) {
        dp_kubelet *n = ud;
        admit_job *j = call_done(n, "GetPreferredAllocation", status, message);
        if (!j) return;
        if (!j->chosen) {
                const char **chosen = NULL;
                if (dp_devmgr_choose(j->avail, j->needed, NULL, 0, &chosen) < 0) {
                        admit_fail(n, "out of memory");
                        return;
                }
                j->chosen = (const char **)dp_strv_copy((char *const *)chosen);
                free(chosen);
                if (!j->chosen) {
                        admit_fail(n, "out of memory");
                        return;
                }
        }
        do_allocate(n);
}

static void ask_preferred(dp_kubelet *n) {
        admit_job *j = n->job;
        V1beta1__ContainerPreferredAllocationRequest creq = V1BETA1__CONTAINER_PREFERRED_ALLOCATION_REQUEST__INIT;
        creq.available_deviceids = (char **)j->avail;
        creq.n_available_deviceids = dp_strv_length((char **)j->avail);
        creq.allocation_size = (int32_t)j->needed;
        V1beta1__ContainerPreferredAllocationRequest *creqs[1] = {&creq};
        V1beta1__PreferredAllocationRequest req = V1BETA1__PREFERRED_ALLOCATION_REQUEST__INIT;
        req.container_requests = creqs;
        req.n_container_requests = 1;
        uint8_t *buf = NULL;
        size_t len = 0;
        int r = dp_proto_pack(&req.base, &buf, &len);
        if (r >= 0)
                r = dp_grpc_channel_start_call(j->ep->ch, "/v1beta1.DevicePlugin/GetPreferredAllocation", buf, len, 0,
                                               on_preferred_message, on_preferred_done, n, &j->cc);
        free(buf);
        if (r < 0)
                admit_fail(n, "GetPreferredAllocation for %s: cannot call the plugin: %s", job_req(j)->resource,
                           strerror(-r));
}

/* ---- the walk -------------------------------------------------------------- */

static void admit_next(dp_kubelet *n) {
        admit_job *j = n->job;
        const dp_node_pod *pod = j->pe->pod;
        for (;;) {
                if (j->ci >= pod->n_containers) {
                        admit_done(n);
                        return;
                }
                const dp_node_container *c = &pod->containers[j->ci];
                if (j->ri >= c->n_req) {
                        j->ci++;
                        j->ri = 0;
                        continue;
                }
                const dp_node_request *rq = &c->req[j->ri];
                size_t needed = 0;
                const char **avail = NULL;
                dp_error e = DP_ERROR_INIT;
                int r = dp_devmgr_candidates(n->dm, pod->uid, c->name, rq->resource, rq->count, &needed, &avail, &e);
                if (r < 0) {
                        admit_fail(n, "container %s: %s", c->name, dp_error_msg(&e));
                        return;
                }
                if (needed == 0) {
                        free(avail);
                        j->ri++;
                        continue;
                }
                dp_strv_free((char **)j->avail);
                dp_strv_free((char **)j->chosen);
                j->chosen = NULL;
                j->avail = (const char **)dp_strv_copy((char *const *)avail);
                free(avail);
                j->needed = needed;
                j->ep = node_current_endpoint(n, rq->resource);
                if (!j->avail || !j->ep) {
                        admit_fail(n, "container %s: %s", c->name, j->avail ? "no plugin connected" : "out of memory");
                        return;
                }
                if (j->ep->opts.get_preferred_allocation_available) {
                        ask_preferred(n);
                        return;
                }
                const char **chosen = NULL;
                if (dp_devmgr_choose(j->avail, needed, NULL, 0, &chosen) < 0 ||
                    !(j->chosen = (const char **)dp_strv_copy((char *const *)chosen))) {
                        free(chosen);
                        admit_fail(n, "out of memory");
                        return;
                }
                free(chosen);
                do_allocate(n);
                return;
        }
}

void node_admit_start(dp_kubelet *n, pod_entry *pe) {
        admit_job *j = calloc(1, sizeof *j);
        if (!j) return;
        j->pe = pe;
        pe->phase = POD_ADMITTING;
        n->job = j;
        admit_next(n);
}

void node_admit_abort(dp_kubelet *n) {
        admit_job *j = n->job;
        if (!j) return;
        if (j->cc) dp_grpc_client_call_cancel(TAKE_PTR(j->cc));
        const dp_node_pod *pod = j->pe->pod;
        if (j->ci < pod->n_containers && j->ri < pod->containers[j->ci].n_req)
                dp_devmgr_unreserve(n->dm, pod->uid, pod->containers[j->ci].name, job_req(j)->resource);
        if (j->pe->phase == POD_ADMITTING) j->pe->phase = POD_PENDING;
        n->job = NULL;
        job_free(j);
}
