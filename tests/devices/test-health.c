/* SPDX-License-Identifier: Apache-2.0
 * Tests for src/devices/health.c: the health override file. */
#include "harness.h"

#include "devices/health.h"
#include "devices/profile.h"

static dp_device_set *mixed(void) {
        dp_device_set *s = NULL;
        dp_error err = DP_ERROR_INIT;
        if (dp_profile_builtin("a100-mixed", "node-a", &s, &err) < 0) DP_FAIL("%s", err.msg);
        return s;
}

TEST(parse_and_apply) {
        const char *txt = "# overrides\n\ngpu-3 unhealthy\n  gpu-0-mig-1g.10gb-2\tunhealthy  # flaky\ngpu-5 "
                          "unhealthy\ngpu-5 healthy\n";
        dp_health_file *f = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_health_file_parse(txt, strlen(txt), "health", &f, &err));
        ASSERT_EQ(f->n, 4);
        ASSERT_STREQ(f->items[1].id, "gpu-0-mig-1g.10gb-2");
        ASSERT_EQ(f->items[1].line, 4);
        dp_device_set *s = mixed();
        ASSERT_EQ(dp_health_apply(s, f, "health", &err), 2);
        ASSERT_EQ(s->devices[3].health, DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(s->devices[5].health, DP_HEALTH_HEALTHY);
        ASSERT_EQ(s->devices[0].migs[2].health, DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(dp_mig_effective_health(s, &s->devices[3].migs[0]), DP_HEALTH_UNHEALTHY);
        ASSERT_EQ(dp_mig_effective_health(s, &s->devices[1].migs[0]), DP_HEALTH_HEALTHY);
        /* Same file again: nothing changes. Empty file: back to profile health. */
        ASSERT_EQ(dp_health_apply(s, f, "health", &err), 0);
        ASSERT_EQ(dp_health_apply(s, NULL, "health", &err), 2);
        ASSERT_EQ(s->devices[3].health, DP_HEALTH_HEALTHY);
        dp_health_file_free(f);
        /* By uuid. */
        char line[128];
        snprintf(line, sizeof line, "%s unhealthy\n", s->devices[6].uuid);
        ASSERT_OK(dp_health_file_parse(line, strlen(line), "health", &f, &err));
        ASSERT_EQ(dp_health_apply(s, f, "health", &err), 1);
        ASSERT_EQ(s->devices[6].health, DP_HEALTH_UNHEALTHY);
        dp_health_file_free(f);
        /* A MIG instance by its name (the dotted one above is the name of
         * earlier releases, still read). */
        const char *mig = "gpu-1-mig-1g10gb-4 unhealthy\n";
        ASSERT_OK(dp_health_file_parse(mig, strlen(mig), "health", &f, &err));
        ASSERT_EQ(dp_health_apply(s, f, "health", &err), 2); /* gpu-6 back, the instance down */
        ASSERT_EQ(s->devices[1].migs[4].health, DP_HEALTH_UNHEALTHY);
        dp_health_file_free(f);
        dp_device_set_free(s);
}

TEST(errors) {
        dp_health_file *f = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_health_file_parse("gpu-1 sick\n", 11, "st/health", &f, &err), -EINVAL);
        ASSERT_STREQ(err.msg, "st/health:1: health must be healthy or unhealthy, got \"sick\"");
        ASSERT_EQ(dp_health_file_parse("\ngpu-1\n", 7, "st/health", &f, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "st/health:2: expected \"<device> healthy|unhealthy\", got 1 word");
        ASSERT_EQ(dp_health_file_parse("a b c\n", 6, "h", &f, &err), -EINVAL);
        ASSERT_OK(dp_health_file_parse("gpu-3 unhealthy\ngpu-42 unhealthy\n", 33, "h", &f, &err));
        dp_device_set *s = mixed();
        ASSERT_EQ(dp_health_apply(s, f, "h", &err), -ENOENT);
        ASSERT_STREQ(err.msg, "h:2: unknown device gpu-42");
        ASSERT_EQ(s->devices[3].health, DP_HEALTH_HEALTHY); /* untouched */
        dp_health_file_free(f);
        dp_device_set_free(s);
}

TEST(file_set) {
        dp_strbuf out = DP_STRBUF_INIT;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_health_file_set(NULL, 0, "gpu-3", DP_HEALTH_UNHEALTHY, &out, &err));
        ASSERT_STREQ(dp_strbuf_str(&out), "gpu-3 unhealthy\n");
        const char *old = "# keep\ngpu-3 unhealthy\ngpu-1 unhealthy";
        dp_strbuf_done(&out);
        ASSERT_OK(dp_health_file_set(old, strlen(old), "gpu-3", DP_HEALTH_HEALTHY, &out, &err));
        ASSERT_STREQ(dp_strbuf_str(&out), "# keep\ngpu-1 unhealthy\ngpu-3 healthy\n");
        dp_strbuf_done(&out);
        ASSERT_EQ(dp_health_file_set(NULL, 0, "gpu 3", DP_HEALTH_HEALTHY, &out, &err), -EINVAL);
        dp_strbuf_done(&out);
}
