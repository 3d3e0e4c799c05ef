/* SPDX-License-Identifier: Apache-2.0
 * grpc-peer-server SOCKET — a dp_grpc server for the interop tests. Serves
 * the DevicePlugin methods, pluginregistration GetInfo and
 * NotifyRegistrationStatus, DRA v1 NodePrepareResources, plus
 * /test.Test/{Echo,Fail,Slow,Big,Count}.
 * Prints "READY" once listening, "HELD <path>" when it holds a call,
 * "CANCEL <path> <status>" when a held call
 * ends early, and on SIGTERM shuts down gracefully (GOAWAY, finishes held
 * streams with OK), printing "BYE" when every connection is gone. */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>

#include "grpc/grpc.h"
#include "proto/proto.h"

#define MAX_HELD 64

typedef struct peer {
        dp_loop *loop;
        dp_grpc_server *srv;
        dp_grpc_call *held[MAX_HELD];
        dp_loop_source *tick;
        int lists_sent[MAX_HELD];
        bool stopping;
} peer;

static void say(const char *fmt, ...) _printf_(1, 2);
static void say(const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        putchar('\n');
        fflush(stdout);
}

static void forget(peer *p, dp_grpc_call *call) {
        for (int i = 0; i < MAX_HELD; i++)
                if (p->held[i] == call) p->held[i] = NULL;
}

static void on_cancel(dp_grpc_call *call, int status, void *ud) {
        say("CANCEL %s %d", dp_grpc_call_path(call), status);
        forget(ud, call);
        dp_grpc_call_finish(call, status, NULL);
}

static void hold(peer *p, dp_grpc_call *call) {
        for (int i = 0; i < MAX_HELD; i++)
                if (!p->held[i]) {
                        p->held[i] = call;
                        p->lists_sent[i] = 0;
                        dp_grpc_call_set_cancel_handler(call, on_cancel, p);
                        say("HELD %s", dp_grpc_call_path(call));
                        return;
                }
        dp_grpc_call_finish(call, DP_GRPC_RESOURCE_EXHAUSTED, "too many held calls");
}

static void h_options(dp_grpc_call *call, void *ud) {
        (void)ud;
        V1beta1__DevicePluginOptions o = V1BETA1__DEVICE_PLUGIN_OPTIONS__INIT;
        o.pre_start_required = 1;
        o.get_preferred_allocation_available = 1;
        dp_grpc_call_reply_msg(call, &o.base);
}

static void h_allocate(dp_grpc_call *call, void *ud) {
        (void)ud;
        const V1beta1__AllocateRequest *req = (const V1beta1__AllocateRequest *)dp_grpc_call_request_msg(call);
        size_t n = req->n_container_requests;
        V1beta1__AllocateResponse resp = V1BETA1__ALLOCATE_RESPONSE__INIT;
        V1beta1__ContainerAllocateResponse *crs[16], cr[16];
        V1beta1__ContainerAllocateResponse__EnvsEntry env[16], *envp[16];
        V1beta1__Mount mount[16], *mountp[16];
        V1beta1__CDIDevice cdi[16][8], *cdip[16][8];
        char vals[16][512], names[16][8][128];
        if (n > 16) {
                dp_grpc_call_finish(call, DP_GRPC_INVALID_ARGUMENT, "too many containers");
                return;
        }
        for (size_t i = 0; i < n; i++) {
                const V1beta1__ContainerAllocateRequest *c = req->container_requests[i];
                v1beta1__container_allocate_response__init(&cr[i]);
                vals[i][0] = 0;
                size_t k = DP_MIN(c->n_devices_ids, 8);
                for (size_t j = 0; j < k; j++) {
                        if (j) strncat(vals[i], ",", sizeof vals[i] - strlen(vals[i]) - 1);
                        strncat(vals[i], c->devices_ids[j], sizeof vals[i] - strlen(vals[i]) - 1);
                        v1beta1__cdidevice__init(&cdi[i][j]);
                        snprintf(names[i][j], sizeof names[i][j], "vendor.com/gpu=%s", c->devices_ids[j]);
                        cdi[i][j].name = names[i][j];
                        cdip[i][j] = &cdi[i][j];
                }
                v1beta1__container_allocate_response__envs_entry__init(&env[i]);
                env[i].key = "DEVICES";
                env[i].value = vals[i];
                envp[i] = &env[i];
                v1beta1__mount__init(&mount[i]);
                mount[i].container_path = "/dev/shm";
                mount[i].host_path = "/run/shm";
                mount[i].read_only = 1;
                mountp[i] = &mount[i];
                cr[i].n_envs = 1;
                cr[i].envs = &envp[i];
                cr[i].n_mounts = 1;
                cr[i].mounts = &mountp[i];
                cr[i].n_cdi_devices = k;
                cr[i].cdi_devices = cdip[i];
                crs[i] = &cr[i];
        }
        resp.n_container_responses = n;
        resp.container_responses = crs;
        dp_grpc_call_reply_msg(call, &resp.base);
}

