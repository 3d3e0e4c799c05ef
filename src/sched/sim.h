/* SPDX-License-Identifier: Apache-2.0
 *
 * sim.h — `devplane simulate` and `devplane explain` as library calls: a
 * whole cluster in-process, from a fleet description, Kubernetes workload
 * objects and a timeline, through the same store, scheduler, allocator and
 * device-plugin logic the daemons use.
 *
 * Input kinds of devplane's own (apiVersion devplane.io/v1alpha1; format in
 * docs/scheduler.md):
 *   Fleet     spec.scoring (default|binpack|spread|none; binpack unset), spec.schedulers (1|2: two instances
 *             that both plan before either writes, scenario 15),
 *             spec.nodeGroups[]: name, profile
 *             (built-in hardware profile, or a DeviceProfile file: a value
 *             with '/' or '.', relative to the Fleet file's directory), count, model (v1|v2|both), labels,
 *             taints, agent (device plugin config, NVIDIA `version: v1` shape),
 *             dra {partitions, allowMultipleAllocations, compatGroups} (the
 *             DRA driver's; compatGroups: 1.37 compatibility-group partitions)
 *   Timeline  spec.events[]: at (seconds, or "90s"/"5m"/"1h"), and one of
 *             create: [pod...], delete: [pod...], fail: {node, device,
 *             effect: NoSchedule|NoExecute}, recover: {node, device}. Pods no event creates arrive at 0.
 *             create/delete also take other objects as "Kind/name" or
 *             "Kind/namespace/name" (a DeviceTaintRule arriving later).
 * Everything else is read by model/ (Pods, ResourceClaims, templates,
 * DeviceClasses, PodGroups, Namespaces, DeviceTaintRules...).
 *
 * Errors: -EINVAL/-E2BIG with "<file>: <Kind> <name>: <field path>: <rule>";
 * the CLI exits 2. Output is deterministic byte for byte.
 */
#pragma once

#include "doc/doc.h"
#include "model/model.h"
#include "queue/queue.h"
#include "queue/volcano.h"
#include "sched/sched.h"
#include "sched/score.h"

#define DP_SIM_NODES_MAX 5000
#define DP_SIM_EVENTS_MAX 100000
#define DP_SIM_GROUPS_MAX 256

typedef enum { DP_SIM_MODEL_V1 = 1, DP_SIM_MODEL_V2 = 2, DP_SIM_MODEL_BOTH = 3 } dp_sim_model;

typedef struct dp_sim_group {
        char *name;
        char *profile;      /* as written */
        char *profile_path; /* a profile file: its path (relative to the Fleet file's directory resolved) */
        char *profile_text; /* and its text, read once at load; NULL for a built-in name */
        size_t profile_len;
        int64_t count;
        dp_sim_model model;
        dp_kv *labels;
        size_t n_labels;
        dp_taint *taints;
        size_t n_taints;
        char *agent_yaml;        /* the agent config re-emitted as YAML, NULL for defaults */
        int dra_partitions;      /* dra.partitions: -1 the profile's */
        bool dra_allow_multiple; /* dra.allowMultipleAllocations */
        bool dra_compat_groups;  /* dra.compatGroups: MIG-mode [mig] and vGPU-mode [vgpu] partitions */
} dp_sim_group;

typedef enum { DP_SIM_EV_CREATE, DP_SIM_EV_DELETE, DP_SIM_EV_FAIL, DP_SIM_EV_RECOVER } dp_sim_event_kind;

typedef struct dp_sim_event {
        int64_t at_ms;
        dp_sim_event_kind kind;
        char *pod;  /* CREATE/DELETE: "ns/name" or "name" */
        char *node; /* FAIL/RECOVER */
        char *device;
        bool no_execute; /* FAIL: fail.effect NoExecute (the device's taint evicts its pods) */
        size_t order;    /* input order, for stable sorting */
} dp_sim_event;

/* What-if changes on top of the input (simulate/explain flags; docs/scheduler.md
 * "Input"). Checked against the input by dp_sim_set_whatif. */
typedef struct dp_sim_whatif {
        char **cordon; /* node names: marked unschedulable */
        size_t n_cordon;
        char **fail; /* "NODE/DEVICE" or "DRIVER/POOL/DEVICE": failed (NoSchedule) from the start */
        size_t n_fail;
        char **mode; /* "GROUP_OR_NODE=v1|v2|both" */
        size_t n_mode;
} dp_sim_whatif;

void dp_sim_whatif_done(dp_sim_whatif *w);

