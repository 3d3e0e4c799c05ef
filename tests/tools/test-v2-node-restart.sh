#!/usr/bin/env bash
# The node's DRA state survives restarts (issue 11, item 1): real `devplane
# node` + `devplane agent --dra`. A claim whose pod goes away while the node
# is down is unprepared when it starts again — the agent's CDI spec is gone
# and a new claim for the same device prepares — also when the node was
# killed between the driver's prepare and its own state write, and when the
# node's state file was corrupted (rebuilt through devplane's PreparedClaims
# List, the corrupt file kept aside); and a claim whose driver is away stays
# in the state and the status until the driver confirms the unprepare.
source "$(dirname "$0")/v1-lib.sh"
grep -q -a DP_NODE_DRA_CRASH "$DEVPLANE" ||
        fail "$DEVPLANE was built without DP_TEST_HOOKS (base/test-hooks.h): use the test configuration (Debug)"
REG=$T/registry CL=$T/claims CDI=$T/cdi SL=$T/slices
STATE=$PD/dra_manager_state.json
NODE_ARGS=(--registry-dir "$REG" --claims-dir "$CL" --cdi-dir "$CDI")
start_node "${NODE_ARGS[@]}"
start_agent --profile example-gpu --dra --registry-dir "$REG" --plugins-dir "$T/kp" --cdi-dir "$CDI" \
        --slices-dir "$SL" --claims-dir "$CL"
wait_status "dra-plugin gpu.example.com registered"


