/* SPDX-License-Identifier: Apache-2.0
 *
 * test-tas.c — Kueue's Topology-Aware Scheduling facts (tests/queue/tas/
 * case-NAME.yaml, each naming the Kueue test it transcribes): admission with
 * the topology each pod set gets, or Kueue's message when it fits none.
 *
 * A case file is Kubernetes YAML with a header of comments:
 *     # source: <where the fact comes from>
 *     # fixture: <file in tas/ loaded first>           (any number)
 *     # expect: NS/NAME Admitted|Pending [exact condition message]
 *     # topology: NS/NAME V1/V2=COUNT,...              (the domains, in order)
 *     # cycles: N                                      (admit only N scheduling cycles, as
 *                                                        Kueue's scheduler tests run one)
 * Node and workload names follow Kueue's tests; a level's values are joined
 * with "/".
 */
#include <stdio.h>

#include "base/fileio.h"
#include "cases.h"
#include "harness.h"
#include "queue/queue.h"

static char *read_case(const char *name) {
        char path[512];
        snprintf(path, sizeof(path), "tas/%s", name);
        char *buf = NULL;
        size_t len = 0;
        dp_error err = DP_ERROR_INIT;
        if (dp_read_file(path, 1 << 20, &buf, &len, &err) < 0) DP_FAIL("%s: %s", path, err.msg);
        return buf;
}

static void load(dp_object_list *l, const char *name, const char *text) {
        dp_error err = DP_ERROR_INIT;
        if (dp_model_decode_buffer(text, strlen(text), name, l, &err) < 0) DP_FAIL("%s: %s", name, err.msg);
}

/* The lines "# KEY: VALUE", each passed to fn. */
static size_t each_line(const char *text, const char *key, void (*fn)(const char *line, void *ud), void *ud) {
        char pat[64];
        snprintf(pat, sizeof(pat), "# %s: ", key);
        size_t n = 0;
        for (const char *p = text; (p = strstr(p, pat)); p++, n++) {
                _cleanup_free_ char *line = strndup(p + strlen(pat), strcspn(p + strlen(pat), "\n"));
                fn(line, ud);
        }
        return n;
}

typedef struct run {
        const char *name;
        dp_object_list *l;
        dp_queue *q;
        dp_doc_node *doc;
} run;

static void fixture(const char *line, void *ud) {
        run *r = ud;
        _cleanup_free_ char *text = read_case(line);
        load(r->l, line, text);
}

static const dp_queue_workload *find(const run *r, const char *ref, const char **rest) {
        char ns[128], name[256];
        int used = 0;
        if (sscanf(ref, "%127[^/]/%255s%n", ns, name, &used) != 2) DP_FAIL("%s: bad line %s", r->name, ref);
        const dp_queue_workload *w = dp_queue_find(r->q, ns, name);
        if (!w) DP_FAIL("%s: no workload %s/%s", r->name, ns, name);
        for (*rest = ref + used; **rest == ' '; (*rest)++)
                ;
        return w;
}

static void expect(const char *line, void *ud) {
        const run *r = ud;
        const char *rest;
        const dp_queue_workload *w = find(r, line, &rest);
        const char *state = w->state == DP_QW_ADMITTED  ? "Admitted"
                            : w->state == DP_QW_PENDING ? "Pending"
                                                        : "Inadmissible";
        if (!startswith(rest, state))
                DP_FAIL("%s: %s/%s: %s, expected %s (message: %s)", r->name, w->ns, w->name, state, rest,
                        w->message ? w->message : "");
        const char *msg = rest + strlen(state);
        while (*msg == ' ')
                msg++;
        if (*msg && !streq_ptr(w->message, msg))
                DP_FAIL("%s: %s/%s: message\n  got:      %s\n  expected: %s", r->name, w->ns, w->name,
                        w->message ? w->message : "(none)", msg);
}

