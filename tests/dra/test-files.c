/* SPDX-License-Identifier: Apache-2.0
 * Tests for dra/files.c (issue 21): the checkpoint keeps each claim's CDI
 * spec and a lost or damaged spec is written again from it; a file of ours
 * that is no regular file is set aside, never deleted; a checkpoint the
 * next start could not read is never written; a failed CDI write fails the
 * prepare with nothing held. */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "dra/cdi.h"
#include "dra/driver.h"
#include "dra/slices.h"
#include "harness.h"

static const char claim_yaml[] =
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
        "metadata: {name: c1, namespace: ns, uid: uid-1}\n"
        "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}\n"
        "status:\n  allocation:\n    devices:\n      results:\n"
        "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-2}\n";

#define SPEC_NAME "k8s.gpu.example.com-gpu_uid-1.json"

typedef struct fixture {
        struct dp_device_set *set;
        dp_dra_inventory *inv;
        dp_dra_publisher *pub;
        dp_dra_prepare_input in;
        dp_object_list *claims;
        dp_ledger *led;
        dp_dra_checkpoint *ckpt;
        char root[64], cdi[128], state[128];
        dp_dra_node_dirs dirs;
} fixture;

static void setup(fixture *f) {
        dp_error err = DP_ERROR_INIT;
        memset(f, 0, sizeof *f);
        ASSERT_OK(dp_dra_device_set_load("example-gpu", "node-a", &f->set, &err));
        ASSERT_OK(dp_dra_inventory_build(f->set, NULL, &f->inv, &err));
        f->pub = dp_dra_publisher_new(1);
        ASSERT_EQ(dp_dra_publisher_update(f->pub, f->inv, NULL, &err), 1);
        f->in.inv = f->inv;
        f->in.slices = dp_dra_publisher_slices(f->pub, &f->in.n_slices);
        snprintf(f->root, sizeof f->root, "/tmp/dp-dra-files-XXXXXX");
        ASSERT_TRUE(mkdtemp(f->root) != NULL);
        snprintf(f->cdi, sizeof f->cdi, "%s/cdi", f->root);
        snprintf(f->state, sizeof f->state, "%s/state", f->root);
        mkdir(f->cdi, 0755);
        mkdir(f->state, 0755);
        f->dirs = (dp_dra_node_dirs){f->cdi, NULL, f->state, NULL};
        f->claims = dp_object_list_new();
        ASSERT_OK(dp_model_decode_buffer(claim_yaml, sizeof(claim_yaml) - 1, "c", f->claims, &err));
        f->led = dp_ledger_new(f->set, f->inv);
        f->ckpt = dp_dra_checkpoint_new("gpu.example.com", "node-a");
}

static void teardown(fixture *f) {
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", f->root);
        ASSERT_EQ(system(cmd), 0);
        dp_dra_checkpoint_free(f->ckpt);
        dp_ledger_free(f->led);
        dp_object_list_free(f->claims);
        dp_dra_publisher_free(f->pub);
        dp_dra_inventory_free(f->inv);
        dp_dra_device_set_free(f->set);
}

static char *slurp(const char *dir, const char *name, size_t *ret_len) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        char *buf = NULL;
        return dp_dra_file_read(p, 1 << 20, &buf, ret_len, NULL) < 0 ? NULL : buf;
}

static void put(const char *dir, const char *name, const char *data) {
        char p[256];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        FILE *fp = fopen(p, "w");
        ASSERT_TRUE(fp != NULL);
        fputs(data, fp);
        fclose(fp);
}

static void prepare(fixture *f) {
        dp_error err = DP_ERROR_INIT;
        dp_dra_prepared_claim pc;
        if (dp_dra_node_prepare(f->ckpt, f->led, &f->in, f->claims->items[0].claim, &f->dirs, &pc, &err) != 1)
                DP_FAIL("%s", err.msg);
        dp_dra_prepared_claim_done(&pc);
}

