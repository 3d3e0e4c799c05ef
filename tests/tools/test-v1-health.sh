#!/usr/bin/env bash
# Scenario 3: a device marked unhealthy lowers allocatable (capacity stays),
# the pod holding it keeps it, no new container receives it, and recovery
# brings allocatable back; removing a pod releases its devices.
source "$(dirname "$0")/v1-lib.sh"
R=nvidia.com/gpu
start_node
start_agent
wait_status "resource $R capacity=8 allocatable=8 inuse=0 plugin=connected"

pod a main=$R:1
wait_status "pod default/a phase=Running"
X=$(held a main $R)
[ -n "$X" ] && [ "${X#*,}" = "$X" ] || fail "pod a should hold one device, holds '$X'"
ID=$(grep -B1 -x "$X" "$ST/devices" | head -1)
pass "pod a holds $ID ($X)"

"$DEVPLANE" agent health --state-dir "$ST" set "$ID" unhealthy
wait_status "resource $R capacity=8 allocatable=7" "device $R $X Unhealthy holder=default/a/main"
[ "$(held a main $R)" = "$X" ] || fail "pod a lost its device"
pass "unhealthy: capacity 8, allocatable 7, pod a keeps $X"

pod b main=$R:7
wait_status "pod default/b phase=Running"
case ",$(held b main $R)," in *",$X,"*) fail "pod b received the unhealthy device";; esac
pass "pod b got 7 healthy devices, not $X"

pod c main=$R:1
wait_status "pod default/c phase=Waiting" "pod-message default/c container main: requested number of devices unavailable for $R. Requested: 1, Available: 0"
pass "pod c waits: nothing healthy and free"

"$DEVPLANE" agent health --state-dir "$ST" set "$X" healthy   # by uuid this time
wait_status "resource $R capacity=8 allocatable=8"
pass "recovered: allocatable back to 8"

unpod a
wait_status "pod default/c phase=Running" "!pod default/a "
[ "$(held c main $R)" = "$X" ] || fail "pod c should get the freed device $X, got $(held c main $R)"
pass "pod a removed: its device went to pod c"

"$DEVPLANE" agent health --state-dir "$ST" set gpu-99 unhealthy 2>"$T/err" && fail "unknown device accepted"
grep -q 'unknown device "gpu-99"' "$T/err" || fail "unclear error: $(cat "$T/err")"
pass "unknown device refused"