# The agent's CDI spec files that name a claim uid.
specs_of() { grep -l -- "$1" "$CDI"/*.json 2>/dev/null || true; }

forget_node() {
        local keep=()
        for p in "${PIDS[@]}"; do [ "$p" != "$NODE_PID" ] && keep+=("$p"); done
        PIDS=("${keep[@]+"${keep[@]}"}")
}

# kill -9 the node and reap it.
kill_node() {
        kill -KILL "$NODE_PID" 2>/dev/null || true
        wait "$NODE_PID" 2>/dev/null || true
        forget_node
}

# start_crashing_node: a node that SIGKILLs itself after the next prepare,
# before its state write (the DP_NODE_DRA_CRASH test hook).
start_crashing_node() {
        DP_NODE_DRA_CRASH=after-prepare "$DEVPLANE" node --plugin-dir "$PD" --manifests "$MF" --node-name node-a \
                --backoff-initial-ms 100 --backoff-max-ms 400 "${NODE_ARGS[@]}" >>"$T/node.log" 2>&1 &
        NODE_PID=$!
        PIDS+=("$NODE_PID")
}

# wait_crash: the crashing node died of SIGKILL.
wait_crash() {
        local rc=0
        timeout 60 tail --pid="$NODE_PID" -f /dev/null || fail "the node did not die after the prepare"
        wait "$NODE_PID" || rc=$?
        forget_node
        [ "$rc" = 137 ] || fail "node exit status $rc, expected 137 (SIGKILL after prepare)"
}

# gone NAME: the claim left the node's state and the agent's CDI directory.
gone() {
        wait_status "!dra-claim default/$1 "
        grep -q "uid-$1" "$STATE" && fail "claim $1 still in the node's state: $(cat "$STATE")"
        [ -z "$(specs_of "uid-$1")" ] || fail "the agent's CDI spec of $1 is still there: $(specs_of "uid-$1")"
        return 0
}

# (a) pod removed while the node is down.
claim c0 gpu-0
wait_status "dra-pod default/c0-pod phase=Prepared" \
        "dra-claim default/c0 uid=uid-c0 driver=gpu.example.com devices=node-a/gpu-0 state=prepared pods=default/c0-pod"
[ -n "$(specs_of uid-c0)" ] || fail "no CDI spec for c0"
grep -q '"uid":"uid-c0"' "$STATE" || fail "c0 is not in the node's DRA state: $(cat "$STATE" 2>&1)"
kill_node
rm "$MF/c0.yaml"
start_node "${NODE_ARGS[@]}"
gone c0
pass "pod removed while the node was down: claim c0 unprepared at start, CDI spec gone"
claim c1 gpu-0
wait_status "dra-pod default/c1-pod phase=Prepared"
pass "a new claim for gpu-0 prepares"

# (b) killed between the driver's prepare and the node's state write.
kill_node
start_crashing_node
claim c2 gpu-1
wait_crash
[ -n "$(specs_of uid-c2)" ] || fail "the agent did not prepare c2 before the node died"
grep -q '"uid":"uid-c2".*"state":"preparing"' "$STATE" || fail "c2 not recorded as preparing: $(cat "$STATE")"
rm "$MF/c2.yaml"
start_node "${NODE_ARGS[@]}"
gone c2
claim c3 gpu-1
wait_status "dra-pod default/c3-pod phase=Prepared"
pass "node killed between prepare and its state write: c2 unprepared at start, a new claim for gpu-1 prepares"

# (b') the same, the pod still there: prepared again (the driver answers from its checkpoint).
kill_node
start_crashing_node
claim c4 gpu-2
wait_crash
start_node "${NODE_ARGS[@]}"
wait_status "dra-pod default/c4-pod phase=Prepared" \
        "dra-claim default/c4 uid=uid-c4 driver=gpu.example.com devices=node-a/gpu-2 state=prepared pods=default/c4-pod"
pass "killed after prepare, pod still there: c4 prepared at start"

# (c) one changed byte in the node's state: kept aside, rebuilt through List.
kill_node
rm "$MF/c4.yaml"
grep -q 'gpu-2' "$STATE" || fail "gpu-2 not in the state"
sed -i 's/gpu-2/gpu-7/' "$STATE"
start_node "${NODE_ARGS[@]}"
wait_status "dra-state corrupt (kept as $STATE.corrupt): $STATE: node DRA state corrupt: checksum mismatch"
gone c4
wait_status "dra-pod default/c1-pod phase=Prepared" "dra-pod default/c3-pod phase=Prepared" \
        "dra-claim default/c1 uid=uid-c1 driver=gpu.example.com devices=node-a/gpu-0 state=prepared pods=default/c1-pod" \
        "dra-claim default/c3 uid=uid-c3 driver=gpu.example.com devices=node-a/gpu-1 state=prepared pods=default/c3-pod" \
        "!dra-state-unknown"
[ -s "$STATE.corrupt" ] || fail "the corrupt state was not kept aside"
grep -q '"rebuild":false' "$STATE" || fail "the state is still marked rebuild: $(cat "$STATE")"
claim c5 gpu-2
wait_status "dra-pod default/c5-pod phase=Prepared"
pass "corrupt node state kept as .corrupt, rebuilt through List: c4 unprepared, c1 and c3 kept, gpu-2 prepares again"

# (d) the driver is away: the claim stays in the state and the status until
# the driver confirms the unprepare, across a node restart too.
stop "$AGENT_PID"
wait_status "!dra-plugin gpu.example.com registered"
rm "$MF/c5.yaml"
wait_status "dra-claim default/c5 uid=uid-c5 driver=gpu.example.com devices=node-a/gpu-2 state=unpreparing pods=-"
kill_node
start_node "${NODE_ARGS[@]}"
wait_status "dra-claim default/c5 uid=uid-c5 driver=gpu.example.com devices=node-a/gpu-2 state=unpreparing pods=-"
grep -q '"uid":"uid-c5"' "$STATE" || fail "c5 left the state before the driver confirmed"
[ -n "$(specs_of uid-c5)" ] || fail "c5's CDI spec went while the agent was down"
start_agent --profile example-gpu --dra --registry-dir "$REG" --plugins-dir "$T/kp" --cdi-dir "$CDI" \
        --slices-dir "$SL" --claims-dir "$CL"
gone c5
pass "driver away: c5 stays (state=unpreparing) in the state and status, across a restart, until the driver confirms"

# Everything goes: nothing stays prepared.
rm "$MF"/c1.yaml "$MF"/c3.yaml
wait_status "!dra-claim "
[ -z "$(ls "$CDI")" ] || fail "CDI specs left: $(ls "$CDI")"
pass "all pods gone: no claim prepared, no CDI spec left"
stop "$AGENT_PID"
