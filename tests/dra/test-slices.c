/* SPDX-License-Identifier: Apache-2.0
 * Tests for dra/inventory.c and dra/slices.c: the slices of every built-in
 * profile, partitions, compatibility groups, splitting, generations, taints. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "dra/inventory.h"
#include "dra/slices.h"
#include "harness.h"

static dp_dra_inventory *inventory(const char *profile, const char *node, const dp_dra_inventory_options *o,
                                   struct dp_device_set **ret_set) {
        struct dp_device_set *set = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_device_set_load(profile, node, &set, &err) < 0) DP_FAIL("load %s: %s", profile, err.msg);
        dp_dra_inventory *inv = NULL;
        if (dp_dra_inventory_build(set, o, &inv, &err) < 0) DP_FAIL("inventory %s: %s", profile, err.msg);
        if (ret_set)
                *ret_set = set;
        else
                dp_dra_device_set_free(set);
        return inv;
}

static size_t build(const dp_dra_inventory *inv, const dp_dra_slice_options *o, dp_resource_slice ***v) {
        size_t n = 0;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_slices_build(inv, o, v, &n, &err) < 0) DP_FAIL("slices: %s", err.msg);
        /* the whole pool validates as Kubernetes would */
        dp_object_list l = {0};
        dp_object *items = calloc(n, sizeof(*items));
        for (size_t i = 0; i < n; i++)
                items[i].slice = (*v)[i];
        l.items = items;
        l.n = n;
        if (dp_model_validate(&l, &err) < 0) DP_FAIL("pool does not validate: %s", err.msg);
        free(items);
        return n;
}

static const dp_device_attribute *attr(const dp_device *d, const char *name) {
        for (size_t i = 0; i < d->n_attributes; i++)
                if (streq(d->attributes[i].name, name)) return &d->attributes[i];
        return NULL;
}

static const dp_device_capacity *cap(const dp_device *d, const char *name) {
        for (size_t i = 0; i < d->n_capacity; i++)
                if (streq(d->capacity[i].name, name)) return &d->capacity[i];
        return NULL;
}

static void qeq(const dp_quantity *q, const char *text) {
        char buf[DP_QUANTITY_MAX_LEN];
        dp_quantity_format(q, buf, sizeof(buf));
        ASSERT_STREQ(buf, text);
}

TEST(example_gpu_whole) {
        dp_dra_inventory *inv = inventory("example-gpu", "node-a", NULL, NULL);
        dp_resource_slice **v = NULL;
        size_t n = build(inv, NULL, &v);
        ASSERT_EQ(n, 1);
        dp_resource_slice *s = v[0];
        ASSERT_STREQ(s->meta.name, "node-a-gpu.example.com-0");
        ASSERT_STREQ(s->driver, "gpu.example.com");
        ASSERT_STREQ(s->pool_name, "node-a");
        ASSERT_STREQ(s->node_name, "node-a");
        ASSERT_EQ(s->pool_generation, 1);
        ASSERT_EQ(s->pool_resource_slice_count, 1);
        ASSERT_EQ(s->n_devices, 8);
        for (size_t i = 0; i < 8; i++) {
                const dp_device *d = &s->devices[i];
                char name[16];
                snprintf(name, sizeof(name), "gpu-%zu", i);
                ASSERT_STREQ(d->name, name);
                ASSERT_EQ(d->n_attributes, 4);
                ASSERT_EQ(attr(d, "index")->type, DP_ATTR_INT);
                ASSERT_EQ(attr(d, "index")->i, (long long)i);
                ASSERT_EQ(attr(d, "uuid")->type, DP_ATTR_STRING);
                ASSERT_TRUE(startswith(attr(d, "uuid")->s, "gpu-"));
                ASSERT_STREQ(attr(d, "model")->s, "LATEST-GPU-MODEL");
                ASSERT_EQ(attr(d, "driverVersion")->type, DP_ATTR_VERSION);
                ASSERT_STREQ(attr(d, "driverVersion")->s, "1.0.0");
                ASSERT_EQ(d->n_capacity, 2);
                qeq(&cap(d, "memory")->value, "80Gi");
                qeq(&cap(d, "compute")->value, "100");
                ASSERT_EQ(d->n_taints, 0);
                ASSERT_EQ(d->n_consumes_counters, 0);
        }
        /* uuids are stable per node name and differ across nodes */
        dp_dra_inventory *again = inventory("example-gpu", "node-a", NULL, NULL);
        dp_dra_inventory *other = inventory("example-gpu", "node-b", NULL, NULL);
        ASSERT_STREQ(again->devices[3].uuid, inv->devices[3].uuid);
        ASSERT_FALSE(streq(other->devices[3].uuid, inv->devices[3].uuid));
        dp_dra_inventory_free(again);
        dp_dra_inventory_free(other);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
}

