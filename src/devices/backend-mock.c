/* SPDX-License-Identifier: Apache-2.0
 * backend-mock.c — the mock backend (a DeviceProfile, profile.h) behind the
 * backend interface. Its health comes from the health override file, which
 * the daemon applies (health.h); dispatch changes nothing, and only explicit
 * recover/fault calls would. */
#include "devices/backend-internal.h"
#include "devices/profile.h"

static int mock_open(dp_backend *b, dp_error *err) {
        /* Load once so a bad profile fails at open, as the other backends do. */
        _cleanup_(dp_device_set_freep) dp_device_set *s = NULL;
        return dp_profile_resolve(b->profile ? b->profile : DP_PROFILE_DEFAULT, b->node_name, &s, err);
}

static int mock_discover(dp_backend *b, dp_device_set **ret, dp_error *err) {
        return dp_profile_resolve(b->profile ? b->profile : DP_PROFILE_DEFAULT, b->node_name, ret, err);
}

const dp_backend_ops dp_backend_mock_ops = {
        .open = mock_open,
        .discover = mock_discover,
};
