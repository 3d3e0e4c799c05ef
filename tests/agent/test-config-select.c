/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/agent/config-select.c: which file of a config directory a
 * node gets, NVIDIA's config manager's way (label, default, the only one). */
#include <sys/stat.h>

#include "harness.h"

#include "agent/agent.h"

static char dir[64];

static void put(const char *name) {
        char p[128];
        snprintf(p, sizeof p, "%s/%s", dir, name);
        FILE *f = fopen(p, "w");
        ASSERT_TRUE(f != NULL);
        fputs("version: v1\n", f);
        fclose(f);
}

static char *pick(const char *value, const char *def, int want) {
        char *path = NULL;
        dp_error err = DP_ERROR_INIT;
        int r = dp_agent_config_pick(dir, value, def, &path, &err);
        if (r != want) DP_FAIL("pick %s/%s: %d, want %d: %s", value ? value : "-", def ? def : "-", r, want, err.msg);
        return path;
}

TEST(pick) {
        snprintf(dir, sizeof dir, "/tmp/dp-cfgsel-XXXXXX");
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        /* empty directory: nothing to choose */
        ASSERT_TRUE(pick(NULL, "default", -ENOENT) == NULL);
        /* the only config, whatever its name (NVIDIA's "single" fallback) */
        put("mig-mixed");
        char *p = pick(NULL, "default", 0);
        ASSERT_TRUE(p && strstr(p, "/mig-mixed"));
        free(p);
        /* two configs, none named default: no choice */
        put("time-sliced");
        ASSERT_TRUE(pick("", "default", -ENOENT) == NULL);
        /* the default when unlabelled, the label when set */
        put("default");
        p = pick(NULL, "default", 0);
        ASSERT_TRUE(p && strstr(p, "/default"));
        free(p);
        p = pick("time-sliced", "default", 0);
        ASSERT_TRUE(p && strstr(p, "/time-sliced"));
        free(p);
        /* a label naming nothing there, or a path, is refused */
        ASSERT_TRUE(pick("nope", "default", -ENOENT) == NULL);
        ASSERT_TRUE(pick("../etc/passwd", "default", -ENOENT) == NULL);
        ASSERT_TRUE(pick("..", "default", -ENOENT) == NULL);
        char q[128];
        const char *names[] = {"mig-mixed", "time-sliced", "default"};
        for (size_t i = 0; i < 3; i++) {
                snprintf(q, sizeof q, "%s/%s", dir, names[i]);
                unlink(q);
        }
        rmdir(dir);
}
