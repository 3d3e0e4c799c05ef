#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Issue 23: YAML merge keys ("<<: *anchor"), which kubectl's go-yaml takes, in a
# manifest as people write one by hand: a kwok node pool whose nodes merge the
# pool's labels and allocatable (one node overriding its GPU count), and a
# Deployment whose sidecar merges the worker container and its limits (giving
# back the GPU) and whose nodeSelector merges two label maps. devplane simulates
# it exactly as the same objects written out flat (PyYAML resolves the merges:
# own keys win, an earlier map in a sequence wins). Before, "<<" was a key like
# any other and the manifest was refused.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cat >"$tmp/merged.yaml" <<'YAML'
apiVersion: v1
kind: List
items:
- &node
  apiVersion: v1
  kind: Node
  metadata:
    name: kwok-a100-0
    labels: &pool
      type: kwok
      nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB
      nvidia.com/gpu.count: "8"
      node.kubernetes.io/instance-type: p4de.24xlarge
  spec:
    taints: [{key: kwok.x-k8s.io/node, value: fake, effect: NoSchedule}]
  status:
    allocatable: &alloc {cpu: "96", memory: 1152Gi, pods: "110", nvidia.com/gpu: "8"}
    capacity: *alloc
- <<: *node
  metadata:
    name: kwok-a100-1
    labels: {<<: *pool, nvidia.com/gpu.count: "4"}
  status:
    allocatable: {<<: *alloc, nvidia.com/gpu: "4"}
    capacity: {<<: *alloc, nvidia.com/gpu: "4"}
- apiVersion: apps/v1
  kind: Deployment
  metadata: {name: train, namespace: ml}
  spec:
    replicas: 5
    selector:
      matchLabels: &app {app: train}
    template:
      metadata:
        labels: {<<: *app, tier: gpu}
      spec:
        nodeSelector:
          <<: [{type: kwok}, {type: real, nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB}]
        tolerations: [{key: kwok.x-k8s.io/node, operator: Exists}]
        containers:
        - &worker
          name: worker
          image: registry.example.com/train:1.4
          resources:
            limits: &limits {nvidia.com/gpu: "2", cpu: "8", memory: 64Gi}
            requests: *limits
        - <<: *worker
          name: sidecar
          resources:
            limits: &side {<<: *limits, nvidia.com/gpu: "0", cpu: "1"}
            requests: *side
YAML
python3 - "$tmp/merged.yaml" "$tmp/flat.yaml" <<'PY'
import sys, yaml
doc = yaml.safe_load(open(sys.argv[1]))
flat = yaml.safe_dump(doc, sort_keys=False)
assert "<<" not in flat
open(sys.argv[2], "w").write(flat)
PY
# the same file name, so the reports can be compared whole
mkdir "$tmp/m" "$tmp/f"
cp "$tmp/merged.yaml" "$tmp/m/dump.yaml"
cp "$tmp/flat.yaml" "$tmp/f/dump.yaml"
(cd "$tmp/m" && "$DEVPLANE" simulate -f dump.yaml -o json >../merged.json 2>../err) || fail "merged: $(cat "$tmp/err")"
(cd "$tmp/f" && "$DEVPLANE" simulate -f dump.yaml -o json >../flat.json) || fail "flat"
python3 - "$tmp/merged.json" "$tmp/flat.json" <<'PY' || fail "merge keys read wrongly"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
run = a["asWritten"]
nodes = {n["name"]: n for n in run["nodes"]}
assert sorted(nodes) == ["kwok-a100-0", "kwok-a100-1"], sorted(nodes)
assert (nodes["kwok-a100-0"]["devices"], nodes["kwok-a100-1"]["devices"]) == (8, 4), nodes
# 2 GPUs a pod (the sidecar's 0 overrides the worker's 2): 4 + 2 pods fit 12 GPUs; 5 run
pods = run["pods"]
assert len(pods) == 5 and all(p["state"] == "Running" for p in pods), [(p["name"], p["state"]) for p in pods]
assert sum(len(p["devices"]["v1"]) for p in pods) == 10, [p["devices"] for p in pods]
assert a == b, "merged and flat manifests simulate differently"
print("ok")
PY
