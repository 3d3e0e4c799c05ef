#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# percentageOfNodesToScore from --scheduler-config (kube-scheduler's
# numFeasibleNodesToFind): on 200 nodes at 10 % the filter stops after 100
# feasible nodes (the floor), starting where the last search stopped
# (nextStartNodeIndex); unset, every feasible node is scored.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
python3 - "$tmp/c.yaml" <<'PY'
import sys
out = []
for i in range(200):  # node-150 has twice the cpu: LeastAllocated's best when it is looked at
    cpu = "16" if i == 150 else "8"
    out.append(f"""apiVersion: v1
kind: Node
metadata: {{name: node-{i:03d}, labels: {{kubernetes.io/hostname: node-{i:03d}}}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 32Gi, pods: "110"}}}}""")
for name, ts in (("p1", "2026-01-01T00:00:00Z"), ("p2", "2026-01-01T00:00:01Z")):
    out.append(f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default, creationTimestamp: "{ts}"}}
spec: {{containers: [{{name: c, image: x, resources: {{requests: {{cpu: "1", memory: 1Gi}}}}}}]}}""")
open(sys.argv[1], "w").write("\n---\n".join(out) + "\n")
PY
cfg() { printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n%s\n' "$1" >"$tmp/cfg.yaml"; }
node_of() { python3 -c 'import json,sys; print(" ".join(p["name"] + "=" + p["node"] for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]))' "$1"; }

cfg "percentageOfNodesToScore: 10"
"$DEVPLANE" simulate --scheduler-config "$tmp/cfg.yaml" -f "$tmp/c.yaml" -o json >"$tmp/j" 2>"$tmp/err"
[ "$(node_of "$tmp/j")" = "default/p1=node-000 default/p2=node-150" ] || fail "10 %: $(node_of "$tmp/j")"
grep -q percentageOfNodesToScore "$tmp/err" && fail "warned: $(cat "$tmp/err")"

# the profile's own value wins over the configuration's
cfg "percentageOfNodesToScore: 10
profiles:
- schedulerName: default-scheduler
  percentageOfNodesToScore: 100"
"$DEVPLANE" simulate --scheduler-config "$tmp/cfg.yaml" -f "$tmp/c.yaml" -o json >"$tmp/j" 2>/dev/null
[ "$(node_of "$tmp/j")" = "default/p1=node-150 default/p2=node-000" ] || fail "profile 100 %: $(node_of "$tmp/j")"

# unset: every node
"$DEVPLANE" simulate -f "$tmp/c.yaml" -o json >"$tmp/j" 2>/dev/null
[ "$(node_of "$tmp/j")" = "default/p1=node-150 default/p2=node-000" ] || fail "unset: $(node_of "$tmp/j")"

cfg "percentageOfNodesToScore: 101"
set +e
"$DEVPLANE" simulate --scheduler-config "$tmp/cfg.yaml" -f "$tmp/c.yaml" >/dev/null 2>"$tmp/err"; rc=$?
set -e
[ "$rc" = 2 ] && grep -q "percentageOfNodesToScore.*0-100" "$tmp/err" || fail "101: exit $rc: $(cat "$tmp/err")"
echo "ok - percentageOfNodesToScore"
