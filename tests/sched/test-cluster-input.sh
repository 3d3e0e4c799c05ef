#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A cluster's own state as simulate/explain input (docs/scheduler.md, "Input"):
# a `kubectl get nodes,pods,resourceslices,... -A -o yaml` dump with no Fleet,
# real object shapes (generateName, owners, kinds outside the model), -f -,
# document numbers per file, what-if flags and the explain argument forms.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# The dump: kubectl's List, with the server's fields (uid, resourceVersion,
# managedFields, status.conditions...). gpu-a has V1 GPUs (nvidia.com/gpu in
# allocatable, one held by a bound pod; a finished pod holds nothing); dra-b has two DRA GPUs (gpu-0 held
# by a bound pod's allocated claim) and a taint; cordoned-c is unschedulable.
cat >"$tmp/dump.yaml" <<'EOF'
apiVersion: v1
kind: List
metadata: {resourceVersion: ""}
items:
- apiVersion: v1
  kind: Node
  metadata:
    name: gpu-a
    uid: 0d9f6a3e-1111-4000-8000-000000000001
    resourceVersion: "1234"
    creationTimestamp: "2026-01-01T00:00:00Z"
    labels: {kubernetes.io/hostname: gpu-a, kubernetes.io/os: linux, accel: nvidia}
    annotations: {node.alpha.kubernetes.io/ttl: "0"}
    managedFields: [{manager: kubelet, operation: Update, apiVersion: v1}]
  spec: {podCIDR: 10.0.0.0/24, podCIDRs: [10.0.0.0/24], providerID: "kind://docker/kind/gpu-a"}
  status:
    capacity: {cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "2", ephemeral-storage: 100Gi}
    allocatable: {cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "2", ephemeral-storage: 100Gi}
    conditions: [{type: Ready, status: "True", reason: KubeletReady}]
    addresses: [{type: InternalIP, address: 172.18.0.2}]
    nodeInfo: {kubeletVersion: v1.35.0, architecture: amd64}
    daemonEndpoints: {kubeletEndpoint: {Port: 10250}}
- apiVersion: v1
  kind: Node
  metadata:
    name: dra-b
    labels: {kubernetes.io/hostname: dra-b}
  spec:
    taints: [{key: nvidia.com/gpu, effect: NoSchedule}]
  status:
    allocatable: {cpu: "16", memory: 64Gi, pods: "110"}
- apiVersion: v1
  kind: Node
  metadata:
    name: cordoned-c
    labels: {kubernetes.io/hostname: cordoned-c, accel: nvidia}
  spec: {unschedulable: true, taints: [{key: node.kubernetes.io/unschedulable, effect: NoSchedule}]}
  status:
    allocatable: {cpu: "16", memory: 64Gi, pods: "110", nvidia.com/gpu: "8"}
- apiVersion: resource.k8s.io/v1
  kind: DeviceClass
  metadata: {name: gpu.nvidia.com}
  spec:
    selectors: [{cel: {expression: "device.driver == 'gpu.nvidia.com'"}}]
- apiVersion: resource.k8s.io/v1
  kind: ResourceSlice
  metadata: {name: dra-b-gpu.nvidia.com-x7k2p, generateName: dra-b-gpu.nvidia.com-}
  spec:
    driver: gpu.nvidia.com
    nodeName: dra-b
    pool: {name: dra-b, generation: 1, resourceSliceCount: 1}
    devices:
    - name: gpu-0
      attributes: {type: {string: gpu}}
    - name: gpu-1
      attributes: {type: {string: gpu}}
- apiVersion: resource.k8s.io/v1
  kind: ResourceClaim
  metadata: {name: trainer-gpu-q8x2z, namespace: ml, uid: c1}
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
  status:
    allocation:
      devices:
        results: [{request: gpu, driver: gpu.nvidia.com, pool: dra-b, device: gpu-0}]
      nodeSelector:
        nodeSelectorTerms: [{matchFields: [{key: metadata.name, operator: In, values: [dra-b]}]}]
    reservedFor: [{resource: pods, name: trainer, uid: p1}]
