/* SPDX-License-Identifier: Apache-2.0
 * proto-failmalloc — decoding a message under the one failmalloc runner
 * (../failmalloc.h). protobuf-c allocates through the allocator
 * dp_proto_unpack() hands it, which calls devplane's (wrapped) malloc: every
 * allocation protobuf-c makes for the message, its repeated fields and its
 * strings can be failed, and each must come back -ENOMEM (not -EBADMSG, which
 * protobuf-c's own allocator would make of it) with nothing leaked. */
#include <stdio.h>

#include "proto/proto.h"

#include "failmalloc.h"

/* An AllocateRequest of two containers of three device ids: the message,
 * two arrays, two sub-messages and six strings for protobuf-c to allocate. */
static uint8_t *wire;
static size_t wire_len;

static int pack_request(void) {
        char *ids[2][3] = {{"gpu-0", "gpu-1", "gpu-2"}, {"gpu-3", "gpu-4", "gpu-5"}};
        V1beta1__ContainerAllocateRequest c[2] = {V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT,
                                                  V1BETA1__CONTAINER_ALLOCATE_REQUEST__INIT};
        V1beta1__ContainerAllocateRequest *cs[2] = {&c[0], &c[1]};
        for (int i = 0; i < 2; i++) {
                c[i].n_devices_ids = 3;
                c[i].devices_ids = ids[i];
        }
        V1beta1__AllocateRequest req = V1BETA1__ALLOCATE_REQUEST__INIT;
        req.n_container_requests = 2;
        req.container_requests = cs;
        return dp_proto_pack(&req.base, &wire, &wire_len);
}

static bool run(void *ctx) {
        (void)ctx;
        ProtobufCMessage *m = NULL;
        int r = dp_proto_unpack(&v1beta1__allocate_request__descriptor, wire, wire_len, &m);
        if (r < 0) {
                if (r != -ENOMEM) fprintf(stderr, "proto-failmalloc: unpack: %s, not -ENOMEM\n", strerror(-r));
                return false; /* the runner checks a failure was injected */
        }
        const V1beta1__AllocateRequest *req = (const V1beta1__AllocateRequest *)m;
        bool ok = req->n_container_requests == 2 && req->container_requests[1]->n_devices_ids == 3 &&
                  streq(req->container_requests[1]->devices_ids[2], "gpu-5");
        protobuf_c_message_free_unpacked(m, NULL);
        return ok;
}

int main(void) {
        counting = false;
        if (pack_request() < 0) return 1;
        counting = true;
        /* The first allocation of an unpack is protobuf-c's, of the message
         * itself: failing it must give -ENOMEM, which protobuf-c's own
         * allocator (made inside the library) never let a test see. */
        fail_at = 1;
        counter = 0;
        ProtobufCMessage *m = NULL;
        int first = dp_proto_unpack(&v1beta1__allocate_request__descriptor, wire, wire_len, &m);
        fail_at = 0;
        if (first != -ENOMEM || m) {
                fprintf(stderr, "proto-failmalloc: allocation 1 of an unpack failed: %d, expected -ENOMEM\n", first);
                return 1;
        }
        /* 12 allocations: the message, its array of 2 sub-messages, the
         * sub-messages, their 2 arrays of ids and the 6 ids */
        dp_failmalloc fm = {.name = "proto-failmalloc", .run = run, .min_points = 12};
        dp_failmalloc_result r;
        int rc = dp_failmalloc_each(&fm, &r);
        printf("proto-failmalloc: %lu allocations of protobuf-c's unpack, each failed in turn\n", r.points);
        free(wire);
        return rc;
}
