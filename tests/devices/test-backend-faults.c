/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/devices/fault-table.c (classification, NVIDIA's environment
 * knobs, the tracker's recovery rule) and src/devices/backend-mock.c. */
#include "harness.h"

#include "devices/backend.h"
#include "devices/fault-table.h"
#include "devices/profile.h"

TEST(defaults_ignore_the_nvidia_list) {
        dp_fault_table t;
        dp_fault_table_init(&t);
        char cls[DP_FAULT_CLASS_MAX] = "";
        const unsigned ignored[] = {13, 31, 43, 45, 68, 109};
        for (size_t i = 0; i < 6; i++)
                ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_XID, ignored[i], cls), DP_FAULT_IGNORE);
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_XID, 79, cls), DP_FAULT_UNHEALTHY);
        ASSERT_STREQ(cls, "xid-79");
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_XID, 48, cls), DP_FAULT_UNHEALTHY);
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_XID, 5000, cls), DP_FAULT_UNHEALTHY);
        ASSERT_STREQ(cls, "xid-5000");
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_ECC_SBE, 0, cls), DP_FAULT_IGNORE);
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_ECC_DBE, 0, cls), DP_FAULT_IGNORE);
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_LOST, 0, cls), DP_FAULT_UNHEALTHY);
        ASSERT_STREQ(cls, "gpu-lost");
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_MISSING, 0, cls), DP_FAULT_UNHEALTHY);
        ASSERT_STREQ(cls, "missing");
        ASSERT_EQ(t.recover_after_usec, 300000000ULL);
        ASSERT_EQ(dp_fault_table_set_xid(&t, 1024, true), -ERANGE);
}

TEST(environment_knobs) {
        dp_fault_table t;
        dp_error err = DP_ERROR_INIT;
        char cls[DP_FAULT_CLASS_MAX];
        dp_fault_table_init(&t);
        ASSERT_OK(dp_fault_table_apply_env(&t, "79, 94", NULL, &err));
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_XID, 79, cls), DP_FAULT_IGNORE);
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_XID, 48, cls), DP_FAULT_UNHEALTHY);
        /* An explicit enable overrides a disable. */
        ASSERT_OK(dp_fault_table_apply_env(&t, "xids", "13,79", &err));
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_XID, 48, cls), DP_FAULT_IGNORE);
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_XID, 13, cls), DP_FAULT_UNHEALTHY);
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_XID, 79, cls), DP_FAULT_UNHEALTHY);
        dp_fault_table_init(&t);
        ASSERT_OK(dp_fault_table_apply_env(&t, "all", NULL, &err));
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_LOST, 0, cls), DP_FAULT_IGNORE);
        ASSERT_OK(dp_fault_table_apply_env(&t, NULL, "all", &err));
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_XID, 13, cls), DP_FAULT_UNHEALTHY);
        /* Bad lists change nothing. */
        dp_fault_table_init(&t);
        ASSERT_EQ(dp_fault_table_apply_env(&t, "13,seventy", NULL, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "DP_DISABLE_HEALTHCHECKS: \"seventy\" is not all, xids or an Xid from 0 to 1023");
        ASSERT_EQ(dp_fault_table_apply_env(&t, "48", "2000", &err), -EINVAL);
        ASSERT_EQ(dp_fault_table_classify(&t, DP_FAULT_XID, 48, cls), DP_FAULT_UNHEALTHY);
}

TEST(tracker_recovery_rule) {
        dp_fault_tracker tr = {0};
        ASSERT_EQ(dp_fault_tracker_raise(&tr, "gpu-1", "xid-79", false, 100), 1);
        ASSERT_EQ(dp_fault_tracker_raise(&tr, "gpu-1", "xid-48", false, 150), 0); /* refresh */
        ASSERT_STREQ(dp_fault_tracker_find(&tr, "gpu-1")->fault_class, "xid-48");
        ASSERT_EQ(dp_fault_tracker_raise(&tr, "serial-0", "missing", true, 100), 1);
        ASSERT_EQ(dp_fault_tracker_next_expiry(&tr, 1000), 1150);
        ASSERT_EQ(dp_fault_tracker_next_expiry(&tr, 0), 0);
        ASSERT_EQ(dp_fault_tracker_expire(&tr, 1149, 1000), 0);
        ASSERT_EQ(dp_fault_tracker_expire(&tr, 1150, 1000), 1);
        ASSERT_TRUE(dp_fault_tracker_find(&tr, "gpu-1") == NULL);
        ASSERT_EQ(dp_fault_tracker_expire(&tr, 1 << 30, 1000), 0); /* sticky stays */
        ASSERT_EQ(dp_fault_tracker_expire(&tr, 1 << 30, 0), 0);
        ASSERT_EQ(dp_fault_tracker_next_expiry(&tr, 1000), 0);
        ASSERT_EQ(dp_fault_tracker_clear(&tr, "serial-0"), 1);
        ASSERT_EQ(dp_fault_tracker_clear(&tr, "serial-0"), 0);
        ASSERT_EQ(tr.n, 0);
        dp_fault_tracker_done(&tr);
}

TEST(mock_backend_is_the_profile) {
        dp_backend_options o = {.node_name = "node-a", .profile = "a100-mixed"};
        dp_backend *b = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_backend_open(DP_BACKEND_MOCK, &o, &b, &err));
        ASSERT_TRUE(dp_backend_fd(b) >= 0);
        dp_device_set *s = NULL, *ref = NULL;
        ASSERT_OK(dp_backend_discover(b, &s, &err));
        ASSERT_OK(dp_profile_builtin("a100-mixed", "node-a", &ref, &err));
        ASSERT_EQ(s->n_devices, ref->n_devices);
        for (size_t i = 0; i < s->n_devices; i++)
                ASSERT_STREQ(s->devices[i].uuid, ref->devices[i].uuid);
        /* Health stays the health file's business. */
        s->devices[2].health = DP_HEALTH_UNHEALTHY;
        ASSERT_EQ(dp_backend_dispatch(b, s, 1, &err), 0);
        ASSERT_EQ(s->devices[2].health, DP_HEALTH_UNHEALTHY);
        dp_device_set_free(s);
        dp_device_set_free(ref);
        dp_backend_close(b);
        o.profile = "no-such-profile";
        ASSERT_TRUE(dp_backend_open(DP_BACKEND_MOCK, &o, &b, &err) < 0);
        dp_backend_kind k;
        ASSERT_OK(dp_backend_kind_from_string("devglob", &k));
        ASSERT_EQ(k, DP_BACKEND_DEVGLOB);
        ASSERT_STREQ(dp_backend_kind_to_string(DP_BACKEND_NVML), "nvml");
        ASSERT_EQ(dp_backend_kind_from_string("gpu", &k), -EINVAL);
}
