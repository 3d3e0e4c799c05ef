/* SPDX-License-Identifier: Apache-2.0
 * bench-yaml — which YAML reader a bulk load should use (issue 24): the
 * same file loaded three ways, end to end as `devplane allocate/simulate`
 * loads it (read, parse, build each document's tree, decode it into
 * objects, drop the tree), timed in CPU seconds (getrusage, user + system):
 *
 *   devplane  dp_doc_parse_bulk: the JSON reader, devplane's own YAML reader
 *             (src/doc/doc-read.c), libyaml for what they give up on
 *   libyaml   dp_doc_parse_each_libyaml: libyaml's events only
 *   libfyaml  libfyaml's events (Debian's libfyaml-dev) into the same tree
 *             builder (src/doc/doc-parse.c's), so only the scanner differs
 *
 * Usage:
 *   bench-yaml [-r RUNS] [--parse-only] FILE...   the table: median CPU ms
 *                                                 (min-max) per reader
 *   bench-yaml --one READER [--parse-only] FILE   one load, for
 *       valgrind --tool=callgrind (instructions per reader)
 * Built only where libfyaml is installed (bench/CMakeLists.txt). */
#include <libfyaml.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <yaml.h>

#include "base/fileio.h"
#include "doc/doc-internal.h"
#include "model/model.h"

static bool parse_only;

static int each(dp_doc_node *root, const char *source, size_t index, void *userdata, dp_error *err) {
        if (parse_only) {
                (*(size_t *)userdata)++;
                return 0;
        }
        return dp_model_decode(root, source, index, userdata, err);
}

/* libfyaml's events into doc-parse.c's tree builder (no anchors: the
 * inputs have none) */
static int fy_scalar(parse_state *ps, struct fy_event *ev) {
        struct fy_token *t = ev->scalar.value;
        size_t len = 0;
        const char *s = fy_token_get_text(t, &len);
        const struct fy_mark *fm = fy_event_start_mark(ev);
        mark m = {(size_t)fm->line, (size_t)fm->column};
        return doc_add_scalar(ps, s ? s : "", len, fy_token_scalar_style(t) == FYSS_PLAIN, &m);
}

static int parse_each_fyaml(const char *buf, size_t len, const char *name, dp_doc_each_fn fn, void *userdata,
                            dp_error *err) {
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        struct fy_parse_cfg cfg = {.flags = FYPCF_QUIET | FYPCF_DEFAULT_VERSION_1_2};
        struct fy_parser *fyp = fy_parser_create(&cfg);
        if (!s || !fyp || fy_parser_set_string(fyp, buf, len) < 0) return -ENOMEM;
        parse_state ps = {.set = s, .name = name, .err = err, .fn = fn, .userdata = userdata};
        int r = 0;
        struct fy_event *ev;
        while (r >= 0 && (ev = fy_parser_parse(fyp))) {
                const struct fy_mark *fm = fy_event_start_mark(ev);
                mark m = {fm ? (size_t)fm->line : 0, fm ? (size_t)fm->column : 0};
                switch (ev->type) {
                case FYET_SCALAR: r = fy_scalar(&ps, ev); break;
                case FYET_MAPPING_START: r = doc_open_collection(&ps, DP_DOC_MAP, &m); break;
                case FYET_SEQUENCE_START: r = doc_open_collection(&ps, DP_DOC_SEQ, &m); break;
                case FYET_MAPPING_END:
                case FYET_SEQUENCE_END: r = doc_close_collection(&ps); break;
                case FYET_DOCUMENT_END: doc_document_end(&ps); break;
                case FYET_ALIAS: r = dp_error_set(err, -EINVAL, "%s: aliases are not measured", name); break;
                default: break;
                }
                fy_parser_event_free(fyp, ev);
        }
        if (r >= 0 && fy_parser_get_stream_error(fyp)) r = dp_error_set(err, -EINVAL, "%s: invalid YAML", name);
        fy_parser_destroy(fyp);
        free(ps.kids);
        return r < 0 ? r : ps.fn_r;
}

