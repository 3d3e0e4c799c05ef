/* SPDX-License-Identifier: Apache-2.0 */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "harness.h"

static char *read_all(const char *path) {
        FILE *f = fopen(path, "re");
        if (!f) return NULL;
        static char buf[256];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        return buf;
}

static size_t count_entries(const char *dir) {
        DIR *d = opendir(dir);
        size_t n = 0;
        for (struct dirent *e; (e = readdir(d));)
                if (e->d_name[0] != '.' || (e->d_name[1] && !(e->d_name[1] == '.' && !e->d_name[2]))) n++;
        closedir(d);
        return n;
}

TEST(replace_and_durable) {
        char dir[] = "/tmp/dp-fileio.XXXXXX";
        ASSERT_TRUE(mkdtemp(dir) != NULL);
        char sub[300];
        snprintf(sub, sizeof sub, "%s/a/b", dir);
        ASSERT_OK(dp_mkdir_p(sub, 0755));
        ASSERT_OK(dp_mkdir_p(sub, 0755)); /* idempotent */
        ASSERT_OK(dp_write_file_atomic(dir, "a/b/f", "one", 3, 0600, 0, NULL));
        ASSERT_OK(dp_write_file_atomic(dir, "a/b/f", "two!", 4, 0600, DP_WRITE_DURABLE, NULL));
        char path[400];
        snprintf(path, sizeof path, "%s/a/b/f", dir);
        ASSERT_STREQ(read_all(path), "two!");
        struct stat st;
        ASSERT_OK(stat(path, &st));
        ASSERT_EQ(st.st_mode & 0777, 0600);
        ASSERT_EQ(count_entries(sub), 1); /* no temporary file left behind */
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(dp_write_file_atomic(dir, "missing/f", "x", 1, 0644, 0, &err), -ENOENT);
        ASSERT_CONTAINS(err.msg, "missing/f: creating a temporary file");
        unlink(path);
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
}

/* dp_read_file: regular files only, never blocking, capped in bytes read. */
TEST(read_file_regular_and_capped) {
        char dir[] = "/tmp/dp-fileio.XXXXXX";
        ASSERT_TRUE(mkdtemp(dir));
        char p[300];
        snprintf(p, sizeof p, "%s/f", dir);
        ASSERT_OK(dp_write_file_atomic(dir, "f", "0123456789", 10, 0644, 0, NULL));
        dp_error err = DP_ERROR_INIT;
        char *buf = NULL;
        size_t len = 99;
        ASSERT_OK(dp_read_file(p, 10, &buf, &len, &err));
        ASSERT_EQ(len, 10);
        ASSERT_STREQ(buf, "0123456789");
        free(buf);
        buf = NULL;
        ASSERT_EQ(dp_read_file(p, 9, &buf, &len, &err), -E2BIG);
        ASSERT_TRUE(!buf);
        char want[400];
        snprintf(want, sizeof want, "%s: larger than 9 bytes", p);
        ASSERT_STREQ(err.msg, want);
        /* empty file: "" */
        ASSERT_OK(dp_write_file_atomic(dir, "e", "", 0, 0644, 0, NULL));
        snprintf(p, sizeof p, "%s/e", dir);
        ASSERT_OK(dp_read_file(p, 0, &buf, &len, &err));
        ASSERT_EQ(len, 0);
        ASSERT_STREQ(buf, "");
        free(buf);
        buf = NULL;
        /* a file bigger than the first allocation grows to the cap */
        size_t big = 300000;
        char *data = malloc(big);
        for (size_t i = 0; i < big; i++) data[i] = (char)('a' + i % 26);
        ASSERT_OK(dp_write_file_atomic(dir, "big", data, big, 0644, 0, NULL));
        snprintf(p, sizeof p, "%s/big", dir);
        ASSERT_OK(dp_read_file(p, big, &buf, &len, &err));
        ASSERT_EQ(len, big);
        ASSERT_TRUE(memcmp(buf, data, big) == 0);
        free(buf);
        buf = NULL;
        ASSERT_EQ(dp_read_file(p, big - 1, &buf, &len, &err), -E2BIG);
        free(data);
        /* missing */
        snprintf(p, sizeof p, "%s/missing", dir);
        ASSERT_EQ(dp_read_file(p, 100, &buf, &len, &err), -ENOENT);
        ASSERT_CONTAINS(err.msg, "No such file");
        /* a directory */
        ASSERT_EQ(dp_read_file(dir, 100, &buf, &len, &err), -EISDIR);
        ASSERT_CONTAINS(err.msg, ": Is a directory");
        ASSERT_TRUE(!buf);
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
}