TEST(example_gpu_partitions) {
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.partitions = 4;
        dp_dra_inventory *inv = inventory("example-gpu", "node-a", &o, NULL);
        ASSERT_EQ(inv->n_counter_sets, 8);
        ASSERT_EQ(inv->n_devices, 8 * 5);
        dp_resource_slice **v = NULL;
        size_t n = build(inv, NULL, &v);
        /* one counter slice (8 sets), 40 counter-consuming devices in one slice */
        ASSERT_EQ(n, 2);
        ASSERT_EQ(v[0]->n_shared_counters, 8);
        ASSERT_EQ(v[0]->n_devices, 0);
        ASSERT_STREQ(v[0]->shared_counters[2].name, "gpu-2-counters");
        ASSERT_EQ(v[0]->shared_counters[2].n_counters, 2);
        ASSERT_EQ(v[1]->n_devices, 40);
        const dp_device *p = dp_dra_slices_find_device(v, n, "node-a", "gpu-2-partition-3", NULL);
        ASSERT_TRUE(p != NULL);
        ASSERT_EQ(p->n_consumes_counters, 1);
        ASSERT_STREQ(p->consumes_counters[0].counter_set, "gpu-2-counters");
        qeq(&cap(p, "memory")->value, "20Gi");
        qeq(&cap(p, "compute")->value, "25");
        ASSERT_EQ(attr(p, "index")->i, 2);
        ASSERT_STREQ(attr(p, "model")->s, "LATEST-GPU-MODEL");
        const dp_device *f = dp_dra_slices_find_device(v, n, "node-a", "gpu-2-full", NULL);
        ASSERT_TRUE(f != NULL);
        qeq(&f->consumes_counters[0].counters[0].value, "80Gi");
        ASSERT_EQ(v[0]->pool_resource_slice_count, 2);
        ASSERT_EQ(v[1]->pool_resource_slice_count, 2);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
}

TEST(a100_mixed_mig) {
        dp_dra_inventory *inv = inventory("a100-mixed", "node-a", NULL, NULL);
        /* GPUs 0-3: 7 MIG each; GPUs 4-7 whole */
        ASSERT_EQ(inv->n_devices, 28 + 4);
        ASSERT_EQ(inv->n_counter_sets, 4);
        dp_resource_slice **v = NULL;
        size_t n = build(inv, NULL, &v);
        ASSERT_EQ(n, 2);
        ASSERT_STREQ(v[0]->driver, "gpu.nvidia.com");
        ASSERT_EQ(v[1]->n_devices, 32);
        const dp_device *m = dp_dra_slices_find_device(v, n, "node-a", "gpu-1-mig-1g10gb-3", NULL);
        ASSERT_TRUE(m != NULL);
        ASSERT_STREQ(attr(m, "type")->s, "mig");
        ASSERT_STREQ(attr(m, "profile")->s, "1g.10gb");
        ASSERT_STREQ(attr(m, "nvidia.com/migProfile")->s, "1g.10gb");
        ASSERT_TRUE(startswith(attr(m, "uuid")->s, "MIG-"));
        ASSERT_TRUE(startswith(attr(m, "parentUUID")->s, "GPU-"));
        ASSERT_STREQ(attr(m, "productName")->s, "NVIDIA A100-SXM4-80GB");
        ASSERT_STREQ(attr(m, "architecture")->s, "Ampere");
        ASSERT_EQ(attr(m, "numa")->i, 0);
        ASSERT_TRUE(attr(m, "resource.kubernetes.io/pcieRoot") != NULL);
        ASSERT_EQ(attr(m, "nvidia.com/healthy")->type, DP_ATTR_BOOL);
        ASSERT_TRUE(attr(m, "nvidia.com/healthy")->b);
        qeq(&cap(m, "memory")->value, "10Gi");
        ASSERT_STREQ(m->consumes_counters[0].counter_set, "gpu-1-counters");
        const dp_device *g = dp_dra_slices_find_device(v, n, "node-a", "gpu-5", NULL);
        ASSERT_STREQ(attr(g, "type")->s, "gpu");
        ASSERT_EQ(attr(g, "numa")->i, 1);
        qeq(&cap(g, "memory")->value, "80Gi");
        ASSERT_EQ(g->n_consumes_counters, 0);
        /* MIG siblings share a parentUUID and a pcieRoot */
        const dp_device *m2 = dp_dra_slices_find_device(v, n, "node-a", "gpu-1-mig-1g10gb-0", NULL);
        ASSERT_STREQ(attr(m2, "parentUUID")->s, attr(m, "parentUUID")->s);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
}

