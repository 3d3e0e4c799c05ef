#!/usr/bin/env bash
# `devplane agent --backend nvml` over the fake libnvidia-ml.so.1 the devices
# tests build (tests/devices/fake-nvml, loaded through the real dlopen path),
# with `devplane node` as the kubelet: the discovered GPUs are advertised as
# nvidia.com/gpu, an injected critical Xid 79 lowers allocatable, an Xid 13
# (ignored by default, as NVIDIA's plugin ignores it) does not, and an
# operator override through the health file still wins.
source "$(dirname "$0")/v1-lib.sh"
: "${DP_BUILD_DIR:?}"
LIB=$DP_BUILD_DIR/tests/fake-nvml/libnvidia-ml.so.1
[ -e "$LIB" ] || fail "fake NVML not built: $LIB (target fake-nvml)"
R=nvidia.com/gpu

cat >"$T/box.nvml.yaml" <<'YAML'
driverVersion: 550.54.15
cudaDriverVersion: 12040
nvlink: all
gpus:
- name: NVIDIA A100-SXM4-80GB
  uuid: GPU-0000aaaa-a100-4000-8000-000000000000
  architecture: 7
  memoryMiB: 81920
  pciBusId: "00000000:10:00.0"
  numaNode: 0
  minor: 0
  computeCapability: "8.0"
- name: NVIDIA A100-SXM4-80GB
  uuid: GPU-0000aaaa-a100-4000-8000-000000000001
  architecture: 7
  memoryMiB: 81920
  pciBusId: "00000000:11:00.0"
  numaNode: 1
  minor: 1
  computeCapability: "8.0"
YAML
cat >"$T/backend.yaml" <<'YAML'
apiVersion: devplane.io/v1alpha1
kind: BackendConfig
spec:
  health: {pollIntervalMilliseconds: 20, recoverAfterSeconds: 0}
YAML
: >"$T/events"
export DP_FAKE_NVML_CONFIG=$T/box.nvml.yaml DP_FAKE_NVML_EVENTS=$T/events

# Without the library: a clear error, exit status 2 or 1, no crash.
set +e
timeout 20 "$DEVPLANE" agent --plugin-dir "$PD" --state-dir "$ST" --node-name node-a --backend nvml \
        --nvml-library "$T/no-such-libnvidia-ml.so.1" >"$T/nolib.log" 2>&1
rc=$?
set -e
[ $rc -eq 1 ] || [ $rc -eq 2 ] || fail "missing library: exit $rc"
grep -q 'no-such-libnvidia-ml.so.1' "$T/nolib.log" || fail "missing library: unclear error: $(cat "$T/nolib.log")"
pass "absent NVML library: clear error (exit $rc)"

start_node
DP_NVML_LIBRARY=$LIB start_agent --backend nvml --backend-config "$T/backend.yaml"
G0=GPU-0000aaaa-a100-4000-8000-000000000000
G1=GPU-0000aaaa-a100-4000-8000-000000000001
wait_status "resource $R capacity=2 allocatable=2 inuse=0 plugin=connected" "device $R $G0 Healthy" "device $R $G1 Healthy"
pass "two fake-NVML GPUs advertised through \$DP_NVML_LIBRARY"

echo "0 xid 13" >>"$T/events"
echo "1 xid 79" >>"$T/events"
wait_status "resource $R capacity=2 allocatable=1" "device $R $G1 Unhealthy" "device $R $G0 Healthy"
pass "Xid 79 on GPU 1 lowers allocatable to 1; Xid 13 on GPU 0 is ignored"

echo "0 xid 48" >>"$T/events"
wait_status "resource $R capacity=2 allocatable=0" "device $R $G0 Unhealthy"
pass "Xid 48 on GPU 0: allocatable 0"

# The override file wins over the backend's view.
"$DEVPLANE" agent health --state-dir "$ST" set "$G1" healthy
wait_status "resource $R capacity=2 allocatable=1" "device $R $G1 Healthy"
pass "operator override marks GPU 1 healthy again"

pod p main=$R:1
wait_status "pod default/p phase=Running"
[ "$(held p main $R)" = "$G1" ] || fail "pod p should get $G1, got $(held p main $R)"
pass "a pod receives the healthy GPU"
stop "$AGENT_PID"
