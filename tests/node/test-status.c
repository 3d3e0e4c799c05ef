/* SPDX-License-Identifier: Apache-2.0 */
#include <stdio.h>
#include <sys/stat.h>

#include "harness.h"
#include "node/node.h"
#include "node/status.h"

static const char status_json[] =
        "{\"node\":\"n1\",\"state\":\"running\",\"pid\":42,\"generation\":7,\"registrations\":1,"
        "\"resources\":[{\"name\":\"example.com/gpu\",\"capacity\":2,\"allocatable\":1,\"inUse\":1,\"plugin\":\"connected\","
        "\"devices\":[{\"id\":\"g0\",\"health\":\"Healthy\",\"numa\":[0],\"holder\":\"default/p/c\"},"
        "{\"id\":\"g1\",\"health\":\"Unhealthy\",\"numa\":[]}]}],"
        "\"pods\":[{\"namespace\":\"default\",\"name\":\"p\",\"uid\":\"u\",\"manifest\":\"m/p.yaml\",\"phase\":\"Running\","
        "\"attempts\":0,\"allocateCalls\":1,\"containers\":[{\"name\":\"c\",\"devices\":[{\"resource\":\"example.com/gpu\","
        "\"requested\":1,\"ids\":[\"g0\"],\"envs\":{\"GPU\":\"g0\"}}]}]},"
        "{\"namespace\":\"default\",\"name\":\"w\",\"uid\":\"v\",\"manifest\":\"m/w.yaml\",\"phase\":\"Waiting\","
        "\"attempts\":2,\"allocateCalls\":0,\"message\":\"no luck\",\"containers\":[]}],"
        "\"manifestErrors\":[{\"file\":\"bad.yaml\",\"message\":\"bad.yaml: Pod default/x: spec: Required value\"}]}";

static void write_status(const char *dir) {
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, DP_NODE_STATUS_FILE);
        FILE *f = fopen(path, "w");
        ASSERT_TRUE(f != NULL);
        fputs(status_json, f);
        fclose(f);
}

TEST(flat_and_table) {
        char dir[] = "/tmp/dp-test-status.XXXXXX";
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        write_status(dir);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        dp_doc_node *root = NULL;
        ASSERT_OK(dp_node_status_read(dir, s, &root, NULL));
        _cleanup_strbuf_ dp_strbuf flat = DP_STRBUF_INIT, table = DP_STRBUF_INIT;
        dp_node_status_print(&flat, root, DP_NODE_STATUS_FLAT);
        ASSERT_CONTAINS(flat.buf, "node n1 running pid=42 generation=7\n");
        ASSERT_CONTAINS(flat.buf, "resource example.com/gpu capacity=2 allocatable=1 inuse=1 plugin=connected\n");
        ASSERT_CONTAINS(flat.buf, "device example.com/gpu g0 Healthy holder=default/p/c\n");
        ASSERT_CONTAINS(flat.buf, "device example.com/gpu g1 Unhealthy\n");
        ASSERT_CONTAINS(flat.buf, "pod default/p phase=Running attempts=0 allocate-calls=1\n");
        ASSERT_CONTAINS(flat.buf, "container default/p/c example.com/gpu=g0\n");
        ASSERT_CONTAINS(flat.buf, "env default/p/c GPU=g0\n");
        ASSERT_CONTAINS(flat.buf, "pod-message default/w no luck\n");
        ASSERT_CONTAINS(flat.buf, "manifest-error bad.yaml bad.yaml: Pod default/x: spec: Required value\n");
        dp_node_status_print(&table, root, DP_NODE_STATUS_TABLE);
        /* columns as wide as their content, two spaces apart, nothing
         * trailing (kubectl's habit): no fixed widths */
        ASSERT_STREQ(table.buf, "NODE n1 (running)\n"
                                "\n"
                                "RESOURCE         CAPACITY  ALLOCATABLE  IN USE  PLUGIN\n"
                                "example.com/gpu  2         1            1       connected  unhealthy: g1\n"
                                "\n"
                                "POD        CONTAINER  RESOURCE         DEVICES  STATUS\n"
                                "default/p  c          example.com/gpu  g0       Running\n"
                                "default/w  -          -                -        Waiting: no luck\n"
                                "\n"
                                "MANIFEST ERRORS\n"
                                "  bad.yaml: Pod default/x: spec: Required value\n");
        /* conditions already true return at once; a false one times out */
        const char *ok[] = {"allocatable=1", "!allocatable=2"};
        ASSERT_OK(dp_node_status_wait(dir, ok, 2, 1000, NULL, NULL));
        const char *never[] = {"allocatable=5"};
        dp_strbuf last = DP_STRBUF_INIT;
        ASSERT_EQ(dp_node_status_wait(dir, never, 1, 50, &last, NULL), -ETIMEDOUT);
        ASSERT_CONTAINS(last.buf, "allocatable=1");
        dp_strbuf_done(&last);
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, DP_NODE_STATUS_FILE);
        unlink(path);
        rmdir(dir);
}

TEST(wait_wakes_on_change) {
        char dir[] = "/tmp/dp-test-status.XXXXXX";
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        pid_t pid = fork();
        ASSERT_TRUE(pid >= 0);
        if (pid == 0) {
                /* the child writes the status once the parent waits (no sleep: the
                 * parent's inotify watch exists before the file, so either order works) */
                write_status(dir);
                _exit(0);
        }
        const char *c[] = {"node n1 running"};
        ASSERT_OK(dp_node_status_wait(dir, c, 1, 10000, NULL, NULL));
        int st;
        waitpid(pid, &st, 0);
        char path[128];
        snprintf(path, sizeof path, "%s/%s", dir, DP_NODE_STATUS_FILE);
        unlink(path);
        rmdir(dir);
}
