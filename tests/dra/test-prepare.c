/* SPDX-License-Identifier: Apache-2.0
 * Tests for dra/prepare.c, dra/cdi.c, dra/checkpoint.c and dra/files.c:
 * CDI spec bytes, per-claim errors, sharing config, metadata files and their
 * generation, checkpoint round trip and corruption, prepare/unprepare on disk,
 * skipNodeOperations. */
#include <stdio.h>
#include <sys/stat.h>

#include "dra/cdi.h"
#include "dra/inventory.h"
#include "dra/prepare.h"
#include "dra/slices.h"
#include "harness.h"

typedef struct fixture {
        struct dp_device_set *set;
        dp_dra_inventory *inv;
        dp_dra_publisher *pub;
        dp_dra_prepare_input in;
} fixture;

static void fixture_init(fixture *f, const char *profile, int partitions) {
        dp_error err = DP_ERROR_INIT;
        memset(f, 0, sizeof(*f));
        if (dp_dra_device_set_load(profile, "node-a", &f->set, &err) < 0) DP_FAIL("%s", err.msg);
        dp_dra_inventory_options o = DP_DRA_INVENTORY_OPTIONS_INIT;
        o.partitions = partitions;
        if (dp_dra_inventory_build(f->set, &o, &f->inv, &err) < 0) DP_FAIL("%s", err.msg);
        f->pub = dp_dra_publisher_new(1);
        if (dp_dra_publisher_update(f->pub, f->inv, NULL, &err) < 0) DP_FAIL("%s", err.msg);
        f->in.inv = f->inv;
        f->in.slices = dp_dra_publisher_slices(f->pub, &f->in.n_slices);
}

static void fixture_done(fixture *f) {
        dp_dra_publisher_free(f->pub);
        dp_dra_inventory_free(f->inv);
        dp_dra_device_set_free(f->set);
}

static dp_object_list *claims(const char *yaml) {
        dp_object_list *l = dp_object_list_new();
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer(yaml, strlen(yaml), "claim.yaml", l, &err) < 0) DP_FAIL("%s", err.msg);
        return l;
}

#define CLAIM_HEAD                                                                                                     \
        "apiVersion: resource.k8s.io/v1\n"                                                                             \
        "kind: ResourceClaim\n"                                                                                        \
        "metadata: {name: c1, namespace: ns, uid: 0b4e-1111}\n"                                                        \
        "spec:\n"                                                                                                      \
        "  devices:\n"                                                                                                 \
        "    requests:\n"                                                                                              \
        "    - {name: gpu, exactly: {deviceClassName: gpu.example.com, count: 2}}\n"

static const char two_gpus[] =
        CLAIM_HEAD "status:\n"
                   "  allocation:\n"
                   "    devices:\n"
                   "      results:\n"
                   "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-0}\n"
                   "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-3}\n"
                   "      - {request: gpu, driver: other.example.com, pool: node-a, device: x-1}\n";