- apiVersion: v1
  kind: Pod
  metadata: {name: trainer, namespace: ml, uid: p1}
  spec:
    nodeName: dra-b
    schedulerName: default-scheduler
    tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
    containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
    resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
  status:
    phase: Running
    resourceClaimStatuses: [{name: gpu, resourceClaimName: trainer-gpu-q8x2z}]
    conditions: [{type: Ready, status: "True"}]
    containerStatuses: [{name: c, ready: true, restartCount: 0, image: x, imageID: "", state: {running: {}}}]
    hostIP: 172.18.0.3
    qosClass: BestEffort
- apiVersion: v1
  kind: Pod
  metadata: {name: v1-user, namespace: default}
  spec:
    nodeName: gpu-a
    containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]
  status: {phase: Running}
- apiVersion: v1
  kind: Pod
  metadata: {name: finished-job-x2k4d, namespace: default}
  spec:
    nodeName: gpu-a
    restartPolicy: Never
    containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]
  status: {phase: Succeeded}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: kube-root-ca.crt, namespace: default}
  data: {ca.crt: x}
- apiVersion: v1
  kind: Service
  metadata: {name: kubernetes, namespace: default}
  spec: {ports: [{port: 443}]}
- apiVersion: v1
  kind: ServiceAccount
  metadata: {name: default, namespace: default}
EOF

# Workloads to try on top: scheduler_perf-style generateName pods, a Job,
# a claim template, and kinds outside the model.
cat >"$tmp/work.yaml" <<'EOF'
apiVersion: v1
kind: Pod
metadata: {generateName: perf-, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]
---
apiVersion: v1
kind: Pod
metadata: {generateName: perf-, namespace: default}
spec:
  containers: [{name: c, image: x, resources: {limits: {nvidia.com/gpu: "1"}}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one-gpu, namespace: ml}
spec:
  spec:
    devices:
      requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: sweep, namespace: ml}
spec:
  parallelism: 2
  completions: 10
  template:
    spec:
      restartPolicy: Never
      tolerations: [{key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}]
      containers: [{name: c, image: x, resources: {claims: [{name: gpu}]}}]
      resourceClaims: [{name: gpu, resourceClaimTemplateName: one-gpu}]
---
apiVersion: resource.nvidia.com/v1beta1
kind: ComputeDomain
metadata: {name: cd}
spec: {numNodes: 2}
---
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata: {name: mpi}
spec: {slotsPerWorker: 1}
EOF

# 1. the dump alone: no Fleet, nodes from Node objects, bound pods where they are
"$DEVPLANE" simulate -f "$tmp/dump.yaml" >"$tmp/out" 2>"$tmp/err" || fail "dump alone: $(cat "$tmp/err")"
grep -q '^ml/trainer  *Running  *dra-b  *V2  *gpu-0' "$tmp/out" || fail "bound DRA pod: $(cat "$tmp/out")"
grep -q '^default/v1-user  *Running  *gpu-a  *V1  *nvidia.com/gpu-0$' "$tmp/out" || fail "bound V1 pod: $(cat "$tmp/out")"
grep -q 'finished-job' "$tmp/out" && fail "a Succeeded pod is listed: $(cat "$tmp/out")"
grep -q 'skipped 1 ConfigMap object (v1)' "$tmp/err" || fail "ConfigMap warning: $(cat "$tmp/err")"
[ "$(grep -c 'warning: skipped' "$tmp/err")" = 2 ] || fail "one warning per kind: $(cat "$tmp/err")"