TEST(a100_80gb_8_whole) {
        dp_dra_inventory *inv = inventory("a100-80gb-8", "n1", NULL, NULL);
        dp_resource_slice **v = NULL;
        size_t n = build(inv, NULL, &v);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(v[0]->n_devices, 8);
        const dp_device *g = &v[0]->devices[7];
        ASSERT_STREQ(g->name, "gpu-7");
        ASSERT_STREQ(attr(g, "driverVersion")->s, "550.54.15");
        ASSERT_EQ(attr(g, "cudaComputeCapability")->type, DP_ATTR_VERSION);
        ASSERT_TRUE(attr(g, "nvidia.com/healthy")->b);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
}

TEST(compat_groups) {
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.compat_groups = true;
        dp_dra_inventory *inv = inventory("a100-mixed", "node-a", &o, NULL);
        dp_resource_slice **v = NULL;
        size_t n = build(inv, NULL, &v);
        /* 8 counter sets in one slice; GPUs 0-3: 7 MIG + 4 vGPU + whole; 4-7: 4 + 4 + 1 */
        ASSERT_EQ(inv->n_counter_sets, 8);
        ASSERT_EQ(inv->n_devices, 4 * 12 + 4 * 9);
        ASSERT_STREQ(v[0]->shared_counters[0].name, "gpu-0-memory");
        const dp_device *mig = dp_dra_slices_find_device(v, n, "node-a", "gpu-0-mig-1g10gb-0", NULL);
        ASSERT_STREQ(mig->consumes_counters[0].counter_set, "gpu-0-memory");
        ASSERT_EQ(mig->consumes_counters[0].n_compatibility_groups, 1);
        ASSERT_STREQ(mig->consumes_counters[0].compatibility_groups[0], "mig");
        const dp_device *vg = dp_dra_slices_find_device(v, n, "node-a", "gpu-0-vgpu-1", NULL);
        ASSERT_STREQ(vg->consumes_counters[0].compatibility_groups[0], "vgpu");
        qeq(&vg->consumes_counters[0].counters[0].value, "20Gi");
        const dp_device *w = dp_dra_slices_find_device(v, n, "node-a", "gpu-0", NULL);
        ASSERT_STREQ(w->consumes_counters[0].compatibility_groups[0], "vgpu");
        qeq(&w->consumes_counters[0].counters[0].value, "80Gi");
        const dp_device *m5 = dp_dra_slices_find_device(v, n, "node-a", "gpu-5-mig-2", NULL);
        ASSERT_STREQ(m5->consumes_counters[0].compatibility_groups[0], "mig");
        /* 84 devices with counters: split at 64 */
        size_t devs = 0;
        for (size_t i = 0; i < n; i++) {
                ASSERT_TRUE(v[i]->n_devices <= 64);
                devs += v[i]->n_devices;
        }
        ASSERT_EQ(devs, 84);
        ASSERT_EQ(n, 3);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
}

/* A profile's partition modes (spec.partitionModes) are published without any
 * option: the agent needs no flag. */
