#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 12's "done when": a cluster dump made of upstream material simulates
# and explains with the right placements and reasons. The workloads are read
# at test time from DP_SHARED_DIR (NVIDIA's DRA driver demo specs and the DRA
# example driver's workloads, never copied); the cluster state around them is
# written here as `kubectl get ... -o yaml` prints it: Node objects (V1 GPUs as
# nvidia.com/gpu allocatable, DRA nodes with their ResourceSlices), pods
# already bound (one holding a DRA GPU through its allocated claim, one
# holding V1 GPUs), and a scheduler_perf-style pod template with generateName.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SHARED_DIR:?}"
nv="$DP_SHARED_DIR/conformance/nvidia-dra-driver-gpu/demo/specs"
ex="$DP_SHARED_DIR/conformance/dra-example-driver"
[ -d "$nv" ] && [ -d "$ex" ] || { echo "SKIP: no upstream material in $DP_SHARED_DIR/conformance"; exit 0; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# the cluster, as one kubectl List
{
        echo "apiVersion: v1"
        echo "kind: List"
        echo "items:"
        for n in v1-0 v1-1; do
                cat <<EOF
- apiVersion: v1
  kind: Node
  metadata: {name: $n, labels: {kubernetes.io/hostname: $n, nvidia.com/gpu.present: "true"}}
  status:
    capacity: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "4"}
    allocatable: {cpu: "64", memory: 512Gi, pods: "110", nvidia.com/gpu: "4"}
EOF
        done
        cat <<'EOF'
- apiVersion: v1
  kind: Node
  metadata: {name: nv-dra-0, labels: {kubernetes.io/hostname: nv-dra-0}}
  spec:
    taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
  status:
    allocatable: {cpu: "64", memory: 512Gi, pods: "110"}
- apiVersion: v1
  kind: Node
  metadata: {name: example-0, labels: {kubernetes.io/hostname: example-0}}
  status:
    allocatable: {cpu: "64", memory: 512Gi, pods: "110"}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.nvidia.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}}]
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.example.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.example.com'"}}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: nv-dra-0-gpu.nvidia.com-6fzqk}
  spec:
    driver: gpu.nvidia.com
    nodeName: nv-dra-0
    pool: {name: nv-dra-0, generation: 1, resourceSliceCount: 1}
    devices:
EOF
        for i in 0 1 2 3; do
                echo "    - {name: gpu-$i, attributes: {type: {string: gpu}, index: {int: $i}, productName: {string: NVIDIA H100 80GB HBM3}}, capacity: {memory: {value: 80Gi}}}"
        done
        cat <<'EOF'
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: example-0-gpu.example.com-b8r2t}
  spec:
    driver: gpu.example.com
    nodeName: example-0
    pool: {name: example-0, generation: 1, resourceSliceCount: 1}
    devices:
EOF
        for i in 0 1 2 3 4 5 6 7; do
                echo "    - {name: gpu-$i, attributes: {model: {string: LATEST-GPU-MODEL}, index: {int: $i}, driverVersion: {version: 1.0.0}}, capacity: {memory: {value: 80Gi}}}"
        done
        cat <<'EOF'
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: resident-gpu-k2x9w, namespace: ops}
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
  status:
    allocation:
      devices:
        results: [{request: gpu, driver: gpu.nvidia.com, pool: nv-dra-0, device: gpu-0}]
    reservedFor: [{resource: pods, name: resident, uid: r1}]
- apiVersion: v1
  kind: Pod
  metadata: {name: resident, namespace: ops, uid: r1}
  spec:
    nodeName: nv-dra-0
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
    resourceClaims: [{name: gpu, resourceClaimTemplateName: gone}]
  status:
    phase: Running
    resourceClaimStatuses: [{name: gpu, resourceClaimName: resident-gpu-k2x9w}]
- apiVersion: v1
  kind: Pod
  metadata: {name: v1-resident, namespace: ops}
  spec:
    nodeName: v1-0
    containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "3"}}}]
  status: {phase: Running}
EOF
} >"$tmp/cluster.yaml"

# scheduler_perf's shape: one pod template with generateName, created 6 times
for i in 1 2 3 4 5 6; do
        cat <<'EOF'
---
apiVersion: v1
kind: Pod
metadata: {generateName: perf-pod-, namespace: perf}
spec:
  containers:
  - name: pause
    image: registry.k8s.io/pause:3.10
    resources: {limits: {nvidia.com/gpu: "1"}, requests: {cpu: 100m, memory: 500Mi}}
EOF
done >"$tmp/perf.yaml"

in=(-f "$tmp/cluster.yaml" -f "$nv/quickstart/v1/gpu-test1.yaml" -f "$nv/quickstart/v1/gpu-test2.yaml"
        -f "$nv/extended-resources/gpu-full.yaml" -f "$nv/imex/nvbandwidth-test-job.yaml"
        -f "$ex/basic-resourceclaimtemplate/basic-resourceclaimtemplate.yaml" -f "$tmp/perf.yaml")