# 2. dump + workloads: only unbound pods are scheduled; allocatable counts the bound pod
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/work.yaml" >"$tmp/out" 2>"$tmp/err" || fail "dump + work: $(cat "$tmp/err")"
grep -q 'skipped 1 ComputeDomain object (resource.nvidia.com/v1beta1)' "$tmp/err" || fail "CRD warning"
grep -q 'skipped 1 MPIJob object' "$tmp/err" || fail "MPIJob warning"
perf=$(grep -o '^default/perf-[b-z2-9]\{5\}' "$tmp/out" | sort -u | wc -l)
[ "$perf" = 2 ] || fail "generateName pods: $(cat "$tmp/out")"
[ "$(grep -c '^default/perf-.* Running   *gpu-a' "$tmp/out")" = 1 ] || fail "one perf pod on gpu-a's last GPU"
grep -q '^default/perf-.* Pending .*Insufficient nvidia.com/gpu' "$tmp/out" || fail "second perf pod: $(cat "$tmp/out")"
grep -q '^default/perf-.* Pending .*node(s) were unschedulable' "$tmp/out" || fail "cordoned node in the reason"
grep -q '^ml/sweep-0  *Running  *dra-b  *V2  *gpu-1' "$tmp/out" || fail "job pod 0: $(cat "$tmp/out")"
grep -q '^ml/sweep-1  *Pending' "$tmp/out" || fail "job pod 1 (gpu-0 is held by the bound pod)"
# same input, same names
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/work.yaml" >"$tmp/out2" 2>/dev/null
cmp -s "$tmp/out" "$tmp/out2" || fail "two runs differ"

# 3. -f - reads standard input (a pipe), also for allocate and cel
"$DEVPLANE" simulate -f - -f "$tmp/work.yaml" <"$tmp/dump.yaml" >"$tmp/out2" 2>/dev/null || fail "-f -"
cmp -s "$tmp/out" "$tmp/out2" || fail "-f - differs from the file"
cat "$tmp/dump.yaml" | "$DEVPLANE" cel "device.attributes['gpu.nvidia.com'].type == 'gpu'" -f - >"$tmp/cel" 2>/dev/null ||
        fail "cel -f -"
grep -q 'dra-b/gpu-1: true' "$tmp/cel" || fail "cel output: $(cat "$tmp/cel")"
cat >"$tmp/claim.yaml" <<'EOF'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {generateName: want-gpu-, namespace: ml}
spec:
  devices:
    requests: [{name: gpu, exactly: {deviceClassName: gpu.nvidia.com}}]
EOF
{ cat "$tmp/dump.yaml"; echo '---'; cat "$tmp/claim.yaml"; } | "$DEVPLANE" allocate -f - -o table >"$tmp/alloc" 2>"$tmp/err" ||
        fail "allocate -f -: $(cat "$tmp/err")"
grep -q 'ml/want-gpu-[b-z2-9]\{5\}' "$tmp/alloc" || fail "allocate table names the generated claim: $(cat "$tmp/alloc")"
grep -q '(null)' "$tmp/alloc" && fail "allocate prints (null)"
set +e
"$DEVPLANE" simulate -f - -f - </dev/null >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'standard input can be read only once' "$tmp/err" || fail "-f - twice: $rc $(cat "$tmp/err")"

# a pod bound to a node the dump does not have waits there, saying so
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: lost}\nspec: {nodeName: ghost, containers: [{name: c, image: x}]}\n' \
        >"$tmp/ghost.yaml"
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/ghost.yaml" >"$tmp/out2" 2>/dev/null || fail "pod on a missing node"
grep -q '^default/lost  *Waiting  *ghost .*bound to node ghost, which is not in the input' "$tmp/out2" ||
        fail "pod on a missing node: $(cat "$tmp/out2")"

# 4. document numbers count within their file
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: a}\nspec: {containers: [{name: c, image: x}]}\n---\n- not an object\n' \
        >"$tmp/second.yaml"
set +e
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/second.yaml" >"$tmp/out2" 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] && [ ! -s "$tmp/out2" ] || fail "bad second file: exit $rc"
grep -q 'second.yaml: document 2: expected an object' "$tmp/err" || fail "document number: $(cat "$tmp/err")"
# no nodes at all: one clear message
set +e
"$DEVPLANE" simulate -f "$tmp/work.yaml" >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'no nodes in the input' "$tmp/err" || fail "no nodes: $rc $(cat "$tmp/err")"

# 5. a Fleet mixed in: its nodes join the dump's
cat >"$tmp/fleet.yaml" <<'EOF'
apiVersion: devplane.io/v1alpha1
kind: Fleet
metadata: {name: extra}
spec:
  nodeGroups:
  - {name: spare, profile: a100-80gb-8, count: 1, model: v1}
