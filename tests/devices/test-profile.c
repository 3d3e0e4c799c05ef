/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/devices/profile.c and device.c: built-in profiles, user
 * profiles, error messages. */
#include "harness.h"

#include "devices/profile.h"

static dp_device_set *builtin(const char *name, const char *node) {
        dp_error err = DP_ERROR_INIT;
        dp_device_set *s = NULL;
        int r = dp_profile_builtin(name, node, &s, &err);
        if (r < 0) DP_FAIL("%s: %s", name, err.msg);
        return s;
}

TEST(builtin_names) {
        const char *const *n = dp_profile_builtin_names();
        size_t k = 0;
        bool ex = false, mixed = false, def = false;
        for (; n[k]; k++) {
                ex |= streq(n[k], "example-gpu");
                mixed |= streq(n[k], "a100-mixed");
                def |= streq(n[k], DP_PROFILE_DEFAULT);
        }
        ASSERT_TRUE(ex && mixed && def);
        for (k = 0; n[k]; k++)
                dp_device_set_free(builtin(n[k], "node-a"));
}

TEST(mig_names) {
        char *id = dp_mig_id_new("gpu-0", "1g.10gb", 2);
        ASSERT_STREQ(id, "gpu-0-mig-1g10gb-2");
        free(id);
        id = dp_mig_id_new("gpu-1", "1g.10gb+me", 0); /* a DNS label: '+' becomes '-' */
        ASSERT_STREQ(id, "gpu-1-mig-1g10gb-me-0");
        free(id);
        id = dp_mig_id_new("gpu-12", "1c.2g.20gb", 13);
        ASSERT_STREQ(id, "gpu-12-mig-1c2g20gb-13");
        free(id);
}

TEST(example_gpu) {
        dp_device_set *s = builtin("example-gpu", "node-a");
        ASSERT_STREQ(s->domain, "example.com");
        ASSERT_STREQ(s->driver_name, "gpu.example.com");
        ASSERT_EQ(s->n_devices, 8);
        for (size_t i = 0; i < 8; i++) {
                char id[16];
                snprintf(id, sizeof id, "gpu-%zu", i);
                ASSERT_STREQ(s->devices[i].id, id);
                ASSERT_EQ(s->devices[i].index, i);
                ASSERT_TRUE(startswith(s->devices[i].uuid, "gpu-"));
                ASSERT_EQ(strlen(s->devices[i].uuid), 4 + 36);
                ASSERT_STREQ(s->devices[i].product, "LATEST-GPU-MODEL");
                ASSERT_STREQ(s->devices[i].driver_version, "1.0.0");
                ASSERT_EQ(s->devices[i].memory_bytes, 80ULL << 30);
                ASSERT_FALSE(s->devices[i].mig_enabled);
        }
        const dp_hw_device *d = &s->devices[0];
        ASSERT_EQ(d->n_attrs, 2);
        ASSERT_STREQ(d->attrs[0].name, "model");
        ASSERT_EQ(d->attrs[0].type, DP_HW_ATTR_STRING);
        ASSERT_STREQ(d->attrs[0].str, "LATEST-GPU-MODEL");
        ASSERT_STREQ(d->attrs[1].name, "driverVersion");
        ASSERT_EQ(d->attrs[1].type, DP_HW_ATTR_VERSION);
        ASSERT_STREQ(d->attrs[1].str, "1.0.0");
        ASSERT_EQ(d->n_capacities, 2);
        ASSERT_STREQ(d->capacities[0].name, "memory");
        ASSERT_STREQ(d->capacities[0].value, "80Gi");
        ASSERT_STREQ(d->capacities[1].name, "compute");
        ASSERT_STREQ(d->capacities[1].value, "100");
        ASSERT_EQ(s->partitions, 0);
        dp_device_set_free(s);
}

