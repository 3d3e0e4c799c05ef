#!/usr/bin/env bash
# A full disk under `devplane node` (issue 21, F1 and F10), on a real small
# tmpfs in a user namespace: a V1 admission whose checkpoint cannot be
# written fails (as the kubelet's does) and the pod waits; when space returns
# the writes are retried without any other change, the pod runs, the status
# file is current again; a crash while full gives the waiting pod's GPUs to
# nobody else. A node started on a full disk rewrites its stale status (the
# dead pid) once space returns. Before: the pod ran although nothing recorded
# its GPUs, nothing was retried, the status kept a dead pid.
source "$(dirname "$0")/node-files-lib.sh"
in_userns "$@"
source "$(dirname "$0")/v1-lib.sh"
mount_small_tmpfs "$PD" 256k
R=nvidia.com/gpu
CK=$PD/kubelet_internal_checkpoint
start_node
start_agent
wait_status "resource $R capacity=8 allocatable=8 inuse=0 plugin=connected"
pod a main=$R:2
wait_status "pod default/a phase=Running"
A=$(held a main $R)

# F1: the admission fails while the checkpoint cannot be written
fill_disk "$PD"
pod b main=$R:2
wait_log "pod default/b waits: Allocate for $R: the allocation cannot be recorded"
grep -q "pod default/b admitted" "$T/node.log" && fail "b was admitted although its checkpoint write failed"
grep -q "$(held a main $R | cut -d, -f1)" "$CK" || fail "the checkpoint lost a"
pass "full disk: b's admission fails, its allocation is not kept, the failure is logged"

# ... and is retried once space returns, with no other change
free_disk "$PD"
wait_status "pod default/b phase=Running" "!checkpoint-write-error"
B=$(held b main $R)
no_overlap "a and b" "$B" "$A"
for id in ${B//,/ }; do grep -q "$id" "$CK" || fail "b runs with $id, which the checkpoint does not hold"; done
grep -q "device-manager checkpoint written again" "$T/node.log" || fail "the recovery is not logged"
pass "space back: the writes are retried, b runs with GPUs the checkpoint holds"

# a crash while full: the pod that could not be recorded does not keep GPUs
# another pod then needs
fill_disk "$PD"
pod c main=$R:2
wait_log "pod default/c waits: Allocate for $R: the allocation cannot be recorded"
kill9
free_disk "$PD"
start_node
wait_status "pod default/a phase=Running" "pod default/b phase=Running" "pod default/c phase=Running"
[ "$(held a main $R)" = "$A" ] || fail "a held $A, now $(held a main $R)"
[ "$(held b main $R)" = "$B" ] || fail "b held $B, now $(held b main $R)"
C=$(held c main $R)
no_overlap "c" "$C" "$A,$B"
pass "crash while full: a and b keep their GPUs, c gets others ($C)"

# F10: a node started on a full disk; its status (the dead pid) is rewritten
# when space returns
kill9
OLD=$NODE_PID
fill_disk "$PD"
"$DEVPLANE" node --plugin-dir "$PD" --manifests "$MF" --node-name node-a --backoff-initial-ms 100 \
        --backoff-max-ms 400 >>"$T/node.log" 2>&1 &
NODE_PID=$!
PIDS+=("$NODE_PID")
wait_log "cannot write the status file"
wait_log "node node-a serving"
flat | grep -q "pid=$OLD" || fail "the status file changed although the disk is full"
free_disk "$PD"
wait_status "node node-a running pid=$NODE_PID" "pod default/a phase=Running" "pod default/c phase=Running"
grep -q "status file written again" "$T/node.log" || fail "the recovery is not logged"
pass "started on a full disk: the status (pid $OLD) is rewritten once space returns (pid $NODE_PID)"
