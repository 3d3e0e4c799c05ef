# SPDX-License-Identifier: Apache-2.0
# v1-lib.sh — helpers for the V1 node-path integration tests: real `devplane
# node` and `devplane agent` processes talking over unix sockets in a
# temporary directory. Every wait is on an event (the node's status file
# changing, through `devplane node status --wait`, which uses inotify), with
# a timeout so nothing hangs. Sourced by tests/tools/test-v1-*.sh.
set -euo pipefail

: "${DEVPLANE:?DEVPLANE must point to the devplane binary}"
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/dp-v1-test.XXXXXX")
PD=$T/plugins      # the device-plugin directory
MF=$T/manifests    # the node's manifest directory
ST=$T/agent-state  # the agent's state directory (health file)
mkdir -p "$PD" "$MF" "$ST"
PIDS=()
WAIT_TIMEOUT=${WAIT_TIMEOUT:-20}

cleanup() {
        local rc=$?
        for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
        if [ $rc -ne 0 ]; then
                echo "---- logs ($T) ----" >&2
                for f in "$T"/*.log; do [ -e "$f" ] && { echo "== $f" >&2; tail -n 40 "$f" >&2; }; done
                "$DEVPLANE" node status --plugin-dir "$PD" -o flat >&2 2>/dev/null || true
        fi
        rm -rf "$T"
        exit $rc
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }
pass() { echo "ok - $*"; }

# start_node [extra args...]: starts `devplane node` and waits until it serves.
start_node() {
        "$DEVPLANE" node --plugin-dir "$PD" --manifests "$MF" --node-name node-a --backoff-initial-ms 100 \
                --backoff-max-ms 400 "$@" >>"$T/node.log" 2>&1 &
        NODE_PID=$!
        PIDS+=("$NODE_PID")
        wait_status "node node-a running pid=$NODE_PID"
}

# start_agent [extra args...]: starts `devplane agent` (it registers once the node serves).
start_agent() {
        "$DEVPLANE" agent --plugin-dir "$PD" --node-name node-a --state-dir "$ST" "$@" >>"$T/agent.log" 2>&1 &
        AGENT_PID=$!
        PIDS+=("$AGENT_PID")
}

# stop PID: SIGTERM and reap.
stop() {
        kill -TERM "$1"
        wait "$1" || fail "process $1 exited with $?"
        local keep=()
        for p in "${PIDS[@]}"; do [ "$p" != "$1" ] && keep+=("$p"); done
        PIDS=("${keep[@]+"${keep[@]}"}")
}

# wait_status COND...: until every condition holds on `node status -o flat`
# (substring of a line, or !substring for none).
wait_status() {
        local args=()
        for c in "$@"; do args+=(--wait "$c"); done
        timeout $((WAIT_TIMEOUT + 5)) "$DEVPLANE" node status --plugin-dir "$PD" --timeout "$WAIT_TIMEOUT" "${args[@]}" -o flat \
                >/dev/null || fail "waiting for: $*"
}

flat() { "$DEVPLANE" node status --plugin-dir "$PD" -o flat; }

# pod NAME CONTAINER=RESOURCE:COUNT...: writes a manifest (atomically).
pod() {
        local name=$1
        shift
        {
                echo "apiVersion: v1"
                echo "kind: Pod"
                echo "metadata: {name: $name, namespace: default}"
                echo "spec:"
                echo "  containers:"
                for c in "$@"; do
                        local cname=${c%%=*} spec=${c#*=}
                        echo "  - name: $cname"
                        echo "    image: busybox"
                        if [ "$spec" != "$c" ]; then
                                echo "    resources: {limits: {${spec%%:*}: ${spec##*:}}}"
                        fi
                done
        } >"$MF/.$name.tmp"
        mv "$MF/.$name.tmp" "$MF/$name.yaml"
}

unpod() { rm -f "$MF/$1.yaml"; }

# The ids a container holds for a resource: "id1,id2".
held() { flat | sed -n "s|^container default/$1/$2 $3=||p"; }
# The value of an env var of a container.
env_of() { flat | sed -n "s|^env default/$1/$2 $3=||p"; }
# uuid of a device id, from the agent's device list.
uuid_of() { grep -A1 -x "$1" "$ST/devices" | sed -n 2p; }

# claim NAME DEVICE: an allocated ResourceClaim NAME (uid uid-NAME) for one
# gpu.example.com device of pool node-a, and pod NAME-pod using it, in one
# manifest written atomically (the V2 node-path tests).
claim() {
        cat >"$MF/.$1.tmp" <<YAML
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: $1, namespace: default, uid: uid-$1}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: node-a, device: $2}
---
apiVersion: v1
kind: Pod
metadata: {name: $1-pod, namespace: default}
spec:
  containers:
  - name: main
    image: busybox
    resources: {claims: [{name: g}]}
  resourceClaims:
  - {name: g, resourceClaimName: $1}
YAML
        mv "$MF/.$1.tmp" "$MF/$1.yaml"
}