TEST(checkpoint_keeps_the_spec) {
        fixture f;
        setup(&f);
        prepare(&f);
        size_t len = 0;
        char *spec = slurp(f.cdi, SPEC_NAME, &len);
        ASSERT_TRUE(spec != NULL);
        ASSERT_STREQ(f.ckpt->claims[0].cdi_spec_text, spec);
        /* restart: the copy comes back from disk, checksum and all */
        char ck[256];
        snprintf(ck, sizeof ck, "%s/%s", f.state, DP_DRA_CHECKPOINT_NAME);
        dp_dra_checkpoint *c2 = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_checkpoint_load(ck, &c2, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_STREQ(c2->claims[0].cdi_spec_text, spec);
        dp_dra_checkpoint_free(c2);
        free(spec);
        teardown(&f);
}

TEST(checkpoint_without_spec_still_loads) {
        /* a checkpoint written before the spec was kept: no cdiSpec field */
        fixture f;
        setup(&f);
        prepare(&f);
        free(f.ckpt->claims[0].cdi_spec_text);
        f.ckpt->claims[0].cdi_spec_text = NULL;
        dp_strbuf sb = DP_STRBUF_INIT;
        ASSERT_OK(dp_dra_checkpoint_encode(f.ckpt, &sb));
        ASSERT_TRUE(strstr(dp_strbuf_str(&sb), "cdiSpec\"") == NULL);
        dp_dra_checkpoint *c2 = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_checkpoint_decode(dp_strbuf_str(&sb), sb.len, "old", &c2, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_TRUE(c2->claims[0].cdi_spec_text == NULL);
        /* such an entry is counted, not checked */
        dp_dra_cdi_check chk;
        ASSERT_OK(dp_dra_cdi_reconcile(c2, f.cdi, &chk, &err));
        ASSERT_EQ(chk.checked, 1);
        ASSERT_EQ(chk.no_copy, 1);
        ASSERT_EQ(chk.rewritten, 0);
        dp_dra_checkpoint_free(c2);
        dp_strbuf_done(&sb);
        teardown(&f);
}

TEST(reconcile_rewrites_lost_and_damaged_specs) {
        fixture f;
        setup(&f);
        prepare(&f);
        size_t len = 0;
        char *want = slurp(f.cdi, SPEC_NAME, &len);
        char path[256];
        snprintf(path, sizeof path, "%s/%s", f.cdi, SPEC_NAME);
        dp_dra_cdi_check chk;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_dra_cdi_reconcile(f.ckpt, f.cdi, &chk, &err));
        ASSERT_EQ(chk.checked, 1);
        ASSERT_EQ(chk.rewritten, 0); /* intact: left as it is */

        for (int how = 0; how < 5; how++) {
                ASSERT_EQ(unlink(path), 0);
                if (how == 1) put(f.cdi, SPEC_NAME, "{\"cdiVersion\":");
                if (how == 2) put(f.cdi, SPEC_NAME, "");
                if (how == 3) ASSERT_EQ(mkdir(path, 0755), 0);
                if (how == 4) ASSERT_EQ(symlink("/dev/zero", path), 0);
                ASSERT_OK(dp_dra_cdi_reconcile(f.ckpt, f.cdi, &chk, &err));
                ASSERT_EQ(chk.rewritten, 1);
                size_t n = 0;
                char *got = slurp(f.cdi, SPEC_NAME, &n);
                ASSERT_TRUE(got != NULL);
                ASSERT_EQ(n, len);
                ASSERT_STREQ(got, want);
                free(got);
        }
        /* the directory was set aside, not deleted; the symlink too */
        struct stat st;
        snprintf(path, sizeof path, "%s/%s.corrupt", f.cdi, SPEC_NAME);
        ASSERT_EQ(stat(path, &st), 0);
        ASSERT_TRUE(S_ISDIR(st.st_mode));
        snprintf(path, sizeof path, "%s/%s.corrupt.1", f.cdi, SPEC_NAME);
        ASSERT_EQ(lstat(path, &st), 0);
        ASSERT_TRUE(S_ISLNK(st.st_mode));
        free(want);
        teardown(&f);
}

TEST(reconcile_failure_is_reported) {
        fixture f;
        setup(&f);
        prepare(&f);
        /* a CDI directory that cannot hold the spec: named, counted, -EIO */
        char cdi_file[256];
        snprintf(cdi_file, sizeof cdi_file, "%s/a-file", f.root);
        put(f.root, "a-file", "x");
        dp_dra_cdi_check chk;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_dra_cdi_reconcile(f.ckpt, cdi_file, &chk, &err), -EIO);
        ASSERT_EQ(chk.failed, 1);
        ASSERT_CONTAINS(err.msg, SPEC_NAME);
        teardown(&f);
}

