/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/node/dra-manager.c: the CDI environment a container sees
 * (dp_node_dra_cdi_env_doc), and the flat status lines of the DRA manager. */
#include <stdio.h>
#include <sys/stat.h>

#include "doc/doc.h"
#include "harness.h"
#include "node/dra-manager.h"
#include "node/node.h"
#include "node/status.h"
#include "proto/proto.h"

static const char spec[] =
        "{\"cdiVersion\":\"0.5.0\",\"kind\":\"k8s.gpu.example.com/gpu\","
        "\"containerEdits\":{\"env\":[\"KUBERNETES_NODE_NAME=node-a\",\"SHARED=spec\"]},"
        "\"devices\":[{\"name\":\"u-gpu-0\",\"containerEdits\":{\"env\":[\"GPU_DEVICE_0=gpu-0\",\"SHARED=device\","
        "\"=bad\",\"NOEQ\",\"EMPTY=\"]}},"
        "{\"name\":\"u-gpu-1\",\"containerEdits\":{\"env\":[\"GPU_DEVICE_1=gpu-1\"]}}]}";

static char *env_json(const char *id, int *ret_found) {
        dp_doc_set *s = dp_doc_set_new();
        ASSERT_TRUE(s != NULL);
        ASSERT_OK(dp_doc_parse(s, spec, sizeof spec - 1, "spec.json", NULL));
        dp_doc_node *env = dp_doc_new_map(s);
        *ret_found = dp_node_dra_cdi_env_doc(dp_doc_root(s, 0), id, s, env);
        dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, env, DP_DOC_JSON_COMPACT);
        char *out = dp_strbuf_steal(&sb);
        dp_doc_set_free(s);
        return out;
}

TEST(cdi_env_spec_then_device) {
        int found;
        char *j = env_json("k8s.gpu.example.com/gpu=u-gpu-0", &found);
        ASSERT_EQ(found, 1);
        /* spec edits first, the device's after (later wins); malformed entries skipped */
        ASSERT_STREQ(j, "{\"KUBERNETES_NODE_NAME\":\"node-a\",\"SHARED\":\"device\",\"GPU_DEVICE_0\":\"gpu-0\","
                        "\"EMPTY\":\"\"}");
        free(j);
}

TEST(cdi_env_other_device_kind_or_bad_id) {
        int found;
        char *j = env_json("k8s.gpu.example.com/gpu=u-gpu-1", &found);
        ASSERT_EQ(found, 1);
        ASSERT_CONTAINS(j, "\"GPU_DEVICE_1\":\"gpu-1\"");
        ASSERT_TRUE(strstr(j, "GPU_DEVICE_0") == NULL);
        free(j);
        j = env_json("other.com/gpu=u-gpu-0", &found);
        ASSERT_EQ(found, 0);
        ASSERT_STREQ(j, "{}");
        free(j);
        j = env_json("k8s.gpu.example.com/gpu", &found);
        ASSERT_EQ(found, 0);
        free(j);
        j = env_json("k8s.gpu.example.com/gpu=nope", &found);
        ASSERT_EQ(found, 0);
        free(j);
}