"$DEVPLANE" simulate "${in[@]}" -o json >"$tmp/r.json" 2>"$tmp/err" || fail "simulate: $(cat "$tmp/err")"
grep -q 'skipped 1 ComputeDomain object (resource.nvidia.com/v1beta1)' "$tmp/err" || fail "$(cat "$tmp/err")"
grep -q 'skipped 1 MPIJob object (kubeflow.org/v2beta1)' "$tmp/err" || fail "$(cat "$tmp/err")"
python3 - "$tmp/r.json" <<'EOF'
import json, re, sys
pods = {p["name"]: p for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}
def where(n):
    p = pods[n]
    return p["state"], p.get("node"), ",".join(p["devices"].get("v2", []))
bad = []
def want(n, state, node=None, v2=None):
    s, nd, d = where(n)
    if s != state or (node is not None and nd not in node.split("|")) or (v2 is not None and d != v2):
        bad.append("%s: got %s %s [%s], want %s %s [%s]" % (n, s, nd, d, state, node, v2))
want("ops/resident", "Running", "nv-dra-0", "gpu-0")
want("ops/v1-resident", "Running", "v1-0")
# NVIDIA quickstart: one distinct GPU each, then one GPU shared by two containers (gpu-0 is held)
want("gpu-test1/pod1", "Running", "nv-dra-0")
want("gpu-test1/pod2", "Running", "nv-dra-0")
got = sorted(where("gpu-test1/pod1")[2].split(",") + where("gpu-test1/pod2")[2].split(",") +
             where("gpu-test2/pod")[2].split(","))
if got != ["gpu-1", "gpu-2", "gpu-3"]:
    bad.append("DRA GPUs of the quickstart pods: %s" % got)
want("gpu-test2/pod", "Running", "nv-dra-0")
# the DRA example driver's workload on its own node
want("basic-resourceclaimtemplate/pod0", "Running", "example-0")
want("basic-resourceclaimtemplate/pod1", "Running", "example-0")
# nvidia.com/gpu through the device plugin: 1 free on v1-0, 4 on v1-1; 7 pods want one
want("extended-resource-gpu-full/gpu-full-pod", "Running", "v1-0|v1-1")
perf = [n for n in pods if n.startswith("perf/")]
if len(perf) != 6 or not all(re.fullmatch(r"perf/perf-pod-[bcdfghjklmnpqrstvwxz2456789]{5}", n) for n in perf):
    bad.append("generated names: %s" % perf)
running = [n for n in perf if pods[n]["state"] == "Running"]
pending = [n for n in perf if pods[n]["state"] == "Pending"]
if len(running) != 4 or len(pending) != 2:
    bad.append("perf pods: %d running, %d pending" % (len(running), len(pending)))
for n in pending:
    if "Insufficient nvidia.com/gpu" not in pods[n].get("reason", ""):
        bad.append("%s: reason %r" % (n, pods[n].get("reason")))
if bad:
    print("FAIL", *bad, sep="\n  ")
    sys.exit(1)
open(sys.argv[1] + ".pending", "w").write(pending[0])
print("PASS placements")
EOF
pending=$(cat "$tmp/r.json.pending")

# the same names on a second run, and through standard input
stdin_in=("${in[@]}")
stdin_in[1]=-
"$DEVPLANE" simulate "${stdin_in[@]}" -o json <"$tmp/cluster.yaml" 2>/dev/null >"$tmp/r2.json"
cmp -s "$tmp/r2.json" "$tmp/r.json" || fail "second run, the cluster on standard input, differs"

# explain: the Pending perf pod, as kube-scheduler sums it up, by the forms people type
"$DEVPLANE" explain "${pending#perf/}" -n perf "${in[@]}" >"$tmp/x" 2>/dev/null || fail "explain $pending"
grep -q "^Pod $pending: Pending" "$tmp/x" || fail "explain: $(cat "$tmp/x")"
grep -q '0/4 nodes are available: ' "$tmp/x" || fail "explain summary: $(cat "$tmp/x")"
grep -q '3 Insufficient nvidia.com/gpu' "$tmp/x" || fail "explain: V1 nodes full, example-0 has none: $(cat "$tmp/x")"
grep -q "1 node(s) had untolerated taint(s)" "$tmp/x" || fail "explain the DRA node's taint: $(cat "$tmp/x")"
"$DEVPLANE" explain pod/pod1 -n gpu-test1 "${in[@]}" >"$tmp/x" 2>/dev/null || fail "explain pod/pod1"
grep -q 'nv-dra-0' "$tmp/x" || fail "explain a placed pod: $(cat "$tmp/x")"
set +e
"$DEVPLANE" explain pod1 "${in[@]}" >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'did you mean gpu-test1/pod1' "$tmp/err" || fail "hint: $(cat "$tmp/err")"
echo ok
