/* SPDX-License-Identifier: Apache-2.0
 *
 * cases.h — what the queue room's facts-case runners share
 * (test-admission.c, test-tas.c, test-volcano.c): every case-*.yaml of a
 * directory run in name order, and an expectation line "NS/NAME WORD rest"
 * (or "NS/NAME rest" for a note) split into its parts.
 */
#pragma once

#include <dirent.h>

#include "harness.h"

#define CASES_MAX 512

static int case_name_cmp(const void *a, const void *b) {
        return strcmp(*(char *const *)a, *(char *const *)b);
}

/* fn on every case-*.yaml of dir, in name order (printed when verbose);
 * the expectations fn checked, summed; the number of cases in *ret_n. */
static inline size_t run_cases(const char *dir, size_t (*fn)(const char *name), bool verbose, size_t *ret_n) {
        DIR *d = opendir(dir);
        ASSERT_TRUE(d);
        char *names[CASES_MAX];
        size_t n = 0, checks = 0;
        for (struct dirent *e; (e = readdir(d)) && n < ELEMENTSOF(names);)
                if (startswith(e->d_name, "case-") && strstr(e->d_name, ".yaml")) ASSERT_TRUE(names[n++] = strdup(e->d_name));
        closedir(d);
        qsort(names, n, sizeof(*names), case_name_cmp);
        for (size_t i = 0; i < n; i++) {
                if (verbose) printf("  %s\n", names[i]);
                checks += fn(names[i]);
                free(names[i]);
        }
        printf("  %zu cases, %zu expectations\n", n, checks);
        *ret_n = n;
        return checks;
}

/* line "NS/NAME WORD rest" (note: "NS/NAME rest"): ref[] holds NS and
 * *ret_name the NAME after it, word[] the WORD; returns rest (spaces
 * skipped). A bad line fails the test naming file. */
static inline const char *case_ref(const char *file, const char *line, bool note, char ref[300], char word[32],
                                   const char **ret_name) {
        int used = 0;
        word[0] = 0;
        if ((note ? sscanf(line, "%299s%n", ref, &used) : sscanf(line, "%299s %31s%n", ref, word, &used)) < 1 + !note)
                DP_FAIL("%s: bad line %s", file, line);
        const char *rest = line + used;
        while (*rest == ' ')
                rest++;
        char *slash = strchr(ref, '/');
        if (!slash) DP_FAIL("%s: %s: NS/NAME expected", file, ref);
        *slash = 0;
        *ret_name = slash + 1;
        return rest;
}
