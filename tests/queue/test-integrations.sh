#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kueue's job integrations beyond batch/v1 Job (src/queue/integrations*.c):
# every example of Kueue's examples/jobs, appwrapper/, serving-workloads/ and
# pod-based-workloads/sample-sandbox.yaml
# (read at test time from the shared conformance copy), on the single
# ClusterQueue setup Kueue's docs pair them with, becomes one workload (a
# Deployment: one per pod; a LeaderWorkerSet: one per group) with Kueue's
# pod sets and counts, is admitted, and its pods stand up under the
# operator's names and are placed; a quota too small leaves the TFJob
# pending with Kueue's message and no pod; a Deployment past its quota has
# its last pod gated; Kueue's own unit-test facts for pod sets and priority
# (data/integrations-facts.yaml, `# source:` lines); bad values exit 2 with
# the field path; a CronJob makes no workload at t=0 and says so.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SHARED_DIR:?}"
ex="$DP_SHARED_DIR/conformance/kueue/site/static/examples"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -f "$ex/admin/single-clusterqueue-setup.yaml" ] || { echo "SKIP: no Kueue examples in $ex"; exit 0; }
setup="$ex/admin/single-clusterqueue-setup.yaml"
nodes=data/nodes-on-demand-spot.yaml

# file | kind | pod sets name:count,... | pod names (sorted, space-separated)
while IFS='|' read -r file kind podsets pods; do
        [ -n "$file" ] || continue
        "$DEVPLANE" simulate -f "$nodes" -f "$setup" -f "$ex/$file" -o json >"$tmp/json" 2>"$tmp/err" ||
                fail "$file: exit $?: $(cat "$tmp/err")"
        [ ! -s "$tmp/err" ] || fail "$file: warnings: $(cat "$tmp/err")"
        python3 - "$tmp/json" "$file" "$kind" "$podsets" "$pods" <<'PY' || fail "$file"
import json, sys
d, f, kind, podsets, pods = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5]
wls = [w for cq in d["asWritten"]["queues"]["clusterQueues"] for w in cq["workloads"]]
want = [x.split(":") for x in podsets.split(",")]
for w in wls:
    assert w["kind"] == kind, (f, w)
    assert w["state"] == "Admitted", (f, w)
    got = [[p["name"], str(p["count"])] for p in w["podSets"]]
    assert got == want, (f, got, want)
    assert w["placedPods"] == sum(int(c) for _, c in want) and w["unplacedPods"] == 0, (f, w)
names = sorted(p["name"] for p in d["asWritten"]["pods"])
assert names == sorted("default/" + p for p in pods.split()), (f, names)
assert all(p["state"] == "Running" for p in d["asWritten"]["pods"]), (f, d["asWritten"]["pods"])
nwl = {"serving-workloads/sample-deployment.yaml": 3, "serving-workloads/sample-leaderworkerset.yaml": 2}.get(f, 1)
assert len(wls) == nwl, (f, wls)
PY
done <<'CASES'
jobs/sample-pytorchjob.yaml|PyTorchJob|master:1,worker:1|pytorch-simple-master-0 pytorch-simple-worker-0
jobs/sample-tfjob.yaml|TFJob|ps:1,worker:2|tensorflow-dist-mnist-ps-0 tensorflow-dist-mnist-worker-0 tensorflow-dist-mnist-worker-1
jobs/sample-xgboostjob.yaml|XGBoostJob|master:1,worker:2|xgboost-dist-iris-test-train-master-0 xgboost-dist-iris-test-train-worker-0 xgboost-dist-iris-test-train-worker-1
jobs/sample-paddlejob.yaml|PaddleJob|worker:2|paddle-simple-cpu-worker-0 paddle-simple-cpu-worker-1
jobs/sample-jaxjob.yaml|JAXJob|worker:2|jax-simple-worker-0 jax-simple-worker-1
jobs/sample-mpijob.yaml|MPIJob|launcher:1,worker:2|pi-launcher pi-worker-0 pi-worker-1
jobs/sample-sparkapplication.yaml|SparkApplication|driver:1,executor:2|spark-pi-driver spark-pi-exec-1 spark-pi-exec-2
jobs/ray-cluster-sample.yaml|RayCluster|head:1,small-group:1|raycluster-complete-head raycluster-complete-small-group-worker-0
jobs/ray-job-sample.yaml|RayJob|head:1,small-group:1,submitter:1|rayjob-sample-head rayjob-sample-small-group-worker-0 rayjob-sample-submitter
jobs/ray-job-autoscaling-sample.yaml|RayJob|head:1,small-group:1,submitter:1|rayjob-autoscaling-sample-head rayjob-autoscaling-sample-small-group-worker-0 rayjob-autoscaling-sample-submitter
jobs/ray-service-sample.yaml|RayService|head:1,small-group:1|test-rayservice-head test-rayservice-small-group-worker-0
appwrapper/deployment-sample.yaml|AppWrapper|sample-appwrapper-deployment-0:3|sample-appwrapper-deployment-0-0 sample-appwrapper-deployment-0-1 sample-appwrapper-deployment-0-2
appwrapper/pytorch-sample.yaml|AppWrapper|sample-appwrapper-pytorch-job-0:1,sample-appwrapper-pytorch-job-1:1|sample-appwrapper-pytorch-job-0-0 sample-appwrapper-pytorch-job-1-0
appwrapper/leaderworkerset-sample.yaml|AppWrapper|sample-appwrapper-lws-0:2,sample-appwrapper-lws-1:3|sample-appwrapper-lws-0-0 sample-appwrapper-lws-0-1 sample-appwrapper-lws-1-0 sample-appwrapper-lws-1-1 sample-appwrapper-lws-1-2
serving-workloads/sample-deployment.yaml|Pod|main:1|nginx-deployment-0 nginx-deployment-1 nginx-deployment-2
serving-workloads/sample-statefulset.yaml|StatefulSet|main:3|nginx-statefulset-0 nginx-statefulset-1 nginx-statefulset-2
pod-based-workloads/sample-sandbox.yaml|Pod|main:1|hello-world-kueue
serving-workloads/sample-leaderworkerset.yaml|LeaderWorkerSet|leader:1,worker:2|nginx-leaderworkerset-0 nginx-leaderworkerset-0-1 nginx-leaderworkerset-0-2 nginx-leaderworkerset-1 nginx-leaderworkerset-1-1 nginx-leaderworkerset-1-2
CASES

