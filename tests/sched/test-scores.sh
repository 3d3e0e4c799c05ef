#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kube-scheduler's default profile as the default scoring of Node-object
# clusters (docs/scheduler.md "Scores"), --scoring and --scheduler-config:
# two equal nodes and two 1-CPU pods spread (LeastAllocated), binpack and
# MostAllocated stack them; a preferred node affinity, a PreferNoSchedule
# taint, a preferred pod anti-affinity and an image the node has each move a
# pod; a bad
# configuration is one error (exit 2, nothing on stdout), an unknown field
# one warning naming it.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

node() { # name [taint-effect] [label]
        local taints="" labels=""
        [ -z "${2:-}" ] || taints="taints: [{key: spot, value: \"yes\", effect: $2}]"
        [ -z "${3:-}" ] || labels=", $3"
        cat <<EOF2
- apiVersion: v1
  kind: Node
  metadata: {name: $1, labels: {kubernetes.io/hostname: $1$labels}}
  spec: {$taints}
  status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
EOF2
}
pod() { # name [extra spec yaml] [labels]
        cat <<EOF2
- apiVersion: v1
  kind: Pod
  metadata: {name: $1, namespace: default, labels: {app: ${3:-web}}}
  spec:
    containers: [{name: c, image: x, resources: {requests: {cpu: "1", memory: 1Gi}}}]
${2:-}
EOF2
}
where() { # file pod -> node
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))
print(next(p["node"] for p in d["asWritten"]["pods"] if p["name"] in (sys.argv[2], "default/"+sys.argv[2])))' "$1" "$2"
}

{ echo "apiVersion: v1"; echo "kind: List"; echo "items:"; node a; node b; pod p1; pod p2; } >"$tmp/two.yaml"
"$DEVPLANE" simulate -o json -f "$tmp/two.yaml" >"$tmp/def.json" || fail "simulate"
[ "$(where "$tmp/def.json" p1)" != "$(where "$tmp/def.json" p2)" ] || fail "default profile: both pods on one node"
"$DEVPLANE" simulate -o json --scoring binpack -f "$tmp/two.yaml" >"$tmp/bin.json"
[ "$(where "$tmp/bin.json" p1)" = "$(where "$tmp/bin.json" p2)" ] || fail "binpack: pods spread"
"$DEVPLANE" simulate -o json --scoring default -f "$tmp/two.yaml" >"$tmp/def2.json"
cmp -s "$tmp/def.json" "$tmp/def2.json" || fail "--scoring default differs from the default"
cat >"$tmp/most.yaml" <<'EOF2'
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated}}
EOF2
"$DEVPLANE" simulate -o json --scheduler-config "$tmp/most.yaml" -f "$tmp/two.yaml" >"$tmp/most.json"
[ "$(where "$tmp/most.json" p1)" = "$(where "$tmp/most.json" p2)" ] || fail "MostAllocated: pods spread"

# preferences: p1 would take a (first by name); each preference moves it to b
pref='    affinity: {nodeAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 10, preference: {matchExpressions: [{key: disk, operator: Exists}]}}]}}'
{ echo "apiVersion: v1"; echo "kind: List"; echo "items:"; node a; node b "" "disk: ssd"; pod p1 "$pref"; } >"$tmp/aff.yaml"
"$DEVPLANE" simulate -o json -f "$tmp/aff.yaml" >"$tmp/aff.json"
[ "$(where "$tmp/aff.json" p1)" = b ] || fail "preferred node affinity ignored"
{ echo "apiVersion: v1"; echo "kind: List"; echo "items:"; node a PreferNoSchedule; node b; pod p1; } >"$tmp/taint.yaml"
"$DEVPLANE" simulate -o json -f "$tmp/taint.yaml" >"$tmp/taint.json"
[ "$(where "$tmp/taint.json" p1)" = b ] || fail "PreferNoSchedule taint ignored"
anti='    affinity: {podAntiAffinity: {preferredDuringSchedulingIgnoredDuringExecution: [{weight: 100, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app: db}}}}]}}'
# db0 on b, a busier pod on a: LeastAllocated alone takes b, the anti-affinity a
{ echo "apiVersion: v1"; echo "kind: List"; echo "items:"; node a; node b; pod db0 "    nodeName: b" db
  pod busy "    nodeName: a" other; pod busy2 "    nodeName: a" other; pod busy3 "    nodeName: a" other
  pod p1 "$anti"; } >"$tmp/anti.yaml"
"$DEVPLANE" simulate -o json -f "$tmp/anti.yaml" >"$tmp/anti.json"
[ "$(where "$tmp/anti.json" p1)" = a ] || fail "preferred pod anti-affinity ignored"
sed '/podAntiAffinity/d' "$tmp/anti.yaml" >"$tmp/noanti.yaml"
"$DEVPLANE" simulate -o json -f "$tmp/noanti.yaml" >"$tmp/noanti.json"
[ "$(where "$tmp/noanti.json" p1)" = b ] || fail "without the anti-affinity: not the emptier node"

