#!/usr/bin/env bash
# A GPU held by a prepared DRA claim leaves V1 (issue: a V1 pod waited
# forever while 7 of 8 GPUs were free, because the held GPU stayed Healthy
# in ListAndWatch and GetPreferredAllocation kept preferring it): the agent
# lists it Unhealthy while the claim holds it, so `devplane node` (the
# kubelet) counts 8 capacity, 7 allocatable, and seven 1-GPU V1 pods all
# run; unprepared, it is back.
source "$(dirname "$0")/v1-lib.sh"
REG=$T/registry CL=$T/claims CDI=$T/cdi SL=$T/slices
R=example.com/gpu
start_node --registry-dir "$REG" --claims-dir "$CL" --cdi-dir "$CDI"
start_agent --profile example-gpu --dra --registry-dir "$REG" --plugins-dir "$T/kp" --cdi-dir "$CDI" \
        --slices-dir "$SL" --claims-dir "$CL"
wait_status "resource $R capacity=8 allocatable=8 inuse=0 plugin=connected" "dra-plugin gpu.example.com registered"

claim c0 gpu-0
wait_status "dra-pod default/c0-pod phase=Prepared" "resource $R capacity=8 allocatable=7 "
pass "gpu-0 prepared for claim c0: the kubelet sees capacity 8, allocatable 7"

for i in 1 2 3 4 5 6 7; do pod "p$i" main=$R:1; done
wait_status "pod default/p1 phase=Running" "pod default/p2 phase=Running" "pod default/p3 phase=Running" \
        "pod default/p4 phase=Running" "pod default/p5 phase=Running" "pod default/p6 phase=Running" \
        "pod default/p7 phase=Running"
U0=$(grep -A1 -x gpu-0 "$ST/devices" | sed -n 2p)
for i in 1 2 3 4 5 6 7; do
        [ "$(held "p$i" main $R)" != "$U0" ] || fail "pod p$i got gpu-0 ($U0), held through V2"
done
pass "seven 1-GPU V1 pods all run, none on gpu-0"

rm "$MF/c0.yaml"
wait_status "!dra-claim default/c0 " "resource $R capacity=8 allocatable=8 inuse=7 "
pod p8 main=$R:1
wait_status "pod default/p8 phase=Running"
[ "$(held p8 main $R)" = "$U0" ] || fail "p8 did not get gpu-0"
pass "claim unprepared: gpu-0 back in V1, an eighth pod gets it"
stop "$AGENT_PID"
