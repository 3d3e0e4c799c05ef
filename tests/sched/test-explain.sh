#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# `devplane explain` of a Pending pod (issues 12 and 13): the failing claim
# and request named (not the first claim's request that the search was on
# when a later request proved impossible), reasons grouped with node counts
# as kube-scheduler writes them, per-node detail only with --details; and
# simulate naming every claim result by driver/pool/device.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Pod p: claim p-gpus (request gpu: 2 GPUs, fits) and claim chan (request
# channel: a class no device passes). Six V2 nodes, two V1 nodes.
cat >"$tmp/chan.yaml" <<'YAML'
apiVersion: devplane.io/v1alpha1
kind: Fleet
metadata: {name: chan}
spec:
  nodeGroups:
  - {name: n, profile: a100-80gb-8, count: 6, model: v2}
  - {name: old, profile: a100-80gb-8, count: 2, model: v1}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'gpu'"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: channel.nvidia.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'compute-domain.nvidia.com'"}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: gpus}
spec:
  spec:
    devices:
      requests:
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com, count: 2}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: chan}
spec:
  devices:
    requests:
    - name: channel
      exactly: {deviceClassName: channel.nvidia.com, count: 1}
---
apiVersion: v1
kind: Pod
metadata: {name: p}
spec:
  containers:
  - name: c
    image: x
    resources: {claims: [{name: gpus}, {name: chan}]}
  resourceClaims:
  - {name: gpus, resourceClaimTemplateName: gpus}
  - {name: chan, resourceClaimName: chan}
---
apiVersion: v1
kind: Pod
metadata: {name: q}
spec:
  containers:
  - name: c
    image: x
    resources: {claims: [{name: gpus}]}
  resourceClaims:
  - {name: gpus, resourceClaimTemplateName: gpus}
YAML
"$DEVPLANE" explain p -f "$tmp/chan.yaml" >"$tmp/x" || fail "explain p"
grep -qx "0/8 nodes are available: 8 cannot allocate all claims." "$tmp/x" || fail "grouped message: $(cat "$tmp/x")"
grep -q "claim default/chan, request channel: no device passes class channel.nvidia.com's selectors" "$tmp/x" ||
        fail "the failing claim and request are chan/channel: $(cat "$tmp/x")"
grep -q "p-gpus, request gpu: request channel" "$tmp/x" && fail "blames claim p-gpus: $(cat "$tmp/x")"
# the V1 nodes have no DRA devices at all: the first request says so
grep -q "^      claim default/p-gpus, request gpu: no devices on this node$" "$tmp/x" || fail "V1 nodes: $(cat "$tmp/x")"
grep -q "^  8: cannot allocate all claims (n-0, n-1, n-2, ...)$" "$tmp/x" || fail "group line: $(cat "$tmp/x")"
grep -q "^    on 6 of them:$" "$tmp/x" || fail "allocator reasons grouped: $(cat "$tmp/x")"
grep -q "^    on 2 of them:$" "$tmp/x" || fail "allocator reasons grouped: $(cat "$tmp/x")"
grep -qF "explain default/p -f $tmp/chan.yaml --details" "$tmp/x" || fail "hint for --details (with the -f given): $(cat "$tmp/x")"
grep -q "^  n-4: " "$tmp/x" && fail "per-node lines without --details: $(cat "$tmp/x")"
# --details (and -v): one line per node, each with the allocator's reason
for flag in --details -v; do
        "$DEVPLANE" explain p -f "$tmp/chan.yaml" $flag >"$tmp/d" || fail "explain $flag"
        [ "$(grep -c '^  [a-z]*-[0-9]: cannot allocate all claims$' "$tmp/d")" = 8 ] || fail "$flag: $(cat "$tmp/d")"
        [ "$(grep -c '^      claim default/chan, request channel: ' "$tmp/d")" = 7 ] || fail "$flag detail: $(cat "$tmp/d")"
done
"$DEVPLANE" explain q -f "$tmp/chan.yaml" >"$tmp/q" || fail "explain q"
grep -q "^Pod default/q: Running" "$tmp/q" || fail "q runs: $(cat "$tmp/q")"

# Reasons of different kinds: counts per reason, resources short first
cat >"$tmp/mixed.yaml" <<'YAML'
apiVersion: devplane.io/v1alpha1
kind: Fleet
metadata: {name: mixed}
spec:
  nodeGroups:
  - {name: gpu, profile: a100-80gb-8, count: 3, model: v1}
  - name: tainted
    profile: a100-80gb-8
    count: 2
    model: v1
    taints: [{key: dedicated, value: infra, effect: NoSchedule}]
---
apiVersion: v1
kind: Pod
metadata: {name: big}
spec:
  containers:
  - {name: c, image: x, resources: {limits: {nvidia.com/gpu: 9}}}
YAML
"$DEVPLANE" explain big -f "$tmp/mixed.yaml" >"$tmp/m" || fail "explain big"
grep -qx "0/5 nodes are available: 2 node(s) had untolerated taint(s), 3 Insufficient nvidia.com/gpu." \
        "$tmp/m" || fail "mixed message: $(cat "$tmp/m")"
python3 - "$tmp/m" <<'PY' || fail "order and detail: $(cat "$tmp/m")"
import sys
t = open(sys.argv[1]).read().splitlines()
i = t.index("  3: Insufficient nvidia.com/gpu (gpu-0, gpu-1, gpu-2)")
assert t[i + 1].strip() == "nvidia.com/gpu: capacity 8, allocatable 8, requested by pods on the node 0", t[i + 1]
assert t.index("  2: node(s) had untolerated taint {dedicated: infra} (tainted-0, tainted-1)") > i
PY

# simulate: every claim result names driver, pool and device (JSON, YAML, table)
"$DEVPLANE" simulate -f "$tmp/chan.yaml" -o json >"$tmp/s.json" || fail "simulate json"
python3 - "$tmp/s.json" <<'PY' || fail "claim results in JSON"
import json, sys
d = json.load(open(sys.argv[1]))
q = [p for p in d["asWritten"]["pods"] if p["name"] == "default/q"][0]
res = [r for c in q["claims"] for r in c["results"]]
assert len(res) == 2, res
for r in res:
    assert r["driver"] == "gpu.nvidia.com" and r["pool"] == q["node"] and r["device"].startswith("gpu-"), r
assert list(res[0]) == ["request", "driver", "pool", "device"], list(res[0])
PY
"$DEVPLANE" simulate -f "$tmp/chan.yaml" -o yaml >"$tmp/s.yaml" || fail "simulate yaml"
grep -q "^        driver: gpu.nvidia.com$" "$tmp/s.yaml" || fail "claim results in YAML"
"$DEVPLANE" simulate -f "$tmp/chan.yaml" >"$tmp/s.txt" || fail "simulate table"
grep -q "^POD  *CLAIM  *REQUEST  *DRIVER/POOL/DEVICE$" "$tmp/s.txt" || fail "claims table: $(cat "$tmp/s.txt")"
grep -q "^default/q  *q-gpus  *gpu  *gpu.nvidia.com/n-0/gpu-0$" "$tmp/s.txt" || fail "claims table row: $(cat "$tmp/s.txt")"
echo PASS