TEST(read_file_refuses_fifo_and_devices) {
        /* no writer on the FIFO: a blocking open would hang here forever */
        alarm(60);
        char dir[] = "/tmp/dp-fileio.XXXXXX";
        ASSERT_TRUE(mkdtemp(dir));
        char p[300], l[300];
        snprintf(p, sizeof p, "%s/claim.yaml", dir);
        ASSERT_OK(mkfifo(p, 0600) < 0 ? -errno : 0);
        dp_error err = DP_ERROR_INIT;
        char *buf = NULL;
        size_t len = 0;
        ASSERT_EQ(dp_read_file(p, 4 << 20, &buf, &len, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "claim.yaml: not a regular file (a FIFO)");
        /* a symlink to /dev/zero is refused, not read up to the cap */
        snprintf(l, sizeof l, "%s/zero.yaml", dir);
        ASSERT_OK(symlink("/dev/zero", l) < 0 ? -errno : 0);
        ASSERT_EQ(dp_read_file(l, 4 << 20, &buf, &len, &err), -EINVAL);
        ASSERT_CONTAINS(err.msg, "zero.yaml: not a regular file (a character device)");
        ASSERT_TRUE(!buf);
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
}

/* One set-aside for every durable file and lock file: .corrupt holds the
 * newest damage when rename(2) can replace it, older damage of another kind
 * moves on to the first free number and is never overwritten. */
TEST(set_aside_keeps_every_damaged_file) {
        char dir[] = "/tmp/dp-fileio.XXXXXX";
        ASSERT_TRUE(mkdtemp(dir));
        char p[300], q[320];
        snprintf(p, sizeof p, "%s/state", dir);
        ASSERT_EQ(dp_file_set_aside(p, NULL), -ENOENT);
        /* a file, then a newer file: .corrupt holds the newer one */
        ASSERT_OK(dp_write_file_atomic(dir, "state", "old", 3, 0600, 0, NULL));
        ASSERT_OK(dp_file_set_aside(p, NULL));
        ASSERT_OK(dp_write_file_atomic(dir, "state", "new", 3, 0600, 0, NULL));
        char *to = NULL;
        ASSERT_OK(dp_file_set_aside(p, &to));
        snprintf(q, sizeof q, "%s.corrupt", p);
        ASSERT_STREQ(to, q);
        ASSERT_STREQ(read_all(q), "new");
        free(to);
        /* a directory cannot replace the file: the next number, twice */
        for (int i = 1; i <= 2; i++) {
                ASSERT_OK(mkdir(p, 0700) < 0 ? -errno : 0);
                ASSERT_OK(dp_file_set_aside(p, &to));
                snprintf(q, sizeof q, "%s.corrupt.%d", p, i);
                ASSERT_STREQ(to, q);
                free(to);
        }
        /* a file again: .corrupt is replaced, the numbered directories stay */
        ASSERT_OK(dp_write_file_atomic(dir, "state", "newest", 6, 0600, 0, NULL));
        ASSERT_OK(dp_file_set_aside(p, NULL));
        snprintf(q, sizeof q, "%s.corrupt", p);
        ASSERT_STREQ(read_all(q), "newest");
        ASSERT_EQ(count_entries(dir), 3);
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
        ASSERT_EQ(system(cmd), 0);
}
