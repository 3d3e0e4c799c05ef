/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the agent's request handling as the kubelet (or anyone reaching the
 * socket) may drive it: the first byte picks the method (Allocate,
 * GetPreferredAllocation) and the resource of the a100-mixed plan (mixed
 * MIG strategy, then time-slicing replicas 4); the rest is the protobuf
 * request. Replies must encode and decode again. */
#include "agent/agent-internal.h"
#include "devices/profile.h"

/* Checked in every build type (assert() vanishes under NDEBUG). */
#define CHECK(x)                                                                                                       \
        do {                                                                                                           \
                if (!(x)) abort();                                                                                     \
        } while (0)

static dp_agent *agents[2];

static dp_agent *make_agent(const char *config) {
        dp_agent *a = calloc(1, sizeof *a);
        if (!a) abort();
        if (dp_profile_builtin("a100-mixed", "fuzz", &a->set, NULL) < 0) abort();
        if (dp_agent_config_load(config, strlen(config), "fuzz", &a->cfg, NULL) < 0) abort();
        if (dp_v1_plan_build(a->set, a->cfg, &a->plan, NULL) < 0) abort();
        return a;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        if (!agents[0]) {
                agents[0] = make_agent("version: v1\nflags: {migStrategy: mixed}\n");
                agents[1] = make_agent("version: v1\nsharing:\n  timeSlicing:\n    resources:\n"
                                       "    - {name: nvidia.com/gpu, replicas: 4}\n");
        }
        if (size < 1) return 0;
        const dp_agent *a = agents[data[0] & 1];
        const char *res = a->plan->resources[(data[0] >> 1) % a->plan->n_resources].name;
        bool preferred = data[0] & 0x80;
        ProtobufCMessage *m = NULL;
        const ProtobufCMessageDescriptor *d =
                preferred ? &v1beta1__preferred_allocation_request__descriptor : &v1beta1__allocate_request__descriptor;
        if (dp_proto_unpack(d, data + 1, size - 1, &m) < 0) return 0;
        uint8_t *out = NULL;
        size_t len = 0;
        dp_error e = DP_ERROR_INIT;
        int r = preferred
                        ? agent_preferred_reply(a, res, (const V1beta1__PreferredAllocationRequest *)m, &out, &len, &e)
                        : agent_allocate_reply(a, res, (const V1beta1__AllocateRequest *)m, &out, &len, &e);
        if (r == 0) {
                ProtobufCMessage *back = NULL;
                const ProtobufCMessageDescriptor *rd = preferred ? &v1beta1__preferred_allocation_response__descriptor
                                                                 : &v1beta1__allocate_response__descriptor;
                CHECK(dp_proto_unpack(rd, out, len, &back) == 0);
                protobuf_c_message_free_unpacked(back, NULL);
        } else {
                CHECK(e.msg[0]);
        }
        free(out);
        protobuf_c_message_free_unpacked(m, NULL);
        return 0;
}