TEST(failed_cdi_write_fails_the_prepare) {
        fixture f;
        setup(&f);
        /* the CDI directory is a file: the spec cannot be written */
        char cdi_file[256];
        snprintf(cdi_file, sizeof cdi_file, "%s/cdi-file", f.root);
        put(f.root, "cdi-file", "x");
        f.dirs.cdi_dir = cdi_file;
        dp_dra_prepared_claim pc;
        dp_error err = DP_ERROR_INIT;
        int r = dp_dra_node_prepare(f.ckpt, f.led, &f.in, f.claims->items[0].claim, &f.dirs, &pc, &err);
        ASSERT_TRUE(r < 0);
        ASSERT_CONTAINS(err.msg, SPEC_NAME);
        ASSERT_EQ(f.ckpt->n_claims, 0);
        ASSERT_TRUE(dp_ledger_holder(f.led, "gpu-2", NULL) == NULL);
        /* the cause goes away: the same claim prepares */
        f.dirs.cdi_dir = f.cdi;
        prepare(&f);
        ASSERT_STREQ(dp_ledger_holder(f.led, "gpu-2", NULL), "claim ns/c1 (uid-1)");
        teardown(&f);
}

TEST(set_aside_never_deletes) {
        char root[] = "/tmp/dp-dra-aside-XXXXXX";
        ASSERT_TRUE(mkdtemp(root) != NULL);
        char p[128], q[160];
        snprintf(p, sizeof p, "%s/f", root);
        /* a directory in the way of .corrupt: the next name */
        snprintf(q, sizeof q, "%s/f.corrupt", root);
        ASSERT_EQ(mkdir(q, 0755), 0);
        snprintf(q, sizeof q, "%s/f.corrupt/keep", root);
        put(root, "f.corrupt/keep", "old");
        put(root, "f", "bad");
        char *to = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_dra_file_set_aside(p, &to, &err));
        ASSERT_CONTAINS(to, "/f.corrupt.1");
        struct stat st;
        ASSERT_EQ(stat(q, &st), 0);
        ASSERT_TRUE(stat(p, &st) < 0);
        free(to);
        /* dp_dra_file_write over a directory: set aside, then written */
        ASSERT_EQ(mkdir(p, 0755), 0);
        ASSERT_OK(dp_dra_file_write(root, "f", "new", 3, 0644, &err));
        size_t n = 0;
        char *got = slurp(root, "f", &n);
        ASSERT_STREQ(got, "new");
        free(got);
        snprintf(q, sizeof q, "%s/f.corrupt.2", root);
        ASSERT_EQ(stat(q, &st), 0);
        ASSERT_TRUE(S_ISDIR(st.st_mode));
        char cmd[128];
        snprintf(cmd, sizeof cmd, "rm -rf %s", root);
        ASSERT_EQ(system(cmd), 0);
}

