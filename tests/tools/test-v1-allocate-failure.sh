#!/usr/bin/env bash
# Scenario 6 with the real agent: a device that turns unhealthy after the
# node chose it is refused by the plugin (Allocate, or PreStartContainer),
# and a request the plugin refuses leaves the pod waiting on this node with
# growing backoff; deleting the pod frees everything. (The exact "unhealthy
# between bind and Allocate" race is driven deterministically by the
# python-plugin interop test in tests/node/.)
source "$(dirname "$0")/v1-lib.sh"
R=nvidia.com/gpu
cat >"$T/ts.yaml" <<'YAML'
version: v1
sharing:
  timeSlicing:
    failRequestsGreaterThanOne: true
    resources:
    - name: nvidia.com/gpu
      replicas: 2
YAML
start_node
start_agent --config "$T/ts.yaml"
wait_status "resource $R capacity=16 allocatable=16"
pod ok main=$R:1
pod greedy main=$R:2
wait_status "pod default/ok phase=Running" "pod default/greedy phase=Waiting attempts=3"
flat | grep -q "^pod-message default/greedy Allocate failed for $R: UNKNOWN: " || fail "message: $(flat | grep pod-message)"
[ "$(held greedy main $R)" = "-" ] || fail "a waiting pod holds devices"
pass "refused Allocate: pod waits with backoff ($(flat | sed -n 's|^pod default/greedy ||p'))"
unpod greedy
wait_status "!pod default/greedy " "resource $R capacity=16 allocatable=16 inuse=1"
pass "deleting the waiting pod leaves only pod ok's device in use"