static const char status_json[] =
        "{\"node\":\"n1\",\"state\":\"running\",\"pid\":42,\"generation\":7,\"registrations\":0,\"resources\":[],"
        "\"pods\":[],\"manifestErrors\":[],"
        "\"draPlugins\":[{\"socket\":\"/r/d-reg.sock\",\"name\":\"d\",\"state\":\"registered\",\"endpoint\":\"/p/d/"
        "dra.sock\","
        "\"version\":\"v1.DRAPlugin\"},{\"socket\":\"/r/x.sock\",\"name\":\"\",\"state\":\"failed\",\"error\":\"no "
        "handler\"}],"
        "\"draPods\":[{\"namespace\":\"ns\",\"name\":\"p\",\"phase\":\"Prepared\",\"attempts\":0,\"claims\":[\"c\"],"
        "\"resourceClaimStatuses\":[{\"name\":\"g\",\"resourceClaimName\":\"p-g\"}],\"extendedResourceClaim\":\"p-x\","
        "\"containers\":[{\"name\":\"ctr\",\"cdiDevices\":[\"k/g=u-0\"],\"env\":{\"GPU_DEVICE_0\":\"gpu-0\"}}]},"
        "{\"namespace\":\"ns\",\"name\":\"w\",\"phase\":\"Waiting\",\"attempts\":2,\"message\":\"not allocated\","
        "\"claims\":[],\"containers\":[]}],"
        "\"draClaims\":[{\"namespace\":\"ns\",\"name\":\"c\",\"uid\":\"u\",\"driver\":\"d\",\"devices\":[{\"pool\":"
        "\"n1\","
        "\"device\":\"gpu-0\",\"cdiDeviceIDs\":[\"k/g=u-0\"]}]},"
        "{\"namespace\":\"ns\",\"name\":\"s\",\"uid\":\"v\",\"driver\":\"d\",\"skipped\":true,\"devices\":[]},"
        "{\"namespace\":\"ns\",\"name\":\"o\",\"uid\":\"w\",\"driver\":\"d\",\"state\":\"unpreparing\","
        "\"pods\":[],\"devices\":[]},"
        "{\"namespace\":\"ns\",\"name\":\"q\",\"uid\":\"x\",\"driver\":\"d\",\"state\":\"prepared\","
        "\"pods\":[\"ns/p\",\"ns/p2\"],\"devices\":[]}],"
        "\"draState\":{\"origin\":\"corrupt (kept as /p/f.corrupt): bad\",\"rebuild\":true,\"error\":\"disk full\","
        "\"unknownDrivers\":[{\"driver\":\"e\",\"reason\":\"UNIMPLEMENTED\"}]},"
        "\"draHealth\":[{\"driver\":\"d\",\"state\":\"watching: 2 devices, 1 unhealthy\",\"devices\":["
        "{\"pool\":\"n1\",\"device\":\"gpu-0\",\"health\":\"Healthy\",\"lastUpdated\":5},"
        "{\"pool\":\"n1\",\"device\":\"gpu-1\",\"health\":\"Unhealthy\",\"message\":\"xid-79\",\"lastUpdated\":6}]}],"
        "\"draPrepareCalls\":3}";

TEST(flat_dra_lines) {
        char dir[] = "/tmp/dp-test-dra-status.XXXXXX";
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, DP_NODE_STATUS_FILE);
        FILE *f = fopen(path, "w");
        ASSERT_TRUE(f != NULL);
        fputs(status_json, f);
        fclose(f);
        dp_doc_set *set = dp_doc_set_new();
        dp_doc_node *root = NULL;
        ASSERT_TRUE(set != NULL);
        ASSERT_OK(dp_node_status_read(dir, set, &root, NULL));
        dp_strbuf out = DP_STRBUF_INIT;
        dp_node_status_print(&out, root, DP_NODE_STATUS_FLAT);
        const char *s = dp_strbuf_str(&out);
        ASSERT_CONTAINS(s, "dra-plugin d registered endpoint=/p/d/dra.sock version=v1.DRAPlugin\n");
        ASSERT_CONTAINS(s, "dra-plugin-error /r/x.sock no handler\n");
        ASSERT_CONTAINS(s, "dra-pod ns/p phase=Prepared attempts=0\n");
        ASSERT_CONTAINS(s, "dra-cdi ns/p/ctr k/g=u-0\n");
        ASSERT_CONTAINS(s, "dra-env ns/p/ctr GPU_DEVICE_0=gpu-0\n");
        ASSERT_CONTAINS(s, "dra-pod ns/w phase=Waiting attempts=2\ndra-pod-message ns/w not allocated\n");
        ASSERT_CONTAINS(s, "dra-claim ns/c uid=u driver=d devices=n1/gpu-0\n");
        ASSERT_CONTAINS(s, "dra-claim ns/s uid=v driver=d devices=- skipped\n");
        ASSERT_CONTAINS(s, "dra-claim ns/o uid=w driver=d devices=- state=unpreparing pods=-\n");
        ASSERT_CONTAINS(s, "dra-claim ns/q uid=x driver=d devices=- state=prepared pods=ns/p,ns/p2\n");
        ASSERT_CONTAINS(s, "dra-state corrupt (kept as /p/f.corrupt): bad rebuild\n");
        ASSERT_CONTAINS(s, "dra-state-error disk full\ndra-state-unknown e UNIMPLEMENTED\n");
        ASSERT_CONTAINS(s, "dra-pod-claim ns/p g=p-g\ndra-pod-claim ns/p @extended-resources=p-x\n");
        ASSERT_CONTAINS(s, "dra-health-stream d watching: 2 devices, 1 unhealthy\n");
        ASSERT_CONTAINS(s, "dra-health d n1/gpu-0 Healthy\ndra-health d n1/gpu-1 Unhealthy xid-79\n");
        dp_strbuf_done(&out);
        dp_strbuf table = DP_STRBUF_INIT;
        dp_node_status_print(&table, root, DP_NODE_STATUS_TABLE);
        s = dp_strbuf_str(&table);
        ASSERT_CONTAINS(s, "DRA DRIVER");
        ASSERT_CONTAINS(s, "no handler");
        ASSERT_CONTAINS(s, "gpu-0");
        ASSERT_CONTAINS(s, "(node operations skipped)");
        ASSERT_CONTAINS(s, "ctr: k/g=u-0");
        ASSERT_CONTAINS(s, "not allocated");
        ASSERT_CONTAINS(s, "DRA HEALTH (DRIVER)");
        ASSERT_CONTAINS(s, "n1/gpu-1");
        ASSERT_CONTAINS(s, "Unhealthy  xid-79");
        dp_strbuf_done(&table);
        dp_doc_set_free(set);
        unlink(path);
        rmdir(dir);
}

