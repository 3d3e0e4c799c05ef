/* SPDX-License-Identifier: Apache-2.0
 * alloc-failmalloc — run `devplane allocate`'s library call (adapter, CEL,
 * snapshot, search, explanations, results, printing) once per allocation,
 * failing exactly that allocation. Every run must end in the result of the
 * run without failures, or in -ENOMEM with a message in dp_error ("out of
 * memory while ..."): never a crash, another error or an empty message.
 * LeakSanitizer checks at exit that every failure path freed what it had.
 * Decoding the input happens before the counting starts (the model has its
 * own failmalloc test). ALLOC_FAILMALLOC_VERBOSE=1 prints each message. */
#include <stdio.h>

#include "alloc/adapter.h"
#include "model/model.h"

#include "failmalloc.h"

static const char *input =
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
        "spec:\n  selectors: [{cel: {expression: \"device.driver == 'gpu.example.com'\"}}]\n"
        "  config: [{opaque: {driver: gpu.example.com, parameters: {a: 1}}}]\n"
        "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: ops, labels: {resource.kubernetes.io/admin-access: \"true\"}}\n"
        "---\napiVersion: v1\nkind: Node\nmetadata: {name: n1, labels: {zone: a}}\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-c}\n"
        "spec:\n  driver: gpu.example.com\n  nodeName: n1\n  pool: {name: n1, generation: 1, resourceSliceCount: 2}\n"
        "  sharedCounters: [{name: g0, counters: {mem: {value: 8Gi}}}]\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: n1-d}\n"
        "spec:\n  driver: gpu.example.com\n  nodeName: n1\n  pool: {name: n1, generation: 1, resourceSliceCount: 2}\n"
        "  skipNodeOperations: ['*']\n  devices:\n"
        "  - {name: mig-0, attributes: {p: {string: a}, n: {int: 0}}, consumesCounters: [{counterSet: g0, counters: {mem: {value: 2Gi}}, compatibilityGroups: [mig]}]}\n"
        "  - {name: mig-1, attributes: {p: {string: a}, n: {int: 1}}, consumesCounters: [{counterSet: g0, counters: {mem: {value: 2Gi}}, compatibilityGroups: [mig]}]}\n"
        "  - {name: vgpu-0, attributes: {p: {string: b}, n: {int: 2}}, consumesCounters: [{counterSet: g0, counters: {mem: {value: 4Gi}}, compatibilityGroups: [vgpu]}]}\n"
        "  - {name: shared, allowMultipleAllocations: true, attributes: {p: {string: c}, n: {int: 3}}, capacity: {bw: {value: 100G, requestPolicy: {default: 10G, validValues: [10G, 50G]}}}}\n"
        "  - {name: sick, attributes: {p: {string: d}, n: {int: 4}}, taints: [{key: h, value: bad, effect: NoSchedule}], bindingConditions: [x], bindingFailureConditions: [y], bindsToNode: true}\n"
        "---\napiVersion: resource.k8s.io/v1beta2\nkind: DeviceTaintRule\nmetadata: {name: r}\n"
        "spec: {deviceSelector: {device: vgpu-0}, taint: {key: k, effect: None}}\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: old, namespace: ops}\n"
        "spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu}}]}}\n"
        "status: {allocation: {devices: {results: [{request: r, driver: gpu.example.com, pool: n1, device: shared, shareID: 11111111-2222-3333-4444-555555555555, consumedCapacity: {bw: 10G}}]}}}\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: pair, namespace: default, uid: u1}\n"
        "spec:\n  devices:\n    requests:\n"
        "    - {name: a, firstAvailable: [{name: x, deviceClassName: gpu, count: 3}, {name: y, deviceClassName: gpu, count: 2}]}\n"
        "    constraints: [{matchAttribute: gpu.example.com/p}]\n"
        "    config: [{requests: [a/y], opaque: {driver: gpu.example.com, parameters: {b: 2}}}]\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: share, namespace: default, uid: u2}\n"
        "spec: {devices: {requests: [{name: s, exactly: {deviceClassName: gpu, capacity: {requests: {bw: 20G}},"
        " selectors: [{cel: {expression: \"device.allowMultipleAllocations\"}}]}}]}}\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: admin, namespace: ops}\n"
        "spec: {devices: {requests: [{name: s, exactly: {deviceClassName: gpu, allocationMode: All, adminAccess: true,"
        " tolerations: [{operator: Exists}]}}]}}\n"
        "---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {name: v, namespace: default}\n"
        "spec:\n  devices:\n    requests: [{name: v, exactly: {deviceClassName: gpu, count: 2}}]\n"
        "    constraints: [{distinctAttribute: gpu.example.com/n}]\n";