/* The workload's document in the encoded queues. */
static const dp_doc_node *workload_doc(const run *r, const dp_queue_workload *w) {
        char want[400];
        snprintf(want, sizeof(want), "%s/%s", w->ns, w->name);
        const dp_doc_node *cqs = dp_doc_get(r->doc, "clusterQueues");
        for (size_t c = 0; cqs && c < cqs->n; c++) {
                const dp_doc_node *wls = dp_doc_get(cqs->items[c], "workloads");
                for (size_t i = 0; wls && i < wls->n; i++) {
                        const dp_doc_node *n = dp_doc_get(wls->items[i], "name");
                        if (n && streq(n->str, want)) return wls->items[i];
                }
        }
        return NULL;
}

static void topology(const char *line, void *ud) {
        const run *r = ud;
        const char *rest;
        const dp_queue_workload *w = find(r, line, &rest);
        const dp_doc_node *d = workload_doc(r, w), *a = d ? dp_doc_get(d, "topologyAssignment") : NULL;
        const dp_doc_node *doms = a ? dp_doc_get(a, "domains") : NULL;
        char got[1024] = "";
        size_t len = 0;
        for (size_t i = 0; doms && i < doms->n && len < sizeof(got); i++) {
                const dp_doc_node *v = dp_doc_get(doms->items[i], "values");
                for (size_t k = 0; v && k < v->n && len < sizeof(got); k++)
                        len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%s",
                                                k   ? "/"
                                                : i ? ","
                                                    : "",
                                                v->items[k]->str);
                if (len < sizeof(got))
                        len += (size_t)snprintf(got + len, sizeof(got) - len, "=%s",
                                                dp_doc_get(doms->items[i], "count")->str);
        }
        if (!streq(got, rest))
                DP_FAIL("%s: %s/%s: topology\n  got:      %s\n  expected: %s", r->name, w->ns, w->name,
                        got[0] ? got : "(none)", rest);
}

static size_t run_case(const char *name) {
        _cleanup_free_ char *text = read_case(name);
        if (!strstr(text, "# source: ")) DP_FAIL("%s: no '# source:' line", name);
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        ASSERT_TRUE(l);
        l->ext = &dp_queue_model_ext;
        run r = {name, l, NULL, NULL};
        each_line(text, "fixture", fixture, &r);
        load(l, name, text);
        dp_error err = DP_ERROR_INIT;
        if (dp_model_generate_names(l, &err) < 0 || dp_model_validate(l, &err) < 0 ||
            dp_model_apply_defaults(l, &err) < 0)
                DP_FAIL("%s: %s", name, err.msg);
        const char *cycles = strstr(text, "# cycles: ");
        size_t max_cycles = cycles ? strtoul(cycles + strlen("# cycles: "), NULL, 10) : SIZE_MAX;
        _cleanup_(dp_queue_freep) dp_queue *q = NULL;
        if (dp_queue_new(l, &q, &err) < 0 || dp_queue_admit_cycles(q, max_cycles, &err) < 0)
                DP_FAIL("%s: %s", name, err.msg);
        _cleanup_(dp_doc_set_freep) dp_doc_set *s = dp_doc_set_new();
        ASSERT_TRUE(s);
        r.q = q;
        r.doc = dp_queue_encode(s, q);
        ASSERT_TRUE(r.doc);
        size_t n = each_line(text, "expect", expect, &r);
        if (!n) DP_FAIL("%s: no '# expect:' line", name);
        return n + each_line(text, "topology", topology, &r);
}

TEST(kueue_tas_cases) {
        size_t n = 0;
        run_cases("tas", run_case, false, &n);
        ASSERT_TRUE(n >= 8);
}

/* ---- Topology decoding (queue/tas-decode.c) ---- */

#define TOPO_HEAD "apiVersion: kueue.x-k8s.io/v1beta1\nkind: Topology\nmetadata: {name: t}\nspec:\n"

static int decode(const char *yaml, dp_object_list **ret, dp_error *err) {
        dp_object_list *l = dp_object_list_new();
        ASSERT_TRUE(l);
        l->ext = &dp_queue_model_ext;
        int r = dp_model_decode_buffer(yaml, strlen(yaml), "in.yaml", l, err);
        *ret = l;
        return r;
}

static void fails(const char *levels, const char *msg) {
        _cleanup_free_ char *yaml = dp_asprintf(TOPO_HEAD "  levels:\n%s", levels);
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(decode(yaml, &l, &err) < 0, 1);
        ASSERT_CONTAINS(err.msg, msg);
        dp_object_list_free(l);
}