# the quota too small: the TFJob (3 CPUs) waits with Kueue's message, no pod stands up
"$DEVPLANE" simulate -f "$nodes" -f data/integrations-small-queue.yaml -f "$ex/jobs/sample-tfjob.yaml" -o json \
        >"$tmp/json" 2>"$tmp/err" || fail "small queue: exit $?"
python3 - "$tmp/json" <<'PY' || fail "small queue"
import json, sys
d = json.load(open(sys.argv[1]))
w = d["asWritten"]["queues"]["clusterQueues"][0]["workloads"][0]
assert w["state"] == "Pending", w
assert w["message"] == ("couldn't assign flavors to pod set worker: insufficient quota for cpu in flavor default-flavor, "
                        "previously considered podsets requests (1) + current podset request (2) > maximum capacity (2)"), w
assert d["asWritten"]["pods"] == [], d["asWritten"]["pods"]
PY

# a Deployment past its quota (250m for three 100m pods): two admitted, the third gated
"$DEVPLANE" simulate -f "$nodes" -f data/integrations-small-queue.yaml -f "$ex/serving-workloads/sample-deployment.yaml" \
        --set-quota cluster-queue/default-flavor/cpu=250m -o json >"$tmp/json" 2>"$tmp/err" || fail "deployment: exit $?"
python3 - "$tmp/json" <<'PY' || fail "deployment past its quota"
import json, sys
d = json.load(open(sys.argv[1]))
st = {w["name"]: w["state"] for w in d["asWritten"]["queues"]["clusterQueues"][0]["workloads"]}
assert st == {"default/nginx-deployment-0": "Admitted", "default/nginx-deployment-1": "Admitted",
              "default/nginx-deployment-2": "Pending"}, st
pods = {p["name"]: p["state"] for p in d["asWritten"]["pods"]}
assert pods["default/nginx-deployment-0"] == "Running" and pods["default/nginx-deployment-2"] != "Running", pods
PY

# Kueue's unit-test facts: a TFJob's priority from runPolicy.schedulingPolicy
# (700, not its Chief's 300), its pod sets in OrderedReplicaTypes order; a
# RayCluster's group without replicas counts 1
"$DEVPLANE" simulate -f "$nodes" -f "$setup" -f data/integrations-facts.yaml -o json >"$tmp/json" 2>"$tmp/err" ||
        fail "facts: exit $?"
python3 - "$tmp/json" <<'PY' || fail "facts"
import json, sys
d = json.load(open(sys.argv[1]))
w = {x["name"]: x for x in d["asWritten"]["queues"]["clusterQueues"][0]["workloads"]}
tf = w["default/tfjob-prio"]
assert tf["priority"] == 700, tf
assert [(p["name"], p["count"]) for p in tf["podSets"]] == [("chief", 1), ("worker", 2)], tf
ray = w["default/raycluster-groups"]
assert [(p["name"], p["count"]) for p in ray["podSets"]] == [("head", 1), ("group1", 1), ("group2", 3)], ray
PY

