/* SPDX-License-Identifier: Apache-2.0
 * cel-diff-eval SLICES.yaml EXPRS [--list-type-attributes] — the devplane side
 * of the CEL differential (tests/cel/test-cel-diff.py): compile each line of
 * EXPRS (one selector per line) with the DRA options and evaluate it against
 * every ResourceSlice device of SLICES.yaml in file order. One output line per
 * expression: "C <message>" (compile error), or one character per device,
 * T (matches), F (does not) or E (runtime error), then the first runtime
 * error's text. Exit status 2 on bad input. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc/adapter.h"
#include "cel/slice-device.h"
#include "model/model.h"

static void one_line(char *s) {
        for (char *p = s; *p; p++)
                if (*p == '\n') *p = ' ';
}

int main(int argc, char **argv) {
        if (argc < 3) {
                fprintf(stderr, "usage: cel-diff-eval SLICES.yaml EXPRS [--list-type-attributes]\n");
                return 2;
        }
        /* the allocator's options under the same gate (dp_alloc_cel_options) */
        dp_alloc_cluster_options gates = {.list_type_attributes = argc > 3 && strcmp(argv[3], "--list-type-attributes") == 0};
        dp_cel_options copts;
        dp_alloc_cel_options(&gates, &copts);
        dp_error err = DP_ERROR_INIT;
        _cleanup_(dp_object_list_freep) dp_object_list *objs = NULL;
        const char *paths[1] = {argv[1]};
        if (dp_model_load(paths, 1, &objs, &err) < 0) {
                fprintf(stderr, "cel-diff-eval: %s\n", dp_error_msg(&err));
                return 2;
        }
        FILE *f = fopen(argv[2], "re");
        if (!f) {
                perror(argv[2]);
                return 2;
        }
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getline(&line, &cap, f)) >= 0) {
                if (n > 0 && line[n - 1] == '\n') line[--n] = '\0';
                _cleanup_(dp_cel_program_freep) dp_cel_program *prog = NULL;
                if (dp_cel_compile(line, &copts, &prog, &err) < 0) {
                        one_line(err.msg);
                        printf("C %s\n", dp_error_msg(&err));
                        continue;
                }
                char first_err[DP_ERROR_MSG_MAX] = "";
                for (size_t i = 0; i < objs->n; i++) {
                        if (objs->items[i].hdr->kind != DP_KIND_RESOURCE_SLICE) continue;
                        const dp_resource_slice *s = objs->items[i].slice;
                        for (size_t j = 0; j < s->n_devices; j++) {
                                dp_cel_attribute attrs[64];
                                dp_cel_capacity caps[64];
                                dp_cel_device dev;
                                dp_cel_result res;
                                if (s->devices[j].n_attributes > 64 || s->devices[j].n_capacity > 64 ||
                                    dp_cel_device_from_slice(s, &s->devices[j], attrs, caps, &dev) < 0) {
                                        fprintf(stderr, "cel-diff-eval: device %s: too many attributes\n",
                                                s->devices[j].name);
                                        return 2;
                                }
                                if (dp_cel_eval(prog, &dev, &res, &err) < 0) {
                                        putchar('E');
                                        if (!first_err[0])
                                                snprintf(first_err, sizeof first_err, "%s", dp_error_msg(&err));
                                } else
                                        putchar(res.matches ? 'T' : 'F');
                        }
                }
                one_line(first_err);
                printf(" %s\n", first_err);
        }
        free(line);
        fclose(f);
        return 0;
}
