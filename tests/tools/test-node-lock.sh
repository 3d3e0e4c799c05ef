#!/usr/bin/env bash
# One `devplane node` per plugin directory (issue 21, F3): a second one on the
# same directory is refused at once, naming the holder's pid, and touches
# nothing: the first one's kubelet.sock and the plugin's sockets stay, its pod
# keeps its GPUs. The lock dies with its holder (kill -9), so a restart is
# never blocked by a stale file. Before: the second node deleted the first
# one's live sockets, released its running pod and handed out the same GPUs.
source "$(dirname "$0")/v1-lib.sh"
source "$(dirname "$0")/node-files-lib.sh"
R=nvidia.com/gpu
start_node
start_agent
wait_status "resource $R capacity=8 allocatable=8 inuse=0 plugin=connected"
pod a main=$R:2
wait_status "pod default/a phase=Running"
A=$(held a main $R)
socks_before=$(cd "$PD" && ls -1 ./*.sock | sort | tr '\n' ' ')
mkdir -p "$T/other-manifests"

rc=0
timeout 20 "$DEVPLANE" node --plugin-dir "$PD" --manifests "$T/other-manifests" --node-name node-b \
        >"$T/second.log" 2>&1 || rc=$?
[ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] || fail "the second node was not refused (exit $rc)"
grep -q "held by pid $NODE_PID" "$T/second.log" || fail "the refusal does not name pid $NODE_PID: $(cat "$T/second.log")"
[ "$(cd "$PD" && ls -1 ./*.sock | sort | tr '\n' ' ')" = "$socks_before" ] || fail "sockets changed"
flat | grep -q "node node-a running pid=$NODE_PID" || fail "the status file changed"
[ "$(held a main $R)" = "$A" ] || fail "a held $A, now $(held a main $R)"
pod b main=$R:1
wait_status "pod default/b phase=Running"
no_overlap "b" "$(held b main $R)" "$A"
pass "a second node is refused ($(head -c 200 "$T/second.log")), the first one serves on"

kill9
start_node
wait_status "pod default/a phase=Running" "pod default/b phase=Running" "plugin=connected"
[ "$(held a main $R)" = "$A" ] || fail "a held $A, now $(held a main $R)"
grep -q "^$NODE_PID$" "$PD/devplane_node.lock" || fail "the lock file does not hold the new pid"
pass "after kill -9 the lock is free: a new node starts and writes its pid"
