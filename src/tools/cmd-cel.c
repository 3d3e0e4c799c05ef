/* SPDX-License-Identifier: Apache-2.0
 * devplane cel 'EXPR' -f FILE... [--class NAME] — evaluate a DRA device
 * selector against every device of the ResourceSlices in the files and
 * print true/false/error per device. With --class, the DeviceClass's own
 * selectors are applied first, as the allocator does. Exit status: 0 all
 * evaluated, 1 some device gave a runtime error (upstream that aborts the
 * whole allocation), 2 usage, bad input or compile error. */
#include <getopt.h>
#include <stdio.h>

#include "alloc/adapter.h"
#include "cel/slice-device.h"
#include "doc/doc.h"
#include "model/model.h"
#include "tools/cluster-input.h"
#include "tools/devplane.h"

#define MAX_FILES 64

static void usage(FILE *f) {
        fprintf(f, "usage: devplane cel EXPR -f FILE [-f FILE...] [--class NAME] [--feature-gates GATE=BOOL]\n"
                   "                        [--list-type-attributes] [--no-consumable-capacity] [--cost]\n"
                   "                        [-o text|json|yaml]\n\n"
                   "Evaluate a CEL device selector (the DRA `device` environment) against every device\n"
                   "of the ResourceSlices in FILE (YAML or JSON, multi-document, List kinds).\n\n"
                   "  -f, --filename FILE         input file or directory, - for standard input (repeatable)\n"
                   "  --class NAME                also apply DeviceClass NAME's selectors (first)\n"
                   "  --feature-gates GATE=BOOL   as `devplane allocate` (" DP_ALLOC_FEATURE_GATES "):\n"
                   "                              the expression compiles exactly as the allocator compiles it\n"
                   "  --list-type-attributes      the same as --feature-gates DRAListTypeAttributes=true\n"
                   "                              (list values, includes(), dyn results)\n"
                   "  --no-consumable-capacity    disable DRAConsumableCapacity (device.allowMultipleAllocations)\n"
                   "  --cost                      print the estimated and actual cost\n"
                   "  -o, --output FORMAT         text (one line a device, default), json or yaml\n\n"
                   "Exit status: 0 every device evaluated, 1 a device gave a runtime error, 2 usage,\n"
                   "bad input or a compile error, 3 out of memory.\n");
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

typedef enum { OUT_TEXT, OUT_JSON, OUT_YAML } out_format;

/* -o json|yaml: one document, {expression, estimatedCost?, devices: [{pool,
 * device, matches | error, cost?}]}, printed once every device is done (no
 * partial output). */
typedef struct output {
        out_format fmt;
        dp_doc_set *set;
        dp_doc_node *devices;
        bool oom;
} output;

static void out_device(output *o, const dp_resource_slice *s, const dp_device *d, const char *error, bool match,
                       uint64_t cost, bool show_cost) {
        dp_doc_set *set = o->set;
        dp_doc_node *m = dp_doc_new_map(set);
        int r = dp_doc_map_add(set, m, "driver", dp_doc_new_str(set, s->driver ? s->driver : ""));
        if (r >= 0) r = dp_doc_map_add(set, m, "pool", dp_doc_new_str(set, s->pool_name ? s->pool_name : ""));
        if (r >= 0) r = dp_doc_map_add(set, m, "device", dp_doc_new_str(set, d->name));
        if (r >= 0 && error) r = dp_doc_map_add(set, m, "error", dp_doc_new_str(set, error));
        if (r >= 0 && !error) r = dp_doc_map_add(set, m, "matches", dp_doc_new_bool(set, match));
        if (r >= 0 && !error && show_cost) r = dp_doc_map_add(set, m, "cost", dp_doc_new_uint(set, cost));
        if (r >= 0) r = dp_doc_seq_add(set, o->devices, m);
        if (r < 0) o->oom = true;
}

static int finish_output(output *o, const char *expr, const dp_cel_program *prog, bool show_cost) {
        dp_doc_set *set = o->set;
        dp_doc_node *root = dp_doc_new_map(set);
        int r = dp_doc_map_add(set, root, "expression", dp_doc_new_str(set, expr));
        if (r >= 0 && show_cost)
                r = dp_doc_map_add(set, root, "estimatedCost", dp_doc_new_uint(set, dp_cel_program_estimated_cost(prog)));
        if (r >= 0 && show_cost) r = dp_doc_map_add(set, root, "costLimit", dp_doc_new_uint(set, DP_CEL_MAX_COST));
        if (r >= 0) r = dp_doc_map_add(set, root, "devices", o->devices);
        if (r < 0 || o->oom) return -ENOMEM;
        _cleanup_(dp_strbuf_donep) dp_strbuf sb = DP_STRBUF_INIT;
        dp_doc_emit(&sb, root, o->fmt == OUT_JSON ? DP_DOC_JSON_PRETTY : DP_DOC_YAML);
        if (dp_strbuf_failed(&sb)) return -ENOMEM;
        fputs(dp_strbuf_str(&sb), stdout);
        return 0;
}

/* Evaluate the selectors in turn on one device and print (text) or record
 * (json, yaml) the outcome. Returns 1 for a runtime error, 0 otherwise. */
static int eval_device(const dp_resource_slice *s, const dp_device *d, selector *sel, size_t n_sel, bool show_cost,
                       output *out) {
        dp_error err = DP_ERROR_INIT;
        dp_cel_attribute attrs[64];
        dp_cel_capacity caps[64];
        dp_cel_device dev;
        char msg[2400]; /* a label (300) and a dp_error message (2048) fit whole */
        if (out->fmt == OUT_TEXT) printf("%s/%s: ", s->pool_name ? s->pool_name : "", d->name);
        if (d->n_attributes > ELEMENTSOF(attrs) || d->n_capacity > ELEMENTSOF(caps) ||
            dp_cel_device_from_slice(s, d, attrs, caps, &dev) < 0) {
                if (out->fmt == OUT_TEXT) printf("error: device exceeds the attribute limit\n");
                else out_device(out, s, d, "device exceeds the attribute limit", false, 0, show_cost);
                return 1;
        }
        bool match = true;
        uint64_t cost = 0;
        for (size_t k = 0; k < n_sel && match; k++) {
                dp_cel_result res;
                if (dp_cel_eval(sel[k].prog, &dev, &res, &err) < 0) {
                        snprintf(msg, sizeof msg, "%s: CEL runtime error: %s", sel[k].label, dp_error_msg(&err));
                        if (out->fmt == OUT_TEXT) printf("error: %s\n", msg);
                        else out_device(out, s, d, msg, false, 0, show_cost);
                        return 1;
                }
                match = res.matches;
                cost += res.cost;
        }
        if (out->fmt != OUT_TEXT) out_device(out, s, d, NULL, match, cost, show_cost);
        else if (show_cost) printf("%s (cost %llu)\n", match ? "true" : "false", (unsigned long long)cost);
        else printf("%s\n", match ? "true" : "false");
        return 0;
}

static int cmd_cel(int argc, char **argv) {
        static const struct option opts[] = {
                {"filename", required_argument, NULL, 'f'},
                {"class", required_argument, NULL, 'c'},
                {"list-type-attributes", no_argument, NULL, 'l'},
                {"feature-gates", required_argument, NULL, 'g'},
                {"no-consumable-capacity", no_argument, NULL, 'n'},
                {"cost", no_argument, NULL, 'C'},
                {"output", required_argument, NULL, 'o'},
                {"help", no_argument, NULL, 'h'},
                {NULL, 0, NULL, 0},
        };
        const char *files[MAX_FILES];
        size_t n_files = 0;
        const char *class_name = NULL;
        bool show_cost = false;
        _cleanup_(dp_doc_set_freep) dp_doc_set *set = NULL;
        output out = {.fmt = OUT_TEXT};
        dp_alloc_cluster_options gates = {0};
        bool no_consumable = false;
        dp_cel_options copts;
        int c;
        optind = 1;
        while ((c = getopt_long(argc, argv, "f:o:h", opts, NULL)) >= 0) {
                switch (c) {
                case 'f':
                        if (n_files == MAX_FILES) {
                                fprintf(stderr, "devplane cel: at most %d -f options\n", MAX_FILES);
                                return 2;
                        }
                        files[n_files++] = optarg;
                        break;
                case 'c': class_name = optarg; break;
                case 'l': gates.list_type_attributes = true; break;
                case 'g':
                        if (dp_tool_feature_gate("cel", optarg, &gates) < 0) return 2;
                        break;
                case 'n': no_consumable = true; break;
                case 'C': show_cost = true; break;
                case 'o':
                        if (streq(optarg, "json")) out.fmt = OUT_JSON;
                        else if (streq(optarg, "yaml")) out.fmt = OUT_YAML;
                        else if (streq(optarg, "text")) out.fmt = OUT_TEXT;
                        else {
                                fprintf(stderr, "devplane cel: -o %s: expected text, json or yaml\n", optarg);
                                return 2;
                        }
                        break;
                case 'h': usage(stdout); return 0;
                default: usage(stderr); return 2;
                }
        }
        if (optind != argc - 1 || n_files == 0) {
                usage(stderr);
                return 2;
        }
        /* the allocator's compile options under the same gates */
        dp_alloc_cel_options(&gates, &copts);
        if (no_consumable) copts.consumable_capacity = false;
        const char *expr = argv[optind];
        if (out.fmt != OUT_TEXT) {
                set = dp_doc_set_new();
                out.set = set;
                out.devices = set ? dp_doc_new_seq(set) : NULL;
                if (!out.devices) {
                        fprintf(stderr, "devplane cel: out of memory\n");
                        return 3;
                }
        }

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
        if (show_cost && out.fmt == OUT_TEXT)
                printf("# estimated cost %llu (limit %llu)\n",
                       (unsigned long long)dp_cel_program_estimated_cost(sel[n_sel - 1].prog),
                       (unsigned long long)DP_CEL_MAX_COST);

        rc = 0;
        size_t n_devices = 0;
        for (size_t i = 0; i < objs->n; i++) {
                if (objs->items[i].hdr->kind != DP_KIND_RESOURCE_SLICE) continue;
                const dp_resource_slice *s = objs->items[i].slice;
                for (size_t j = 0; j < s->n_devices; j++) {
                        n_devices++;
                        if (eval_device(s, &s->devices[j], sel, n_sel, show_cost, &out) > 0) rc = 1;
                }
        }
        if (out.fmt != OUT_TEXT && finish_output(&out, expr, sel[n_sel - 1].prog, show_cost) < 0) {
                fprintf(stderr, "devplane cel: out of memory while building the output\n");
                rc = 3;
        }
        if (n_devices == 0) fprintf(stderr, "devplane cel: no ResourceSlice devices in the input\n");
out:
        for (size_t k = 0; k < n_sel; k++) dp_cel_program_free(sel[k].prog);
        return rc;
}
DP_COMMAND("cel", cmd_cel, "evaluate a CEL device selector against ResourceSlice devices")
