#!/usr/bin/env bash
# The node consumes the DRA health stream: `devplane node` opens
# NodeWatchResources (v1alpha1.DRAResourceHealth, as the agent's GetInfo
# lists it) on every registered driver and `devplane node status` shows each
# device's health per driver and pool; `devplane agent health set` makes one
# unhealthy and healthy again, and the node shows both. The driver gone, its
# health goes from the status.
source "$(dirname "$0")/v1-lib.sh"
REG=$T/registry KP=$T/kplugins
mkdir -p "$REG"
start_node --registry-dir "$REG" --cdi-dir "$T/cdi"
start_agent --dra --no-device-plugin --profile example-gpu --registry-dir "$REG" --plugins-dir "$KP" \
        --cdi-dir "$T/cdi" --slices-dir "$T/slices"
wait_status "dra-plugin gpu.example.com registered" "dra-health-stream gpu.example.com watching: 8 devices, 0 unhealthy" \
        "dra-health gpu.example.com node-a/gpu-0 Healthy" "dra-health gpu.example.com node-a/gpu-7 Healthy"
pass "node watches gpu.example.com's health: 8 devices, all Healthy"

"$DEVPLANE" agent health --state-dir "$ST" set gpu-3 unhealthy
wait_status "dra-health gpu.example.com node-a/gpu-3 Unhealthy" "dra-health gpu.example.com node-a/gpu-2 Healthy" \
        "dra-health-stream gpu.example.com watching: 8 devices, 1 unhealthy"
pass "gpu-3 marked unhealthy: $(flat | grep '^dra-health gpu.example.com node-a/gpu-3 ')"

"$DEVPLANE" agent health --state-dir "$ST" set gpu-3 healthy
wait_status "dra-health gpu.example.com node-a/gpu-3 Healthy" "dra-health-stream gpu.example.com watching: 8 devices, 0 unhealthy"
pass "gpu-3 healthy again"

"$DEVPLANE" node status --plugin-dir "$PD" -o json | /usr/bin/python3 -c '
import json, sys
h = json.load(sys.stdin)["draHealth"]
assert len(h) == 1 and h[0]["driver"] == "gpu.example.com", h
assert sorted(d["device"] for d in h[0]["devices"]) == ["gpu-%d" % i for i in range(8)], h
assert all(d["pool"] == "node-a" and d["health"] == "Healthy" and d["lastUpdated"] > 0 for d in h[0]["devices"]), h'
pass "status JSON: draHealth per driver, pool, device, with lastUpdated"

stop "$AGENT_PID"
wait_status "!dra-plugin gpu.example.com registered" "!dra-health gpu.example.com"
pass "driver gone: deregistered, its health no longer shown"
stop "$NODE_PID"
