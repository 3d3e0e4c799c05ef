#!/usr/bin/env bash
# V1's holds stay visible to V2 across a lost checkpoint (issue 21, F1 + F4):
# drivers learn V1's holds from the device manager's checkpoint, so after the
# checkpoint is deleted the node writes the rebuilt one before its DRA
# manager prepares anything, and while it cannot be written (a full disk, a
# real small tmpfs in a user namespace) no claim is prepared at all. A claim
# for a GPU a running V1 pod holds stays refused throughout. Before: the node
# started fresh and the claim was prepared on the V1 pod's GPU.
source "$(dirname "$0")/node-files-lib.sh"
in_userns "$@"
source "$(dirname "$0")/v1-lib.sh"
mount_small_tmpfs "$PD" 256k
REG=$T/registry CL=$T/claims CDI=$T/cdi SL=$T/slices
R=example.com/gpu
CK=$PD/kubelet_internal_checkpoint
NODE_ARGS=(--registry-dir "$REG" --claims-dir "$CL" --cdi-dir "$CDI")
start_node "${NODE_ARGS[@]}"
start_agent --profile example-gpu --dra --registry-dir "$REG" --plugins-dir "$T/kp" --cdi-dir "$CDI" \
        --slices-dir "$SL" --claims-dir "$CL"
wait_status "resource $R capacity=8 allocatable=8 inuse=0 plugin=connected" "dra-plugin gpu.example.com registered"
pod v1 main=$R:1
wait_status "pod default/v1 phase=Running"
U=$(held v1 main $R)
ID=$(grep -B1 -x "$U" "$ST/devices" | head -1)
claim c1 "$ID"
wait_status "dra-pod default/c1-pod phase=Waiting" "dra-pod-message default/c1-pod NodePrepareResources failed for ResourceClaim c1: device $ID is held through V1 by pod "

# the checkpoint deleted while the node is down, and no space to write it
kill9
rm -f "$CK"
fill_disk "$PD"
"$DEVPLANE" node --plugin-dir "$PD" --manifests "$MF" --node-name node-a --backoff-initial-ms 100 \
        --backoff-max-ms 400 "${NODE_ARGS[@]}" >>"$T/node.log" 2>&1 &
NODE_PID=$!
PIDS+=("$NODE_PID")
wait_log "pod default/c1-pod waits: V1's holds are not on disk for the driver to see"
ls "$CDI" | grep -q "uid-c1" && fail "the claim was prepared while V1's holds were not on disk"
grep -q "prepared ResourceClaim default/c1 " "$T/node.log" && fail "the node prepared c1"
pass "checkpoint lost and not writable: no claim is prepared, and the pod's message says why"

free_disk "$PD"
wait_status "node node-a running pid=$NODE_PID" "pod default/v1 phase=Running" \
        "dra-pod-message default/c1-pod NodePrepareResources failed for ResourceClaim c1: device $ID is held through V1 by pod "
[ "$(held v1 main $R)" = "$U" ] || fail "v1 held $U, now $(held v1 main $R)"
ls "$CDI" | grep -q "uid-c1" && fail "the claim was prepared on $ID"
pass "space back: the rebuilt checkpoint is written, v1 keeps $ID, the claim stays refused"

unpod v1
wait_status "!pod default/v1 " "dra-pod default/c1-pod phase=Prepared"
pass "v1 gone: the claim is prepared"
