#!/usr/bin/env bash
# Scenario 2: time-slicing replicas 4 make a 1-GPU node advertise 4 and a
# 2-GPU node 8 (capacity and allocatable); two pods may hold the same
# physical GPU; failRequestsGreaterThanOne refuses a request of 2 (the pod
# waits on the node).
source "$(dirname "$0")/v1-lib.sh"
P=$(dirname "$0")/profiles
R=nvidia.com/gpu
cat >"$T/ts.yaml" <<'YAML'
version: v1
sharing:
  timeSlicing:
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 4
YAML

start_node
start_agent --profile "$P/gpus-1.yaml" --config "$T/ts.yaml"
wait_status "resource $R capacity=4 allocatable=4"
pass "1 GPU x 4 replicas: capacity 4, allocatable 4"

pod p1 main=$R:1
pod p2 main=$R:1
wait_status "pod default/p1 phase=Running" "pod default/p2 phase=Running"
a=$(held p1 main $R) b=$(held p2 main $R)
[ "$a" != "$b" ] || fail "two pods got the same replica id $a"
[ "${a%::*}" = "${b%::*}" ] || fail "replicas of different GPUs on a 1-GPU node: $a $b"
[ "$(env_of p1 main NVIDIA_VISIBLE_DEVICES)" = "$(env_of p2 main NVIDIA_VISIBLE_DEVICES)" ] || fail "env differs"
pass "p1 ($a) and p2 ($b) share physical GPU ${a%::*}"

pod big main=$R:2
wait_status "pod default/big phase=Waiting" "pod-message default/big Allocate failed for $R"
pass "request of 2 refused by failRequestsGreaterThanOne: $(flat | sed -n 's|^pod-message default/big ||p')"
unpod big
wait_status "!pod default/big " "resource $R capacity=4 allocatable=4 inuse=2"
stop "$AGENT_PID"
stop "$NODE_PID"

rm -rf "$PD" "$ST" && mkdir -p "$PD" "$ST"
rm -f "$MF"/*.yaml
start_node
start_agent --profile "$P/gpus-2.yaml" --config "$T/ts.yaml"
wait_status "resource $R capacity=8 allocatable=8"
pass "2 GPUs x 4 replicas: capacity 8, allocatable 8"
