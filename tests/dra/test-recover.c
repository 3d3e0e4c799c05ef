/* SPDX-License-Identifier: Apache-2.0
 * Tests for dra/recover.c and recover-io.c: a prepared claim comes back
 * from the CDI spec the driver wrote (same devices, CDI ids, shareID);
 * foreign or damaged specs are refused; temp files and orphaned specs of
 * ours are removed at start, nobody else's. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "dra/cdi.h"
#include "dra/driver.h"
#include "dra/recover.h"
#include "dra/slices.h"
#include "harness.h"

static const char claim_yaml[] =
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
        "metadata: {name: c1, namespace: ns, uid: uid-1}\n"
        "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 2}}]}}\n"
        "status:\n  allocation:\n    devices:\n      results:\n"
        "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-2}\n"
        "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-3, shareID: s-42}\n";

typedef struct fixture {
        struct dp_device_set *set;
        dp_dra_inventory *inv;
        dp_dra_publisher *pub;
        dp_object_list *l;
        dp_dra_prepare_output out;
} fixture;

static void setup(fixture *f) {
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_dra_device_set_load("example-gpu", "node-a", &f->set, &err));
        ASSERT_OK(dp_dra_inventory_build(f->set, NULL, &f->inv, &err));
        f->pub = dp_dra_publisher_new(1);
        ASSERT_EQ(dp_dra_publisher_update(f->pub, f->inv, NULL, &err), 1);
        dp_dra_prepare_input in = {0};
        in.inv = f->inv;
        in.slices = dp_dra_publisher_slices(f->pub, &in.n_slices);
        f->l = dp_object_list_new();
        ASSERT_OK(dp_model_decode_buffer(claim_yaml, sizeof(claim_yaml) - 1, "c", f->l, &err));
        if (dp_dra_prepare(&in, f->l->items[0].claim, &f->out, &err) < 0) DP_FAIL("%s", err.msg);
}

static void teardown(fixture *f) {
        dp_dra_prepare_output_done(&f->out);
        dp_object_list_free(f->l);
        dp_dra_publisher_free(f->pub);
        dp_dra_inventory_free(f->inv);
        dp_dra_device_set_free(f->set);
}

TEST(names) {
        char *uid = NULL;
        ASSERT_EQ(dp_dra_spec_file_uid("k8s.gpu.example.com/gpu", "k8s.gpu.example.com-gpu_uid-1.json", &uid), 1);
        ASSERT_STREQ(uid, "uid-1");
        free(uid);
        ASSERT_EQ(dp_dra_spec_file_uid("k8s.gpu.example.com/gpu", "k8s.gpu.example.com-gpu_.json", &uid), 0);
        ASSERT_EQ(dp_dra_spec_file_uid("k8s.gpu.example.com/gpu", "nvidia.com-gpu_uid-1.json", &uid), 0);
        ASSERT_EQ(dp_dra_spec_file_uid("k8s.gpu.example.com/gpu", "k8s.gpu.example.com-gpu_uid-1.yaml", &uid), 0);
        const char *k = "k8s.gpu.example.com/gpu";
        ASSERT_TRUE(dp_dra_own_temp_file(k, NULL, ".k8s.gpu.example.com-gpu_uid-1.json.a1B2c3"));
        ASSERT_TRUE(dp_dra_own_temp_file(NULL, "checkpoint.json", ".checkpoint.json.Zz09aa"));
        ASSERT_FALSE(dp_dra_own_temp_file(k, NULL, ".checkpoint.json.Zz09aa"));
        ASSERT_FALSE(dp_dra_own_temp_file(k, NULL, ".nvidia.com-gpu_uid-1.json.a1B2c3"));
        ASSERT_FALSE(dp_dra_own_temp_file(k, NULL, ".k8s.gpu.example.com-gpu_uid-1.json.a1B2c"));
        ASSERT_FALSE(dp_dra_own_temp_file(k, NULL, ".k8s.gpu.example.com-gpu_uid-1.json.a1B2c-"));
        ASSERT_FALSE(dp_dra_own_temp_file(k, NULL, "k8s.gpu.example.com-gpu_uid-1.json"));
        ASSERT_FALSE(dp_dra_own_temp_file(k, "checkpoint.json", ".abcdef"));
}

TEST(claim_back_from_its_spec) {
        fixture f = {0};
        setup(&f);
        dp_error err = DP_ERROR_INIT;
        dp_dra_prepared_claim c;
        bool admin = true;
        if (dp_dra_recover_claim(f.inv, f.out.cdi_spec.name, f.out.cdi_spec.data, f.out.cdi_spec.len, &c, &admin,
                                 &err) < 0)
                DP_FAIL("%s", err.msg);
        ASSERT_FALSE(admin);
        ASSERT_STREQ(c.uid, "uid-1");
        ASSERT_STREQ(c.name, "");
        ASSERT_STREQ(c.cdi_spec_file, "k8s.gpu.example.com-gpu_uid-1.json");
        ASSERT_EQ(c.n_devices, 2);
        for (size_t i = 0; i < 2; i++) {
                ASSERT_STREQ(c.devices[i].device, f.out.claim.devices[i].device);
                ASSERT_STREQ(c.devices[i].pool, "node-a");
                ASSERT_STREQ(c.devices[i].cdi_ids[0], f.out.claim.devices[i].cdi_ids[0]);
        }
        ASSERT_TRUE(c.devices[0].share_id == NULL);
        ASSERT_STREQ(c.devices[1].share_id, "s-42");
        dp_dra_prepared_claim_done(&c);
        teardown(&f);
}

TEST(damaged_or_foreign_specs_refused) {
        fixture f = {0};
        setup(&f);
        dp_error err = DP_ERROR_INIT;
        dp_dra_prepared_claim c;
        const char *name = f.out.cdi_spec.name;
        /* the same bytes under another claim's name: devices not of that claim */
        ASSERT_EQ(dp_dra_recover_claim(f.inv, "k8s.gpu.example.com-gpu_uid-2.json", f.out.cdi_spec.data,
                                       f.out.cdi_spec.len, &c, NULL, &err),
                  -EBADMSG);
        ASSERT_CONTAINS(err.msg, "is not \"uid-2-gpu-2\"");
        /* truncated */
        ASSERT_EQ(dp_dra_recover_claim(f.inv, name, f.out.cdi_spec.data, f.out.cdi_spec.len / 2, &c, NULL, &err),
                  -EBADMSG);
        ASSERT_CONTAINS(err.msg, "CDI spec k8s.gpu.example.com-gpu_uid-1.json");
        /* one changed byte in a device name: not in the inventory */
        char *b = strndup(f.out.cdi_spec.data, f.out.cdi_spec.len);
        char *p = strstr(b, "=gpu-2\"");
        ASSERT_TRUE(p != NULL);
        p[5] = '9';
        ASSERT_EQ(dp_dra_recover_claim(f.inv, name, b, f.out.cdi_spec.len, &c, NULL, &err), -EBADMSG);
        free(b);
        /* another driver's */
        b = strndup(f.out.cdi_spec.data, f.out.cdi_spec.len);
        p = strstr(b, "DRA_RESOURCE_DRIVER_NAME=gpu.");
        ASSERT_TRUE(p != NULL);
        p[25] = 'x';
        ASSERT_EQ(dp_dra_recover_claim(f.inv, name, b, f.out.cdi_spec.len, &c, NULL, &err), -EXDEV);
        ASSERT_CONTAINS(err.msg, "not written by driver gpu.example.com on node node-a");
        free(b);
        ASSERT_EQ(dp_dra_recover_claim(f.inv, "other.json", f.out.cdi_spec.data, f.out.cdi_spec.len, &c, NULL, &err),
                  -EBADMSG);
        teardown(&f);
}