TEST(uuids_stable_per_node) {
        dp_device_set *a = builtin("example-gpu", "node-a");
        dp_device_set *a2 = builtin("example-gpu", "node-a");
        dp_device_set *b = builtin("example-gpu", "node-b");
        for (size_t i = 0; i < 8; i++) {
                ASSERT_STREQ(a->devices[i].uuid, a2->devices[i].uuid);
                ASSERT_TRUE(!streq(a->devices[i].uuid, b->devices[i].uuid));
                for (size_t j = 0; j < i; j++)
                        ASSERT_TRUE(!streq(a->devices[i].uuid, a->devices[j].uuid));
        }
        dp_device_set_free(a);
        dp_device_set_free(a2);
        dp_device_set_free(b);
}

TEST(a100_mixed) {
        dp_device_set *s = builtin("a100-mixed", "node-a");
        ASSERT_STREQ(s->domain, "nvidia.com");
        ASSERT_EQ(s->n_devices, 8);
        ASSERT_EQ(dp_device_set_count_mig_enabled(s), 4);
        for (size_t i = 0; i < 8; i++) {
                const dp_hw_device *d = &s->devices[i];
                ASSERT_EQ(d->numa_node, i < 4 ? 0 : 1);
                ASSERT_EQ(d->mig_enabled, i < 4);
                ASSERT_EQ(d->n_migs, i < 4 ? 7 : 0);
                ASSERT_TRUE(startswith(d->uuid, "GPU-"));
                char node[32];
                snprintf(node, sizeof node, "/dev/nvidia%zu", i);
                ASSERT_EQ(d->n_device_nodes, 1);
                ASSERT_STREQ(d->device_nodes[0], node);
                for (size_t j = 0; j < 8; j++)
                        ASSERT_EQ(dp_device_set_nvlinked(s, i, j), i != j);
                for (size_t j = 0; j < d->n_migs; j++) {
                        ASSERT_STREQ(d->migs[j].profile, "1g.10gb");
                        ASSERT_EQ(d->migs[j].parent, i);
                        ASSERT_EQ(d->migs[j].memory_bytes, 10ULL << 30);
                        ASSERT_TRUE(startswith(d->migs[j].uuid, "MIG-"));
                        ASSERT_EQ(d->migs[j].n_device_nodes, 1);
                }
        }
        ASSERT_STREQ(s->devices[0].pci_bus_id, "0000:00:00.0");
        ASSERT_STREQ(s->devices[2].migs[3].id, "gpu-2-mig-1g10gb-3");
        ASSERT_TRUE(dp_device_set_find_mig(s, "gpu-2-mig-1g10gb-3") == &s->devices[2].migs[3]);
        /* the dotted name of earlier releases still finds it; near misses do not */
        ASSERT_TRUE(dp_device_set_find_mig(s, "gpu-2-mig-1g.10gb-3") == &s->devices[2].migs[3]);
        ASSERT_TRUE(dp_device_set_find_mig(s, "gpu-2-mig-1g.10gb-31") == NULL);
        ASSERT_TRUE(dp_device_set_find_mig(s, "gpu-2-mig-1g.10gb-") == NULL);
        ASSERT_TRUE(dp_device_set_find_mig(s, "gpu-2-mig-1g.10g-3") == NULL);
        ASSERT_TRUE(dp_device_set_find_mig(s, "gpu-2-mig-1g-10gb-3") == NULL);
        ASSERT_TRUE(dp_device_set_find_mig(s, s->devices[1].migs[6].uuid) == &s->devices[1].migs[6]);
        ASSERT_TRUE(dp_device_set_find(s, s->devices[5].uuid) == &s->devices[5]);
        ASSERT_TRUE(dp_device_set_find(s, "gpu-9") == NULL);
        ASSERT_EQ(s->n_common_device_nodes, 3);
        dp_device_set_free(s);
}

TEST(default_profile) {
        dp_device_set *s = builtin(DP_PROFILE_DEFAULT, "n");
        ASSERT_EQ(s->n_devices, 8);
        ASSERT_EQ(dp_device_set_count_mig_enabled(s), 0);
        dp_device_set_free(s);
}

static const char *load_err(const char *yaml) {
        static dp_error err;
        dp_error_clear(&err);
        dp_device_set *s = NULL;
        int r = dp_profile_load(yaml, strlen(yaml), "p.yaml", "node-a", &s, &err);
        if (r >= 0) DP_FAIL("expected failure for:\n%s", yaml);
        ASSERT_TRUE(s == NULL);
        return err.msg;
}

