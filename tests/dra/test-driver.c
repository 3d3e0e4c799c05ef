/* SPDX-License-Identifier: Apache-2.0
 * Tests for dra/driver.c: idempotent prepare across calls and restarts,
 * unprepare, ledger refusal leaves nothing behind. */
#include <stdio.h>
#include <sys/stat.h>

#include "dra/cdi.h"
#include "dra/driver.h"
#include "dra/slices.h"
#include "harness.h"

static const char claim_yaml[] =
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
        "metadata: {name: c1, namespace: ns, uid: uid-1}\n"
        "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 2}}]}}\n"
        "status:\n  allocation:\n    devices:\n      results:\n"
        "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-2}\n"
        "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-3}\n";

static bool exists(const char *dir, const char *name) {
        char p[1024];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        struct stat st;
        return stat(p, &st) == 0;
}

TEST(prepare_unprepare_restart) {
        dp_error err = DP_ERROR_INIT;
        struct dp_device_set *set = NULL;
        ASSERT_OK(dp_dra_device_set_load("example-gpu", "node-a", &set, &err));
        dp_dra_inventory *inv = NULL;
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        dp_dra_publisher *pub = dp_dra_publisher_new(1);
        ASSERT_EQ(dp_dra_publisher_update(pub, inv, NULL, &err), 1);
        dp_dra_prepare_input in = {0};
        in.inv = inv;
        in.slices = dp_dra_publisher_slices(pub, &in.n_slices);
        char root[] = "/tmp/dp-dra-drv-XXXXXX";
        ASSERT_TRUE(mkdtemp(root) != NULL);
        char cdi[600], md[600], state[600], ck[700];
        snprintf(cdi, sizeof(cdi), "%s/cdi", root);
        snprintf(md, sizeof(md), "%s/md", root);
        snprintf(state, sizeof(state), "%s/state", root);
        snprintf(ck, sizeof(ck), "%s/checkpoint.json", state);
        mkdir(cdi, 0755);
        mkdir(md, 0755);
        mkdir(state, 0755);
        dp_dra_node_dirs dirs = {cdi, md, state, NULL};
        dp_object_list *l = dp_object_list_new();
        ASSERT_OK(dp_model_decode_buffer(claim_yaml, sizeof(claim_yaml) - 1, "c", l, &err));
        const dp_resource_claim *claim = l->items[0].claim;

        dp_dra_checkpoint *c = dp_dra_checkpoint_new("gpu.example.com", "node-a");
        dp_ledger *led = dp_ledger_new(set, inv);
        /* V1 holds gpu-3: the claim is refused and nothing is left behind */
        const char *v1[] = {"gpu-3"};
        ASSERT_OK(dp_ledger_acquire(led, DP_LEDGER_V1, "pod p/ctr", v1, 1, 0, &err));
        dp_dra_prepared_claim pc;
        ASSERT_EQ(dp_dra_node_prepare(c, led, &in, claim, &dirs, &pc, &err), -EBUSY);
        ASSERT_CONTAINS(err.msg, "device gpu-3 is held through V1 by pod p/ctr");
        ASSERT_EQ(c->n_claims, 0);
        ASSERT_FALSE(exists(cdi, "k8s.gpu.example.com-gpu_uid-1.json"));
        ASSERT_TRUE(dp_ledger_holder(led, "gpu-2", NULL) == NULL);
        ASSERT_EQ(dp_ledger_release(led, "pod p/ctr"), 1);

        /* prepared once, then answered from the checkpoint */
        if (dp_dra_node_prepare(c, led, &in, claim, &dirs, &pc, &err) != 1) DP_FAIL("%s", err.msg);
        ASSERT_TRUE(exists(cdi, "k8s.gpu.example.com-gpu_uid-1.json"));
        ASSERT_TRUE(exists(md, "uid-1/gpu/gpu.example.com-metadata.json"));
        ASSERT_TRUE(exists(state, "checkpoint.json"));
        ASSERT_STREQ(dp_ledger_holder(led, "gpu-3", NULL), "claim ns/c1 (uid-1)");
        dp_dra_prepared_claim again;
        ASSERT_EQ(dp_dra_node_prepare(c, led, &in, claim, &dirs, &again, &err), 0);
        ASSERT_STREQ(again.devices[1].cdi_ids[0], pc.devices[1].cdi_ids[0]);
        ASSERT_EQ(again.metadata_generation, 1);
        dp_dra_prepared_claim_done(&again);

        /* restart: a fresh process reads the checkpoint and gives the same answer */
        dp_dra_checkpoint *c2 = NULL;
        if (dp_dra_checkpoint_load(ck, &c2, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(dp_dra_node_prepare(c2, NULL, &in, claim, &dirs, &again, &err), 0);
        ASSERT_STREQ(again.devices[0].device, "gpu-2");
        ASSERT_STREQ(again.cdi_spec_file, "k8s.gpu.example.com-gpu_uid-1.json");
        dp_dra_prepared_claim_done(&again);
        dp_dra_checkpoint_free(c2);

        /* unprepare: files, holds and entry go; twice is fine */
        ASSERT_EQ(dp_dra_node_unprepare(c, led, "uid-1", &dirs, &err), 1);
        ASSERT_FALSE(exists(cdi, "k8s.gpu.example.com-gpu_uid-1.json"));
        ASSERT_FALSE(exists(md, "uid-1"));
        ASSERT_EQ(dp_ledger_count(led), 0);
        ASSERT_EQ(dp_dra_node_unprepare(c, led, "uid-1", &dirs, &err), 0);
        if (dp_dra_checkpoint_load(ck, &c2, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(c2->n_claims, 0);
        dp_dra_checkpoint_free(c2);

        /* a corrupt checkpoint on disk is reported, never trusted */
        FILE *f = fopen(ck, "a");
        fputs("x", f);
        fclose(f);
        ASSERT_EQ(dp_dra_checkpoint_load(ck, &c2, &err), -EBADMSG);
        ASSERT_CONTAINS(err.msg, "checkpoint corrupt");

        dp_dra_prepared_claim_done(&pc);
        unlink(ck);
        rmdir(state);
        rmdir(md);
        rmdir(cdi);
        rmdir(root);
        dp_ledger_free(led);
        dp_dra_checkpoint_free(c);
        dp_object_list_free(l);
        dp_dra_publisher_free(pub);
        dp_dra_inventory_free(inv);
        dp_dra_device_set_free(set);
}

TEST(slices_dir) {
        dp_error err = DP_ERROR_INIT;
        struct dp_device_set *set = NULL;
        ASSERT_OK(dp_dra_device_set_load("example-gpu", "node-a", &set, &err));
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.partitions = 2;
        dp_dra_inventory *inv = NULL;
        ASSERT_OK(dp_dra_inventory_build(set, &o, &inv, &err));
        dp_resource_slice **v = NULL;
        size_t n = 0;
        ASSERT_OK(dp_dra_slices_build(inv, NULL, &v, &n, &err));
        ASSERT_EQ(n, 2);
        char dir[] = "/tmp/dp-dra-slices-XXXXXX";
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        /* a file of another pool stays */
        char other[128];
        snprintf(other, sizeof(other), "%s/node-b-gpu.example.com-5.yaml", dir);
        FILE *f = fopen(other, "w");
        fputs("x", f);
        fclose(f);
        ASSERT_OK(dp_dra_slices_write_dir(v, n, dir, DP_DOC_YAML, &err));
        ASSERT_TRUE(exists(dir, "node-a-gpu.example.com-0.yaml"));
        ASSERT_TRUE(exists(dir, "node-a-gpu.example.com-1.yaml"));
        /* the written files load back as a valid pool */
        char p0[128], p1[128];
        snprintf(p0, sizeof(p0), "%s/node-a-gpu.example.com-0.yaml", dir);
        snprintf(p1, sizeof(p1), "%s/node-a-gpu.example.com-1.yaml", dir);
        const char *paths[] = {p0, p1};
        dp_object_list *l = NULL;
        if (dp_model_load(paths, 2, &l, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(l->n, 2);
        dp_object_list_free(l);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
        /* the pool shrinks to one slice: the stale file goes */
        ASSERT_OK(dp_dra_inventory_build(set, NULL, &inv, &err));
        ASSERT_OK(dp_dra_slices_build(inv, NULL, &v, &n, &err));
        ASSERT_EQ(n, 1);
        ASSERT_OK(dp_dra_slices_write_dir(v, n, dir, DP_DOC_JSON_PRETTY, &err));
        ASSERT_OK(dp_dra_slices_write_dir(v, n, dir, DP_DOC_YAML, &err));
        ASSERT_TRUE(exists(dir, "node-a-gpu.example.com-0.yaml"));
        ASSERT_TRUE(exists(dir, "node-a-gpu.example.com-0.json"));
        ASSERT_FALSE(exists(dir, "node-a-gpu.example.com-1.yaml"));
        ASSERT_TRUE(exists(dir, "node-b-gpu.example.com-5.yaml"));
        char j[128];
        snprintf(j, sizeof(j), "%s/node-a-gpu.example.com-0.json", dir);
        char *buf = NULL;
        size_t len = 0;
        ASSERT_OK(dp_dra_file_read(j, 1 << 20, &buf, &len, &err));
        ASSERT_TRUE(startswith(buf, "{\n  \"apiVersion\": \"resource.k8s.io/v1\""));
        free(buf);
        unlink(j);
        unlink(p0);
        unlink(other);
        rmdir(dir);
        dp_dra_slices_free(v, n);
        dp_dra_inventory_free(inv);
        dp_dra_device_set_free(set);
}
