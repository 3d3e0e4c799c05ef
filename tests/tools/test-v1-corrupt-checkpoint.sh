#!/usr/bin/env bash
# A corrupt device-manager checkpoint is never trusted and never forgotten
# (issue 11; DESIGN.md "Durable state and failing closed"): the node keeps the
# file as kubelet_internal_checkpoint.corrupt and rebuilds its ledger from what
# the damaged file still says (unverified) and from its status file (what the
# running containers were given), so a running V1 pod keeps its GPUs and a new
# pod never gets them. Before: the node started empty, re-allocated the running
# pods and could hand their GPUs to the next pod.
source "$(dirname "$0")/v1-lib.sh"
R=nvidia.com/gpu
CK=$PD/kubelet_internal_checkpoint
start_node
start_agent
wait_status "resource $R capacity=8 allocatable=8 inuse=0 plugin=connected"
pod a main=$R:3
pod b main=$R:2
wait_status "pod default/a phase=Running" "pod default/b phase=Running"
A=$(held a main $R) B=$(held b main $R)

# kill9: the node dies without writing anything more.
kill9() {
        kill -KILL "$NODE_PID"
        wait "$NODE_PID" 2>/dev/null || true
        local keep=()
        for p in "${PIDS[@]}"; do [ "$p" != "$NODE_PID" ] && keep+=("$p"); done
        PIDS=("${keep[@]+"${keep[@]}"}")
}
# restart_check WHAT: after the restart a and b hold what they held, the
# damaged file is kept, and a third pod gets none of their GPUs.
restart_check() {
        start_node
        wait_status "pod default/a phase=Running" "pod default/b phase=Running" \
                "resource $R capacity=8 allocatable=8 inuse=5 plugin=connected"
        [ "$(held a main $R)" = "$A" ] || fail "$1: pod a held $A, now $(held a main $R)"
        [ "$(held b main $R)" = "$B" ] || fail "$1: pod b held $B, now $(held b main $R)"
        [ -s "$CK.corrupt" ] || fail "$1: the damaged checkpoint was not kept"
        grep -q "checkpoint $CK is corrupt" "$T/node.log" || fail "$1: nothing logged"
        pod c main=$R:3
        wait_status "pod default/c phase=Running"
        local C
        C=$(held c main $R)
        for id in ${C//,/ }; do
                case ",$A,$B," in *",$id,"*) fail "$1: pod c got $id, which a or b holds" ;; esac
        done
        /usr/bin/python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$CK" || fail "$1: the rewritten checkpoint does not parse"
        unpod c
        wait_status "!pod default/c " "resource $R capacity=8 allocatable=8 inuse=5"
        pass "$1: a and b keep their GPUs, the file is kept as .corrupt, c gets others ($C), a valid checkpoint is written"
        rm -f "$CK.corrupt"
}

# 1. one byte changed inside a device id: the checksum no longer matches
kill9
/usr/bin/python3 - "$CK" <<'PY'
import sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
i = b.index(b'"DeviceIDs"') + 20
b[i] = ord("X") if b[i] != ord("X") else ord("Y")
open(p, "wb").write(b)
PY
restart_check "checksum mismatch"

# 2. the file cut in half: nothing of it parses, the status file remembers
kill9
head -c "$(($(stat -c %s "$CK") / 2))" "$CK" >"$T/half" && mv "$T/half" "$CK"
restart_check "truncated"

# 3. both records gone bad: what the file still says is held; the rest
# cannot be proven (issue 21, F4): a and b may be running with any GPUs, so
# no GPU is handed out, to them or to anyone, until they go, and the status
# says why. Before issue 21 the node allocated again and could hand a running
# pod's GPUs to the next pod.
kill9
printf '{"Data":' >"$CK"
rm -f "$PD/devplane_node_status.json"
start_node
wait_status "unproven default/a " "unproven default/b " "withheld=" \
        "pod default/a phase=Waiting" "pod default/b phase=Waiting"
grep -q "nothing of the damaged file" "$T/node.log" && grep -q "no readable status file" "$T/node.log" ||
        fail "the log does not say that neither record could be read"
flat | grep -q "pod-message default/a .*cannot prove which devices" || fail "no reason given for a"
pod c main=$R:1
wait_status "pod default/c phase=Waiting" "pod-message default/c container main: no $R device is handed out"
unpod a
unpod b
wait_status "pod default/c phase=Running" "!unproven " "!withheld="
pass "neither record readable: a and b's GPUs go to nobody (and say so) until they go; then c runs"
