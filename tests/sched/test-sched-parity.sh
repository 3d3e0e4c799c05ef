#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kube-scheduler parity through the binary (issue 22): allocatable pods and
# host ports filter; every insufficient resource is counted; scheduling
# gates hold a pod; pods of another scheduler are reported (and scheduled
# with --all-schedulers); PriorityClasses and creationTimestamp order the
# queue; a Node with only status.capacity has it allocatable; another API
# group's Job or an unread PodGroup version is skipped, not decoded (KAI's
# PodGroup is read, test-foreign-gangs.sh); volumes are named in a
# warning.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$tmp/c.yaml" <<'YAML'
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {capacity: {cpu: "8", memory: 8Gi, pods: "3", example.com/gpu: "1"}}}
- {apiVersion: v1, kind: Node, metadata: {name: n2}, status: {capacity: {cpu: "8", memory: 8Gi, example.com/gpu: "1"}}}
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: prod-critical}, value: 100000}
- {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: batch}, value: 10, globalDefault: true}
- apiVersion: batch.volcano.sh/v1alpha1
  kind: Job
  metadata: {name: vj}
  spec: {minAvailable: 1, schedulerName: volcano, tasks: [{replicas: 1, name: t}]}
- {apiVersion: scheduling.run.ai/v2alpha2, kind: PodGroup, metadata: {name: kai}, spec: {minMember: 2}}
- {apiVersion: scheduling.k8s.io/v1alpha3, kind: PodGroup, metadata: {name: next}, spec: {podGroupTemplateRef: x}}
# the batch pod comes first in the file; the prod-critical pod wins the only GPUs
- apiVersion: v1
  kind: Pod
  metadata: {name: batch-gpu, creationTimestamp: "2026-01-01T00:00:00Z"}
  spec: {containers: [{name: c, resources: {limits: {example.com/gpu: 1}}}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: prod-gpu-a, creationTimestamp: "2026-01-01T00:05:00Z"}
  spec: {priorityClassName: prod-critical, containers: [{name: c, resources: {limits: {example.com/gpu: 1}}}]}
- apiVersion: v1
  kind: Pod
  metadata: {name: prod-gpu-b, creationTimestamp: "2026-01-01T00:04:00Z"}
  spec: {priorityClassName: prod-critical, containers: [{name: c, resources: {limits: {example.com/gpu: 1}}}]}
# two pods want host port 8080: one per node
- {apiVersion: v1, kind: Pod, metadata: {name: web-0}, spec: {containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}]}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: web-1}, spec: {containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}]}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: web-2}, spec: {containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}]}]}}
- apiVersion: v1
  kind: Pod
  metadata: {name: gated}
  spec: {schedulingGates: [{name: kueue.x-k8s.io/admission}], containers: [{name: c}]}
- {apiVersion: v1, kind: Pod, metadata: {name: kai}, spec: {schedulerName: kai-scheduler, containers: [{name: c}]}}
- apiVersion: v1
  kind: Pod
  metadata: {name: pvc}
  spec: {volumes: [{name: d, persistentVolumeClaim: {claimName: data}}], containers: [{name: c}]}