TEST(profile_partition_modes) {
        dp_dra_inventory *inv = inventory("a100-dual-mode", "node-a", NULL, NULL);
        dp_resource_slice **v = NULL;
        size_t n = build(inv, NULL, &v);
        ASSERT_EQ(inv->n_counter_sets, 8);
        ASSERT_EQ(inv->n_devices, 8 * (7 + 4 + 1));
        ASSERT_STREQ(v[0]->shared_counters[7].name, "gpu-7-memory");
        qeq(&v[0]->shared_counters[7].counters[0].value, "80Gi");
        const dp_device *mig = dp_dra_slices_find_device(v, n, "node-a", "gpu-3-mig-6", NULL);
        ASSERT_TRUE(mig != NULL);
        ASSERT_STREQ(attr(mig, "mode")->s, "mig");
        ASSERT_STREQ(attr(mig, "type")->s, "partition");
        ASSERT_STREQ(mig->consumes_counters[0].counter_set, "gpu-3-memory");
        ASSERT_EQ(mig->consumes_counters[0].n_compatibility_groups, 1);
        ASSERT_STREQ(mig->consumes_counters[0].compatibility_groups[0], "mig");
        qeq(&mig->consumes_counters[0].counters[0].value, "10Gi");
        qeq(&cap(mig, "memory")->value, "10Gi");
        const dp_device *vg = dp_dra_slices_find_device(v, n, "node-a", "gpu-3-vgpu-3", NULL);
        ASSERT_STREQ(attr(vg, "mode")->s, "vgpu");
        ASSERT_STREQ(vg->consumes_counters[0].compatibility_groups[0], "vgpu");
        qeq(&vg->consumes_counters[0].counters[0].value, "20Gi");
        const dp_device *w = dp_dra_slices_find_device(v, n, "node-a", "gpu-3", NULL);
        ASSERT_STREQ(attr(w, "mode")->s, "whole");
        ASSERT_STREQ(attr(w, "type")->s, "gpu");
        ASSERT_STREQ(w->consumes_counters[0].compatibility_groups[0], "vgpu");
        qeq(&w->consumes_counters[0].counters[0].value, "80Gi");
        /* distinct sub-units per mode: the ledger tells partitions apart */
        const dp_dra_device *a = dp_dra_inventory_find(inv, "gpu-3-mig-0"), *b = dp_dra_inventory_find(inv, "gpu-3-vgpu-0");
        ASSERT_TRUE(a->unit != b->unit && a->physical == b->physical);
        ASSERT_EQ(dp_dra_inventory_find(inv, "gpu-3")->unit, -1);
        ASSERT_TRUE(!streq(a->uuid, b->uuid));
        /* 96 devices with counters: split at 64 */
        ASSERT_EQ(n, 3);
        ASSERT_EQ(v[1]->n_devices + v[2]->n_devices, 96);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);

        /* options do not override the profile; two groups and default memory */
        static const char y[] = "apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: m}\n"
                                "spec:\n  domain: example.com\n  devices: [{count: 1, memory: 30Gi}]\n"
                                "  partitionModes:\n  - {name: a, compatibilityGroups: [x, y], count: 4}\n"
                                "  - {name: b, count: 1}\n";
        char path[] = "/tmp/dp-modes-XXXXXX.yaml";
        int fd = mkstemps(path, 5);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, y, sizeof(y) - 1), (ssize_t)(sizeof(y) - 1));
        close(fd);
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.compat_groups = true;
        o.partitions = 2;
        inv = inventory(path, "node-b", &o, NULL);
        unlink(path);
        ASSERT_EQ(inv->n_devices, 5);
        const dp_dra_device *d = dp_dra_inventory_find(inv, "gpu-0-a-3");
        ASSERT_EQ(d->consumes[0].n_groups, 2);
        ASSERT_STREQ(d->consumes[0].groups[1], "y");
        ASSERT_STREQ(d->consumes[0].counters[0].value, "7680Mi");
        d = dp_dra_inventory_find(inv, "gpu-0-b-0");
        ASSERT_EQ(d->consumes[0].n_groups, 0);
        ASSERT_STREQ(d->consumes[0].counters[0].value, "30Gi");
        n = build(inv, NULL, &v);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
}