static int send_list(dp_grpc_call *call, int n) {
        V1beta1__Device d[8], *dp[8];
        char ids[8][16];
        for (int i = 0; i < n && i < 8; i++) {
                v1beta1__device__init(&d[i]);
                snprintf(ids[i], sizeof ids[i], "gpu-%d", i);
                d[i].id = ids[i];
                d[i].health = i == 1 ? "Unhealthy" : "Healthy";
                dp[i] = &d[i];
        }
        V1beta1__ListAndWatchResponse r = V1BETA1__LIST_AND_WATCH_RESPONSE__INIT;
        r.n_devices = (size_t)n;
        r.devices = dp;
        return dp_grpc_call_send_msg(call, &r.base);
}

/* ListAndWatch: one list at once, two more from the timer, then held open
 * like the real thing until the client cancels or the server stops. */
static void h_watch(dp_grpc_call *call, void *ud) {
        peer *p = ud;
        send_list(call, 1);
        hold(p, call);
        for (int i = 0; i < MAX_HELD; i++)
                if (p->held[i] == call) p->lists_sent[i] = 1;
        dp_loop_source_set_time(p->tick, dp_loop_now() + 5000);
}

static int on_tick(dp_loop_source *s, uint64_t now, void *ud) {
        peer *p = ud;
        bool more = false;
        for (int i = 0; i < MAX_HELD; i++) {
                dp_grpc_call *c = p->held[i];
                if (!c || !streq(dp_grpc_call_path(c), "/v1beta1.DevicePlugin/ListAndWatch") || p->lists_sent[i] >= 3)
                        continue;
                send_list(c, ++p->lists_sent[i]);
                more = more || p->lists_sent[i] < 3;
        }
        if (more) dp_loop_source_set_time(s, now + 5000);
        return 0;
}

static void h_echo(dp_grpc_call *call, void *ud) {
        (void)ud;
        size_t n;
        const uint8_t *b = dp_grpc_call_request(call, &n);
        dp_grpc_call_send(call, b, n);
        dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
}

static void h_fail(dp_grpc_call *call, void *ud) {
        (void)ud;
        dp_grpc_call_finish(call, DP_GRPC_FAILED_PRECONDITION, "gpu-1 is 100% \xc3\xbcnhealthy\nsee dmesg");
}

static void h_slow(dp_grpc_call *call, void *ud) { hold(ud, call); }

static void h_big(dp_grpc_call *call, void *ud) {
        (void)ud;
        size_t n = DP_GRPC_MAX_RECV_MESSAGE + 1;
        uint8_t *b = calloc(1, n);
        if (b) dp_grpc_call_send(call, b, n);
        free(b);
        dp_grpc_call_finish(call, b ? DP_GRPC_OK : DP_GRPC_INTERNAL, NULL);
}