YAML
"$DEVPLANE" simulate -f "$tmp/c.yaml" -o json >"$tmp/o.json" 2>"$tmp/err" || fail "simulate: $(cat "$tmp/err")"
python3 - "$tmp/o.json" <<'PY' || fail "placements: $(cat "$tmp/o.json")"
import json, sys
pods = {p["name"]: p for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}
def state(n): return pods["default/" + n]
# priority first, then creationTimestamp: b (00:04) before a (00:05), both before batch
assert state("prod-gpu-b")["node"] == "n1", state("prod-gpu-b")
assert state("prod-gpu-a")["node"] == "n2", state("prod-gpu-a")
assert state("batch-gpu")["state"] == "Pending", state("batch-gpu")
# batch is the globalDefault class: the pods without a class (no creationTimestamp: first)
# went before it and filled n1 (pods: 3); both reasons count for n1, as kube-scheduler does
assert state("batch-gpu")["reason"] == "0/2 nodes are available: 1 Too many pods, 2 Insufficient example.com/gpu.", state("batch-gpu")
web = sorted(state(n).get("node", "-") for n in ("web-0", "web-1", "web-2"))
assert web == ["-", "n1", "n2"], web
reasons = [state(n).get("reason") for n in ("web-0", "web-1", "web-2") if state(n)["state"] == "Pending"]
# NodePorts runs before NodeResourcesFit: the first filter that fails is the node's reason
assert reasons == ["0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports."], reasons
assert state("gated")["reason"] == "Scheduling is blocked due to non-empty scheduling gates", state("gated")
assert state("kai")["reason"] == "not scheduled by default-scheduler: spec.schedulerName kai-scheduler", state("kai")
PY
grep -q "warning: skipped 1 Job object (batch.volcano.sh/v1alpha1)" "$tmp/err" || fail "volcano Job: $(cat "$tmp/err")"
# KAI's PodGroup is read (a gang, docs/scheduler.md); a version devplane does not read is skipped
! grep -q "scheduling.run.ai/v2alpha2" "$tmp/err" || fail "KAI PodGroup: $(cat "$tmp/err")"
grep -q "warning: skipped 1 PodGroup object (scheduling.k8s.io/v1alpha3)" "$tmp/err" || fail "v1alpha3 PodGroup: $(cat "$tmp/err")"
grep -q "warning: .*node n2 has no pods in status.allocatable: 110 assumed" "$tmp/err" || fail "110 pods: $(cat "$tmp/err")"
grep -q "warning: .*pod default/pvc: spec.volumes\[0\].persistentVolumeClaim: not modelled (volumes" "$tmp/err" ||
        fail "volume warning: $(cat "$tmp/err")"

# PodLevelResources: the pod's own requests (or limits) count, not its containers'
cat >"$tmp/plr.yaml" <<'YAML'
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {capacity: {cpu: "4", memory: 8Gi, pods: "10"}}}
- {apiVersion: v1, kind: Pod, metadata: {name: a}, spec: {resources: {requests: {cpu: "6"}}, containers: [{name: c}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {resources: {limits: {cpu: "3"}}, containers: [{name: c}]}}
- apiVersion: v1
  kind: Pod
  metadata: {name: c}
  spec: {resources: {requests: {cpu: "2"}}, containers: [{name: c, resources: {requests: {cpu: "1"}}}]}
- {apiVersion: v1, kind: Pod, metadata: {name: d}, spec: {containers: [{name: c, resources: {requests: {ephemeral-storage: 1Gi}}}]}}
YAML
"$DEVPLANE" simulate -f "$tmp/plr.yaml" -o json >"$tmp/plr.json" 2>/dev/null || fail "simulate pod-level"
python3 - "$tmp/plr.json" <<'PY' || fail "pod-level resources: $(cat "$tmp/plr.json")"
import json, sys
pods = {p["name"]: p for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}
assert pods["default/a"]["reason"] == "0/1 nodes are available: 1 Insufficient cpu.", pods["default/a"]
assert pods["default/b"]["node"] == "n1", pods["default/b"]
assert pods["default/c"]["reason"] == "0/1 nodes are available: 1 Insufficient cpu.", pods["default/c"]
# the node reports no ephemeral-storage: none to give
assert pods["default/d"]["reason"] == "0/1 nodes are available: 1 Insufficient ephemeral-storage.", pods["default/d"]
PY

# NodePorts counts sidecars' host ports, not other init containers'
cat >"$tmp/side.yaml" <<'YAML'
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {capacity: {cpu: "4", memory: 8Gi, pods: "10"}}}
- apiVersion: v1
  kind: Pod
  metadata: {name: a}
  spec:
    initContainers: [{name: s, restartPolicy: Always, ports: [{containerPort: 80, hostPort: 8080}]}]
    containers: [{name: c}]
- {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {containers: [{name: c, ports: [{containerPort: 80, hostPort: 8080}]}]}}
- apiVersion: v1
  kind: Pod
  metadata: {name: c}
  spec: {initContainers: [{name: s, ports: [{containerPort: 80, hostPort: 9090}]}], containers: [{name: c}]}
- {apiVersion: v1, kind: Pod, metadata: {name: d}, spec: {containers: [{name: c, ports: [{containerPort: 80, hostPort: 9090}]}]}}
YAML
"$DEVPLANE" simulate -f "$tmp/side.yaml" -o json >"$tmp/side.json" 2>/dev/null || fail "simulate sidecar ports"
python3 - "$tmp/side.json" <<'PY' || fail "sidecar ports: $(cat "$tmp/side.json")"
import json, sys
pods = {p["name"]: p for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}
assert pods["default/b"]["state"] == "Pending", pods["default/b"]
assert pods["default/d"]["node"] == "n1", pods["default/d"]
PY

# many host ports on one node, then a pod deleted: its port is free again
python3 - >"$tmp/many.yaml" <<'PY'
import json
items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
          "status": {"capacity": {"cpu": "8", "memory": "8Gi", "pods": "110"}}}]
