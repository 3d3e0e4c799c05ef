#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Other projects' PodGroups read as minMember gangs (issue 22 item 6):
# KAI-Scheduler's scheduling.run.ai/v2alpha2 PodGroup with its own example
# manifests (read from DP_SHARED_DIR at test time, never copied), Volcano's
# scheduling.volcano.sh/v1beta1 PodGroup (pods annotated
# scheduling.k8s.io/group-name), each API's own join rule, and an unknown
# version of the kind skipped with a warning. Their pods name another
# scheduler: reported as such, scheduled (as gangs) with --all-schedulers.
set -euo pipefail
: "${DEVPLANE:?}" "${DP_SOURCE_DIR:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# node CPU: room for that many 100m pods
node() {
        cat <<EOF
apiVersion: v1
kind: Node
metadata: {name: $1, labels: {kubernetes.io/hostname: $1}}
status: {allocatable: {cpu: "$2", memory: 64Gi, pods: "110", nvidia.com/gpu: "8"}}
---
EOF
}
# states FILE: "name=state[@node]" per pod, sorted
states() {
        python3 -c '
import json, sys
for p in sorted(json.load(open(sys.argv[1]))["asWritten"]["pods"], key=lambda p: p["name"]):
    print(p["name"] + "=" + p["state"] + ("@" + p["node"] if p.get("node") else ""))' "$1"
}
reason() {
        python3 -c '
import json, sys
print({p["name"]: p.get("reason", "") for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}[sys.argv[2]])' "$1" "$2"
}

# ---- Volcano: an inline gang of 3 on a node with room for 2 ----
volcano() { # volcano API_VERSION
        node n1 250m
        cat <<EOF
apiVersion: $1
kind: PodGroup
metadata: {name: train, namespace: default}
spec: {minMember: 3, queue: default, minTaskMember: {worker: 3}}
status: {phase: Pending, conditions: [{type: Unschedulable, status: "True"}]}
EOF
        for i in 0 1 2; do
                cat <<EOF
---
apiVersion: v1
kind: Pod
metadata: {name: train-worker-$i, annotations: {scheduling.k8s.io/group-name: train}}
spec:
  schedulerName: volcano
  containers: [{name: c, image: x, resources: {limits: {cpu: 100m, memory: 64Mi}}}]
EOF
        done
}
volcano scheduling.volcano.sh/v1beta1 >"$tmp/volcano.yaml"
"$DEVPLANE" simulate -f "$tmp/volcano.yaml" --all-schedulers -o json >"$tmp/v.json" || fail "volcano: exit $?"
got=$(states "$tmp/v.json" | tr '\n' ' ')
[ "$got" = "default/train-worker-0=Pending default/train-worker-1=Pending default/train-worker-2=Pending " ] ||
        fail "volcano gang of 3 on room for 2: $got"
r=$(reason "$tmp/v.json" default/train-worker-0)
case "$r" in *"pod group train: only 2 of minMember 3 pods can be placed; none bound"*) ;;
*) fail "volcano reason: $r" ;; esac
# without --all-schedulers: Volcano's pods, reported as such
"$DEVPLANE" simulate -f "$tmp/volcano.yaml" -o json >"$tmp/v0.json"
r=$(reason "$tmp/v0.json" default/train-worker-0)
case "$r" in *"spec.schedulerName volcano"*) ;; *) fail "volcano pods without --all-schedulers: $r" ;; esac
# room for 3: the gang runs
sed 's/cpu: "250m"/cpu: "300m"/' "$tmp/volcano.yaml" >"$tmp/volcano3.yaml"
"$DEVPLANE" simulate -f "$tmp/volcano3.yaml" --all-schedulers -o json >"$tmp/v3.json"
[ "$(states "$tmp/v3.json" | grep -c '=Running@n1')" = 3 ] || fail "volcano gang with room: $(states "$tmp/v3.json")"
# an unknown version of the kind: skipped with a warning, the pods run one by one
volcano scheduling.volcano.sh/v1alpha9 >"$tmp/volcano-next.yaml"
"$DEVPLANE" simulate -f "$tmp/volcano-next.yaml" --all-schedulers -o json >"$tmp/vn.json" 2>"$tmp/vn.err" ||
        fail "unknown PodGroup version: exit $?"
