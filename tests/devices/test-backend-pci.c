/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/devices/backend-pci.c against the fake sysfs tree
 * fixtures/sysfs-pci with the rules of fixtures/pci.backend.yaml. */
#include <stdio.h>

#include "harness.h"

#include "devices/backend.h"
#include "devices/config.h"
#include "devices/v1.h"

static dp_backend *open_pci(const char *config) {
        dp_backend_options o = {.node_name = "node-a", .sysfs_root = "fixtures/sysfs-pci", .config_path = config};
        dp_backend *b = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_backend_open(DP_BACKEND_PCI, &o, &b, &err) < 0) DP_FAIL("open: %s", err.msg);
        return b;
}

static const dp_hw_attr *attr(const dp_hw_device *d, const char *name) {
        for (size_t i = 0; i < d->n_attrs; i++)
                if (!strcmp(d->attrs[i].name, name)) return &d->attrs[i];
        DP_FAIL("%s has no attribute %s", d->id, name);
}

TEST(discover_by_rules) {
        dp_backend *b = open_pci("fixtures/pci.backend.yaml");
        dp_device_set *s = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_backend_discover(b, &s, &err));
        ASSERT_STREQ(s->domain, "example.com");
        ASSERT_STREQ(s->driver_name, "pci.example.com");
        ASSERT_STREQ(s->cdi_kind, "example.com/pci");
        /* In address order: 3b:00.0 (vfio-nic), 3b:00.1 (nic), af:00.0 (fpga);
         * the host bridge matches nothing, the NVMe drive lacks an IOMMU group. */
        ASSERT_EQ(s->n_devices, 3);
        const dp_hw_device *d = &s->devices[0];
        ASSERT_STREQ(d->id, "vfio-nic-0");
        ASSERT_STREQ(d->type, "vfio-nic");
        ASSERT_STREQ(d->pci_bus_id, "0000:3b:00.0");
        ASSERT_EQ(d->numa_node, 0);
        ASSERT_STREQ(d->product, "8086:1572");
        ASSERT_STREQ(attr(d, "vendorID")->str, "8086");
        ASSERT_STREQ(attr(d, "deviceID")->str, "1572");
        ASSERT_STREQ(attr(d, "class")->str, "020000");
        ASSERT_STREQ(attr(d, "driver")->str, "vfio-pci");
        ASSERT_EQ(attr(d, "iommuGroup")->i, 42);
        ASSERT_EQ(d->n_device_nodes, 1);
        ASSERT_STREQ(d->device_nodes[0], "/dev/vfio/42");
        ASSERT_TRUE(!strncmp(d->uuid, "PCI-", 4));
        ASSERT_STREQ(s->devices[1].id, "nic-0");
        ASSERT_STREQ(s->devices[1].device_nodes[0], "/dev/net/tap-0000:3b:00.1");
        ASSERT_STREQ(s->devices[2].id, "fpga-0");
        ASSERT_EQ(s->devices[2].numa_node, 1);
        ASSERT_STREQ(attr(&s->devices[2], "driver")->str, "none");
        ASSERT_STREQ(s->devices[2].device_nodes[0], "/dev/vfio/70");
        ASSERT_EQ(s->n_common_device_nodes, 1);
        ASSERT_STREQ(s->common_device_nodes[0], "/dev/vfio/vfio");

        /* Same uuids on a second discovery (stable per node and address). */
        dp_device_set *again = NULL;
        ASSERT_OK(dp_backend_discover(b, &again, &err));
        ASSERT_STREQ(again->devices[2].uuid, s->devices[2].uuid);
        dp_device_set_free(again);

        /* The V1 path runs on it unchanged: one resource per type; passDeviceSpecs
         * hands out the VFIO group node and /dev/vfio/vfio. */
        const char *cfg = "version: v1\nflags: {plugin: {passDeviceSpecs: true}}\n";
        dp_agent_config *c = NULL;
        ASSERT_OK(dp_agent_config_load(cfg, strlen(cfg), "config", &c, &err));
        dp_v1_plan *p = NULL;
        if (dp_v1_plan_build(s, c, &p, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(p->n_resources, 3);
        ASSERT_STREQ(p->resources[0].name, "example.com/fpga");
        ASSERT_STREQ(p->resources[1].name, "example.com/nic");
        ASSERT_STREQ(p->resources[2].name, "example.com/vfio-nic");
        const char *ids[] = {s->devices[0].uuid};
        dp_v1_container_response *resp = NULL;
        if (dp_v1_allocate(p, s, c, "example.com/vfio-nic", ids, 1, &resp, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(resp->n_devices, 2);
        ASSERT_STREQ(resp->devices[0].host_path, "/dev/vfio/vfio");
        ASSERT_STREQ(resp->devices[1].host_path, "/dev/vfio/42");
        ASSERT_STREQ(resp->envs[0].key, "DEVPLANE_VISIBLE_DEVICES");
        dp_v1_container_response_free(resp);

        /* Explicit faults drive health like any backend's. */
        ASSERT_EQ(dp_backend_dispatch(b, s, 1000, &err), 0);
        ASSERT_EQ(dp_backend_recover(b, s, "fpga-0", 1000), 0);
        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
        dp_backend_close(b);
}

TEST(no_rules_or_no_tree) {
        dp_backend_options o = {.node_name = "node-a", .sysfs_root = "fixtures/sysfs-pci"};
        dp_backend *b = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_backend_open(DP_BACKEND_PCI, &o, &b, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "pci backend: the backend config has no spec.pci rules");
        o.config_path = "fixtures/pci.backend.yaml";
        o.sysfs_root = "fixtures/no-such-sysfs";
        ASSERT_OK(dp_backend_open(DP_BACKEND_PCI, &o, &b, &err));
        dp_device_set *s = NULL;
        ASSERT_EQ(dp_backend_discover(b, &s, &err), -ENOENT);
        ASSERT_CONTAINS(err.msg, "pci backend: cannot read fixtures/no-such-sysfs/bus/pci/devices");
        dp_backend_close(b);
}
