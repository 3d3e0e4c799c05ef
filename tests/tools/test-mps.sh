#!/usr/bin/env bash
# MPS sharing as NVIDIA's plugin does it, against a stand-in
# nvidia-cuda-mps-control (tests/tools/mps/) that records what it is told:
# one control daemon per shared resource started with its pipe and log
# directories under MPS_ROOT, the pinned-memory limit per GPU (80 GiB / 4
# replicas = 20480M) and the active-thread percentage (25) set through its
# control pipe, the resource advertised only once the daemon answers
# (.started), containers given CUDA_MPS_PIPE_DIRECTORY and the pipe and shm
# mounts, requests of 2 refused (failRequestsGreaterThanOne defaults to
# true for MPS), `quit` on stop; a daemon that fails to start stops the
# agent with the reason; MPS_ROOT missing is refused as NVIDIA refuses it.
source "$(dirname "$0")/v1-lib.sh"
R=nvidia.com/gpu
export PATH="$(cd "$(dirname "$0")/mps" && pwd):$PATH" DP_MPS_RECORD=$T/mps.log MPS_ROOT=$T/mps
cat >"$T/mps.yaml" <<'YAML'
version: v1
sharing:
  mps:
    resources:
    - name: nvidia.com/gpu
      replicas: 4
YAML
start_node
start_agent --config "$T/mps.yaml"
wait_status "resource $R capacity=32 allocatable=32"
[ -e "$MPS_ROOT/$R/.started" ] || fail "no $MPS_ROOT/$R/.started"
grep -qx -- "-d|pipe=$MPS_ROOT/$R/pipe|log=$MPS_ROOT/$R/log|" "$DP_MPS_RECORD" || fail "daemon start: $(cat "$DP_MPS_RECORD")"
for i in 0 1 2 3 4 5 6 7; do
  grep -q "|set_default_device_pinned_mem_limit $i 20480M\$" "$DP_MPS_RECORD" || fail "memory limit of GPU $i"
done
grep -q '|set_default_active_thread_percentage 25$' "$DP_MPS_RECORD" || fail "thread percentage"
[ "$(grep -n 'get_default_active_thread_percentage' "$DP_MPS_RECORD" | cut -d: -f1)" -gt \
  "$(grep -n 'set_default_active_thread_percentage' "$DP_MPS_RECORD" | cut -d: -f1)" ] || fail "ready check order"
[ -d "$MPS_ROOT/shm" ] || fail "no shm directory"
pass "MPS daemon for $R: pipe/log under MPS_ROOT, 20480M per GPU, 25% threads, advertised once ready (32)"

pod p main=$R:1
wait_status "pod default/p phase=Running"
[ "$(env_of p main CUDA_MPS_PIPE_DIRECTORY)" = "/mps/$R/pipe" ] || fail "CUDA_MPS_PIPE_DIRECTORY: $(flat)"
# The mounts are in the response the node checkpointed (AllocResp, protobuf).
/usr/bin/python3 - "$PD/kubelet_internal_checkpoint" "$MPS_ROOT" <<'PY' || fail "mounts"
import base64, json, sys
root = sys.argv[2].encode()
raw = b"".join(base64.b64decode(e["AllocResp"]) for e in json.load(open(sys.argv[1]))["Data"]["PodDeviceEntries"])
for want in (b"/mps/nvidia.com/gpu/pipe", root + b"/nvidia.com/gpu/pipe", b"/dev/shm", root + b"/shm"):
    assert want in raw, (want, raw)
PY
pass "container: CUDA_MPS_PIPE_DIRECTORY=/mps/$R/pipe, pipe and shm mounts from MPS_ROOT"

pod q main=$R:2
wait_status "pod default/q phase=Waiting" "pod-message default/q Allocate failed for $R"
pass "a request of 2 on an MPS resource is refused (failRequestsGreaterThanOne)"

stop "$AGENT_PID"
grep -q '|quit$' "$DP_MPS_RECORD" || fail "no quit on stop"
[ ! -e "$MPS_ROOT/$R/.started" ] || fail ".started left behind"
pass "SIGTERM: quit sent, .started removed"

DP_MPS_FAIL=set_default_active_thread_percentage "$DEVPLANE" agent --config "$T/mps.yaml" --plugin-dir "$T/pd2" \
  --state-dir "$T/st2" --node-name n 2>"$T/err" && fail "agent started with a failing MPS daemon"
grep -q 'MPS control daemon of nvidia.com/gpu: "set_default_active_thread_percentage 25"' "$T/err" || fail "$(cat "$T/err")"
[ ! -e "$T/pd2/devplane-nvidia.com_gpu.sock" ] || fail "advertised without a ready daemon"
pass "a daemon that does not take its settings: the agent stops, naming the step, nothing advertised"

MPS_ROOT= "$DEVPLANE" agent --config "$T/mps.yaml" --plugin-dir "$T/pd3" --state-dir "$T/st3" --node-name n \
  2>"$T/err" && fail "MPS without MPS_ROOT accepted"
grep -q 'using MPS requires --mps-root to be specified' "$T/err" || fail "$(cat "$T/err")"
pass "MPS without MPS_ROOT refused as NVIDIA refuses it"
