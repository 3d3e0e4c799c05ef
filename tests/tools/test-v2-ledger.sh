#!/usr/bin/env bash
# One agent, both paths, one ledger (DESIGN.md property 4): a GPU handed out
# through V1 Allocate is refused to a V2 claim until the V1 pod goes, and a
# GPU prepared for a V2 claim is refused to V1 Allocate until the claim is
# unprepared — each time with the holder named — over real sockets with
# `devplane node` as the kubelet (device manager + DRA manager).
source "$(dirname "$0")/v1-lib.sh"
REG=$T/registry CL=$T/claims CDI=$T/cdi SL=$T/slices
R=example.com/gpu
start_node --registry-dir "$REG" --claims-dir "$CL" --cdi-dir "$CDI"
start_agent --profile example-gpu --dra --registry-dir "$REG" --plugins-dir "$T/kp" --cdi-dir "$CDI" \
        --slices-dir "$SL" --claims-dir "$CL"
wait_status "resource $R capacity=8 allocatable=8 inuse=0 plugin=connected" "dra-plugin gpu.example.com registered"


pod v1 main=$R:1
wait_status "pod default/v1 phase=Running"
U=$(held v1 main $R)
ID=$(grep -B1 -x "$U" "$ST/devices" | head -1)
pass "V1 pod holds $ID ($U)"

claim c1 "$ID"
wait_status "dra-pod default/c1-pod phase=Waiting" "dra-pod-message default/c1-pod NodePrepareResources failed for ResourceClaim c1: device $ID is held through V1 by pod "
pass "V2 claim for $ID refused while V1 holds it: $(flat | sed -n 's|^dra-pod-message default/c1-pod ||p' | cut -c1-120)"

unpod v1
wait_status "!pod default/v1 " "dra-pod default/c1-pod phase=Prepared" "dra-env default/c1-pod/main GPU_DEVICE_${ID#gpu-}=$ID"
pass "V1 pod removed: the claim is prepared on retry, the container sees GPU_DEVICE_${ID#gpu-}=$ID"

wait_status "resource $R capacity=8 allocatable=7 "
pass "$ID prepared for the claim leaves V1: listed Unhealthy, allocatable 7 of 8"
pod big main=$R:8
wait_status "pod default/big phase=Waiting" "Requested: 8, Available: 7"
pass "V1 pod asking for all 8 GPUs waits: $ID is held through V2, only 7 offered"

rm "$MF/c1.yaml"
wait_status "!dra-claim default/c1 " "pod default/big phase=Running" "resource $R capacity=8 allocatable=8 "
pass "claim unprepared: $ID back in V1, the V1 pod gets all 8 GPUs"
stop "$AGENT_PID"