/* An unhealthy GPU takes every partition of every mode with it. */
TEST(profile_partition_modes_health) {
        struct dp_device_set *set = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_dra_device_set_load("a100-dual-mode", "node-a", &set, &err));
        ASSERT_OK(dp_dra_device_set_health(set, "gpu-2", false, &err));
        dp_dra_inventory *inv = NULL;
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        size_t sick = 0;
        for (size_t i = 0; i < inv->n_devices; i++) {
                const dp_dra_device *d = &inv->devices[i];
                bool on2 = streq(d->name, "gpu-2") || startswith(d->name, "gpu-2-");
                ASSERT_EQ(d->healthy, !on2);
                if (on2) {
                        ASSERT_STREQ(d->fault_class, "unhealthy");
                        ASSERT_FALSE(dp_dra_device_attr(d, "nvidia.com/healthy")->b);
                        sick++;
                }
        }
        ASSERT_EQ(sick, 12);
        dp_dra_inventory_free(inv);
        dp_dra_device_set_free(set);
}

static const char big_profile[] = "apiVersion: devplane.io/v1alpha1\n"
                                  "kind: DeviceProfile\n"
                                  "metadata: {name: big}\n"
                                  "spec:\n"
                                  "  domain: example.com\n"
                                  "  devices:\n"
                                  "  - count: 128\n"
                                  "    memory: 16Gi\n";

TEST(split_at_limits) {
        char path[] = "/tmp/dp-dra-big-XXXXXX";
        int fd = mkstemp(path);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, big_profile, sizeof(big_profile) - 1), (long long)sizeof(big_profile) - 1);
        close(fd);
        struct dp_device_set *set = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_device_set_load(path, "node-a", &set, &err) < 0) DP_FAIL("%s", err.msg);
        unlink(path);
        dp_dra_inventory *inv = NULL;
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        dp_resource_slice **v = NULL;
        size_t n = build(inv, NULL, &v);
        ASSERT_EQ(n, 1); /* 128 plain devices fit one slice */
        ASSERT_EQ(v[0]->n_devices, 128);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
        /* one taint: the limit drops to 64 per slice */
        ASSERT_OK(dp_dra_device_set_health(set, "gpu-100", false, &err));
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        n = build(inv, NULL, &v);
        ASSERT_EQ(n, 2);
        ASSERT_EQ(v[0]->n_devices, 100);
        ASSERT_EQ(v[1]->n_devices, 28);
        ASSERT_EQ(v[1]->devices[0].n_taints, 1);
        ASSERT_EQ(v[0]->pool_resource_slice_count, 2);
        ASSERT_STREQ(v[1]->meta.name, "node-a-gpu.example.com-1");
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
        /* taints switched off: no taint, so no lower limit */
        dp_dra_slice_options off = DP_DRA_SLICE_OPTIONS_INIT;
        off.default_effect = DP_DRA_TAINT_OFF;
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        ASSERT_OK(dp_dra_slices_build(inv, &off, &v, &n, &err));
        ASSERT_EQ(n, 1);
        ASSERT_EQ(v[0]->devices[100].n_taints, 0);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
        /* partitions: 128 x (2 + full) = 384 consuming devices and 128 sets */
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.partitions = 2;
        ASSERT_OK(dp_dra_inventory_build(set, &o, &inv, &err));
        n = build(inv, NULL, &v);
        ASSERT_EQ(n, 16 + 6);
        for (size_t i = 0; i < 16; i++)
                ASSERT_EQ(v[i]->n_shared_counters, 8);
        for (size_t i = 16; i < n; i++)
                ASSERT_EQ(v[i]->n_devices, 64);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
        dp_dra_device_set_free(set);
}