for i in range(20):
    items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p%d" % i},
                  "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 9000 + i}]}]}})
items.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "dup"},
              "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 9000}]}]}})
print(json.dumps({"apiVersion": "v1", "kind": "List", "items": items}))
print("---")
print(json.dumps({"apiVersion": "devplane.io/v1alpha1", "kind": "Timeline", "metadata": {"name": "t"},
                  "spec": {"events": [{"at": "10s", "delete": ["p0"]}]}}))
PY
"$DEVPLANE" simulate -f "$tmp/many.yaml" >"$tmp/many.out" 2>&1 || fail "many ports: $(cat "$tmp/many.out")"
grep -q "^default/dup  *Running  *n1" "$tmp/many.out" || fail "the freed port: $(cat "$tmp/many.out")"

# a sidecar's extended resources add to the containers' (an init container's do not)
cat >"$tmp/sidegpu.yaml" <<'YAML'
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1}, status: {capacity: {cpu: "4", memory: 8Gi, pods: "10", example.com/gpu: "3"}}}
- apiVersion: v1
  kind: Pod
  metadata: {name: a}
  spec:
    initContainers:
    - {name: i, resources: {limits: {example.com/gpu: 1}}}
    - {name: s, restartPolicy: Always, resources: {limits: {example.com/gpu: 1}}}
    containers: [{name: c, resources: {limits: {example.com/gpu: 1}}}]
- {apiVersion: v1, kind: Pod, metadata: {name: b}, spec: {containers: [{name: c, resources: {limits: {example.com/gpu: 2}}}]}}
YAML
"$DEVPLANE" simulate -f "$tmp/sidegpu.yaml" -o json >"$tmp/sidegpu.json" 2>/dev/null || fail "simulate sidecar gpu"
python3 - "$tmp/sidegpu.json" <<'PY' || fail "sidecar gpu: $(cat "$tmp/sidegpu.json")"
import json, sys
pods = {p["name"]: p for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}
assert pods["default/a"]["node"] == "n1", pods["default/a"]
assert pods["default/b"]["reason"] == "0/1 nodes are available: 1 Insufficient example.com/gpu.", pods["default/b"]
PY

# explain: a gated pod is decided before any node is looked at
"$DEVPLANE" explain gated -f "$tmp/c.yaml" >"$tmp/x" 2>/dev/null || fail "explain gated"
grep -q "^Scheduling is blocked due to non-empty scheduling gates" "$tmp/x" || fail "explain gated: $(cat "$tmp/x")"
grep -q "n1" "$tmp/x" && fail "explain gated names a node: $(cat "$tmp/x")"

# --all-schedulers: the KAI pod is scheduled as a default pod
"$DEVPLANE" simulate -f "$tmp/c.yaml" -o json --all-schedulers >"$tmp/a.json" 2>/dev/null || fail "--all-schedulers"
python3 - "$tmp/a.json" <<'PY' || fail "--all-schedulers: $(cat "$tmp/a.json")"
import json, sys
pods = {p["name"]: p for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}
assert pods["default/kai"]["state"] == "Running", pods["default/kai"]
PY
# --scoring: binpack|spread|none, anything else is bad input
"$DEVPLANE" simulate -f "$tmp/c.yaml" --scoring none >/dev/null 2>&1 || fail "--scoring none"
set +e
"$DEVPLANE" simulate -f "$tmp/c.yaml" --scoring random >/dev/null 2>"$tmp/e"
rc=$?
set -e
[ "$rc" = 2 ] && grep -q "must be default, binpack, spread or none" "$tmp/e" || fail "--scoring random: $rc $(cat "$tmp/e")"
echo OK