# ImageLocality: b lists the pod's image (800 MiB; the pod names it without a tag: ":latest")
{ echo "apiVersion: v1"; echo "kind: List"; echo "items:"; node a; node b; pod p1; } >"$tmp/img.yaml"
python3 - "$tmp/img.yaml" <<'PY'
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
for o in d["items"]:
    if o["kind"] == "Node" and o["metadata"]["name"] == "b":
        o["status"]["images"] = [{"names": ["registry.example/app:latest"], "sizeBytes": 800 << 20}]
    if o["kind"] == "Pod":
        o["spec"]["containers"][0]["image"] = "registry.example/app"
yaml.safe_dump(d, open(sys.argv[1], "w"))
PY
"$DEVPLANE" simulate -o json -f "$tmp/img.yaml" >"$tmp/img.json"
[ "$(where "$tmp/img.json" p1)" = b ] || fail "ImageLocality ignored"

# PodTopologySpread's default constraints: pods a ReplicaSet controls spread over hostname and
# zone (n3 has no zone: its own domain), kube-scheduler's placements; defaultingType List: none
cat >"$tmp/rs.yaml" <<'EOF2'
apiVersion: v1
kind: List
items:
- {apiVersion: v1, kind: Node, metadata: {name: n1, labels: {kubernetes.io/hostname: n1, topology.kubernetes.io/zone: a}}, status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: n2, labels: {kubernetes.io/hostname: n2, topology.kubernetes.io/zone: a}}, status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}}
- {apiVersion: v1, kind: Node, metadata: {name: n3, labels: {kubernetes.io/hostname: n3}}, status: {allocatable: {cpu: "4", memory: 16Gi, pods: "110"}}}
- {apiVersion: apps/v1, kind: ReplicaSet, metadata: {name: web, namespace: default}, spec: {replicas: 0, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: c, image: x}]}}}}
- {apiVersion: v1, kind: Pod, metadata: {name: w0, namespace: default, labels: {app: web}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u1, controller: true}]}, spec: {nodeName: n1, containers: [{name: c, image: x, resources: {requests: {cpu: "3"}}}]}}
- {apiVersion: v1, kind: Pod, metadata: {name: w1, namespace: default, labels: {app: web}, ownerReferences: [{apiVersion: apps/v1, kind: ReplicaSet, name: web, uid: u1, controller: true}]}, spec: {containers: [{name: c, image: x}]}}
EOF2
"$DEVPLANE" simulate -o json -f "$tmp/rs.yaml" >"$tmp/rs.json"
[ "$(where "$tmp/rs.json" w1)" = n3 ] || fail "default spread constraints: w1 on $(where "$tmp/rs.json" w1), kube-scheduler n3"
printf 'apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- pluginConfig:\n  - {name: PodTopologySpread, args: {defaultingType: List}}\n' >"$tmp/list.yaml"
"$DEVPLANE" simulate -o json --scheduler-config "$tmp/list.yaml" -f "$tmp/rs.yaml" >"$tmp/rs-list.json"
[ "$(where "$tmp/rs-list.json" w1)" = n2 ] || fail "defaultingType List: w1 on $(where "$tmp/rs-list.json" w1)"

# bad configuration: one error naming file, field and rule; exit 2
sed 's/MostAllocated/Fastest/' "$tmp/most.yaml" >"$tmp/bad.yaml"
set +e
"$DEVPLANE" simulate -o json --scheduler-config "$tmp/bad.yaml" -f "$tmp/two.yaml" >"$tmp/bad.out" 2>"$tmp/bad.err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "bad config: exit $rc"
[ ! -s "$tmp/bad.out" ] || fail "bad config: output on stdout"
grep -q 'bad.yaml:7: profiles\[0\].pluginConfig\[0\].args.scoringStrategy: type: must be LeastAllocated' "$tmp/bad.err" ||
        fail "bad config message: $(cat "$tmp/bad.err")"
set +e
"$DEVPLANE" simulate --scoring binpack --scheduler-config "$tmp/most.yaml" -f "$tmp/two.yaml" >/dev/null 2>"$tmp/both.err"
rc=$?
set -e
[ $rc -eq 2 ] || fail "--scoring binpack with --scheduler-config: exit $rc"
printf '  bogus: 1\n' >>"$tmp/most.yaml"
"$DEVPLANE" simulate -o json --scheduler-config "$tmp/most.yaml" -f "$tmp/two.yaml" >/dev/null 2>"$tmp/warn.err"
grep -q "warning: .*most.yaml:8: profiles\[0\].bogus: unknown field" "$tmp/warn.err" || fail "no warning: $(cat "$tmp/warn.err")"
echo PASS