TEST(topology_decodes) {
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(decode(TOPO_HEAD "  levels:\n  - nodeLabel: cloud.com/topology-block\n"
                                   "  - {nodeLabel: cloud.com/topology-rack, alias: rack}\n"
                                   "  - {nodeLabel: kubernetes.io/hostname, colour: red}\n",
                         &l, &err));
        ASSERT_EQ(l->n, 1);
        ASSERT_EQ(dp_queue_kind(l->items[0]), DP_KQ_TOPOLOGY);
        const dp_kq_topology *t = (const dp_kq_topology *)l->items[0].ext;
        ASSERT_EQ(t->n_levels, 3);
        ASSERT_STREQ(t->levels[1], "cloud.com/topology-rack");
        ASSERT_EQ(l->n_warnings, 1); /* the unknown field, named */
        ASSERT_CONTAINS(l->warnings[0], "Topology t: spec.levels[2]: unknown field \"colour\"");
        dp_object_list_free(l);
}

TEST(topology_bad_values) {
        fails("  - nodeLabel: a\n  - nodeLabel: a\n", "spec.levels[1]: nodeLabel: must be unique");
        fails("  - nodeLabel: kubernetes.io/hostname\n  - nodeLabel: rack\n",
              "spec.levels[0]: nodeLabel: the kubernetes.io/hostname label can only be used at the lowest level");
        fails("  - nodeLabel: \"not a label\"\n", "spec.levels[0]: nodeLabel: invalid label key");
        fails("  - {alias: x}\n", "spec.levels[0]: nodeLabel: required");
        fails("    []\n", "spec.levels: required");
        dp_strbuf b = DP_STRBUF_INIT;
        for (int i = 0; i < 17; i++)
                dp_strbuf_printf(&b, "  - nodeLabel: l%d\n", i);
        fails(dp_strbuf_str(&b), "spec.levels: must have at most 16 items");
        dp_strbuf_done(&b);
}

/* ---- an admitted Workload's topologyAssignment (queue/tas-decode.c) ---- */

#define WL_HEAD                                                                                                        \
        "apiVersion: kueue.x-k8s.io/v1beta2\nkind: Workload\nmetadata: {name: w, namespace: default}\n"                \
        "spec:\n  podSets: [{name: one, count: 3, template: {spec: {containers: [{name: c}]}}}]\n"                     \
        "status:\n  admission:\n    clusterQueue: cq\n    podSetAssignments:\n    - name: one\n"                       \
        "      topologyAssignment:\n"

static void assignment_fails(const char *ta, const char *msg) {
        _cleanup_free_ char *yaml = dp_asprintf(WL_HEAD "%s", ta);
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_EQ(decode(yaml, &l, &err) < 0, 1);
        ASSERT_CONTAINS(err.msg, msg);
        dp_object_list_free(l);
}

/* v1beta2's slices become the domains v1beta1 lists: a universal value,
 * individual roots between a prefix and a suffix, pod counts either way. */
TEST(topology_assignment_decodes) {
        dp_object_list *l = NULL;
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(decode(WL_HEAD "        levels: [cloud.com/block, kubernetes.io/hostname]\n"
                                 "        slices:\n"
                                 "        - domainCount: 2\n"
                                 "          valuesPerLevel: [{universal: b1}, {individual: {prefix: node-, suffix: -a, "
                                 "roots: [\"1\", \"2\"]}}]\n"
                                 "          podCounts: {individual: [2, 1]}\n"
                                 "        - domainCount: 1\n"
                                 "          valuesPerLevel: [{universal: b2}, {individual: {roots: [x9]}}]\n"
                                 "          podCounts: {universal: 4}\n",
                         &l, &err));
        ASSERT_EQ(l->n, 1);
        ASSERT_EQ(dp_queue_kind(l->items[0]), DP_KQ_WORKLOAD);
        const dp_kq_podset_assignment *a = &((const dp_kq_workload *)l->items[0].ext)->assignments[0];
        ASSERT_EQ(a->n_topo_levels, 2);
        ASSERT_EQ(a->n_topo_domains, 3);
        ASSERT_STREQ(a->topo_domains[0].values[0], "b1");
        ASSERT_STREQ(a->topo_domains[1].values[1], "node-2-a");
        ASSERT_EQ(a->topo_domains[1].count, 1);
        ASSERT_STREQ(a->topo_domains[2].values[1], "x9");
        ASSERT_EQ(a->topo_domains[2].count, 4);
        dp_object_list_free(l);
}