TEST(checkpoint_save_refuses_what_it_could_not_read) {
        fixture f;
        setup(&f);
        prepare(&f);
        /* one claim whose spec copy passes the cap */
        size_t big = DP_DRA_CHECKPOINT_MAX;
        char *text = malloc(big + 1);
        ASSERT_TRUE(text != NULL);
        memset(text, 'x', big);
        text[big] = 0;
        free(f.ckpt->claims[0].cdi_spec_text);
        f.ckpt->claims[0].cdi_spec_text = text;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_dra_checkpoint_save(f.ckpt, f.state, DP_DRA_CHECKPOINT_NAME, &err), -E2BIG);
        ASSERT_CONTAINS(err.msg, "over 16777216");
        /* the file on disk is still the last good one */
        char ck[256];
        snprintf(ck, sizeof ck, "%s/%s", f.state, DP_DRA_CHECKPOINT_NAME);
        dp_dra_checkpoint *c2 = NULL;
        if (dp_dra_checkpoint_load(ck, &c2, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(c2->n_claims, 1);
        dp_dra_checkpoint_free(c2);
        teardown(&f);
}

/* Files written before the state-file codec moved to src/doc
 * (tests/dra/compat/, as that version wrote them) still load and are
 * written again byte for byte: the driver checkpoint, and a CDI spec with
 * every kind of edit. */
TEST(files_of_previous_version_load) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_dra_file_read("compat/checkpoint-v1.json", 1 << 20, &buf, &len, &err));
        dp_dra_checkpoint *c = NULL;
        if (dp_dra_checkpoint_load("compat/checkpoint-v1.json", &c, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(c->n_claims, 2);
        const dp_dra_prepared_claim *a = dp_dra_checkpoint_find(c, "uid-1");
        ASSERT_TRUE(a && a->n_devices == 1 && a->n_metadata == 1 && a->metadata_generation == 3);
        ASSERT_STREQ(a->name, "claim-\"one\"\xc3\xa9");
        ASSERT_STREQ(a->metadata[0].container_path, "/var/run/dra/gpu.json");
        const dp_dra_prepared_claim *b = dp_dra_checkpoint_find(c, "uid-2");
        ASSERT_TRUE(b && b->n_devices == 1 && b->devices[0].n_requests == 2 && !b->cdi_spec_file);
        ASSERT_STREQ(b->devices[0].share_id, "share-7");
        dp_strbuf sb = DP_STRBUF_INIT;
        ASSERT_OK(dp_dra_checkpoint_encode(c, &sb));
        ASSERT_EQ(sb.len, len);
        ASSERT_TRUE(memcmp(sb.buf, buf, len) == 0);
        dp_strbuf_done(&sb);
        dp_dra_checkpoint_free(c);

        _cleanup_free_ char *spec = NULL;
        ASSERT_OK(dp_dra_file_read("compat/cdi-spec.json", 1 << 20, &spec, &len, &err));
        dp_dra_cdi_spec s = {.kind = (char *)"gpu.example.com/gpu"};
        ASSERT_OK(dp_dra_cdi_edits_env(&s.edits, "KUBERNETES_NODE_NAME", "node-a"));
        ASSERT_OK(dp_dra_cdi_edits_node(&s.edits, "/dev/nvidiactl", NULL));
        dp_dra_cdi_device d[2] = {{.name = (char *)"uid-1-gpu-0"}, {.name = (char *)"uid-1-gpu-1"}};
        ASSERT_OK(dp_dra_cdi_edits_node(&d[0].edits, "/dev/nvidia0", "/dev/nvidia0"));
        ASSERT_OK(dp_dra_cdi_edits_node(&d[1].edits, "/dev/nvidia1", "/host/dev/nvidia1"));
        const char *opts[] = {"ro", "nosuid"};
        ASSERT_OK(dp_dra_cdi_edits_mount(&d[1].edits, "/usr/lib/x", "/usr/lib/y", opts, 2));
        d[1].edits.mounts[0].type = dp_strdup("bind");
        ASSERT_OK(dp_dra_cdi_edits_env(&d[1].edits, "GPU", "1"));
        s.devices = d;
        s.n_devices = 2;
        ASSERT_OK(dp_state_file_marshal(&dp_dra_cdi_spec_file, &s, &sb, &err));
        ASSERT_EQ(sb.len, len);
        ASSERT_TRUE(memcmp(sb.buf, spec, len) == 0);
        dp_strbuf_done(&sb);
        for (size_t i = 0; i < 2; i++)
                dp_dra_cdi_edits_done(&d[i].edits);
        dp_dra_cdi_edits_done(&s.edits);
}