#define HEAD "apiVersion: devplane.io/v1alpha1\nkind: DeviceProfile\nmetadata: {name: t}\n"

TEST(user_profile) {
        const char *y = HEAD "spec:\n  domain: acme.io\n  nvlink: [[0, 1], [2, 3]]\n"
                             "  devices:\n  - {count: 2, numaNode: 0, memory: 16Gi}\n"
                             "  - {count: 2, numaNode: 1, memory: 16Gi, health: unhealthy}\n"
                             "  - {type: fpga, count: 1, deviceNodes: [\"/dev/fpga{index}\"], attributes: {lanes: 16, "
                             "fast: true}}\n";
        dp_error err = DP_ERROR_INIT;
        dp_device_set *s = NULL;
        ASSERT_OK(dp_profile_load(y, strlen(y), "p.yaml", "node-a", &s, &err));
        ASSERT_EQ(s->n_devices, 5);
        ASSERT_STREQ(s->devices[4].id, "fpga-0");
        ASSERT_STREQ(s->devices[4].device_nodes[0], "/dev/fpga0");
        ASSERT_EQ(s->devices[4].attrs[0].type, DP_HW_ATTR_INT);
        ASSERT_EQ(s->devices[4].attrs[0].i, 16);
        ASSERT_EQ(s->devices[4].attrs[1].type, DP_HW_ATTR_BOOL);
        ASSERT_TRUE(dp_device_set_nvlinked(s, 0, 1));
        ASSERT_FALSE(dp_device_set_nvlinked(s, 1, 2));
        ASSERT_TRUE(dp_device_set_nvlinked(s, 3, 2));
        ASSERT_EQ(s->devices[2].health, DP_HEALTH_UNHEALTHY);
        ASSERT_STREQ(s->driver_name, "gpu.acme.io");
        ASSERT_STREQ(s->cdi_kind, "acme.io/gpu");
        dp_device_set_free(s);
}

TEST(profile_errors) {
        ASSERT_CONTAINS(load_err("apiVersion: v1\nkind: DeviceProfile\n"),
                        "p.yaml:1:13: DeviceProfile: apiVersion: must be devplane.io/v1alpha1");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, devices: [{count: 1, numaNode: 99}]}\n"),
                        "DeviceProfile t: spec.devices[0].numaNode: must be an integer from -1 to 63, got 99");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, devices: [{cuont: 1}]}\n"),
                        "spec.devices[0].cuont: unknown field");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, devices: [{memory: lots}]}\n"),
                        "spec.devices[0].memory: must be a byte count");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: Bad_Domain, devices: []}\n"),
                        "spec.domain: must be a DNS subdomain");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, devices: [{count: 129}]}\n"),
                        "spec.devices[0].count: must be an integer from 0 to 128");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, devices: [{count: 100}, {count: 100}]}\n"),
                        "a profile holds at most 128 devices");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, nvlink: [[0, 5]], devices: [{count: 2}]}\n"),
                        "spec.nvlink[0][1]: must be an integer from 0 to 1, got 5");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, devices: [{mig: {instances: [{profile: 1G.BIG}]}}]}\n"),
                        "spec.devices[0].mig.instances[0].profile: must be a MIG profile name");
        ASSERT_CONTAINS(
                load_err(HEAD "spec: {domain: x.io, devices: [{mig: {instances: [{profile: 1g.5gb, count: 17}]}}]}\n"),
                "count: must be an integer from 1 to 16");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, devices: [{deviceNodes: [\"/dev/x{nope}\"]}]}\n"),
                        "spec.devices[0].deviceNodes[0]: unknown placeholder");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, devices: [{deviceNodes: [dev/x]}]}\n"),
                        "must be an absolute path");
        ASSERT_CONTAINS(load_err(HEAD "spec: {devices: []}\n"), "spec.domain: required");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, devices: [{health: sick}]}\n"),
                        "health: must be one of healthy, unhealthy");
        ASSERT_CONTAINS(load_err("a: [\n"), "p.yaml");
        ASSERT_CONTAINS(
                load_err(HEAD "spec: {domain: x.io, devices: []}\n---\n" HEAD "spec: {domain: x.io, devices: []}\n"),
                "exactly one document");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, devices: [{attributes: {a: 1.5}}]}\n"),
                        "spec.devices[0].attributes.a: must be a string, integer, boolean");
        ASSERT_CONTAINS(load_err(HEAD "spec: {domain: x.io, devices: [{capacity: {mem: \"1 GB\"}}]}\n"),
                        "spec.devices[0].capacity.mem: must be a quantity");
}