/* NodeWatchResourcesResponse as a driver sends it (v1alpha1 wire). */
TEST(health_decode) {
        V1alpha1__DeviceIdentifier id[3] = {V1ALPHA1__DEVICE_IDENTIFIER__INIT, V1ALPHA1__DEVICE_IDENTIFIER__INIT,
                                            V1ALPHA1__DEVICE_IDENTIFIER__INIT};
        V1alpha1__DeviceHealth h[3] = {V1ALPHA1__DEVICE_HEALTH__INIT, V1ALPHA1__DEVICE_HEALTH__INIT,
                                       V1ALPHA1__DEVICE_HEALTH__INIT};
        V1alpha1__DeviceHealth *hp[3] = {&h[0], &h[1], &h[2]};
        const char *names[3] = {"gpu-0", "gpu-1", ""}; /* the third has no name: dropped */
        for (int i = 0; i < 3; i++) {
                id[i].pool_name = (char *)"node-a";
                id[i].device_name = (char *)names[i];
                h[i].device = &id[i];
                h[i].health = i == 1 ? V1ALPHA1__HEALTH_STATUS__UNHEALTHY : V1ALPHA1__HEALTH_STATUS__HEALTHY;
                h[i].last_updated_time = 1764400000 + i;
        }
        V1alpha1__NodeWatchResourcesResponse resp = V1ALPHA1__NODE_WATCH_RESOURCES_RESPONSE__INIT;
        resp.devices = hp;
        resp.n_devices = 3;
        uint8_t buf[512];
        size_t len = v1alpha1__node_watch_resources_response__pack(&resp, buf);
        size_t n = 99, bad = 99;
        ASSERT_EQ(dp_node_dra_health_decode(buf, len, &n, &bad), 0);
        ASSERT_EQ(n, 2);
        ASSERT_EQ(bad, 1);
        ASSERT_EQ(dp_node_dra_health_decode(NULL, 0, &n, &bad), 0); /* the empty list */
        ASSERT_EQ(n, 0);
        static const uint8_t junk[] = {0x0a, 0xff, 0xff, 0xff, 0x0f};
        ASSERT_EQ(dp_node_dra_health_decode(junk, sizeof junk, &n, &bad), -EBADMSG);
        /* a device name that is not UTF-8: undecodable, as protobuf-go refuses it */
        id[1].device_name = (char *)"gpu-\xd1";
        len = v1alpha1__node_watch_resources_response__pack(&resp, buf);
        ASSERT_EQ(dp_node_dra_health_decode(buf, len, &n, &bad), -EBADMSG);
}
