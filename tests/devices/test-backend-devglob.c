/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/devices/backend-devglob.c: /dev globs with share counts and
 * USB vendor:product matches under a temporary dev root, and presence-based
 * health through the backend fd (inotify), waiting for the event, not a
 * clock. */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <sys/stat.h>

#include "harness.h"

#include "devices/backend.h"
#include "devices/config.h"
#include "devices/v1.h"

static char root[64];

static void touch(const char *rel) {
        char p[256];
        snprintf(p, sizeof p, "%s%s", root, rel);
        int fd = open(p, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        if (fd < 0) DP_FAIL("create %s", p);
        close(fd);
}

static void rm(const char *rel) {
        char p[256];
        snprintf(p, sizeof p, "%s%s", root, rel);
        unlink(p);
}

static void cleanup(void) {
        const char *files[] = {"/dev/ttyUSB0", "/dev/ttyUSB1", "/dev/fuse", "/dev/bus/usb/001/004"};
        for (size_t i = 0; i < 4; i++)
                rm(files[i]);
        const char *dirs[] = {"/dev/bus/usb/001", "/dev/bus/usb", "/dev/bus", "/dev", ""};
        for (size_t i = 0; i < 5; i++) {
                char p[256];
                snprintf(p, sizeof p, "%s%s", root, dirs[i]);
                rmdir(p);
        }
}

static void make_root(void) {
        snprintf(root, sizeof root, "/tmp/dp-devglob-XXXXXX");
        if (!mkdtemp(root)) DP_FAIL("mkdtemp");
        atexit(cleanup);
        const char *dirs[] = {"/dev", "/dev/bus", "/dev/bus/usb", "/dev/bus/usb/001"};
        for (size_t i = 0; i < 4; i++) {
                char p[256];
                snprintf(p, sizeof p, "%s%s", root, dirs[i]);
                if (mkdir(p, 0700) < 0) DP_FAIL("mkdir %s", p);
        }
        touch("/dev/ttyUSB1");
        touch("/dev/ttyUSB0");
        touch("/dev/fuse");
        touch("/dev/bus/usb/001/004");
}

static dp_backend *open_devglob(void) {
        dp_backend_options o = {.node_name = "node-a",
                                .sysfs_root = "fixtures/sysfs-usb",
                                .dev_root = root,
                                .config_path = "fixtures/devglob.backend.yaml"};
        dp_backend *b = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_backend_open(DP_BACKEND_DEVGLOB, &o, &b, &err) < 0) DP_FAIL("open: %s", err.msg);
        return b;
}

/* Wait for the backend fd, then dispatch. */
static int wait_and_dispatch(dp_backend *b, dp_device_set *s, uint64_t now) {
        struct pollfd pfd = {.fd = dp_backend_fd(b), .events = POLLIN};
        if (poll(&pfd, 1, 10000) != 1) DP_FAIL("backend fd did not become readable");
        dp_error err = DP_ERROR_INIT;
        int r = dp_backend_dispatch(b, s, now, &err);
        if (r < 0) DP_FAIL("dispatch: %s", err.msg);
        return r;
}

TEST(globs_shares_and_usb) {
        make_root();
        dp_backend *b = open_devglob();
        dp_device_set *s = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_backend_discover(b, &s, &err));
        ASSERT_STREQ(s->domain, "squat.ai");
        ASSERT_STREQ(s->driver_name, "dev.squat.ai");
        /* 2 serial ports (sorted), fuse x 10, one CH340 by USB ids. */
        ASSERT_EQ(s->n_devices, 13);
        ASSERT_STREQ(s->devices[0].id, "serial-0");
        ASSERT_STREQ(s->devices[0].device_nodes[0], "/dev/ttyUSB0");
        ASSERT_STREQ(s->devices[1].device_nodes[0], "/dev/ttyUSB1");
        ASSERT_STREQ(s->devices[2].id, "fuse-0");
        ASSERT_STREQ(s->devices[11].id, "fuse-9");
        ASSERT_STREQ(s->devices[11].device_nodes[0], "/dev/fuse");
        ASSERT_TRUE(strcmp(s->devices[2].uuid, s->devices[11].uuid) != 0);
        ASSERT_STREQ(s->devices[12].id, "ch340-0");
        ASSERT_STREQ(s->devices[12].device_nodes[0], "/dev/bus/usb/001/004");

        dp_agent_config *c = dp_agent_config_new_default();
        dp_v1_plan *p = NULL;
        ASSERT_OK(dp_v1_plan_build(s, c, &p, &err));
        ASSERT_EQ(p->n_resources, 3);
        ASSERT_STREQ(p->resources[1].name, "squat.ai/fuse");
        ASSERT_EQ(dp_v1_resource_count(&p->resources[1]), 10);

        /* A node that vanishes: its device turns unhealthy; back: healthy. */
        rm("/dev/ttyUSB1");
        ASSERT_EQ(wait_and_dispatch(b, s, 1000), 1);
        ASSERT_EQ(s->devices[1].health, DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(s->devices[0].health, DP_HEALTH_HEALTHY);
        const dp_fault_entry *f = NULL;
        ASSERT_EQ(dp_backend_faults(b, &f), 1);
        ASSERT_STREQ(f[0].device, "serial-1");
        ASSERT_STREQ(f[0].fault_class, "missing");
        /* Missing is a state: no quiet period recovers it. */
        ASSERT_EQ(dp_backend_dispatch(b, s, 1000 + 3600ULL * 1000000ULL, &err), 0);
        ASSERT_EQ(dp_v1_plan_update_health(p, s), 1);
        ASSERT_EQ(dp_v1_resource_count_healthy(dp_v1_plan_find(p, "squat.ai/serial")), 1);
        touch("/dev/ttyUSB1");
        ASSERT_EQ(wait_and_dispatch(b, s, 2000), 1);
        ASSERT_EQ(s->devices[1].health, DP_HEALTH_HEALTHY);

        /* All shares of one node go together. */
        rm("/dev/fuse");
        ASSERT_EQ(wait_and_dispatch(b, s, 3000), 10);
        ASSERT_EQ(dp_v1_plan_update_health(p, s), 2);
        ASSERT_EQ(dp_v1_resource_count_healthy(dp_v1_plan_find(p, "squat.ai/fuse")), 0);

        dp_v1_plan_free(p);
        dp_agent_config_free(c);
        dp_device_set_free(s);
        dp_backend_close(b);
}

static bool present_if_not_usb1(const char *path, void *ud) { return strcmp(path, "/dev/ttyUSB1") != 0; }

TEST(presence_pure_part) {
        make_root();
        dp_backend *b = open_devglob();
        dp_device_set *s = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_backend_discover(b, &s, &err));
        dp_fault_tracker tr = {0};
        ASSERT_EQ(dp_devglob_presence_update(&tr, s, present_if_not_usb1, NULL, 5), 1);
        ASSERT_EQ(dp_devglob_presence_update(&tr, s, present_if_not_usb1, NULL, 6), 0);
        ASSERT_TRUE(dp_fault_tracker_find(&tr, "serial-1") != NULL);
        ASSERT_TRUE(dp_fault_tracker_find(&tr, "serial-1")->sticky);
        dp_fault_tracker_done(&tr);
        dp_device_set_free(s);
        dp_backend_close(b);
}