/* The printed result of the run without failures: a run that absorbs a
 * failure must print exactly this. */
static char *reference;

/* A failing run must say why: -ENOMEM, and (where the call takes a dp_error)
 * a message. Anything else -- another code, or -EINVAL with an empty message
 * as a caller's dp_error_prefix() makes of an err that was never filled --
 * fails the test. */
static void must(int r, const char *what, const dp_error *err) {
        if (r >= 0) return;
        if (getenv("ALLOC_FAILMALLOC_VERBOSE"))
                fprintf(stderr, "alloc-failmalloc: allocation %lu: %s: %d %s\n", fail_at, what, r, err ? err->msg : "");
        const char *why = NULL;
        if (r != -ENOMEM) why = "not -ENOMEM";
        else if (err && (err->code != -ENOMEM || !err->msg[0])) why = "-ENOMEM without a message in err";
        if (why) {
                fprintf(stderr, "alloc-failmalloc: %s failed with %d (%s) at allocation %lu: \"%s\"\n", what, r, why,
                        fail_at, err ? err->msg : "");
                abort();
        }
}

static bool scenario(void *ctx) {
        const dp_object_list *objs = ctx;
        dp_error err = DP_ERROR_INIT;
        dp_alloc_run *run = NULL;
        counting = true;
        int r = dp_alloc_run_claims(objs, NULL, &run, &err);
        must(r, "run", &err);
        bool ok = r >= 0;
        if (ok) {
                dp_strbuf out = DP_STRBUF_INIT, why = DP_STRBUF_INIT;
                r = dp_alloc_run_print(run, DP_ALLOC_OUTPUT_YAML, &out, &why);
                must(r, "print", NULL);
                ok = r >= 0;
                counting = false;
                if (ok) {
                        dp_strbuf all = DP_STRBUF_INIT;
                        dp_strbuf_puts(&all, dp_strbuf_str(&out));
                        dp_strbuf_puts(&all, dp_strbuf_str(&why));
                        if (dp_strbuf_failed(&all)) abort();
                        if (fail_at == 0) {
                                fputs(dp_strbuf_str(&all), stdout);
                                reference = dp_strbuf_steal(&all);
                                if (!reference) abort();
                        } else if (!streq(dp_strbuf_str(&all), reference)) {
                                fprintf(stderr,
                                        "alloc-failmalloc: failing allocation %lu was absorbed but the result differs:\n"
                                        "%s--- expected ---\n%s",
                                        fail_at, dp_strbuf_str(&all), reference);
                                abort();
                        }
                        dp_strbuf_done(&all);
                }
                dp_strbuf_done(&out);
                dp_strbuf_done(&why);
        }
        dp_alloc_run_free(run);
        counting = false;
        return ok;
}

int main(void) {
        counting = false; /* the model's allocations have their own test */
        dp_error err = DP_ERROR_INIT;
        dp_object_list *objs = dp_object_list_new();
        if (!objs || dp_model_decode_buffer(input, strlen(input), "input.yaml", objs, &err) < 0 ||
            dp_model_validate(objs, &err) < 0) {
                fprintf(stderr, "alloc-failmalloc: %s\n", err.msg);
                dp_object_list_free(objs);
                return 1;
        }
        dp_failmalloc fm = {.name = "alloc-failmalloc", .run = scenario, .ctx = objs, .absorb = true, .min_points = 1};
        dp_failmalloc_result res;
        int rc = dp_failmalloc_each(&fm, &res);
        printf("alloc-failmalloc: %lu allocation points, %lu failures absorbed with the same result, "
               "the others -ENOMEM with a message\n",
               res.points, res.absorbed);
        free(reference);
        dp_object_list_free(objs);
        return rc;
}