typedef struct dp_sim_input {
        char *fleet_name; /* the Fleet's name; "cluster" without a Fleet */
        char *source;     /* where the fleet came from */
        /* Without a Fleet, what the cluster was read from, for headers:
         * "dump.yaml" (one file, as given), "(3 files)", "(API server)",
         * "(API server and 1 file)"; NULL with a Fleet. */
        char *cluster_name;
        dp_score_policy policy;
        bool has_profile;          /* --scheduler-config: the profile of default-scheduler */
        dp_score_profile profile;  /* DP_SCORE_DEFAULT's plugins, when has_profile */
        int schedulers; /* spec.schedulers: 1, or 2 instances planning from the same reads */
        dp_sim_group *groups;
        size_t n_groups;
        dp_sim_event *events;
        size_t n_events;
        dp_object_list *objs; /* Kubernetes objects in input order (validated) */
        /* The documents they came from: every run decodes its own copy, since
         * the cluster store takes ownership of what it holds. */
        dp_doc_set *docs;
        size_t *k8s_docs;
        size_t *k8s_doc_index; /* each one's index within its own file */
        size_t n_k8s_docs;
        bool fleet; /* a Fleet was given (else the nodes are Node objects) */
        dp_sim_whatif whatif;
        dp_alloc_cluster_options alloc; /* feature gates (--feature-gates), set after loading */
        /* The caller exits as soon as the report is written: dp_sim_report*
         * leave the three runs to the end of the process instead of freeing
         * them (a tenth of the time at 5,000 nodes). Set by the release CLI
         * only; tests and sanitizer builds free everything. */
        bool exit_after_report;
        /* Progress on stderr ("simulating all-V2: 12,000/50,000 pods", one
         * line rewritten with \r, cleared when the run ends) once
         * CLOCK_MONOTONIC passes progress_t0_ms + 2 s. The CLI sets it when
         * stderr is a terminal, never else: output stays comparable. */
        bool progress;
        int64_t progress_t0_ms;
        /* queue, ports, defaults (kube-scheduler parity): --all-schedulers,
         * pods of every schedulerName are scheduled as default pods */
        bool all_schedulers;
        /* preemption (sched/preempt.c): --no-preemption turns kube-scheduler's
         * DefaultPreemption off; --dra-preemption, the KEP-5690 what-if */
        bool no_preemption, dra_preemption;
        /* --kueue-fair-sharing: Kueue's fairSharing.enable (queue/fair.c) */
        bool kueue_fair_sharing;
        /* Kueue (src/queue): --kueue-config and the what-if quota and
         * weights; borrowed (the caller keeps it), NULL none */
        const dp_queue_options *queue;
        /* --queue-policy volcano (src/queue/volcano.h): Volcano's admission
         * decides which pods of schedulerName volcano kube-scheduler places;
         * borrowed, NULL: not simulated (they stay Pending, not ours) */
        const dp_volcano_options *volcano;
        /* --queue-policy: "kueue" or "kai" (src/queue/kai.h); NULL: Kueue's,
         * or KAI-Scheduler's when the input has KAI Queues and no Kueue object */
        const char *queue_policy;
} dp_sim_input;

dp_sim_input *dp_sim_input_free(dp_sim_input *in);
DEFINE_FREEP(dp_sim_input, dp_sim_input_free)

/* Read files and directories (a directory gives its *.yaml, *.yml, *.json
 * sorted by name; "-" standard input). At most one Fleet, at most one
 * Timeline; without a Fleet the nodes are the input's Node objects (a
 * `kubectl get nodes,pods,resourceslices,... -o yaml` dump), and there must
 * be some. */
int dp_sim_load(const char *const *paths, size_t n_paths, dp_sim_input **ret, dp_error *err);
/* One text given beside the files (a list read from the API server). */
typedef struct dp_sim_text {
        const char *buf;
        size_t len;
        const char *source;
} dp_sim_text;
/* dp_sim_load with texts read before the paths. */
int dp_sim_load_texts(const dp_sim_text *texts, size_t n_texts, const char *const *paths, size_t n_paths,
                      dp_sim_input **ret, dp_error *err);
/* Check the what-if changes against the input and keep a copy: -EINVAL
 * naming the flag's value when a node, group or device is not in the input. */
int dp_sim_set_whatif(dp_sim_input *in, const dp_sim_whatif *w, dp_error *err);
/* The closest pod names to `ref` (another namespace, a near spelling, an
 * owner's pods), comma-separated, for "did you mean"; "" when none. */
int dp_sim_suggest_pods(const dp_sim_input *in, const char *ref, dp_strbuf *out);
/* The same from one buffer (fuzzing, tests, the built-in scenario). */
int dp_sim_load_buffer(const char *buf, size_t len, const char *source, dp_sim_input **ret, dp_error *err);
/* The built-in default scenario (examples/seed.yaml, embedded). */
const char *dp_sim_builtin_scenario(size_t *ret_len);
/* dp_sim_load over paths, or the built-in scenario when there are none
 * (what `devplane simulate` and `devplane explain` read). */
int dp_sim_load_or_builtin(const char *const *paths, size_t n_paths, dp_sim_input **ret, dp_error *err);

typedef enum { DP_SIM_OUT_TABLE = 0, DP_SIM_OUT_JSON, DP_SIM_OUT_YAML } dp_sim_output;

/* The input's size as written: nodes of the Fleet, Pod objects, objects. */
void dp_sim_input_size(const dp_sim_input *in, size_t *ret_nodes, size_t *ret_pods, size_t *ret_objects);

/* Run the input as written and with every node switched to V1 and to V2;
 * print the report. 0, or <0 with err (an input error found while running:
 * an unknown profile, a node event naming no device...). *ret_pending is the
 * number of pods still Pending at the end of the as-written run. -ENOMEM
 * (here and in dp_sim_explain*): err says what was being built and the
 * input's size ("simulating the all-V1 run (input: 5000 nodes, ...)"). */
int dp_sim_report(const dp_sim_input *in, dp_sim_output fmt, dp_strbuf *out, size_t *ret_pending, dp_error *err);
/* dp_sim_report and, from the same three runs, the HTML page (html.h)
 * appended to `html`; out NULL: the page only. */
int dp_sim_report_html(const dp_sim_input *in, dp_sim_output fmt, dp_strbuf *out, dp_strbuf *html,
                       size_t *ret_pending, dp_error *err);
/* Why a pod is where it is (or is not), one screen. -ENOENT: no such pod. */
int dp_sim_explain(const dp_sim_input *in, const char *pod, dp_strbuf *out, dp_error *err);
/* The same; for a Pending pod the filter runs again on every node at the
 * end of the run (dp_sched_diagnose): reasons grouped with their node
 * counts and first nodes, the allocator's reasons grouped likewise, and with
 * `details` every node's reason and detail. */
int dp_sim_explain_details(const dp_sim_input *in, const char *pod, bool details, dp_strbuf *out, dp_error *err);