# a CronJob: no workload at t=0, one warning saying why
"$DEVPLANE" simulate -f "$nodes" -f "$setup" -f "$ex/jobs/sample-cronjob.yaml" >"$tmp/out" 2>"$tmp/err" ||
        fail "cronjob: exit $?"
grep -q "CronJob sample-cronjob: Kueue queues the Jobs it creates when its schedule (\* \* \* \* \*) fires; a simulation at t=0 has none: no workload" "$tmp/err" ||
        fail "cronjob warning: $(cat "$tmp/err")"

# bad values of fields Kueue reads: exit 2 with the path
# (the objects are labelled for a queue: unlabelled, they are not Kueue's and
# are skipped with the kinds devplane does not model, as sched/test-cluster-input.sh checks)
bad() { # name, yaml, expected message
        printf '%s\n' "$2" >"$tmp/bad.yaml"
        set +e
        "$DEVPLANE" simulate -f "$nodes" -f "$setup" -f "$tmp/bad.yaml" >"$tmp/out" 2>"$tmp/err"
        local rc=$?
        set -e
        [ "$rc" = 2 ] || fail "$1: exit $rc: $(cat "$tmp/err")"
        grep -qF "$3" "$tmp/err" || fail "$1: $(cat "$tmp/err")"
}
pt='template: {spec: {containers: [{name: c, image: x}]}}'
bad replicas "{apiVersion: kubeflow.org/v1, kind: PyTorchJob, metadata: {name: p, labels: {kueue.x-k8s.io/queue-name: user-queue}}, spec: {pytorchReplicaSpecs: {Worker: {replicas: -1, $pt}}}}" \
        "spec.pytorchReplicaSpecs.Worker.replicas: must be greater than or equal to 0"
bad cap "{apiVersion: kubeflow.org/v1, kind: PyTorchJob, metadata: {name: p, labels: {kueue.x-k8s.io/queue-name: user-queue}}, spec: {pytorchReplicaSpecs: {Worker: {replicas: 2000000000, $pt}}}}" \
        "spec.pytorchReplicaSpecs.Worker.replicas: must be at most 100000"
bad type "{apiVersion: kubeflow.org/v1, kind: PyTorchJob, metadata: {name: p, labels: {kueue.x-k8s.io/queue-name: user-queue}}, spec: {pytorchReplicaSpecs: {Chief: {$pt}}}}" \
        "spec.pytorchReplicaSpecs.Chief: not a replica type of PyTorchJob"
bad head "{apiVersion: ray.io/v1, kind: RayCluster, metadata: {name: r, labels: {kueue.x-k8s.io/queue-name: user-queue}}, spec: {headGroupSpec: {$pt}, workerGroupSpecs: [{groupName: head, $pt}]}}" \
        'spec.workerGroupSpecs[0].groupName: Forbidden: "head" is reserved for the head group'
bad template "{apiVersion: kubeflow.org/v2beta1, kind: MPIJob, metadata: {name: m, labels: {kueue.x-k8s.io/queue-name: user-queue}}, spec: {mpiReplicaSpecs: {Launcher: {replicas: 1}}}}" \
        "spec.mpiReplicaSpecs.Launcher.template: required"
bad memory "{apiVersion: sparkoperator.k8s.io/v1beta2, kind: SparkApplication, metadata: {name: s, labels: {kueue.x-k8s.io/queue-name: user-queue}}, spec: {driver: {memory: lots}, executor: {}}}" \
        "spec.driver.memory: lots: not a Spark memory size"
bad path "{apiVersion: workload.codeflare.dev/v1beta2, kind: AppWrapper, metadata: {name: a, labels: {kueue.x-k8s.io/queue-name: user-queue}}, spec: {components: [{podSets: [{path: template.spec.nothing}], template: {kind: Pod}}]}}" \
        "spec.components[0].podSets[0]: path: template.spec.nothing: no pod template there"
bad autoscaling "{apiVersion: ray.io/v1, kind: RayCluster, metadata: {name: r, labels: {kueue.x-k8s.io/queue-name: user-queue}}, spec: {enableInTreeAutoscaling: true, headGroupSpec: {$pt}}}" \
        "enableInTreeAutoscaling: Invalid value: true: a kueue managed job should only use autoscaling when workload slicing is enabled"
echo "ok"