typedef int (*parse_fn)(const char *, size_t, const char *, dp_doc_each_fn, void *, dp_error *);

static const struct {
        const char *name;
        parse_fn fn;
} readers[] = {
        {"devplane", dp_doc_parse_bulk},
        {"libyaml", dp_doc_parse_each_libyaml},
        {"libfyaml", parse_each_fyaml},
};

static double cpu_ms(void) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* One load: read the file, parse and decode every document. */
static int load(size_t reader, const char *path, size_t *ret_objects) {
        _cleanup_free_ char *buf = NULL;
        size_t len = 0, docs = 0;
        dp_error err = DP_ERROR_INIT;
        int r = dp_read_file(path, DP_DOC_MAX_INPUT, &buf, &len, &err);
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        if (r >= 0 && !l) r = -ENOMEM;
        if (r >= 0) r = readers[reader].fn(buf, len, path, each, parse_only ? (void *)&docs : (void *)l, &err);
        if (r < 0) {
                fprintf(stderr, "%s: %s: %s\n", readers[reader].name, path, err.msg[0] ? err.msg : strerror(-r));
                return r;
        }
        *ret_objects = parse_only ? docs : l->n;
        return 0;
}

static int cmp_double(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
        int runs = 5, i = 1;
        const char *one = NULL;
        for (; i < argc && argv[i][0] == '-'; i++) {
                if (streq(argv[i], "-r") && i + 1 < argc)
                        runs = atoi(argv[++i]);
                else if (streq(argv[i], "--one") && i + 1 < argc)
                        one = argv[++i];
                else if (streq(argv[i], "--parse-only"))
                        parse_only = true;
                else {
                        fprintf(stderr, "usage: bench-yaml [-r RUNS] [--one READER] [--parse-only] FILE...\n");
                        return 2;
                }
        }
        if (runs < 1 || runs > 100 || i == argc) return 2;
        if (one) {
                for (size_t k = 0; k < ELEMENTSOF(readers); k++) {
                        size_t n = 0;
                        if (streq(one, readers[k].name)) return load(k, argv[i], &n) < 0 ? 1 : 0;
                }
                return 2;
        }
        struct utsname u;
        uname(&u);
        printf("bench-yaml: %s %s, libyaml %s, libfyaml %s, %s, %d runs, median CPU ms (min-max)\n", u.sysname,
               u.release, yaml_get_version_string(), fy_library_version(), parse_only ? "parse only" : "load",
               runs);
        printf("%-28s %10s %22s %22s %22s\n", "file", "bytes", "devplane", "libyaml", "libfyaml");
        for (; i < argc; i++) {
                struct stat st;
                if (stat(argv[i], &st) < 0) return 1;
                printf("%-28.28s %10lld", strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i],
                       (long long)st.st_size);
                size_t objects[ELEMENTSOF(readers)];
                for (size_t k = 0; k < ELEMENTSOF(readers); k++) {
                        double t[100];
                        for (int j = 0; j < runs; j++) {
                                double t0 = cpu_ms();
                                if (load(k, argv[i], &objects[k]) < 0) return 1;
                                t[j] = cpu_ms() - t0;
                        }
                        qsort(t, (size_t)runs, sizeof *t, cmp_double);
                        char cell[64];
                        snprintf(cell, sizeof cell, "%.1f (%.1f-%.1f)", t[runs / 2], t[0], t[runs - 1]);
                        printf(" %22s", cell);
                }
                printf("\n");
                if (objects[1] != objects[0] || objects[2] != objects[0]) {
                        fprintf(stderr, "%s: the readers disagree: %zu, %zu, %zu objects\n", argv[i], objects[0],
                                objects[1], objects[2]);
                        return 1;
                }
        }
        return 0;
}
