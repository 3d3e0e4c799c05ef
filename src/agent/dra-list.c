/* SPDX-License-Identifier: Apache-2.0
 * dra-list.c — /devplane.dra.v1.PreparedClaims/List (see dra-list.h): the
 * driver checkpoint's claims with their devices and CDI ids. */
#include "agent/dra-list.h"
#include "base/log.h"
#include "devplane-dra/v1/api.pb-c.h"
#include "proto/proto.h"

typedef Devplane__Dra__V1__PreparedClaim pb_claim;
typedef Devplane__Dra__V1__PreparedDevice pb_device;

int agent_dra_list_reply(const dp_dra_checkpoint *c, uint8_t **ret, size_t *ret_len) {
        assert_return(c && ret && ret_len, -EINVAL);
        size_t nd = 0;
        for (size_t i = 0; i < c->n_claims; i++)
                nd += c->claims[i].n_devices;
        /* Borrowed strings: the messages only point into the checkpoint. */
        _cleanup_free_ pb_claim *claims = calloc(c->n_claims + 1, sizeof *claims);
        _cleanup_free_ pb_claim **cp = calloc(c->n_claims + 1, sizeof *cp);
        _cleanup_free_ pb_device *devs = calloc(nd + 1, sizeof *devs);
        _cleanup_free_ pb_device **dp = calloc(nd + 1, sizeof *dp);
        if (!claims || !cp || !devs || !dp) return -ENOMEM;
        size_t k = 0;
        for (size_t i = 0; i < c->n_claims; i++) {
                const dp_dra_prepared_claim *x = &c->claims[i];
                claims[i] = (pb_claim)DEVPLANE__DRA__V1__PREPARED_CLAIM__INIT;
                claims[i].uid = x->uid ? x->uid : (char *)"";
                claims[i].namespace_ = x->namespace ? x->namespace : (char *)"";
                claims[i].name = x->name ? x->name : (char *)"";
                claims[i].devices = &dp[k];
                claims[i].n_devices = x->n_devices;
                for (size_t j = 0; j < x->n_devices; j++, k++) {
                        const dp_dra_prepared_device *y = &x->devices[j];
                        devs[k] = (pb_device)DEVPLANE__DRA__V1__PREPARED_DEVICE__INIT;
                        devs[k].pool_name = y->pool ? y->pool : (char *)"";
                        devs[k].device_name = y->device ? y->device : (char *)"";
                        devs[k].request_names = y->requests;
                        devs[k].n_request_names = y->n_requests;
                        devs[k].cdi_device_ids = y->cdi_ids;
                        devs[k].n_cdi_device_ids = y->n_cdi_ids;
                        dp[k] = &devs[k];
                }
                cp[i] = &claims[i];
        }
        Devplane__Dra__V1__ListResponse resp = DEVPLANE__DRA__V1__LIST_RESPONSE__INIT;
        resp.claims = cp;
        resp.n_claims = c->n_claims;
        if (devplane__dra__v1__list_response__get_packed_size(&resp) > DP_PROTO_MAX_MESSAGE_SIZE) return -E2BIG;
        return dp_proto_pack(&resp.base, ret, ret_len);
}

static void on_list(dp_grpc_call *call, void *ud) {
        dp_dra_checkpoint *const *ckpt = ud;
        if (!*ckpt) {
                dp_grpc_call_finish(call, DP_GRPC_UNAVAILABLE, "the driver's checkpoint is not loaded");
                return;
        }
        _cleanup_free_ uint8_t *buf = NULL;
        size_t len = 0;
        int r = agent_dra_list_reply(*ckpt, &buf, &len);
        if (r < 0) {
                log_warning("PreparedClaims List: %s", strerror(-r));
                dp_grpc_call_finishf(call, r == -E2BIG ? DP_GRPC_RESOURCE_EXHAUSTED : DP_GRPC_INTERNAL,
                                     "List of %zu prepared claims: %s", (*ckpt)->n_claims, strerror(-r));
                return;
        }
        if (dp_grpc_call_send(call, buf, len) < 0) {
                dp_grpc_call_finish(call, DP_GRPC_UNAVAILABLE, "cannot send");
                return;
        }
        dp_grpc_call_finish(call, DP_GRPC_OK, NULL);
}

int agent_dra_list_serve(dp_grpc_server *srv, dp_dra_checkpoint *const *ckpt) {
        assert_return(srv && ckpt, -EINVAL);
        return dp_grpc_server_add_method(srv, AGENT_DRA_LIST_PATH, DP_GRPC_UNARY,
                                         &devplane__dra__v1__list_request__descriptor, on_list, (void *)ckpt);
}