TEST(taints_and_generation) {
        struct dp_device_set *set = NULL;
        dp_dra_inventory *inv = inventory("a100-mixed", "node-a", NULL, &set);
        dp_dra_publisher *p = dp_dra_publisher_new(5);
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_dra_publisher_update(p, inv, NULL, &err), 1);
        ASSERT_EQ(dp_dra_publisher_generation(p), 5);
        /* same inputs: no new generation */
        ASSERT_EQ(dp_dra_publisher_update(p, inv, NULL, &err), 0);
        ASSERT_EQ(dp_dra_publisher_generation(p), 5);
        dp_dra_inventory_free(inv);

        /* gpu-5 unhealthy, gpu-1 in fault class xid-79 with NoExecute */
        ASSERT_OK(dp_dra_device_set_health(set, "gpu-5", false, &err));
        ASSERT_OK(dp_dra_device_set_health(set, "gpu-1", false, &err));
        dp_dra_fault faults[] = {{"gpu-1", "xid-79"}};
        dp_dra_inventory_options io = DP_DRA_INVENTORY_OPTIONS_INIT;
        io.faults = faults;
        io.n_faults = 1;
        ASSERT_OK(dp_dra_inventory_build(set, &io, &inv, &err));
        dp_dra_taint_rule rules[] = {{"xid-79", DP_DRA_TAINT_NO_EXECUTE}};
        dp_dra_slice_options so = DP_DRA_SLICE_OPTIONS_INIT;
        so.rules = rules;
        so.n_rules = 1;
        ASSERT_EQ(dp_dra_publisher_update(p, inv, &so, &err), 1);
        ASSERT_EQ(dp_dra_publisher_generation(p), 6);
        size_t n = 0;
        dp_resource_slice *const *v = dp_dra_publisher_slices(p, &n);
        for (size_t i = 0; i < n; i++)
                ASSERT_EQ(v[i]->pool_generation, 6);
        const dp_device *g5 = dp_dra_slices_find_device(v, n, "node-a", "gpu-5", NULL);
        ASSERT_EQ(g5->n_taints, 1);
        ASSERT_STREQ(g5->taints[0].key, "gpu.nvidia.com/unhealthy");
        ASSERT_STREQ(g5->taints[0].effect, "NoSchedule");
        ASSERT_FALSE(attr(g5, "nvidia.com/healthy")->b);
        /* a MIG instance of an unhealthy parent is tainted with the parent's class */
        const dp_device *m = dp_dra_slices_find_device(v, n, "node-a", "gpu-1-mig-1g10gb-6", NULL);
        ASSERT_EQ(m->n_taints, 1);
        ASSERT_STREQ(m->taints[0].key, "gpu.nvidia.com/xid-79");
        ASSERT_STREQ(m->taints[0].effect, "NoExecute");
        dp_dra_inventory_free(inv);

        /* effect None and off */
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        so.n_rules = 0;
        so.default_effect = DP_DRA_TAINT_NONE;
        ASSERT_EQ(dp_dra_publisher_update(p, inv, &so, &err), 1);
        v = dp_dra_publisher_slices(p, &n);
        ASSERT_STREQ(dp_dra_slices_find_device(v, n, "node-a", "gpu-5", NULL)->taints[0].effect, "None");
        so.default_effect = DP_DRA_TAINT_OFF;
        ASSERT_EQ(dp_dra_publisher_update(p, inv, &so, &err), 1);
        v = dp_dra_publisher_slices(p, &n);
        ASSERT_EQ(dp_dra_slices_find_device(v, n, "node-a", "gpu-5", NULL)->n_taints, 0);
        ASSERT_EQ(dp_dra_publisher_generation(p), 8);
        dp_dra_inventory_free(inv);

        /* recovery: taints gone, healthy again, next generation */
        ASSERT_OK(dp_dra_device_set_health(set, "gpu-5", true, &err));
        ASSERT_OK(dp_dra_device_set_health(set, "gpu-1", true, &err));
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        ASSERT_EQ(dp_dra_publisher_update(p, inv, NULL, &err), 1);
        ASSERT_EQ(dp_dra_publisher_generation(p), 9);
        v = dp_dra_publisher_slices(p, &n);
        for (size_t i = 0; i < n; i++)
                for (size_t j = 0; j < v[i]->n_devices; j++)
                        ASSERT_EQ(v[i]->devices[j].n_taints, 0);
        ASSERT_TRUE(attr(dp_dra_slices_find_device(v, n, "node-a", "gpu-5", NULL), "nvidia.com/healthy")->b);
        dp_dra_inventory_free(inv);
        dp_dra_publisher_free(p);
        dp_dra_device_set_free(set);
}

