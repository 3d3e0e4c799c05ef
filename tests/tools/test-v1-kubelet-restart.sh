#!/usr/bin/env bash
# Scenario 5: the node stand-in removes stale sockets at start; an agent
# started before the node registers once kubelet.sock appears, and again
# after the node restarts (inotify on kubelet.sock re-creation, no polling);
# SIGTERM removes the agent's sockets.
source "$(dirname "$0")/v1-lib.sh"
R=nvidia.com/gpu
# the agent first: it waits for kubelet.sock
start_agent
/usr/bin/python3 -c "import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])" "$PD/stale-plugin.sock"
start_node
wait_status "resource $R capacity=8 allocatable=8 inuse=0 plugin=connected"
[ -e "$PD/stale-plugin.sock" ] && fail "stale socket not removed"
pass "node removed the stale socket; agent registered when kubelet.sock appeared"

pod p main=$R:2
wait_status "pod default/p phase=Running"
before=$(held p main $R)

for i in 1 2 3; do
        stop "$NODE_PID"
        [ -e "$PD/kubelet.sock" ] && fail "kubelet.sock left behind"
        start_node
        wait_status "node node-a running pid=$NODE_PID" "resource $R capacity=8 allocatable=8 inuse=2 plugin=connected"
        [ "$(held p main $R)" = "$before" ] || fail "allocation changed across restart $i"
done
# The first registration may come from the agent's start-up check (when the
# node won the race to create kubelet.sock) or from the watch; each restart
# after that must come from the watch.
n=$(grep -c "kubelet (re)started, registering again" "$T/agent.log")
[ "$n" -ge 3 ] || fail "agent saw kubelet.sock re-created $n times, want >= 3"
n=$(grep -c "registered $R " "$T/agent.log")
[ "$n" -ge 4 ] || fail "agent registered $n times, want >= 4"
pass "three node restarts: the agent registered again each time, allocations kept"

stop "$AGENT_PID"
[ -e "$PD/devplane-nvidia.com_gpu.sock" ] && fail "agent socket left after SIGTERM"
pass "SIGTERM removed the agent's socket"