TEST(partition_modes) {
        dp_device_set *s = builtin("a100-dual-mode", "node-a");
        ASSERT_EQ(s->n_devices, 8);
        ASSERT_EQ(s->n_partition_modes, 3);
        const dp_partition_mode *m = s->partition_modes;
        ASSERT_STREQ(m[0].name, "mig");
        ASSERT_EQ(m[0].n_groups, 1);
        ASSERT_STREQ(m[0].groups[0], "mig");
        ASSERT_EQ(m[0].count, 7);
        ASSERT_EQ(m[0].memory_bytes, 10ULL << 30);
        ASSERT_STREQ(m[1].name, "vgpu");
        ASSERT_STREQ(m[1].groups[0], "vgpu");
        ASSERT_EQ(m[1].count, 4);
        ASSERT_FALSE(m[1].whole);
        ASSERT_STREQ(m[2].name, "whole");
        ASSERT_TRUE(m[2].whole);
        ASSERT_EQ(m[2].count, 0);
        ASSERT_STREQ(m[2].groups[0], "vgpu");
        dp_device_set_free(s);
        /* two groups, memory left to the inventory, no groups at all */
        const char *y = HEAD "spec:\n  domain: acme.io\n  devices: [{count: 2, memory: 16Gi}]\n"
                             "  partitionModes:\n  - {name: a, compatibilityGroups: [x, y], count: 2}\n"
                             "  - {name: b, count: 4}\n";
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_profile_load(y, strlen(y), "p.yaml", "node-a", &s, &err));
        ASSERT_EQ(s->partition_modes[0].n_groups, 2);
        ASSERT_STREQ(s->partition_modes[0].groups[1], "y");
        ASSERT_EQ(s->partition_modes[0].memory_bytes, 0);
        ASSERT_EQ(s->partition_modes[1].n_groups, 0);
        dp_device_set_free(s);
}

#define MODES(devs, modes) HEAD "spec:\n  domain: x.io\n  devices: [" devs "]\n  partitionModes: " modes "\n"

TEST(partition_mode_errors) {
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a, compatibilityGroups: [x, y, z], count: 1}]")),
                        "p.yaml:7:51: DeviceProfile t: spec.partitionModes[0].compatibilityGroups: at most 2 "
                        "compatibility groups per device (KEP-5963), got 3");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a, compatibilityGroups: [x, x], count: 1}]")),
                        "spec.partitionModes[0].compatibilityGroups[1]: group x is named twice");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a, compatibilityGroups: [\"a b\"], count: 1}]")),
                        "spec.partitionModes[0].compatibilityGroups[0]: group names are 1 to 63 letters");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a, compatibilityGroups: mig, count: 1}]")),
                        "spec.partitionModes[0].compatibilityGroups: expected a list of group names");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a, count: 1}, {name: a, count: 2}]")),
                        "spec.partitionModes[1].name: mode a is named twice");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: A_B, count: 1}]")),
                        "spec.partitionModes[0].name: must be a DNS label");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{count: 1}]")), "spec.partitionModes[0].name: required");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a}]")),
                        "spec.partitionModes[0].count: required: partitions per GPU (1 to 16), or whole: true");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a, count: 17}]")),
                        "spec.partitionModes[0].count: must be an integer from 1 to 16, got 17");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a, whole: true, count: 2}]")),
                        "spec.partitionModes[0].count: not allowed with whole: true");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a, whole: true}, {name: b, whole: true}]")),
                        "spec.partitionModes[1].whole: only one mode may publish the whole GPU");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a, count: 3, memory: 3Gi}]")),
                        "spec.partitionModes[0].memory: 3 x 3Gi is more than the 8Gi of gpu-0");
        ASSERT_CONTAINS(load_err(MODES("{count: 1}", "[{name: a, count: 1}]")),
                        "spec.partitionModes: every device needs memory (gpu-0 has none)");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[]")), "spec.partitionModes: at least one partition mode");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a, count: 1, colour: red}]")),
                        "spec.partitionModes[0].colour: unknown field");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi, mig: {instances: [{profile: 1g.4gb}]}}", "[{name: a, count: 1}]")),
                        "spec.partitionModes: cannot be combined with devices[].mig (gpu-0)");
        ASSERT_CONTAINS(load_err(HEAD "spec:\n  domain: x.io\n  partitions: 2\n  devices: [{memory: 8Gi}]\n"
                                      "  partitionModes: [{name: a, count: 1}]\n"),
                        "spec.partitionModes: cannot be combined with spec.partitions");
        ASSERT_CONTAINS(load_err(MODES("{memory: 8Gi}", "[{name: a, count: 1}, {name: b, count: 1}, {name: c, count: "
                                                        "1}, {name: d, count: 1}, {name: e, count: 1}, {name: f, count: "
                                                        "1}, {name: g, count: 1}, {name: h, count: 1}, {name: i, count: "
                                                        "1}]")),
                        "spec.partitionModes: at most 8 partition modes");
}

