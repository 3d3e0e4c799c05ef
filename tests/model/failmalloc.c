/* SPDX-License-Identifier: Apache-2.0
 * model-failmalloc — run the model through a scenario (load a directory,
 * decode every kind, validate, encode, emit, clone a claim, expand a
 * Deployment, parse quantities) once per allocation, failing exactly that
 * allocation. Every run must end in success or -ENOMEM, never a crash or
 * another error, and LeakSanitizer checks at exit that every failure path
 * freed what it had. devplane's allocations are intercepted with the
 * linker's --wrap (libyaml's own are not). */
#include <stdio.h>

#include "model/model.h"

#include "failmalloc.h"

static const char *extra = "apiVersion: resource.k8s.io/v1beta1\n"
                           "kind: ResourceSlice\n"
                           "metadata: {name: beta, labels: {a: b}, annotations: {c: d}}\n"
                           "spec:\n"
                           "  driver: d.example.com\n"
                           "  perDeviceNodeSelection: true\n"
                           "  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
                           "  skipNodeOperations: ['*']\n"
                           "  devices:\n"
                           "  - name: a\n"
                           "    basic:\n"
                           "      nodeSelector: {nodeSelectorTerms: [{matchExpressions: [{key: k, operator: In, "
                           "values: [v]}]}]}\n"
                           "      attributes: {i: {ints: [1]}, b: {bools: [true]}, s: {strings: [x]}}\n"
                           "      capacity: {m: {value: 4Gi, requestPolicy: {default: 1Gi, validRange: {min: 1Gi, "
                           "step: 1Gi}}}}\n"
                           "      bindsToNode: true\n"
                           "      bindingConditions: [x]\n"
                           "      bindingFailureConditions: [y]\n"
                           "---\n"
                           "apiVersion: resource.k8s.io/v1beta2\n"
                           "kind: DeviceTaintRule\n"
                           "metadata: {name: r}\n"
                           "spec: {deviceSelector: {driver: d.example.com}, taint: {key: k, effect: NoExecute}}\n"
                           "---\n"
                           "apiVersion: apps/v1\n"
                           "kind: Deployment\n"
                           "metadata: {name: dep, namespace: ns}\n"
                           "spec:\n"
                           "  replicas: 2\n"
                           "  template:\n"
                           "    metadata: {labels: {app: x}}\n"
                           "    spec:\n"
                           "      containers: [{name: c, resources: {limits: {example.com/gpu: 1}}}]\n"
                           "      schedulingGroup: {podGroupName: g}\n"
                           "---\n"
                           "apiVersion: v1\nkind: List\nitems:\n"
                           "- {apiVersion: v1, kind: ConfigMap, metadata: {name: cm}}\n"
                           "- {apiVersion: v1, kind: Pod, metadata: {generateName: perf-},\n"
                           "   spec: {containers: [{name: c}]}}\n"
                           "- {apiVersion: apps/v1, kind: DaemonSet, metadata: {name: ds},\n"
                           "   spec: {template: {spec: {tolerations: [{key: k, operator: Exists}],\n"
                           "                            containers: [{name: c}]}}}}\n"
                           "- {apiVersion: batch/v1, kind: Job, metadata: {name: j},\n"
                           "   spec: {parallelism: 2, template: {spec: {containers: [{name: c}]}}}}\n";

static void must(int r, const char *what) {
        if (r < 0 && r != -ENOMEM) {
                fprintf(stderr, "model-failmalloc: %s failed with %d at allocation %lu\n", what, r, fail_at);
                abort();
        }
}

/* Returns true when the whole scenario ran. */
static bool scenario(void) {
        dp_error err = DP_ERROR_INIT;
        dp_object_list *l = NULL;
        const char *paths[] = {"data/claims.yaml", "data/partitions.yaml", "data/core.yaml"};
        int r = dp_model_load(paths, 3, &l, &err);
        must(r, "load");
        if (r < 0) return false;
        r = dp_model_decode_buffer(extra, strlen(extra), "extra.yaml", l, &err);
        must(r, "decode");
        bool ok = r >= 0;
        if (ok) { /* owners' pods (a DaemonSet's on node n0), generated names */
                dp_node n0 = {.hdr = {.kind = DP_KIND_NODE}, .meta = {.name = (char *)"n0"}};
                const dp_node *nodes[] = {&n0};
                r = dp_model_expand_workloads(l, nodes, 1, &err);
                must(r, "expand workloads");
                ok = r >= 0;
        }
        if (ok) {
                r = dp_model_validate(l, &err);
                must(r, "validate");
                ok = r >= 0;
        }
        dp_doc_set *s = dp_doc_set_new();
        if (ok && s) {
                dp_doc_node *n = dp_object_list_encode(s, l);
                dp_strbuf sb = DP_STRBUF_INIT;
                if (n) dp_doc_emit(&sb, n, DP_DOC_YAML);
                ok = n && !dp_strbuf_failed(&sb);
                dp_strbuf_done(&sb);
        } else {
                ok = false;
        }
        dp_doc_set_free(s);
        for (size_t i = 0; ok && i < l->n; i++) {
                if (l->items[i].hdr->kind == DP_KIND_RESOURCE_CLAIM) {
                        dp_resource_claim *c = dp_resource_claim_clone(l->items[i].claim);
                        ok = c != NULL;
                        dp_resource_claim_free(c);
                }
                if (ok && l->items[i].hdr->kind == DP_KIND_DEPLOYMENT) {
                        dp_object_list *pods = dp_object_list_new();
                        r = pods ? dp_deployment_expand(l->items[i].deployment, NULL, 0, pods, &err) : -ENOMEM;
                        must(r, "expand");
                        ok = r >= 0;
                        dp_object_list_free(pods);
                }
        }
        dp_object_list_free(l);
        return ok;
}

static bool run(void *ctx) {
        (void)ctx;
        return scenario();
}

int main(void) {
        dp_failmalloc fm = {.name = "model-failmalloc", .run = run, .min_points = 1};
        dp_failmalloc_result r;
        int rc = dp_failmalloc_each(&fm, &r);
        printf("model-failmalloc: %lu allocations, each failed in turn (%lu absorbed)\n", r.points, r.absorbed);
        return rc;
}
