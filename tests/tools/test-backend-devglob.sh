#!/usr/bin/env bash
# `devplane agent --backend devglob` over a temporary dev root, V1 and V2 at
# once, with `devplane node` as the kubelet: each matching node is exposed
# `count` times; a node that vanishes makes its shares unhealthy (inotify,
# no polling needed) — V1 allocatable drops and V2 taints them
# dev.example.com/missing — and its return heals both.
source "$(dirname "$0")/v1-lib.sh"
DEV=$T/devroot REG=$T/registry SL=$T/slices
mkdir -p "$DEV/dev"
: >"$DEV/dev/ttyUSB0"
: >"$DEV/dev/ttyUSB1"
cat >"$T/backend.yaml" <<'YAML'
apiVersion: devplane.io/v1alpha1
kind: BackendConfig
spec:
  domain: example.com
  health: {pollIntervalMilliseconds: 50}
  devglob:
  - type: serial
    paths: ["/dev/ttyUSB*"]
    count: 2
YAML
R=example.com/serial
start_node --registry-dir "$REG"
start_agent --backend devglob --dev-root "$DEV" --backend-config "$T/backend.yaml" --dra \
        --registry-dir "$REG" --plugins-dir "$T/kp" --cdi-dir "$T/cdi" --slices-dir "$SL"
wait_status "resource $R capacity=4 allocatable=4" "dra-plugin dev.example.com registered"
S=$SL/node-a-dev.example.com.yaml
[ "$(grep -c 'name: serial-[0-9]' "$S")" = 4 ] || fail "expected 4 devices in the slices: $(grep 'name:' "$S")"
pass "2 nodes x count 2: V1 $R 4/4, V2 driver dev.example.com with 4 devices"

rm "$DEV/dev/ttyUSB1"
wait_status "resource $R capacity=4 allocatable=2"
[ "$(grep -c 'key: dev.example.com/missing' "$S")" = 2 ] || fail "expected 2 missing taints: $(grep -A2 'taints' "$S")"
pass "ttyUSB1 removed: allocatable 2, its 2 shares tainted dev.example.com/missing"

: >"$DEV/dev/ttyUSB1"
wait_status "resource $R capacity=4 allocatable=4"
! grep -q 'taints' "$S" || fail "taints left after the node came back"
pass "ttyUSB1 back: allocatable 4, no taints"
stop "$AGENT_PID"