grep -q "PodGroup" "$tmp/vn.err" && grep -q "scheduling.volcano.sh/v1alpha9" "$tmp/vn.err" ||
        fail "no warning for the unknown version: $(cat "$tmp/vn.err")"
[ "$(states "$tmp/vn.json" | grep -c '=Running@n1')" = 2 ] || fail "skipped PodGroup: $(states "$tmp/vn.json")"
# a pod joins by its group's API's rule only: Volcano's annotation does not join a KAI PodGroup
sed 's|scheduling.volcano.sh/v1beta1|scheduling.run.ai/v2alpha2|; s/minTaskMember: {worker: 3}/minSubGroup: 1/' \
        "$tmp/volcano.yaml" >"$tmp/mismatch.yaml"
"$DEVPLANE" simulate -f "$tmp/mismatch.yaml" --all-schedulers -o json >"$tmp/mm.json"
[ "$(states "$tmp/mm.json" | grep -c '=Running@n1')" = 2 ] || fail "join rule: $(states "$tmp/mm.json")"
echo "PASS volcano"

# ---- KAI-Scheduler's own examples ----
kai="${DP_SHARED_DIR:-}/conformance/kai-scheduler/examples"
if [ ! -d "$kai" ]; then
        echo "SKIP: no $kai"
        exit 0
fi
# staleness-grace-period: PodGroup stale-gang (minMember 2), two pods annotated pod-group-name
node n1 150m >"$tmp/one.yaml"
"$DEVPLANE" simulate -f "$tmp/one.yaml" -f "$kai/staleness-grace-period/00-with-spec.yaml" --all-schedulers \
        -o json >"$tmp/k1.json" || fail "kai example: exit $?"
got=$(states "$tmp/k1.json" | tr '\n' ' ')
[ "$got" = "stale-grace-demo/stale-gang-pod-0=Pending stale-grace-demo/stale-gang-pod-1=Pending " ] ||
        fail "kai gang of 2 on room for 1: $got"
r=$(reason "$tmp/k1.json" stale-grace-demo/stale-gang-pod-0)
case "$r" in *"pod group stale-gang: only 1 of minMember 2 pods can be placed"*) ;; *) fail "kai reason: $r" ;; esac
node n1 200m >"$tmp/two.yaml"
"$DEVPLANE" simulate -f "$tmp/two.yaml" -f "$kai/staleness-grace-period/00-with-spec.yaml" --all-schedulers \
        -o json >"$tmp/k2.json"
[ "$(states "$tmp/k2.json" | grep -c '=Running@n1')" = 2 ] || fail "kai gang with room: $(states "$tmp/k2.json")"
"$DEVPLANE" simulate -f "$tmp/two.yaml" -f "$kai/staleness-grace-period/00-with-spec.yaml" -o json >"$tmp/k0.json"
r=$(reason "$tmp/k0.json" stale-grace-demo/stale-gang-pod-0)
case "$r" in *"spec.schedulerName kai-scheduler"*) ;; *) fail "kai pods without --all-schedulers: $r" ;; esac
# every KAI example holding a PodGroup decodes (sub-groups, topology, queues accepted, not modelled)
node n1 64 >"$tmp/big.yaml"
for f in $(grep -rl "kind: PodGroup" "$kai" | sort); do
        "$DEVPLANE" simulate -f "$tmp/big.yaml" -f "$f" --all-schedulers -o json >"$tmp/each.json" 2>"$tmp/each.err" ||
                fail "${f#"$kai"/}: exit $?: $(cat "$tmp/each.err")"
done
# the batch example: an external PodGroup (minMember 2) joined by a Job's two pods
"$DEVPLANE" simulate -f "$tmp/two.yaml" -f "$kai/batch/external-podgroup-job.yaml" --all-schedulers \
        -o json >"$tmp/kb.json"
[ "$(states "$tmp/kb.json" | grep -c '=Running@n1')" = 2 ] || fail "kai batch: $(states "$tmp/kb.json")"
echo "PASS kai-scheduler"
