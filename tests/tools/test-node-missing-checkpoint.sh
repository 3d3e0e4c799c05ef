#!/usr/bin/env bash
# A missing device-manager checkpoint (deleted, never synced) on a node that
# has served pods before (issue 21, F4): the node is not fresh, it rebuilds
# the ledger from its status file, and running pods keep their GPUs. When no
# record can say what the pods hold, the GPUs they may hold go to nobody (to
# them neither) until they go, the status says why, and the mark survives
# restarts and another loss. Only a directory with no prior state at all
# starts fresh. Before: the node started empty and handed running pods' GPUs
# out again (every lost-device event of the soaks).
source "$(dirname "$0")/v1-lib.sh"
source "$(dirname "$0")/node-files-lib.sh"
R=nvidia.com/gpu
CK=$PD/kubelet_internal_checkpoint
ST_FILE=$PD/devplane_node_status.json
start_node
start_agent
wait_status "resource $R capacity=8 allocatable=8 inuse=0 plugin=connected"
# x first, then a and b, then x goes: a and b do not hold the GPUs a fresh
# allocation would give them
pod x main=$R:3
wait_status "pod default/x phase=Running"
pod a main=$R:2
pod b main=$R:1
wait_status "pod default/a phase=Running" "pod default/b phase=Running"
unpod x
wait_status "!pod default/x " "inuse=3 "
A=$(held a main $R) B=$(held b main $R)

# 1. the checkpoint deleted: rebuilt from the status file
kill9
rm -f "$CK"
start_node
wait_status "pod default/a phase=Running" "pod default/b phase=Running" "inuse=3 plugin=connected" "checkpoint-error"
[ "$(held a main $R)" = "$A" ] || fail "a held $A, now $(held a main $R)"
[ "$(held b main $R)" = "$B" ] || fail "b held $B, now $(held b main $R)"
grep -q "checkpoint $CK is missing" "$T/node.log" || fail "nothing logged"
pod c main=$R:5
wait_status "pod default/c phase=Running"
no_overlap "c" "$(held c main $R)" "$A,$B"
grep -q "$(echo "$A" | cut -d, -f1)" "$CK" || fail "the rewritten checkpoint lacks a"
unpod c
wait_status "!pod default/c " "inuse=3 "
pass "checkpoint deleted: a and b keep their GPUs (rebuilt from the status file), c gets others"

# 2. checkpoint and status file both gone: nothing proves what a and b hold
kill9
rm -f "$CK" "$ST_FILE"
start_node
wait_status "unproven default/a " "unproven default/b " "withheld=" "pod default/a phase=Waiting"
flat | grep -q "pod-message default/a .*cannot prove which devices" || fail "no reason given for a"
grep -q '"devplane.unproven"' "$CK" || fail "the checkpoint does not carry the withheld devices"
pod c main=$R:1
wait_status "pod default/c phase=Waiting" "pod-message default/c container main: no $R device is handed out"
pass "no record left: every GPU a and b may hold is withheld, from c too, and the status says why"

# 3. the mark survives a restart with the checkpoint, and another loss of it
kill9
start_node
wait_status "unproven default/a " "unproven default/b " "pod default/c phase=Waiting"
kill9
rm -f "$CK"
start_node
wait_status "unproven default/a " "unproven default/b " "pod default/c phase=Waiting"
pass "the withholding survives a restart and a second loss of the checkpoint"

# 4. once they go, the GPUs are free again
unpod a
unpod b
wait_status "pod default/c phase=Running" "!unproven " "!withheld="
pass "a and b gone: c runs"

# 5. only a directory that never served pods starts fresh
kill9
PD2=$T/fresh
mkdir -p "$PD2"
"$DEVPLANE" node --plugin-dir "$PD2" --manifests "$MF" --node-name node-a >>"$T/node.log" 2>&1 &
PIDS+=("$!")
PD=$PD2 wait_status "node node-a running" "pod default/c phase=Waiting" "!unproven"
grep -q "a fresh node" "$T/node.log" || fail "the fresh start is not said"
pass "a directory with no prior state starts fresh"
