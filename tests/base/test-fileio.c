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
