#!/usr/bin/env bash
# Scenario 4 and 7: per-container Allocate (two containers asking 1 GPU each:
# two Allocate calls, two different GPUs); allocations survive restarts of
# the node stand-in (checkpoint with checksum) and of the agent; a corrupted
# checkpoint is detected and reported, never trusted.
source "$(dirname "$0")/v1-lib.sh"
R=nvidia.com/gpu
start_node
start_agent
wait_status "resource $R capacity=8 allocatable=8"

pod two a=$R:1 b=$R:1
wait_status "pod default/two phase=Running attempts=0 allocate-calls=2"
A=$(held two a $R) B=$(held two b $R)
[ -n "$A" ] && [ -n "$B" ] && [ "$A" != "$B" ] || fail "containers should hold two different GPUs: '$A' '$B'"
pass "two containers, two Allocate calls, two GPUs ($A, $B)"

CK=$PD/kubelet_internal_checkpoint
/usr/bin/python3 - "$CK" "$A" "$B" <<'PY' || fail "checkpoint content"
import json, sys
d = json.load(open(sys.argv[1]))
assert list(d) [:2] == ["Data", "Checksum"], list(d)
e = d["Data"]["PodDeviceEntries"]
assert sorted((x["ContainerName"], sum(x["DeviceIDs"].values(), [])[0]) for x in e) == [("a", sys.argv[2]), ("b", sys.argv[3])], e
assert all(x["ResourceName"] == "nvidia.com/gpu" and x["AllocResp"] for x in e)
assert len(d["Data"]["RegisteredDevices"]["nvidia.com/gpu"]) == 8
PY
pass "checkpoint in the kubelet's layout"

# restart the node stand-in: same devices, no new Allocate
stop "$NODE_PID"
start_node
wait_status "pod default/two phase=Running" "resource $R capacity=8 allocatable=8 inuse=2 plugin=connected"
[ "$(held two a $R)" = "$A" ] && [ "$(held two b $R)" = "$B" ] || fail "allocations moved across a node restart"
grep -q "2 allocation(s) restored" "$T/node.log" || fail "checkpoint not restored"
pass "node restart: allocations restored from the checkpoint"

# restart the agent: same devices
stop "$AGENT_PID"
wait_status "resource $R capacity=8 allocatable=0 inuse=2 plugin=disconnected"
start_agent
wait_status "resource $R capacity=8 allocatable=8 inuse=2 plugin=connected"
[ "$(held two a $R)" = "$A" ] && [ "$(held two b $R)" = "$B" ] || fail "allocations moved across an agent restart"
pass "agent restart: allocations unchanged"

# corrupt the checkpoint (swap the two device ids, keep the checksum)
stop "$NODE_PID"
/usr/bin/python3 - "$CK" "$A" "$B" <<'PY'
import sys
p, a, b = sys.argv[1:]
s = open(p).read().replace(a, "@@").replace(b, a).replace("@@", b)
open(p, "w").write(s)
PY
start_node
wait_status "checkpoint-error" "pod default/two phase=Running"
flat | grep -q "^checkpoint-error .*checksum" || fail "corruption not reported as a checksum mismatch: $(flat | grep checkpoint-error)"
grep -q "checkpoint $PD/kubelet_internal_checkpoint is corrupt" "$T/node.log" || fail "corruption not logged"
pass "corrupted checkpoint detected: $(flat | sed -n 's/^checkpoint-error //p' | cut -c1-120)"
# never trusted, never forgotten: the node's status file says what each
# container was given, so the swap in the damaged file does not move them
[ "$(held two a $R)" = "$A" ] && [ "$(held two b $R)" = "$B" ] || fail "allocations moved after the corruption"
[ -s "$CK.corrupt" ] || fail "the damaged checkpoint was not kept"
pass "the ledger rebuilt from the status file: allocations unchanged, the damaged file kept as .corrupt"