TEST(emit_deterministic) {
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.partitions = 2;
        dp_dra_inventory *inv = inventory("example-gpu", "node-a", &o, NULL);
        dp_resource_slice **v = NULL;
        size_t n = build(inv, NULL, &v);
        dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT, j = DP_STRBUF_INIT;
        ASSERT_OK(dp_dra_slices_emit(v, n, DP_DOC_YAML, &a));
        ASSERT_OK(dp_dra_slices_emit(v, n, DP_DOC_YAML, &b));
        ASSERT_STREQ(a.buf, b.buf);
        ASSERT_CONTAINS(a.buf, "kind: ResourceSlice");
        ASSERT_CONTAINS(a.buf, "name: gpu-0-counters");
        /* the output decodes back to the same slices */
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer(a.buf, a.len, "out.yaml", l, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(l->n, n);
        ASSERT_OK(dp_model_validate(l, &err));
        ASSERT_OK(dp_dra_slices_emit(v, n, DP_DOC_JSON_PRETTY, &j));
        ASSERT_CONTAINS(j.buf, "\"kind\": \"List\"");
        dp_object_list_free(l);
        dp_strbuf_done(&a);
        dp_strbuf_done(&b);
        dp_strbuf_done(&j);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
}

TEST(bad_options) {
        struct dp_device_set *set = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_dra_device_set_load("example-gpu", "node-a", &set, &err));
        dp_dra_fault faults[] = {{"gpu-42", "x"}};
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.faults = faults;
        o.n_faults = 1;
        dp_dra_inventory *inv = NULL;
        ASSERT_EQ(dp_dra_inventory_build(set, &o, &inv, &err), -ENOENT);
        ASSERT_CONTAINS(err.msg, "unknown device gpu-42");
        o.n_faults = 0;
        o.partitions = 99;
        ASSERT_EQ(dp_dra_inventory_build(set, &o, &inv, &err), -E2BIG);
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        dp_dra_taint_rule rules[] = {{"Bad Class!", DP_DRA_TAINT_NO_SCHEDULE}};
        dp_dra_slice_options so = DP_DRA_SLICE_OPTIONS_INIT;
        so.rules = rules;
        so.n_rules = 1;
        dp_resource_slice **v = NULL;
        size_t n = 0;
        ASSERT_EQ(dp_dra_slices_build(inv, &so, &v, &n, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "fault class");
        dp_dra_taint_effect e;
        ASSERT_OK(dp_dra_taint_effect_from_string("NoExecute", &e));
        ASSERT_EQ(e, DP_DRA_TAINT_NO_EXECUTE);
        ASSERT_EQ(dp_dra_taint_effect_from_string("Sometimes", &e), -EINVAL);
        dp_dra_inventory_free(inv);
        dp_dra_device_set_free(set);
}

TEST(no_devices) {
        static const char empty[] = "apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: none}\n"
                                    "spec: {domain: example.com, devices: []}\n";
        char path[] = "/tmp/dp-dra-empty-XXXXXX";
        int fd = mkstemp(path);
        ASSERT_TRUE(fd >= 0);
        ASSERT_EQ(write(fd, empty, sizeof(empty) - 1), (long long)sizeof(empty) - 1);
        close(fd);
        struct dp_device_set *set = NULL;
        dp_error err = DP_ERROR_INIT;
        int r = dp_dra_device_set_load(path, "node-a", &set, &err);
        unlink(path);
        if (r < 0) DP_FAIL("%s", err.msg);
        dp_dra_inventory *inv = NULL;
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        dp_resource_slice **v = NULL;
        size_t n = build(inv, NULL, &v);
        /* the pool is still published, empty, so consumers see the node has none */
        ASSERT_EQ(n, 1);
        ASSERT_EQ(v[0]->n_devices, 0);
        ASSERT_EQ(v[0]->pool_resource_slice_count, 1);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
        dp_dra_device_set_free(set);
}
