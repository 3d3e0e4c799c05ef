#!/usr/bin/env bash
# Backend health drives both paths of one agent: `devplane agent --backend
# nvml --dra` on the fake libnvidia-ml.so.1 (tests/devices/fake-nvml), with
# `devplane node` as the kubelet for V1 and as the plugin watcher for V2. An
# injected critical Xid 79 lowers V1 allocatable and taints the GPU in the
# next ResourceSlice generation (gpu.nvidia.com/xid-79); an ignored Xid 13
# does neither; recovery (the operator override) clears both. The effect is
# configured per fault class (--taint-effect xid-79=NoExecute).
#
# The agent handles a backend event in one callback: the V1 lists are queued
# and the slices file written before the callback returns, so once the node
# has seen the new V1 list the slices file is already the new generation.
source "$(dirname "$0")/v1-lib.sh"
: "${DP_BUILD_DIR:?}"
LIB=$DP_BUILD_DIR/tests/fake-nvml/libnvidia-ml.so.1
[ -e "$LIB" ] || fail "fake NVML not built: $LIB (target fake-nvml)"
R=nvidia.com/gpu
REG=$T/registry SL=$T/slices
cat >"$T/box.nvml.yaml" <<'YAML'
driverVersion: 550.54.15
cudaDriverVersion: 12040
nvlink: all
gpus:
- {name: NVIDIA A100-SXM4-80GB, uuid: GPU-0000bbbb-a100-4000-8000-000000000000, architecture: 7, memoryMiB: 81920,
   pciBusId: "00000000:10:00.0", numaNode: 0, minor: 0, computeCapability: "8.0"}
- {name: NVIDIA A100-SXM4-80GB, uuid: GPU-0000bbbb-a100-4000-8000-000000000001, architecture: 7, memoryMiB: 81920,
   pciBusId: "00000000:11:00.0", numaNode: 1, minor: 1, computeCapability: "8.0"}
YAML
cat >"$T/backend.yaml" <<'YAML'
apiVersion: devplane.io/v1alpha1
kind: BackendConfig
spec:
  health: {pollIntervalMilliseconds: 20, recoverAfterSeconds: 0}
YAML
: >"$T/events"
export DP_FAKE_NVML_CONFIG=$T/box.nvml.yaml DP_FAKE_NVML_EVENTS=$T/events DP_NVML_LIBRARY=$LIB
G1=GPU-0000bbbb-a100-4000-8000-000000000001

start_node --registry-dir "$REG" --claims-dir "$T/claims" --cdi-dir "$T/cdi"
start_agent --backend nvml --backend-config "$T/backend.yaml" --dra --registry-dir "$REG" \
        --plugins-dir "$T/kplugins" --cdi-dir "$T/cdi" --slices-dir "$SL" --claims-dir "$T/claims" --taint-effect xid-79=NoExecute
wait_status "resource $R capacity=2 allocatable=2" "dra-plugin gpu.nvidia.com registered"
S=$SL/node-a-gpu.nvidia.com.yaml
grep -q 'generation: 1' "$S" || fail "first slices should be generation 1"
! grep -q 'taints' "$S" || fail "no taint expected at start"
pass "nvml GPUs on both paths: V1 nvidia.com/gpu 2/2, V2 slices generation 1, driver gpu.nvidia.com registered"

echo "0 xid 13" >>"$T/events"
echo "1 xid 79" >>"$T/events"
wait_status "resource $R capacity=2 allocatable=1" "device $R $G1 Unhealthy"
grep -q 'generation: 2' "$S" || fail "expected generation 2: $(grep generation "$S" | head -1)"
[ "$(grep -c 'key: gpu.nvidia.com/xid-79' "$S")" = 1 ] || fail "expected one xid-79 taint: $(grep -A3 taints "$S")"
grep -q 'effect: NoExecute' "$S" || fail "taint effect: $(grep -A3 taints "$S")"
pass "Xid 79 on GPU 1: V1 allocatable 1, slice generation 2 with taint gpu.nvidia.com/xid-79 NoExecute (Xid 13 ignored)"

"$DEVPLANE" agent health --state-dir "$ST" set "$G1" healthy
wait_status "resource $R capacity=2 allocatable=2"
grep -q 'generation: 3' "$S" || fail "expected generation 3"
! grep -q 'taints' "$S" || fail "taint left after recovery"
pass "recovery: V1 allocatable 2, slice generation 3 without taints"
stop "$AGENT_PID"

set +e
"$DEVPLANE" agent --plugin-dir "$PD" --state-dir "$ST" --dra --registry-dir "$REG" --plugins-dir "$T/kplugins" \
        --cdi-dir "$T/cdi" --taint-effect xid-79=Sometimes >"$T/bad.log" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] && grep -q 'expected CLASS=EFFECT' "$T/bad.log" || fail "bad --taint-effect: exit $rc: $(cat "$T/bad.log")"
pass "bad --taint-effect refused (exit 2)"