/* Request: decimal count; that many messages "msg-<i>", then OK. */
static void h_count(dp_grpc_call *call, void *ud) {
        (void)ud;
        size_t n;
        const uint8_t *b = dp_grpc_call_request(call, &n);
        char num[16] = "";
        memcpy(num, b, DP_MIN(n, sizeof num - 1));
        int count = atoi(num);
        for (int i = 0; i < count; i++) {
                char m[32];
                int k = snprintf(m, sizeof m, "msg-%d", i);
                dp_grpc_call_send(call, (const uint8_t *)m, (size_t)k);
        }
        dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
}

/* Plugin registration: a DRA driver advertising both DRA versions. */
static void h_get_info(dp_grpc_call *call, void *ud) {
        (void)ud;
        char *versions[] = {"v1.DRAPlugin", "v1beta1.DRAPlugin"};
        Pluginregistration__PluginInfo info = PLUGINREGISTRATION__PLUGIN_INFO__INIT;
        info.type = "DRAPlugin";
        info.name = "gpu.example.com";
        info.endpoint = "/var/lib/kubelet/plugins/gpu.example.com/dra.sock";
        info.n_supported_versions = 2;
        info.supported_versions = versions;
        dp_grpc_call_reply_msg(call, &info.base);
}

static void h_notify(dp_grpc_call *call, void *ud) {
        (void)ud;
        const Pluginregistration__RegistrationStatus *st =
                (const Pluginregistration__RegistrationStatus *)dp_grpc_call_request_msg(call);
        if (!st->plugin_registered) {
                dp_grpc_call_finishf(call, DP_GRPC_UNKNOWN, "registration failed: %s", st->error);
                return;
        }
        Pluginregistration__RegistrationStatusResponse r = PLUGINREGISTRATION__REGISTRATION_STATUS_RESPONSE__INIT;
        dp_grpc_call_reply_msg(call, &r.base);
}

/* DRA v1: one device per claim; claims named "bad" fail; share_id is set
 * (to "") only for namespace "shared". */
static void h_prepare(dp_grpc_call *call, void *ud) {
        (void)ud;
        typedef K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse__ClaimsEntry entry_t;
        const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest *req =
                (const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesRequest *)dp_grpc_call_request_msg(
                        call);
        size_t n = DP_MIN(req->n_claims, 8);
        entry_t ent[8], *entp[8];
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourceResponse res[8];
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Device dev[8], *devp[8];
        char *cdi[8][1];
        char names[8][96];
        for (size_t i = 0; i < n; i++) {
                const K8s__Io__Kubelet__Pkg__Apis__Dra__V1__Claim *c = req->claims[i];
                k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_response__claims_entry__init(&ent[i]);
                k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resource_response__init(&res[i]);
                k8s__io__kubelet__pkg__apis__dra__v1__device__init(&dev[i]);
                ent[i].key = c->uid;
                ent[i].value = &res[i];
                entp[i] = &ent[i];
                if (streq(c->name, "bad")) {
                        res[i].error = "no such device";
                        continue;
                }
                snprintf(names[i], sizeof names[i], "gpu.example.com/gpu=%s", c->name);
                cdi[i][0] = names[i];
                dev[i].pool_name = "node-a";
                dev[i].device_name = c->name;
                dev[i].n_cdi_device_ids = 1;
                dev[i].cdi_device_ids = cdi[i];
                if (streq(c->namespace_, "shared")) {
                        dev[i].share_id_presence_case =
                                K8S__IO__KUBELET__PKG__APIS__DRA__V1__DEVICE__SHARE_ID_PRESENCE_SHARE_ID;
                        dev[i].share_id = "";
                }
                devp[i] = &dev[i];
                res[i].n_devices = 1;
                res[i].devices = &devp[i];
        }
        K8s__Io__Kubelet__Pkg__Apis__Dra__V1__NodePrepareResourcesResponse resp =
                K8S__IO__KUBELET__PKG__APIS__DRA__V1__NODE_PREPARE_RESOURCES_RESPONSE__INIT;
        resp.n_claims = n;
        resp.claims = entp;
        dp_grpc_call_reply_msg(call, &resp.base);
}

