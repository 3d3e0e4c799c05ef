/* SPDX-License-Identifier: Apache-2.0
 * test-names — the device model (devices/device.h, devices/v1.h) and the
 * Kubernetes objects (model/objects.h) name their types apart: one
 * translation unit includes all three, and each DP_*ATTR_* names its own
 * enum. (They once both defined dp_device, dp_kv and DP_ATTR_*.) */
#include "devices/device.h"
#include "devices/v1.h"
#include "model/objects.h"

#include "harness.h"

TEST(both_vocabularies_in_one_file) {
        dp_hw_device hw = {.id = (char *)"gpu-0"};
        dp_device obj = {.name = (char *)"gpu-0"};
        ASSERT_STREQ(hw.id, obj.name);
        dp_hw_attr a = {.type = DP_HW_ATTR_INT, .i = 3};
        ASSERT_EQ(a.type, DP_HW_ATTR_INT);
        /* the first of each enum differs: the names no longer stand for two values */
        ASSERT_EQ(DP_HW_ATTR_STRING, 0);
        ASSERT_EQ(DP_ATTR_INT, 0);
        dp_v1_kv env = {(char *)"NVIDIA_VISIBLE_DEVICES", (char *)"all"};
        dp_kv label = {(char *)"a", (char *)"b"};
        ASSERT_STREQ(env.value, "all");
        ASSERT_STREQ(label.key, "a");
}
