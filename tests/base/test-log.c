/* SPDX-License-Identifier: Apache-2.0
 * Log lines cannot be forged: control characters and invalid UTF-8 in a
 * logged value are escaped, in the text line and for a formatter (the
 * agent's --log-format json gets the escaped message). */
#include <fcntl.h>
#include <stdio.h>

#include "base/log.h"
#include "harness.h"

static char got[20000];

static void capture(dp_log_level level, const char *level_name, const char *component, const char *msg) {
        (void)level;
        snprintf(got, sizeof got, "%s|%s|%s", component, level_name, msg);
}

TEST(escape_controls_and_bad_utf8) {
        char out[256];
        dp_log_escape(out, sizeof out, "gpu-0\n devplane[agent] error: forged");
        ASSERT_STREQ(out, "gpu-0\\n devplane[agent] error: forged");
        dp_log_escape(out, sizeof out, "a\x1b[2Jb\x7f\r\t");
        ASSERT_STREQ(out, "a\\x1b[2Jb\\x7f\\r\\t");
        /* invalid UTF-8 (a lone continuation, a cut sequence, overlong) and
         * a C1 control (CSI, U+009B) are escaped byte by byte; valid UTF-8 stays */
        dp_log_escape(out, sizeof out, "\x80-\xe2\x82-\xc0\xaf-\xc2\x9b-\xc3\xa9\xe2\x82\xac");
        ASSERT_STREQ(out, "\\x80-\\xe2\\x82-\\xc0\\xaf-\\xc2\\x9b-\xc3\xa9\xe2\x82\xac");
        /* cut at a whole character */
        char small[8];
        ASSERT_EQ(dp_log_escape(small, sizeof small, "abcd\n"), 4);
        ASSERT_STREQ(small, "abcd");
}

TEST(formatter_gets_escaped_message) {
        dp_log_setup("agent", DP_LOG_INFO);
        dp_log_set_formatter(capture);
        log_warning("device %s is unhealthy", "gpu-0\n{\"level\":\"info\",\"msg\":\"fine\"}\xff");
        ASSERT_STREQ(got, "agent|warning|device gpu-0\\n{\"level\":\"info\",\"msg\":\"fine\"}\\xff is unhealthy");
        dp_log_set_formatter(NULL);
}

TEST(text_line_is_one_line) {
        char path[] = "/tmp/dp-log-test.XXXXXX";
        int fd = mkstemp(path);
        ASSERT_TRUE(fd >= 0);
        fflush(stderr);
        int saved = dup(2);
        ASSERT_TRUE(dup2(fd, 2) == 2);
        dp_log_setup("node", DP_LOG_INFO);
        log_error("claim %s", "c0\ndevplane[node] info: all good\x1b]0;title\x07");
        fflush(stderr);
        dup2(saved, 2);
        close(saved);
        char buf[512] = {0};
        ASSERT_TRUE(pread(fd, buf, sizeof buf - 1, 0) > 0);
        close(fd);
        unlink(path);
        ASSERT_STREQ(buf, "devplane[node] error: claim c0\\ndevplane[node] info: all good\\x1b]0;title\\x07\n");
}