static int on_term(dp_loop_source *s, const struct signalfd_siginfo *si, void *ud) {
        (void)s;
        (void)si;
        peer *p = ud;
        p->stopping = true;
        dp_grpc_server_shutdown(p->srv);
        for (int i = 0; i < MAX_HELD; i++)
                if (p->held[i]) {
                        dp_grpc_call *c = p->held[i];
                        p->held[i] = NULL;
                        dp_grpc_call_finish(c, DP_GRPC_OK, NULL);
                }
        return 0;
}

int main(int argc, char **argv) {
        if (argc != 2) {
                fprintf(stderr, "usage: grpc-peer-server SOCKET\n");
                return 2;
        }
        peer p = {0};
        int r = dp_loop_new(&p.loop);
        if (r >= 0) r = dp_grpc_server_new(&p.srv);
        if (r < 0) return 1;
        struct {
                const char *path;
                dp_grpc_kind kind;
                const ProtobufCMessageDescriptor *type;
                dp_grpc_handler_fn fn;
        } m[] = {
                {"/v1beta1.DevicePlugin/GetDevicePluginOptions", DP_GRPC_UNARY, &v1beta1__empty__descriptor, h_options},
                {"/v1beta1.DevicePlugin/Allocate", DP_GRPC_UNARY, &v1beta1__allocate_request__descriptor, h_allocate},
                {"/v1beta1.DevicePlugin/ListAndWatch", DP_GRPC_SERVER_STREAMING, &v1beta1__empty__descriptor, h_watch},
                {"/pluginregistration.Registration/GetInfo", DP_GRPC_UNARY,
                 &pluginregistration__info_request__descriptor, h_get_info},
                {"/pluginregistration.Registration/NotifyRegistrationStatus", DP_GRPC_UNARY,
                 &pluginregistration__registration_status__descriptor, h_notify},
                {"/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources", DP_GRPC_UNARY,
                 &k8s__io__kubelet__pkg__apis__dra__v1__node_prepare_resources_request__descriptor, h_prepare},
                {"/test.Test/Echo", DP_GRPC_UNARY, NULL, h_echo},
                {"/test.Test/Fail", DP_GRPC_UNARY, NULL, h_fail},
                {"/test.Test/Slow", DP_GRPC_UNARY, NULL, h_slow},
                {"/test.Test/Big", DP_GRPC_UNARY, NULL, h_big},
                {"/test.Test/Count", DP_GRPC_SERVER_STREAMING, NULL, h_count},
        };
        for (size_t i = 0; i < ELEMENTSOF(m) && r >= 0; i++)
                r = dp_grpc_server_add_method(p.srv, m[i].path, m[i].kind, m[i].type, m[i].fn, &p);
        dp_loop_source *term = NULL;
        if (r >= 0) r = dp_loop_add_timer(p.loop, 0, on_tick, &p, &p.tick);
        if (r >= 0) r = dp_loop_add_signal(p.loop, SIGTERM, on_term, &p, &term);
        if (r >= 0) r = dp_grpc_server_listen_unix(p.srv, p.loop, argv[1], 0600);
        if (r < 0) {
                fprintf(stderr, "grpc-peer-server: %s\n", strerror(-r));
                return 1;
        }
        say("READY");
        while (r >= 0 && !(p.stopping && dp_grpc_server_connection_count(p.srv) == 0))
                r = dp_loop_run_once(p.loop, -1);
        say("BYE");
        dp_loop_source_free(term);
        dp_loop_source_free(p.tick);
        dp_grpc_server_free(p.srv);
        dp_loop_free(p.loop);
        return r < 0 ? 1 : 0;
}