static void put(const char *dir, const char *name, const char *data) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        FILE *fp = fopen(p, "w");
        ASSERT_TRUE(fp != NULL);
        fputs(data, fp);
        fclose(fp);
}

static bool exists(const char *dir, const char *name) {
        char p[1024];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        struct stat st;
        return lstat(p, &st) == 0;
}

TEST(start_up_walk) {
        fixture f = {0};
        setup(&f);
        dp_error err = DP_ERROR_INIT;
        char root[] = "/tmp/dp-dra-rec-XXXXXX";
        ASSERT_TRUE(mkdtemp(root) != NULL);
        char cdi[600], state[600];
        snprintf(cdi, sizeof cdi, "%s/cdi", root);
        snprintf(state, sizeof state, "%s/state", root);
        mkdir(cdi, 0755);
        mkdir(state, 0755);
        put(cdi, f.out.cdi_spec.name, f.out.cdi_spec.data);
        put(cdi, "k8s.gpu.example.com-gpu_uid-bad.json", "{\"kind\":");
        put(cdi, ".k8s.gpu.example.com-gpu_uid-7.json.Ab12Cd", "{");
        put(cdi, "nvidia.com-gpu_uid-9.json", "{}");
        put(cdi, ".nvidia.com-gpu_uid-9.json.Ab12Cd", "{");
        put(state, ".checkpoint.json.xY12zz", "{");
        char fifo[700];
        snprintf(fifo, sizeof fifo, "%s/k8s.gpu.example.com-gpu_uid-fifo.json", cdi);
        ASSERT_OK(mkfifo(fifo, 0600));

        /* a trusted checkpoint that does not name them: orphans of ours go */
        dp_dra_checkpoint *ck = dp_dra_checkpoint_new("gpu.example.com", "node-a");
        dp_dra_recovery rec;
        if (dp_dra_recover_dirs(ck, f.inv, cdi, state, "checkpoint.json", false, &rec, &err) < 0)
                DP_FAIL("%s", err.msg);
        ASSERT_EQ(rec.orphans, 1);
        ASSERT_EQ(rec.temps, 2);
        ASSERT_EQ(rec.n_unknown, 1); /* damage is unknown whatever the checkpoint says */
        ASSERT_STREQ(rec.unknown[0], "uid-bad");
        ASSERT_FALSE(exists(cdi, f.out.cdi_spec.name));
        ASSERT_FALSE(exists(cdi, ".k8s.gpu.example.com-gpu_uid-7.json.Ab12Cd"));
        ASSERT_FALSE(exists(state, ".checkpoint.json.xY12zz"));
        ASSERT_TRUE(exists(cdi, "k8s.gpu.example.com-gpu_uid-bad.json")); /* kept until unprepared */
        ASSERT_TRUE(exists(cdi, "nvidia.com-gpu_uid-9.json"));
        ASSERT_TRUE(exists(cdi, ".nvidia.com-gpu_uid-9.json.Ab12Cd"));
        ASSERT_TRUE(exists(cdi, "k8s.gpu.example.com-gpu_uid-fifo.json"));
        dp_dra_recovery_done(&rec);

        /* a corrupt checkpoint: rebuilt from the specs, the unreadable one unknown */
        put(cdi, f.out.cdi_spec.name, f.out.cdi_spec.data);
        if (dp_dra_recover_dirs(ck, f.inv, cdi, state, "checkpoint.json", true, &rec, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(rec.recovered, 1);
        ASSERT_EQ(rec.n_unknown, 1);
        ASSERT_STREQ(rec.unknown[0], "uid-bad");
        ASSERT_TRUE(exists(cdi, f.out.cdi_spec.name));
        const dp_dra_prepared_claim *c = dp_dra_checkpoint_find(ck, "uid-1");
        ASSERT_TRUE(c != NULL);
        ASSERT_STREQ(c->devices[0].device, "gpu-2");
        dp_dra_recovery_done(&rec);
        /* a rebuilt checkpoint saves and reads back (a restart before the claim is prepared again) */
        dp_strbuf sb = DP_STRBUF_INIT;
        ASSERT_OK(dp_dra_checkpoint_encode(ck, &sb));
        dp_dra_checkpoint *back = NULL;
        if (dp_dra_checkpoint_decode(sb.buf, sb.len, "rebuilt", &back, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_STREQ(dp_dra_checkpoint_find(back, "uid-1")->devices[1].share_id, "s-42");
        dp_dra_checkpoint_free(back);
        dp_strbuf_done(&sb);
        /* known now: a second walk changes nothing (uid-bad stays unknown) */
        if (dp_dra_recover_dirs(ck, f.inv, cdi, state, "checkpoint.json", false, &rec, &err) < 0)
                DP_FAIL("%s", err.msg);
        ASSERT_EQ(rec.orphans + rec.recovered + rec.temps, 0);
        ASSERT_EQ(rec.n_unknown, 1);
        ASSERT_TRUE(exists(cdi, f.out.cdi_spec.name));
        dp_dra_recovery_done(&rec);
        dp_dra_checkpoint_free(ck);
        char cmd[700];
        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
        teardown(&f);
}
