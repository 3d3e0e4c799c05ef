#!/usr/bin/env bash
# V1 admission waits for DRA preparation, as the kubelet prepares claims
# before it starts containers: a pod with both a device-plugin resource and a
# claim gets its V1 device allocated, then stays WaitingForClaims (its
# containers not started) while the claim's prepare fails — the DRA manager
# retrying with backoff — and runs once the claim is prepared.
source "$(dirname "$0")/v1-lib.sh"
REG=$T/registry CL=$T/claims CDI=$T/cdi SL=$T/slices
R=example.com/gpu
start_node --registry-dir "$REG" --claims-dir "$CL" --cdi-dir "$CDI"
start_agent --profile example-gpu --dra --registry-dir "$REG" --plugins-dir "$T/kp" --cdi-dir "$CDI" \
        --slices-dir "$SL" --claims-dir "$CL"
wait_status "resource $R capacity=8 allocatable=8 inuse=0 plugin=connected" "dra-plugin gpu.example.com registered"

# both DEVICE: claim c (uid-c, allocated to DEVICE) and pod "both" with a V1
# GPU and the claim, in one manifest.
both() {
        cat >"$MF/.both.tmp" <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default, uid: uid-c}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: node-a, device: $1}
---
apiVersion: v1
kind: Pod
metadata: {name: both, namespace: default}
spec:
  containers:
  - name: main
    image: busybox
    resources:
      limits: {$R: 1}
      claims: [{name: g}]
  resourceClaims:
  - {name: g, resourceClaimName: c}
YAML
        mv "$MF/.both.tmp" "$MF/both.yaml"
}

both gpu-99 # not a device of this node: every prepare fails
wait_status "pod default/both phase=WaitingForClaims" "dra-pod-message default/both NodePrepareResources failed" \
        "pod-message default/both waiting for DRA: NodePrepareResources failed for ResourceClaim c: "
U=$(held both main $R)
[ -n "$U" ] || fail "the V1 device was not allocated before DRA"
pass "V1 device allocated ($U), containers wait: $(flat | sed -n 's|^pod-message default/both ||p' | cut -c1-110)"
a1=$(flat | sed -n 's|^dra-pod default/both phase=Waiting attempts=||p')
[ "${a1:-0}" -ge 1 ] || fail "no failed attempt counted: $(flat | grep 'dra-pod default/both')"
wait_status "!dra-pod default/both phase=Waiting attempts=$a1" "pod default/both phase=WaitingForClaims"
a2=$(flat | sed -n 's|^dra-pod default/both phase=Waiting attempts=||p')
[ "${a2:-0}" -gt "$a1" ] || fail "attempts went from $a1 to '$a2'"
pass "the failed prepare is retried with backoff (attempt $a1, then $a2), the pod still waits"

ID=$(grep -B1 -x "$U" "$ST/devices" | head -1)
OTHER=gpu-6
[ "$ID" != gpu-6 ] || OTHER=gpu-5
both "$OTHER"
wait_status "dra-pod default/both phase=Prepared" "pod default/both phase=Running" "!pod-message default/both "
[ "$(held both main $R)" = "$U" ] || fail "the V1 allocation changed: $(held both main $R), was $U"
pass "claim fixed ($OTHER): prepared, the pod runs with V1 $ID and V2 $OTHER (V1 allocated once)"

unpod both
wait_status "!pod default/both " "!dra-pod default/both " "!dra-claim default/c "
pass "pod removed: V1 device released, claim unprepared"
stop "$AGENT_PID"
stop "$NODE_PID"