TEST(cdi_spec_bytes) {
        fixture f;
        fixture_init(&f, "example-gpu", 0);
        dp_object_list *l = claims(two_gpus);
        dp_dra_prepare_output out;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_prepare(&f.in, l->items[0].claim, &out, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_STREQ(out.cdi_spec.name, "k8s.gpu.example.com-gpu_0b4e-1111.json");
        ASSERT_STREQ(out.claim.cdi_spec_file, out.cdi_spec.name);
        ASSERT_STREQ(out.cdi_spec.data,
                     "{\"cdiVersion\":\"0.5.0\",\"kind\":\"k8s.gpu.example.com/gpu\",\"devices\":["
                     "{\"name\":\"0b4e-1111-gpu-0\",\"containerEdits\":{\"env\":[\"GPU_DEVICE_0=gpu-0\","
                     "\"GPU_DEVICE_0_RESOURCE_CLAIM=0b4e-1111\",\"GPU_DEVICE_0_SHARING_STRATEGY=TimeSlicing\","
                     "\"GPU_DEVICE_0_TIMESLICE_INTERVAL=Default\"]}},"
                     "{\"name\":\"0b4e-1111-gpu-3\",\"containerEdits\":{\"env\":[\"GPU_DEVICE_3=gpu-3\","
                     "\"GPU_DEVICE_3_RESOURCE_CLAIM=0b4e-1111\",\"GPU_DEVICE_3_SHARING_STRATEGY=TimeSlicing\","
                     "\"GPU_DEVICE_3_TIMESLICE_INTERVAL=Default\"]}}],"
                     "\"containerEdits\":{\"env\":[\"KUBERNETES_NODE_NAME=node-a\","
                     "\"DRA_RESOURCE_DRIVER_NAME=gpu.example.com\",\"DRA_ADMIN_ACCESS=false\"]}}");
        ASSERT_EQ(out.claim.n_devices, 2);
        ASSERT_STREQ(out.claim.devices[1].device, "gpu-3");
        ASSERT_STREQ(out.claim.devices[1].requests[0], "gpu");
        ASSERT_STREQ(out.claim.devices[1].cdi_ids[0], "k8s.gpu.example.com/gpu=0b4e-1111-gpu-3");
        ASSERT_EQ(out.n_metadata, 0);
        /* the spec is YAML/JSON the CDI parser reads: it re-parses */
        dp_doc_set *s = dp_doc_set_new();
        ASSERT_OK(dp_doc_parse(s, out.cdi_spec.data, out.cdi_spec.len, "spec", &err));
        dp_doc_set_free(s);
        dp_dra_prepare_output_done(&out);
        dp_object_list_free(l);
        fixture_done(&f);
}

TEST(cdi_min_version) {
        dp_dra_cdi_spec s = {0};
        s.kind = dp_strdup("vendor.com/gpu");
        s.devices = calloc(1, sizeof(*s.devices));
        s.n_devices = 1;
        s.devices[0].name = dp_strdup("gpu0");
        ASSERT_OK(dp_dra_cdi_edits_env(&s.devices[0].edits, "A", "1"));
        ASSERT_STREQ(dp_dra_cdi_min_version(&s), "0.3.0");
        ASSERT_OK(dp_dra_cdi_spec_check(&s, NULL));
        s.devices[0].edits.n_mounts = 0;
        const char *o[] = {"ro"};
        ASSERT_OK(dp_dra_cdi_edits_mount(&s.devices[0].edits, "/h", "/c", o, 1));
        ASSERT_STREQ(dp_dra_cdi_min_version(&s), "0.3.0");
        s.devices[0].edits.mounts[0].type = dp_strdup("bind");
        ASSERT_STREQ(dp_dra_cdi_min_version(&s), "0.4.0");
        ASSERT_OK(dp_dra_cdi_edits_node(&s.edits, "/dev/x", "/dev/y"));
        ASSERT_STREQ(dp_dra_cdi_min_version(&s), "0.5.0");
        free(s.kind);
        s.kind = dp_strdup("vendor.com/gpu.x");
        ASSERT_STREQ(dp_dra_cdi_min_version(&s), "0.6.0");
        free(s.kind);
        s.kind = dp_strdup("1vendor/gpu");
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_dra_cdi_spec_check(&s, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "kind");
        dp_dra_cdi_spec_done(&s);
        char *n = dp_dra_cdi_spec_file_name("nvidia.com/gpu", "a/b");
        ASSERT_STREQ(n, "nvidia.com-gpu_a_b.json");
        free(n);
}

TEST(claim_errors) {
        fixture f;
        fixture_init(&f, "example-gpu", 0);
        dp_error err = DP_ERROR_INIT;
        dp_dra_prepare_output out;
        static const char *const cases[][2] = {
                {"      - {request: gpu, driver: gpu.example.com, pool: node-b, device: gpu-0}\n", "not on this node"},
                {"      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-9}\n", "unknown device"},
        };
        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                char yaml[2048];
                snprintf(yaml, sizeof(yaml), "%sstatus:\n  allocation:\n    devices:\n      results:\n%s", CLAIM_HEAD,
                         cases[i][0]);
                dp_object_list *l = claims(yaml);
                ASSERT_EQ(dp_dra_prepare(&f.in, l->items[0].claim, &out, &err), -EINVAL);
                ASSERT_CONTAINS(err.msg, cases[i][1]);
                ASSERT_CONTAINS(err.msg, "ResourceClaim ns/c1: results[0]: device");
                dp_object_list_free(l);
        }
        dp_object_list *l = claims(CLAIM_HEAD);
        ASSERT_EQ(dp_dra_prepare(&f.in, l->items[0].claim, &out, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "not allocated");
        dp_object_list_free(l);
        /* names that would escape the spec and metadata directories */
        l = claims("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                   "metadata: {name: c, namespace: ns, uid: ../../etc}\n"
                   "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}\n"
                   "status: {allocation: {devices: {results: [{request: gpu, driver: gpu.example.com, pool: node-a, "
                   "device: gpu-0}]}}}\n");
        ASSERT_EQ(dp_dra_prepare(&f.in, l->items[0].claim, &out, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "metadata.uid: not usable in a file name");
        dp_object_list_free(l);

        /* unhealthy: tainted in the published slice */
        ASSERT_OK(dp_dra_device_set_health(f.set, "gpu-3", false, &err));
        dp_dra_inventory_free(f.inv);
        ASSERT_OK(dp_dra_inventory_build(f.set, NULL, &f.inv, &err));
        ASSERT_EQ(dp_dra_publisher_update(f.pub, f.inv, NULL, &err), 1);
        f.in.inv = f.inv;
        f.in.slices = dp_dra_publisher_slices(f.pub, &f.in.n_slices);
        l = claims(two_gpus);
        ASSERT_EQ(dp_dra_prepare(&f.in, l->items[0].claim, &out, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg,
                        "results[1]: device node-a/gpu-3: unhealthy (taint gpu.example.com/unhealthy:NoSchedule)");
        dp_object_list_free(l);
        /* a toleration lets it through, as the scheduler did */
        l = claims(CLAIM_HEAD "status:\n  allocation:\n    devices:\n      results:\n"
                              "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-3,\n"
                              "         tolerations: [{key: gpu.example.com/unhealthy, operator: Exists}]}\n");
        ASSERT_OK(dp_dra_prepare(&f.in, l->items[0].claim, &out, &err));
        dp_dra_prepare_output_done(&out);
        dp_object_list_free(l);
        fixture_done(&f);
}

static const char opaque[] =
        "apiVersion: resource.k8s.io/v1\n"
        "kind: ResourceClaim\n"
        "metadata: {name: shared, namespace: ns, uid: u-2}\n"
        "spec:\n"
        "  devices:\n"
        "    requests:\n"
        "    - {name: ts-gpu, exactly: {deviceClassName: gpu.example.com}}\n"
        "    - {name: sp-gpu, exactly: {deviceClassName: gpu.example.com}}\n"
        "status:\n"
        "  allocation:\n"
        "    devices:\n"
        "      results:\n"
        "      - {request: ts-gpu, driver: gpu.example.com, pool: node-a, device: gpu-4}\n"
        "      - {request: sp-gpu, driver: gpu.example.com, pool: node-a, device: gpu-5}\n"
        "      config:\n"
        "      - source: FromClaim\n"
        "        requests: [ts-gpu]\n"
        "        opaque:\n"
        "          driver: gpu.example.com\n"
        "          parameters: {apiVersion: gpu.resource.example.com/v1alpha1, kind: GpuConfig,\n"
        "                       sharing: {strategy: TimeSlicing, timeSlicingConfig: {interval: %s}}}\n"
        "      - source: FromClaim\n"
        "        requests: [sp-gpu]\n"
        "        opaque:\n"
        "          driver: gpu.example.com\n"
        "          parameters: {apiVersion: gpu.resource.example.com/v1alpha1, kind: GpuConfig,\n"
        "                       sharing: {strategy: SpacePartitioning, spacePartitioningConfig: {partitionCount: "
        "10}}}\n";

TEST(sharing_config) {
        fixture f;
        fixture_init(&f, "example-gpu", 0);
        char yaml[4096];
        snprintf(yaml, sizeof(yaml), opaque, "Long");
        dp_object_list *l = claims(yaml);
        dp_dra_prepare_output out;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_prepare(&f.in, l->items[0].claim, &out, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_CONTAINS(out.cdi_spec.data, "\"GPU_DEVICE_4=gpu-4\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"GPU_DEVICE_4_SHARING_STRATEGY=TimeSlicing\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"GPU_DEVICE_4_TIMESLICE_INTERVAL=Long\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"GPU_DEVICE_5=gpu-5\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"GPU_DEVICE_5_SHARING_STRATEGY=SpacePartitioning\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"GPU_DEVICE_5_PARTITION_COUNT=10\"");
        dp_dra_prepare_output_done(&out);
        dp_object_list_free(l);
        snprintf(yaml, sizeof(yaml), opaque, "Forever");
        l = claims(yaml);
        ASSERT_EQ(dp_dra_prepare(&f.in, l->items[0].claim, &out, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "unknown time-slice interval Forever");
        dp_object_list_free(l);
        fixture_done(&f);
}

TEST(consumed_capacity_and_admin) {
        fixture f;
        fixture_init(&f, "example-gpu", 2);
        dp_object_list *l =
                claims("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                       "metadata: {name: c, namespace: ns, uid: u-3}\n"
                       "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com}}]}}\n"
                       "status:\n  allocation:\n    devices:\n      results:\n"
                       "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-0-partition-1,\n"
                       "         shareID: 7c1f0e36-aaaa-bbbb-cccc-000000000001, adminAccess: true,\n"
                       "         consumedCapacity: {memory: 8Gi, compute: '10'}}\n");
        dp_dra_prepare_output out;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_prepare(&f.in, l->items[0].claim, &out, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_CONTAINS(out.cdi_spec.data, "\"GPU_DEVICE_0_PARTITION_1=gpu-0-partition-1\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"GPU_DEVICE_0_PARTITION_1_MEMORY=8Gi\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"GPU_DEVICE_0_PARTITION_1_COMPUTE=10\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"GPU_DEVICE_0_PARTITION_1_SHARE_ID=7c1f0e36-aaaa-bbbb-cccc-000000000001\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"DRA_ADMIN_ACCESS=true\"");
        ASSERT_STREQ(out.claim.devices[0].share_id, "7c1f0e36-aaaa-bbbb-cccc-000000000001");
        dp_dra_prepare_output_done(&out);
        dp_object_list_free(l);
        fixture_done(&f);
}

TEST(nvidia_device_nodes) {
        fixture f;
        fixture_init(&f, "a100-mixed", -1);
        dp_object_list *l =
                claims("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                       "metadata: {name: m, namespace: ns, uid: u-4}\n"
                       "spec: {devices: {requests: [{name: mig, exactly: {deviceClassName: mig-1g}}]}}\n"
                       "status:\n  allocation:\n    devices:\n      results:\n"
                       "      - {request: mig, driver: gpu.nvidia.com, pool: node-a, device: gpu-2-mig-1g10gb-4}\n");
        dp_dra_prepare_output out;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_prepare(&f.in, l->items[0].claim, &out, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_STREQ(out.cdi_spec.name, "nvidia.com-gpu_u-4.json");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"cdiVersion\":\"0.3.0\"");
        ASSERT_CONTAINS(out.cdi_spec.data,
                        "{\"path\":\"/dev/nvidia2\"},{\"path\":\"/dev/nvidia-caps/nvidia-cap-gpu2-mig4\"}");
        ASSERT_CONTAINS(out.cdi_spec.data, "{\"path\":\"/dev/nvidiactl\"}");
        ASSERT_STREQ(out.claim.devices[0].cdi_ids[0], "nvidia.com/gpu=u-4-gpu-2-mig-1g10gb-4");
        dp_dra_prepare_output_done(&out);
        dp_object_list_free(l);
        fixture_done(&f);
}

static char *tmpdir(void) {
        char t[] = "/tmp/dp-dra-XXXXXX";
        char *d = mkdtemp(t);
        if (!d) DP_FAIL("mkdtemp");
        return dp_strdup(d);
}

static bool exists(const char *dir, const char *name) {
        char p[1024];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        struct stat st;
        return stat(p, &st) == 0;
}

TEST(metadata_files) {
        fixture f;
        fixture_init(&f, "example-gpu", 0);
        char *root = tmpdir();
        char md[512], cdi[512];
        snprintf(md, sizeof(md), "%s/metadata", root);
        snprintf(cdi, sizeof(cdi), "%s/cdi", root);
        mkdir(md, 0755);
        mkdir(cdi, 0755);
        f.in.metadata_dir = md;
        dp_object_list *l = claims(
                "apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                "metadata: {name: pod0-gpu-x7k2p, namespace: ns, uid: u-5,\n"
                "           annotations: {resource.kubernetes.io/pod-claim-name: gpu}}\n"
                "spec: {devices: {requests: [{name: gpu, exactly: {deviceClassName: gpu.example.com, count: 2}}]}}\n"
                "status:\n  allocation:\n    devices:\n      results:\n"
                "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-1}\n"
                "      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-2}\n");
        dp_dra_prepare_output out;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_prepare(&f.in, l->items[0].claim, &out, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_EQ(out.n_metadata, 1);
        ASSERT_EQ(out.claim.metadata_generation, 1);
        ASSERT_STREQ(out.metadata[0].name, "u-5/gpu/gpu.example.com-metadata.json");
        ASSERT_STREQ(out.claim.metadata[0].container_path,
                     "/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpu/gpu/"
                     "gpu.example.com-metadata.json");
        const char *m = out.metadata[0].data;
        ASSERT_TRUE(startswith(m, "{\"apiVersion\":\"metadata.resource.k8s.io/v1alpha1\",\"kind\":\"DeviceMetadata\","
                                  "\"metadata\":{\"name\":\"pod0-gpu-x7k2p\",\"namespace\":\"ns\",\"uid\":\"u-5\","
                                  "\"generation\":1},\"podClaimName\":\"gpu\",\"requests\":[{\"name\":\"gpu\","
                                  "\"devices\":[{\"driver\":\"gpu.example.com\",\"pool\":\"node-a\",\"name\":\"gpu-1\","
                                  "\"attributes\":{\"index\":{\"int\":1},\"uuid\":{\"string\":\"gpu-"));
        ASSERT_CONTAINS(m, "\"model\":{\"string\":\"LATEST-GPU-MODEL\"},\"driverVersion\":{\"version\":\"1.0.0\"}}},"
                           "{\"driver\":\"gpu.example.com\",\"pool\":\"node-a\",\"name\":\"gpu-2\"");
        ASSERT_TRUE(m[out.metadata[0].len - 1] == '\n');
        /* one read-only bind mount, on the request's first device only */
        char mount[1024];
        snprintf(mount, sizeof(mount),
                 "\"mounts\":[{\"hostPath\":\"%s/u-5/gpu/gpu.example.com-metadata.json\",\"containerPath\":"
                 "\"/var/run/kubernetes.io/dra-device-attributes/resourceclaimtemplates/gpu/gpu/"
                 "gpu.example.com-metadata.json\",\"options\":[\"ro\",\"nosuid\",\"nodev\",\"bind\"]}]",
                 md);
        ASSERT_CONTAINS(out.cdi_spec.data, mount);
        ASSERT_TRUE(strstr(strstr(out.cdi_spec.data, mount) + 1, "\"mounts\"") == NULL);

        /* on disk, then a rewrite bumps the generation, then unprepare removes all */
        ASSERT_OK(dp_dra_prepare_output_write(&out, cdi, md, &err));
        ASSERT_TRUE(exists(cdi, "k8s.gpu.example.com-gpu_u-5.json"));
        ASSERT_TRUE(exists(md, "u-5/gpu/gpu.example.com-metadata.json"));
        f.in.prev = &out.claim;
        dp_dra_prepare_output again;
        ASSERT_OK(dp_dra_prepare(&f.in, l->items[0].claim, &again, &err));
        ASSERT_EQ(again.claim.metadata_generation, 2);
        ASSERT_CONTAINS(again.metadata[0].data, "\"generation\":2");
        ASSERT_OK(dp_dra_prepare_output_write(&again, cdi, md, &err));
        char path[1024], *buf = NULL;
        size_t len = 0;
        snprintf(path, sizeof(path), "%s/u-5/gpu/gpu.example.com-metadata.json", md);
        ASSERT_OK(dp_dra_file_read(path, 1 << 20, &buf, &len, &err));
        ASSERT_CONTAINS(buf, "\"generation\":2");
        free(buf);
        ASSERT_OK(dp_dra_unprepare_files(&again.claim, cdi, md, &err));
        ASSERT_FALSE(exists(cdi, "k8s.gpu.example.com-gpu_u-5.json"));
        ASSERT_FALSE(exists(md, "u-5"));
        ASSERT_TRUE(exists(root, "metadata"));
        /* unprepare again: nothing left, still fine */
        ASSERT_OK(dp_dra_unprepare_files(&again.claim, cdi, md, &err));
        dp_dra_prepare_output_done(&again);
        dp_dra_prepare_output_done(&out);
        dp_object_list_free(l);
        /* a claim not made from a template: resourceclaims/<name> */
        l = claims(two_gpus);
        f.in.prev = NULL;
        ASSERT_OK(dp_dra_prepare(&f.in, l->items[0].claim, &out, &err));
        ASSERT_STREQ(
                out.claim.metadata[0].container_path,
                "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/c1/gpu/gpu.example.com-metadata.json");
        ASSERT_TRUE(strstr(out.metadata[0].data, "podClaimName") == NULL);
        dp_dra_prepare_output_done(&out);
        dp_object_list_free(l);
        rmdir(md);
        rmdir(cdi);
        rmdir(root);
        free(root);
        fixture_done(&f);
}

TEST(checkpoint_round_trip_and_idempotence) {
        fixture f;
        fixture_init(&f, "example-gpu", 0);
        char *root = tmpdir();
        dp_object_list *l = claims(two_gpus);
        dp_dra_checkpoint *c = dp_dra_checkpoint_new("gpu.example.com", "node-a");
        dp_error err = DP_ERROR_INIT;
        /* the daemon's prepare loop: checkpoint hit -> same answer, nothing rewritten */
        for (int round = 0; round < 2; round++) {
                const dp_resource_claim *claim = l->items[0].claim;
                if (dp_dra_checkpoint_find(c, claim->meta.uid)) continue;
                dp_dra_prepare_output out;
                ASSERT_OK(dp_dra_prepare(&f.in, claim, &out, &err));
                ASSERT_OK(dp_dra_prepare_output_write(&out, root, NULL, &err));
                ASSERT_OK(dp_dra_checkpoint_put(c, &out.claim));
                ASSERT_EQ(round, 0);
                dp_dra_prepare_output_done(&out);
        }
        ASSERT_EQ(c->n_claims, 1);
        ASSERT_OK(dp_dra_checkpoint_save(c, root, "checkpoint.json", &err));
        char path[512];
        snprintf(path, sizeof(path), "%s/checkpoint.json", root);
        dp_dra_checkpoint *d = NULL;
        if (dp_dra_checkpoint_load(path, &d, &err) < 0) DP_FAIL("%s", err.msg);
        dp_strbuf a = DP_STRBUF_INIT, b = DP_STRBUF_INIT;
        ASSERT_OK(dp_dra_checkpoint_encode(c, &a));
        ASSERT_OK(dp_dra_checkpoint_encode(d, &b));
        ASSERT_STREQ(a.buf, b.buf);
        ASSERT_CONTAINS(a.buf, "\"cdiDeviceIDs\":[\"k8s.gpu.example.com/gpu=0b4e-1111-gpu-0\"]");
        dp_dra_prepared_claim *pc = dp_dra_checkpoint_find(d, "0b4e-1111");
        ASSERT_TRUE(pc != NULL);
        ASSERT_STREQ(pc->devices[1].device, "gpu-3");

        /* corruption: a changed byte, a truncation, a bad checksum, garbage */
        char *bad = dp_strdup(a.buf);
        char *p = strstr(bad, "gpu-3");
        p[4] = '5';
        dp_dra_checkpoint *x = NULL;
        ASSERT_EQ(dp_dra_checkpoint_decode(bad, strlen(bad), "ck", &x, &err), -EBADMSG);
        ASSERT_CONTAINS(err.msg, "checkpoint corrupt: checksum");
        ASSERT_EQ(dp_dra_checkpoint_decode(a.buf, a.len / 2, "ck", &x, &err), -EBADMSG);
        ASSERT_CONTAINS(err.msg, "checkpoint corrupt");
        ASSERT_EQ(dp_dra_checkpoint_decode("{\"checksum\":\"0\",\"data\":{}}", 27, "ck", &x, &err), -EBADMSG);
        ASSERT_EQ(dp_dra_checkpoint_decode("\x01\x02", 2, "ck", &x, &err), -EBADMSG);
        free(bad);
        bad = dp_asprintf("%.*s,\"extra\":1}\n", (int)(a.len - 2), a.buf);
        ASSERT_EQ(dp_dra_checkpoint_decode(bad, strlen(bad), "ck", &x, &err), -EBADMSG);
        ASSERT_CONTAINS(err.msg, "unknown field");
        free(bad);

        /* unprepare: remove files and the entry */
        dp_dra_prepared_claim *gone = NULL;
        ASSERT_OK(dp_dra_checkpoint_remove(d, "0b4e-1111", &gone));
        ASSERT_OK(dp_dra_unprepare_files(gone, root, NULL, &err));
        ASSERT_FALSE(exists(root, "k8s.gpu.example.com-gpu_0b4e-1111.json"));
        ASSERT_EQ(dp_dra_checkpoint_remove(d, "0b4e-1111", NULL), -ENOENT);
        ASSERT_EQ(d->n_claims, 0);
        dp_dra_prepared_claim_free(gone);
        unlink(path);
        rmdir(root);
        free(root);
        dp_strbuf_done(&a);
        dp_strbuf_done(&b);
        dp_dra_checkpoint_free(c);
        dp_dra_checkpoint_free(d);
        dp_object_list_free(l);
        fixture_done(&f);
}

TEST(skip_node_operations) {
        dp_object_list *l =
                claims(CLAIM_HEAD
                       "status:\n  allocation:\n    devices:\n      results:\n"
                       "      - {request: gpu, driver: a.example.com, pool: p, device: d0, skipNodeOperations: ['*']}\n"
                       "      - {request: gpu, driver: a.example.com, pool: p, device: d1,\n"
                       "         skipNodeOperations: [NodePrepareResources, NodeUnprepareResources]}\n"
                       "      - {request: gpu, driver: b.example.com, pool: p, device: d2,\n"
                       "         skipNodeOperations: [NodeUnprepareResources]}\n"
                       "      - {request: gpu, driver: c.example.com, pool: p, device: d3, skipNodeOperations: ['*']}\n"
                       "      - {request: gpu, driver: c.example.com, pool: p, device: d4}\n");
        const dp_allocation_result *a = l->items[0].claim->allocation;
        ASSERT_TRUE(dp_dra_skip_node_operation(a, "a.example.com", DP_DRA_NODE_PREPARE));
        ASSERT_TRUE(dp_dra_skip_node_operation(a, "a.example.com", DP_DRA_NODE_UNPREPARE));
        ASSERT_FALSE(dp_dra_skip_node_operation(a, "b.example.com", DP_DRA_NODE_PREPARE));
        ASSERT_TRUE(dp_dra_skip_node_operation(a, "b.example.com", DP_DRA_NODE_UNPREPARE));
        ASSERT_FALSE(dp_dra_skip_node_operation(a, "c.example.com", DP_DRA_NODE_PREPARE));
        ASSERT_FALSE(dp_dra_skip_node_operation(a, "z.example.com", DP_DRA_NODE_PREPARE));
        ASSERT_FALSE(dp_dra_skip_node_operation(NULL, "a.example.com", DP_DRA_NODE_PREPARE));
        dp_object_list_free(l);
}

TEST(file_names_refused) {
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_dra_file_write("/tmp", "../x", "a", 1, 0644, &err), -EINVAL);
        ASSERT_EQ(dp_dra_file_write("/tmp", "/etc/x", "a", 1, 0644, &err), -EINVAL);
        ASSERT_EQ(dp_dra_file_remove("/tmp", "a/../../b", &err), -EINVAL);
}

/* The example driver's net and cpu profiles (profile files of the e2e test):
 * NET_DEVICE_<ID> with decimal rates, CPU_DEVICE_<ID>_CONSUMED_CPU, no
 * sharing variables; a second share of a device in one claim gets _<n>. */
TEST(net_and_cpu_variables) {
        fixture f;
        fixture_init(&f, "../tools/v2-e2e/example-net.yaml", 0);
        dp_object_list *l = claims("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                                   "metadata: {name: n, namespace: ns, uid: u-n}\n"
                                   "spec: {devices: {requests: [{name: nic, exactly: {deviceClassName: net.example.com}}]}}\n"
                                   "status:\n  allocation:\n    devices:\n      results:\n"
                                   "      - {request: nic, driver: net.example.com, pool: node-a, device: nic-0,\n"
                                   "         shareID: 7c1f0e36-aaaa-bbbb-cccc-000000000001,\n"
                                   "         consumedCapacity: {ingressBandwidth: 10G, egressBandwidth: 5G}}\n");
        dp_dra_prepare_output out;
        dp_error err = DP_ERROR_INIT;
        if (dp_dra_prepare(&f.in, l->items[0].claim, &out, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_CONTAINS(out.cdi_spec.data, "\"NET_DEVICE_0=nic-0\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"NET_DEVICE_0_INGRESS_RATE=10000000000\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"NET_DEVICE_0_EGRESS_RATE=5000000000\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"NET_DEVICE_0_SHARE_ID=7c1f0e36-aaaa-bbbb-cccc-000000000001\"");
        ASSERT_TRUE(strstr(out.cdi_spec.data, "SHARING_STRATEGY") == NULL);
        ASSERT_TRUE(strstr(out.cdi_spec.data, "GPU_DEVICE") == NULL);
        dp_dra_prepare_output_done(&out);
        dp_object_list_free(l);
        fixture_done(&f);

        fixture_init(&f, "../tools/v2-e2e/example-cpu.yaml", 0);
        l = claims("apiVersion: resource.k8s.io/v1\nkind: ResourceClaim\n"
                   "metadata: {name: c, namespace: ns, uid: u-c}\n"
                   "spec: {devices: {requests: [{name: cpu0, exactly: {deviceClassName: cpu.example.com}},\n"
                   "                            {name: cpu1, exactly: {deviceClassName: cpu.example.com}}]}}\n"
                   "status:\n  allocation:\n    devices:\n      results:\n"
                   "      - {request: cpu0, driver: cpu.example.com, pool: node-a, device: numa-0,\n"
                   "         shareID: 7c1f0e36-aaaa-bbbb-cccc-000000000001, consumedCapacity: {cpu: '1'}}\n"
                   "      - {request: cpu1, driver: cpu.example.com, pool: node-a, device: numa-0,\n"
                   "         shareID: 7c1f0e36-aaaa-bbbb-cccc-000000000002, consumedCapacity: {cpu: '1'}}\n");
        if (dp_dra_prepare(&f.in, l->items[0].claim, &out, &err) < 0) DP_FAIL("%s", err.msg);
        ASSERT_CONTAINS(out.cdi_spec.data, "\"CPU_DEVICE_0=numa-0\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"CPU_DEVICE_0_CONSUMED_CPU=1\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"CPU_DEVICE_0_1=numa-0\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"CPU_DEVICE_0_1_CONSUMED_CPU=1\"");
        ASSERT_CONTAINS(out.cdi_spec.data, "\"name\":\"u-c-numa-0-1\"");
        ASSERT_TRUE(strstr(out.cdi_spec.data, "SHARING_STRATEGY") == NULL);
        ASSERT_EQ(out.claim.n_devices, 2);
        dp_dra_prepare_output_done(&out);
        dp_object_list_free(l);
        fixture_done(&f);
}