EOF
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/work.yaml" -f "$tmp/fleet.yaml" >"$tmp/out2" 2>/dev/null ||
        fail "dump + fleet"
[ "$(grep -c '^default/perf-.* Running   *[a-z]' "$tmp/out2")" = 2 ] || fail "the fleet's node takes the second perf pod: $(cat "$tmp/out2")"
grep -q '^spare-0 ' "$tmp/out2" || fail "fleet node listed"

# 6. what-if: cordon, a failed device, a node switched to one model
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/work.yaml" --cordon gpu-a >"$tmp/out2" 2>/dev/null || fail "--cordon"
[ "$(grep -c '^default/perf-.* Pending  *-  ' "$tmp/out2")" = 2 ] || fail "--cordon gpu-a: $(cat "$tmp/out2")"
grep -q '^default/v1-user  *Running  *gpu-a' "$tmp/out2" || fail "--cordon keeps running pods"
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/work.yaml" --fail-device dra-b/gpu-1 >"$tmp/out2" 2>/dev/null ||
        fail "--fail-device"
grep -q '^ml/sweep-0  *Pending' "$tmp/out2" || fail "--fail-device dra-b/gpu-1: $(cat "$tmp/out2")"
"$DEVPLANE" explain ml/sweep-0 -f "$tmp/dump.yaml" -f "$tmp/work.yaml" --fail-device gpu.nvidia.com/dra-b/gpu-1 \
        >"$tmp/x" 2>/dev/null || fail "--fail-device DRIVER/POOL/DEVICE"
grep -q 'Pending' "$tmp/x" || fail "explain with a failed device: $(cat "$tmp/x")"
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/work.yaml" --mode dra-b=v1 >"$tmp/out2" 2>/dev/null || fail "--mode"
grep -q '^ml/sweep-0  *Pending' "$tmp/out2" || fail "--mode dra-b=v1 drops its slices: $(cat "$tmp/out2")"
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/work.yaml" --mode gpu-a=v2 >"$tmp/out2" 2>/dev/null || fail "--mode v2"
[ "$(grep -c '^default/perf-.* Pending  *-  ' "$tmp/out2")" = 2 ] || fail "--mode gpu-a=v2 drops nvidia.com/gpu"
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/work.yaml" -f "$tmp/fleet.yaml" --mode spare=v2 >"$tmp/out2" \
        2>/dev/null || fail "--mode on a node group"
grep -q '^spare-0  *a100-80gb-8  *v2' "$tmp/out2" || fail "--mode spare=v2: $(grep spare-0 "$tmp/out2")"
for bad in "--cordon nowhere" "--fail-device dra-b/gpu-9" "--fail-device a/b/c/d" "--mode dra-b=v3" "--mode nowhere=v1"; do
        set +e
        # shellcheck disable=SC2086
        "$DEVPLANE" simulate -f "$tmp/dump.yaml" $bad >"$tmp/out2" 2>"$tmp/err"; rc=$?
        set -e
        [ "$rc" = 2 ] && [ ! -s "$tmp/out2" ] || fail "$bad: exit $rc"
        grep -q -- "${bad%% *} " "$tmp/err" || fail "$bad: message $(cat "$tmp/err")"
done

# 7. explain's argument forms, and "did you mean"
for form in "sweep-1 -n ml" "ml/sweep-1" "pod/sweep-1 -n ml" "pod ml/sweep-1" "pods/sweep-1 --namespace ml"; do
        # shellcheck disable=SC2086
        "$DEVPLANE" explain $form -f "$tmp/dump.yaml" -f "$tmp/work.yaml" >"$tmp/x" 2>/dev/null || fail "explain $form"
        grep -q '^Pod ml/sweep-1: Pending' "$tmp/x" || fail "explain $form: $(cat "$tmp/x")"
