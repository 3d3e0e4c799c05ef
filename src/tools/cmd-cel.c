/* SPDX-License-Identifier: Apache-2.0
 * devplane cel 'EXPR' -f FILE... [--class NAME] — evaluate a DRA device
 * selector against every device of the ResourceSlices in the files and
 * print true/false/error per device. With --class, the DeviceClass's own
 * selectors are applied first, as the allocator does. Exit status: 0 all
 * evaluated, 1 some device gave a runtime error (upstream that aborts the
 * whole allocation), 2 usage, bad input or compile error. */
#include <getopt.h>
#include <stdio.h>

#include "cel/slice-device.h"
#include "model/model.h"
#include "tools/cluster-input.h"
#include "tools/devplane.h"

#define MAX_FILES 64

static void usage(FILE *f) {
        fprintf(f, "usage: devplane cel EXPR -f FILE [-f FILE...] [--class NAME] [--list-type-attributes]\n"
                   "                        [--no-consumable-capacity] [--cost]\n\n"
                   "Evaluate a CEL device selector (the DRA `device` environment) against every device\n"
                   "of the ResourceSlices in FILE (YAML or JSON, multi-document, List kinds).\n\n"
                   "  -f, --filename FILE         input file or directory, - for standard input (repeatable)\n"
                   "  --class NAME                also apply DeviceClass NAME's selectors (first)\n"
                   "  --list-type-attributes      enable DRAListTypeAttributes (list values, includes())\n"
                   "  --no-consumable-capacity    disable DRAConsumableCapacity (device.allowMultipleAllocations)\n"
                   "  --cost                      print the estimated and actual cost\n");
}

/* Print a compile error: the library's message already carries
 * "ERROR: <input>:L:C: ..." lines with the caret under the column. */
static void print_compile_error(const char *what, const dp_error *err) {
        fprintf(stderr, "devplane cel: %s does not compile:\n%s\n", what, dp_error_msg(err));
}

typedef struct selector {
        dp_cel_program *prog;
        char label[300];
} selector;

static int cmd_cel(int argc, char **argv) {
        static const struct option opts[] = {
                {"filename", required_argument, NULL, 'f'},
                {"class", required_argument, NULL, 'c'},
                {"list-type-attributes", no_argument, NULL, 'l'},
                {"no-consumable-capacity", no_argument, NULL, 'n'},
                {"cost", no_argument, NULL, 'C'},
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        const char *files[MAX_FILES];
        size_t n_files = 0;
        const char *class_name = NULL;
        bool show_cost = false;
        dp_cel_options copts;
        dp_cel_options_init(&copts);
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "f:h", opts, NULL)) >= 0) {
                switch (c) {
                case 'f':
                        if (n_files == MAX_FILES) {
                                fprintf(stderr, "devplane cel: at most %d -f options\n", MAX_FILES);
                                return 2;
                        }
                        files[n_files++] = optarg;
                        break;
                case 'c': class_name = optarg; break;
                case 'l': copts.list_type_attributes = true; break;
                case 'n': copts.consumable_capacity = false; break;
                case 'C': show_cost = true; break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind != argc - 1 || n_files == 0) {
                usage(stderr);
                return 2;
        }
        const char *expr = argv[optind];

        dp_error err = DP_ERROR_INIT;
        _cleanup_(dp_object_list_freep) dp_object_list *objs = NULL;
        if (dp_model_load(files, n_files, &objs, &err) < 0) {
                fprintf(stderr, "devplane cel: %s\n", dp_error_msg(&err));
                return 2;
        }
        dp_tool_warn_skipped("cel", objs);

        /* the selectors to apply: the class's first, then EXPR */
        selector sel[1 + 32];
        size_t n_sel = 0;
        int rc = 2;
        if (class_name) {
                dp_object o = dp_object_list_find(objs, DP_KIND_DEVICE_CLASS, NULL, class_name);
                if (!o.hdr) {
                        fprintf(stderr, "devplane cel: DeviceClass %s not found in the input\n", class_name);
                        return 2;
                }
                for (size_t i = 0; i < o.device_class->n_selectors && n_sel < ELEMENTSOF(sel) - 1; i++) {
                        const char *e = o.device_class->selectors[i].cel_expression;
                        snprintf(sel[n_sel].label, sizeof sel[n_sel].label, "DeviceClass %s selector #%zu", class_name, i);
                        sel[n_sel].prog = NULL;
                        if (!e || dp_cel_compile(e, &copts, &sel[n_sel].prog, &err) < 0) {
                                print_compile_error(sel[n_sel].label, &err);
                                goto out;
                        }
                        n_sel++;
                }
        }
        snprintf(sel[n_sel].label, sizeof sel[n_sel].label, "the expression");
        sel[n_sel].prog = NULL;
        if (dp_cel_compile(expr, &copts, &sel[n_sel].prog, &err) < 0) {
                print_compile_error("the expression", &err);
                goto out;
        }
        n_sel++;
        if (show_cost)
                printf("# estimated cost %llu (limit %llu)\n",
                       (unsigned long long)dp_cel_program_estimated_cost(sel[n_sel - 1].prog),
                       (unsigned long long)DP_CEL_MAX_COST);

        rc = 0;
        size_t n_devices = 0;
        for (size_t i = 0; i < objs->n; i++) {
                if (objs->items[i].hdr->kind != DP_KIND_RESOURCE_SLICE) continue;
                const dp_resource_slice *s = objs->items[i].slice;
                for (size_t j = 0; j < s->n_devices; j++) {
                        const dp_device *d = &s->devices[j];
                        dp_cel_attribute attrs[64];
                        dp_cel_capacity caps[64];
                        dp_cel_device dev;
                        n_devices++;
                        printf("%s/%s: ", s->pool_name ? s->pool_name : "", d->name);
                        if (d->n_attributes > ELEMENTSOF(attrs) || d->n_capacity > ELEMENTSOF(caps) ||
                            dp_cel_device_from_slice(s, d, attrs, caps, &dev) < 0) {
                                printf("error: device exceeds the attribute limit\n");
                                rc = 1;
                                continue;
                        }
                        bool match = true;
                        uint64_t cost = 0;
                        for (size_t k = 0; k < n_sel && match; k++) {
                                dp_cel_result res;
                                if (dp_cel_eval(sel[k].prog, &dev, &res, &err) < 0) {
                                        printf("error: %s: CEL runtime error: %s\n", sel[k].label, dp_error_msg(&err));
                                        rc = 1;
                                        match = false;
                                        cost = UINT64_MAX;
                                        break;
                                }
                                match = res.matches;
                                cost += res.cost;
                        }
                        if (cost == UINT64_MAX) continue;
                        if (show_cost) printf("%s (cost %llu)\n", match ? "true" : "false", (unsigned long long)cost);
                        else printf("%s\n", match ? "true" : "false");
                }
        }
        if (n_devices == 0) fprintf(stderr, "devplane cel: no ResourceSlice devices in the input\n");
out:
        for (size_t k = 0; k < n_sel; k++) dp_cel_program_free(sel[k].prog);
        return rc;
}
DP_COMMAND("cel", cmd_cel, "evaluate a CEL device selector against ResourceSlice devices")
