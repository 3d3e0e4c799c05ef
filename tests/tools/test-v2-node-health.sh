#!/usr/bin/env bash
# The node consumes the DRA health stream: `devplane node` opens
# NodeWatchResources (v1alpha1.DRAResourceHealth, as the agent's GetInfo
# lists it) on every registered driver and `devplane node status` shows each
# device's health per driver and pool; `devplane agent health set` makes one
# unhealthy and healthy again, and the node shows both — per device and in
# the allocatedResourcesStatus of the container that holds it. The driver
# gone, its health goes from the status.
source "$(dirname "$0")/v1-lib.sh"
REG=$T/registry KP=$T/kplugins
mkdir -p "$REG"
start_node --registry-dir "$REG" --cdi-dir "$T/cdi" --claims-dir "$T/claims"
start_agent --dra --no-device-plugin --profile example-gpu --registry-dir "$REG" --plugins-dir "$KP" \
        --cdi-dir "$T/cdi" --slices-dir "$T/slices" --claims-dir "$T/claims"
wait_status "dra-plugin gpu.example.com registered" "dra-health-stream gpu.example.com watching: 8 devices, 0 unhealthy" \
        "dra-health gpu.example.com node-a/gpu-0 Healthy" "dra-health gpu.example.com node-a/gpu-7 Healthy"
pass "node watches gpu.example.com's health: 8 devices, all Healthy"

# a pod holding gpu-3 through a claim
cat >"$MF/.hp.tmp" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: hc, namespace: default, uid: uid-hc}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-3}
---
apiVersion: v1
kind: Pod
metadata: {name: hp, namespace: default}
spec:
  containers:
  - {name: main, image: busybox, resources: {claims: [{name: g}]}}
  resourceClaims:
  - {name: g, resourceClaimName: hc}
YAML
mv "$MF/.hp.tmp" "$MF/hp.yaml"
CH="dra-ctr-health default/hp/main claim:hc/gpu gpu.example.com/node-a/gpu-3"
wait_status "dra-pod default/hp phase=Prepared" "$CH Healthy"
pass "pod hp holds gpu-3: allocatedResourcesStatus claim:hc/gpu Healthy"

"$DEVPLANE" agent health --state-dir "$ST" set gpu-3 unhealthy
wait_status "dra-health gpu.example.com node-a/gpu-3 Unhealthy" "dra-health gpu.example.com node-a/gpu-2 Healthy" \
        "dra-health-stream gpu.example.com watching: 8 devices, 1 unhealthy" "$CH Unhealthy"
pass "gpu-3 marked unhealthy: $(flat | grep '^dra-health gpu.example.com node-a/gpu-3 '); the container's status says so"

"$DEVPLANE" agent health --state-dir "$ST" set gpu-3 healthy
wait_status "dra-health gpu.example.com node-a/gpu-3 Healthy" "dra-health-stream gpu.example.com watching: 8 devices, 0 unhealthy" \
        "$CH Healthy"
pass "gpu-3 healthy again"
unpod hp
wait_status "!dra-pod default/hp " "!dra-claim default/hc "

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