done
grep -q 'cannot allocate all claims (.*dra-b' "$tmp/x" || fail "explain names dra-b: $(cat "$tmp/x")"
set +e
"$DEVPLANE" explain sweep-1 -f "$tmp/dump.yaml" -f "$tmp/work.yaml" >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'did you mean ml/sweep-1' "$tmp/err" || fail "hint, other namespace: $(cat "$tmp/err")"
set +e
"$DEVPLANE" explain ml/swep-1 -f "$tmp/dump.yaml" -f "$tmp/work.yaml" >/dev/null 2>"$tmp/err"
set -e
grep -q 'did you mean ml/sweep-1' "$tmp/err" || fail "hint, spelling: $(cat "$tmp/err")"
set +e
"$DEVPLANE" explain ml/trainer -n default -f "$tmp/dump.yaml" >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q 'another namespace' "$tmp/err" || fail "-n against NS/NAME"
"$DEVPLANE" explain trainer -n ml -f "$tmp/dump.yaml" >"$tmp/x" 2>/dev/null || fail "explain a bound pod"
grep -q 'dra-b' "$tmp/x" || fail "explain bound pod: $(cat "$tmp/x")"

# 9. a Node object's extended resources are devices, one by one, in the
# device table (RESOURCE-K), and --fail-device NODE/RESOURCE-K fails one:
# allocatable drops by one and the unit is not handed out
"$DEVPLANE" simulate -f "$tmp/dump.yaml" >"$tmp/d" 2>/dev/null || fail "dump"
grep -q '^gpu-a/nvidia.com/gpu-0  *nvidia.com/gpu  *Healthy  *default/v1-user$' "$tmp/d" || fail "unit table: $(cat "$tmp/d")"
grep -q '^gpu-a/nvidia.com/gpu-1  *nvidia.com/gpu  *Healthy  *-$' "$tmp/d" || fail "unit table: $(cat "$tmp/d")"
[ "$(grep -c '^cordoned-c/nvidia.com/gpu-[0-7] ' "$tmp/d")" = 8 ] || fail "cordoned-c's 8 units: $(cat "$tmp/d")"
grep -q '^gpu-a  *Node object  *v1  *2  *2  *1  *50.0%' "$tmp/d" || fail "node row: $(cat "$tmp/d")"
head -n 1 "$tmp/d" | grep -q ': 3 nodes, 12 devices;' || fail "header counts the units: $(head -n 1 "$tmp/d")"
# its ResourceSlices' devices too, held by the pods of the claims allocated there
grep -q '^dra-b/gpu-0  *gpu  *Healthy  *ml/trainer$' "$tmp/d" || fail "slice device table: $(cat "$tmp/d")"
grep -q '^dra-b  *Node object  *v2  *2  *2  *1  *50.0%' "$tmp/d" || fail "dra-b row: $(cat "$tmp/d")"
"$DEVPLANE" simulate -f "$tmp/dump.yaml" --fail-device dra-b/gpu-1 2>/dev/null | grep -q '^dra-b/gpu-1  *gpu  *Unhealthy  *-$' ||
        fail "--fail-device dra-b/gpu-1 in the device table"
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -o json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)["asWritten"]
n = next(n for n in d["nodes"] if n["name"] == "gpu-a")
assert n["v1Allocatable"] == {"nvidia.com/gpu": "2/2"}, n
assert [u["id"] for u in n["units"]] == ["nvidia.com/gpu-0", "nvidia.com/gpu-1"], n
p = next(p for p in d["pods"] if p["name"] == "default/v1-user")
assert p["devices"] == {"v1": ["nvidia.com/gpu-0"]}, p' || fail "JSON units"
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/work.yaml" --fail-device gpu-a/nvidia.com/gpu-1 >"$tmp/d" 2>/dev/null ||
        fail "--fail-device gpu-a/nvidia.com/gpu-1"