TEST(unknown_builtin) {
        dp_error err = DP_ERROR_INIT;
        dp_device_set *s = NULL;
        ASSERT_EQ(dp_profile_builtin("nope", "n", &s, &err), -ENOENT);
        ASSERT_CONTAINS(err.msg, "unknown built-in profile \"nope\" (built-in: ");
        ASSERT_EQ(dp_profile_resolve("/nonexistent/p.yaml", "n", &s, &err), -ENOENT);
        ASSERT_CONTAINS(err.msg, "/nonexistent/p.yaml");
        ASSERT_OK(dp_profile_resolve("a100-mixed", "n", &s, &err));
        dp_device_set_free(s);
}

/* A built-in profile is decoded once and copied per node (profile.c): the
 * copy must be what decoding the text for that node gives, field by field. */
#define SAME_STR(a, b) ASSERT_TRUE(streq_ptr((a), (b)))
static void same_strv(char *const *a, size_t na, char *const *b, size_t nb) {
        ASSERT_EQ(na, nb);
        for (size_t i = 0; i < na; i++)
                SAME_STR(a[i], b[i]);
}

static void same_set(const dp_device_set *a, const dp_device_set *b) {
        SAME_STR(a->profile, b->profile);
        SAME_STR(a->node_name, b->node_name);
        SAME_STR(a->domain, b->domain);
        SAME_STR(a->driver_name, b->driver_name);
        SAME_STR(a->cdi_kind, b->cdi_kind);
        SAME_STR(a->visible_devices_env, b->visible_devices_env);
        same_strv(a->common_device_nodes, a->n_common_device_nodes, b->common_device_nodes, b->n_common_device_nodes);
        ASSERT_EQ(a->partitions, b->partitions);
        ASSERT_EQ(a->n_devices, b->n_devices);
        for (size_t i = 0; i < a->n_devices; i++) {
                const dp_hw_device *x = &a->devices[i], *y = &b->devices[i];
                SAME_STR(x->id, y->id);
                SAME_STR(x->type, y->type);
                SAME_STR(x->uuid, y->uuid);
                SAME_STR(x->product, y->product);
                SAME_STR(x->architecture, y->architecture);
                SAME_STR(x->driver_version, y->driver_version);
                SAME_STR(x->pci_bus_id, y->pci_bus_id);
                ASSERT_EQ(x->index, y->index);
                ASSERT_EQ(x->memory_bytes, y->memory_bytes);
                ASSERT_EQ(x->numa_node, y->numa_node);
                ASSERT_EQ(x->nvlink[0], y->nvlink[0]);
                ASSERT_EQ(x->nvlink[1], y->nvlink[1]);
                ASSERT_EQ(x->profile_health, y->profile_health);
                ASSERT_EQ(x->health, y->health);
                ASSERT_EQ(x->mig_enabled, y->mig_enabled);
                same_strv(x->device_nodes, x->n_device_nodes, y->device_nodes, y->n_device_nodes);
                ASSERT_EQ(x->n_migs, y->n_migs);
                for (size_t m = 0; m < x->n_migs; m++) {
                        const dp_mig_device *p = &x->migs[m], *q = &y->migs[m];
                        SAME_STR(p->id, q->id);
                        SAME_STR(p->uuid, q->uuid);
                        SAME_STR(p->profile, q->profile);
                        ASSERT_EQ(p->index, q->index);
                        ASSERT_EQ(p->parent, q->parent);
                        ASSERT_EQ(p->memory_bytes, q->memory_bytes);
                        ASSERT_EQ(p->profile_health, q->profile_health);
                        ASSERT_EQ(p->health, q->health);
                        same_strv(p->device_nodes, p->n_device_nodes, q->device_nodes, q->n_device_nodes);
                }
                ASSERT_EQ(x->n_attrs, y->n_attrs);
                for (size_t k = 0; k < x->n_attrs; k++) {
                        SAME_STR(x->attrs[k].name, y->attrs[k].name);
                        ASSERT_EQ(x->attrs[k].type, y->attrs[k].type);
                        SAME_STR(x->attrs[k].str, y->attrs[k].str);
                        ASSERT_EQ(x->attrs[k].i, y->attrs[k].i);
                        ASSERT_EQ(x->attrs[k].b, y->attrs[k].b);
                }
                ASSERT_EQ(x->n_capacities, y->n_capacities);
                for (size_t k = 0; k < x->n_capacities; k++) {
                        SAME_STR(x->capacities[k].name, y->capacities[k].name);
                        SAME_STR(x->capacities[k].value, y->capacities[k].value);
                }
        }
        ASSERT_EQ(a->n_partition_modes, b->n_partition_modes);
        for (size_t i = 0; i < a->n_partition_modes; i++) {
                const dp_partition_mode *x = &a->partition_modes[i], *y = &b->partition_modes[i];
                SAME_STR(x->name, y->name);
                ASSERT_EQ(x->n_groups, y->n_groups);
                for (size_t g = 0; g < x->n_groups; g++)
                        SAME_STR(x->groups[g], y->groups[g]);
                ASSERT_EQ(x->count, y->count);
                ASSERT_EQ(x->whole, y->whole);
                ASSERT_EQ(x->memory_bytes, y->memory_bytes);
        }
}

