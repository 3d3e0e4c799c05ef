/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/devices/backend-config.c: the BackendConfig document. */
#include "harness.h"

#include "devices/backend.h"

static int load(const char *text, dp_backend_config **ret, dp_error *err) {
        return dp_backend_config_load(text, strlen(text), "b.yaml", ret, err);
}

#define HDR "apiVersion: devplane.io/v1alpha1\nkind: BackendConfig\n"

TEST(full_document) {
        dp_backend_config *c = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_backend_config_load_file("fixtures/pci.backend.yaml", &c, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_STREQ(c->domain, "example.com");
        ASSERT_EQ(c->n_pci, 4);
        ASSERT_EQ(c->pci[0].vendor, 0x8086);
        ASSERT_EQ(c->pci[0].device, 0x1572);
        ASSERT_STREQ(c->pci[0].driver, "vfio-pci");
        ASSERT_STREQ(c->pci[1].class_prefix, "12");
        ASSERT_EQ(c->pci[1].vendor, -1);
        dp_backend_config_free(c);
        const char *txt = HDR "spec:\n"
                              "  health:\n"
                              "    ignoreXids: [13]\n"
                              "    additionalIgnoreXids: [94]\n"
                              "    criticalXids: [13]\n"
                              "    eccDoubleBit: unhealthy\n"
                              "    recoverAfterSeconds: 0\n"
                              "    pollIntervalMilliseconds: 250\n"
                              "  devglob:\n"
                              "  - {type: fuse, paths: [/dev/fuse], count: 10}\n";
        if (load(txt, &c, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_FALSE(dp_fault_table_xid_ignored(&c->faults, 13));
        ASSERT_FALSE(dp_fault_table_xid_ignored(&c->faults, 31)); /* the defaults were replaced */
        ASSERT_TRUE(dp_fault_table_xid_ignored(&c->faults, 94));
        ASSERT_EQ(c->faults.ecc_dbe, DP_FAULT_UNHEALTHY);
        ASSERT_EQ(c->faults.recover_after_usec, 0);
        ASSERT_EQ(c->faults.poll_interval_usec, 250000);
        ASSERT_EQ(c->devglob[0].count, 10);
        dp_backend_config_free(c);
}

TEST(errors_name_file_object_and_field) {
        dp_backend_config *c = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(load(HDR "metadata: {name: x}\nspec: {pci: [{type: nic, vendor: intel}]}\n", &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "b.yaml:");
        ASSERT_CONTAINS(err.msg, "BackendConfig x: spec.pci[0].vendor: must be 4 hex digits");
        ASSERT_EQ(load(HDR "spec: {devglob: [{type: fuse, count: 3}]}\n", &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "spec.devglob[0]: needs paths or usb matches");
        ASSERT_EQ(load(HDR "spec: {devglob: [{type: fuse, paths: [/dev/fuse], count: 500}]}\n", &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "spec.devglob[0].count");
        ASSERT_EQ(load(HDR "spec: {devglob: [{type: Fuse, paths: [dev/fuse]}]}\n", &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "spec.devglob[0].type: must be a DNS label");
        ASSERT_EQ(load(HDR "spec: {devglob: [{type: fuse, paths: [dev/fuse]}]}\n", &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "spec.devglob[0].paths[0]: must be an absolute path");
        ASSERT_EQ(load(HDR "spec: {health: {ignoreXids: [13, 2000]}}\n", &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "spec.health.ignoreXids[1]");
        ASSERT_EQ(load(HDR "spec: {health: {eccSingleBit: maybe}}\n", &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "spec.health.eccSingleBit");
        ASSERT_EQ(load(HDR "spec: {pcie: []}\n", &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "pcie");
        ASSERT_EQ(load("apiVersion: v1\nkind: BackendConfig\n", &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "apiVersion: must be devplane.io/v1alpha1");
        ASSERT_EQ(load(HDR "---\n" HDR, &c, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "exactly one document");
        ASSERT_TRUE(c == NULL);
}