TEST(topology_assignment_bad_values) {
        assignment_fails("        levels: [kubernetes.io/hostname]\n        domains: [{values: [a, b], count: 1}]\n",
                         "domains[0].values: must have one value per level (1)");
        assignment_fails("        levels: [kubernetes.io/hostname]\n        domains: [{values: [a], count: 0}]\n",
                         "domains[0].count: must be at least 1");
        assignment_fails("        domains: [{values: [a], count: 1}]\n", "levels: must have 1 to 16 items");
        assignment_fails("        levels: [h]\n        slices: [{domainCount: 1, valuesPerLevel: [{universal: a, "
                         "individual: {roots: [b]}}], podCounts: {universal: 1}}]\n",
                         "exactly one of universal, individual must be set");
        assignment_fails("        levels: [h]\n        slices: [{domainCount: 2, valuesPerLevel: [{individual: {roots: "
                         "[a]}}], podCounts: {universal: 1}}]\n",
                         "roots: must have domainCount (2) items");
        assignment_fails("        levels: [h]\n        slices: [{domainCount: 1, valuesPerLevel: [{universal: a}], "
                         "podCounts: {individual: [1, 2]}}]\n",
                         "podCounts.individual: must have domainCount (1) items");
        assignment_fails("        levels: [h, r]\n        slices: [{domainCount: 1, valuesPerLevel: [{universal: a}], "
                         "podCounts: {universal: 1}}]\n",
                         "slices[0].valuesPerLevel: must have one entry per level (2)");
}

/* The topology ungater's rule: with the hostname the lowest level each pod
 * gets its node's hostname (test-tas.sh); else every level's label of its
 * domain, here block and rack. */
TEST(pods_pinned_to_their_domain) {
        _cleanup_free_ char *queues = read_case("fixture-queues.yaml"),
                            *nodes = read_case("fixture-default-nodes.yaml");
        _cleanup_free_ char *topo = read_case("fixture-two-levels.yaml");
        _cleanup_(dp_object_list_freep) dp_object_list *l = dp_object_list_new();
        ASSERT_TRUE(l);
        l->ext = &dp_queue_model_ext;
        load(l, "queues", queues);
        load(l, "nodes", nodes);
        load(l, "topology", topo);
        load(l, "pods",
             "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n"
             "  labels: {kueue.x-k8s.io/queue-name: lq}\n"
             "  annotations: {kueue.x-k8s.io/podset-required-topology: cloud.com/topology-rack}\n"
             "spec:\n  containers: [{name: c, resources: {requests: {cpu: \"2\"}}}]\n");
        dp_error err = DP_ERROR_INIT;
        ASSERT_OK(dp_model_apply_defaults(l, &err));
        _cleanup_(dp_queue_freep) dp_queue *q = NULL;
        ASSERT_OK(dp_queue_new(l, &q, &err));
        ASSERT_OK(dp_queue_admit(q, &err));
        ASSERT_OK(dp_queue_apply_owners(q, l, &err));
        const dp_pod *p = NULL;
        for (size_t i = 0; i < l->n; i++)
                if (l->items[i].hdr->kind == DP_KIND_POD) p = l->items[i].pod;
        ASSERT_TRUE(p);
        /* racks are the leaves: b1/r2 (3 cpu) and b2/r2 (2) hold one pod each, the tie goes to the values */
        ASSERT_STREQ(dp_kv_get(p->node_selector, p->n_node_selector, "cloud.com/topology-block"), "b1");
        ASSERT_STREQ(dp_kv_get(p->node_selector, p->n_node_selector, "cloud.com/topology-rack"), "r2");
        ASSERT_STREQ(dp_kv_get(p->node_selector, p->n_node_selector, "node-group"), "tas");
}
