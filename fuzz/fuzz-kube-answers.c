/* SPDX-License-Identifier: Apache-2.0
 * libFuzzer: the API server's answers as the ResourceSlice publisher reads
 * them (kube/slices.c: node, list, write answers and watch lines) and the
 * Status message reader. Byte 0 picks the answer and its status; the rest
 * is the body. State carries over between inputs, as it does in a daemon. */
#include "kube/kube.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char SLICE[] =
        "{\"apiVersion\":\"resource.k8s.io/v1\",\"kind\":\"ResourceSlice\",\"metadata\":{\"name\":\"node-a-gpu.example."
        "com-0\"},\"spec\":{\"driver\":\"gpu.example.com\",\"nodeName\":\"node-a\",\"pool\":{\"name\":\"node-a\","
        "\"generation\":1,\"resourceSliceCount\":1},\"devices\":[{\"name\":\"gpu-0\"}]}}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static dp_loop *loop;
        static dp_kube_client *client;
        static dp_kube_slices *slices;
        if (!slices) {
                /* Nothing listens there; requests the publisher starts are
                 * dropped by the next input. */
                dp_kube_config cfg = {.server = (char *)"https://127.0.0.1:9"};
                const char *want[] = {SLICE};
                if (dp_loop_new(&loop) < 0 || dp_kube_client_new(loop, &cfg, &client) < 0 ||
                    dp_kube_slices_new(client, "node-a", "gpu.example.com", &slices) < 0 ||
                    dp_kube_slices_set(slices, want, 1) < 0)
                        __builtin_trap();
        }
        if (size < 1) return 0;
        static const long statuses[] = {200, 201, 404, 409, 500, 0, 410, 422};
        const char *body = (const char *)data + 1;
        char *copy = malloc(size); /* NUL-terminated, as the client hands it over */
        if (!copy) return 0;
        memcpy(copy, body, size - 1);
        copy[size - 1] = 0;
        dp_kube_slices_inject(slices, data[0] & 3, statuses[(data[0] >> 2) & 7], copy, size - 1);
        char msg[256];
        dp_kube_status_message(copy, size - 1, msg, sizeof msg);
        free(copy);
        return 0;
}
