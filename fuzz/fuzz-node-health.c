/* SPDX-License-Identifier: Apache-2.0
 * Fuzz the node's reading of a DRA health stream message
 * (NodeWatchResourcesResponse, dp_node_dra_health_decode): any bytes a driver
 * sends must decode or be refused, and the counts must agree. */
#include <errno.h>
#include <stdlib.h>

#include "node/dra-manager.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        size_t n = 0, bad = 0;
        int r = dp_node_dra_health_decode(data, size, &n, &bad);
        if (r < 0 && r != -EBADMSG && r != -ENOMEM) abort();
        if (r >= 0 && bad > n) abort();
        return 0;
}