grep -q '^gpu-a/nvidia.com/gpu-1  *nvidia.com/gpu  *Unhealthy  *-$' "$tmp/d" || fail "failed unit: $(cat "$tmp/d")"
grep -q '^default/perf-.* Running' "$tmp/d" && fail "a perf pod got the failed unit: $(cat "$tmp/d")"
[ "$(grep -c '^default/perf-.* Pending .*Insufficient nvidia.com/gpu' "$tmp/d")" = 2 ] ||
        fail "both perf pods Pending (gpu-a: 1 allocatable, held): $(cat "$tmp/d")"
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -o json --fail-device gpu-a/nvidia.com/gpu-0 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)["asWritten"]
n = next(n for n in d["nodes"] if n["name"] == "gpu-a")
assert n["v1Allocatable"] == {"nvidia.com/gpu": "1/2"}, n
assert (n["healthy"], n["units"][0]["health"]) == (1, "Unhealthy"), n' || fail "JSON failed unit"
for bad in gpu-a/nvidia.com/gpu-2 gpu-a/nvidia.com/gpu-01 gpu-a/nvidia.com/tpu-0; do
        set +e
        "$DEVPLANE" simulate -f "$tmp/dump.yaml" --fail-device "$bad" >/dev/null 2>"$tmp/err"; rc=$?
        set -e
        [ "$rc" = 2 ] && grep -q "node gpu-a has no device" "$tmp/err" || fail "--fail-device $bad: exit $rc: $(cat "$tmp/err")"
done

# 8. a dump is no Fleet: the header names what was read; JSON/YAML say "input"
head1() { head -n 1 "$1" | sed 's/:.*//'; }
(cd "$tmp" && "$DEVPLANE" simulate -f dump.yaml >"$tmp/h" 2>/dev/null) || fail "simulate -f dump.yaml"
[ "$(head1 "$tmp/h")" = "Cluster dump.yaml" ] || fail "header of one file: $(head -n 1 "$tmp/h")"
"$DEVPLANE" simulate -f "$tmp/dump.yaml" -f "$tmp/work.yaml" >"$tmp/h" 2>/dev/null || fail "two files"
[ "$(head1 "$tmp/h")" = "Cluster (2 files)" ] || fail "header of two files: $(head -n 1 "$tmp/h")"
mkdir "$tmp/dir" && cp "$tmp/dump.yaml" "$tmp/work.yaml" "$tmp/dir/"
"$DEVPLANE" simulate -f - <"$tmp/dump.yaml" >"$tmp/h" 2>/dev/null || fail "-f -"
[ "$(head1 "$tmp/h")" = "Cluster <stdin>" ] || fail "header of standard input: $(head -n 1 "$tmp/h")"
"$DEVPLANE" simulate -f "$tmp/dir" >"$tmp/h" 2>/dev/null || fail "a directory"
[ "$(head1 "$tmp/h")" = "Cluster (2 files)" ] || fail "header of a directory of two: $(head -n 1 "$tmp/h")"
grep -q 'Fleet' "$tmp/h" && fail "a dump called a Fleet: $(cat "$tmp/h")"
(cd "$tmp" && "$DEVPLANE" explain ml/sweep-1 -f dump.yaml -f work.yaml >"$tmp/x" 2>/dev/null) || fail "explain"
grep -Eq '^Pod ml/sweep-1: Pending at t=[0-9]+s \(cluster \(2 files\)\)$' "$tmp/x" || fail "explain header: $(head -n 1 "$tmp/x")"
(cd "$tmp" && "$DEVPLANE" simulate -f dump.yaml -o json >"$tmp/j" 2>/dev/null) || fail "-o json"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert (d["input"], d["cluster"]) == ("cluster", "dump.yaml"), d' \
        "$tmp/j" || fail "JSON input/cluster"
(cd "$tmp" && "$DEVPLANE" simulate -f dump.yaml -o yaml >"$tmp/y" 2>/dev/null) || fail "-o yaml"
grep -q '^input: cluster$' "$tmp/y" && grep -q '^cluster: dump.yaml$' "$tmp/y" || fail "YAML input: $(head -n 4 "$tmp/y")"
"$DEVPLANE" simulate -f "$tmp/fleet.yaml" -f "$tmp/dump.yaml" -o json >"$tmp/j" 2>/dev/null || fail "fleet + dump"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["input"] == "fleet" and "cluster" not in d, d' \
        "$tmp/j" || fail "JSON input fleet"
"$DEVPLANE" simulate -o json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d["input"] == "fleet", d' ||
        fail "built-in: input fleet"
echo ok