TEST(builtin_copy_is_a_decode) {
        static const char *const nodes[] = {"node-a", "node-b", "gpu-pool-a-1234", "n"};
        for (const char *const *n = dp_profile_builtin_names(); *n; n++)
                for (size_t k = 0; k < ELEMENTSOF(nodes); k++) {
                        size_t len = 0;
                        const char *text = dp_profile_builtin_text(*n, &len);
                        dp_error err = DP_ERROR_INIT;
                        dp_device_set *direct = NULL;
                        ASSERT_OK(dp_profile_load(text, len, "t", nodes[k], &direct, &err));
                        dp_device_set *copy = builtin(*n, nodes[k]);
                        same_set(copy, direct);
                        if (k > 0) { /* the uuids are the node's own */
                                dp_device_set *a = builtin(*n, "node-a");
                                ASSERT_FALSE(streq(copy->devices[0].uuid, a->devices[0].uuid));
                                dp_device_set_free(a);
                        }
                        dp_device_set_free(copy);
                        dp_device_set_free(direct);
                }
}

TEST(parse_bytes) {
        uint64_t v;
        ASSERT_OK(dp_device_parse_bytes("80Gi", &v));
        ASSERT_EQ(v, 80ULL << 30);
        ASSERT_OK(dp_device_parse_bytes("40G", &v));
        ASSERT_EQ(v, 40000000000ULL);
        ASSERT_OK(dp_device_parse_bytes("123", &v));
        ASSERT_EQ(v, 123);
        ASSERT_TRUE(dp_device_parse_bytes("1.5Gi", &v) < 0);
        ASSERT_TRUE(dp_device_parse_bytes("99999999999999999999", &v) < 0);
        ASSERT_TRUE(dp_device_parse_bytes("16384Pi", &v) < 0);
}
