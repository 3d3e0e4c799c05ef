#!/usr/bin/env bash
# What a container receives follows the agent's config: deviceListStrategy
# (envvar, volume-mounts, cdi-annotations, cdi-cri), deviceIDStrategy index,
# passDeviceSpecs; the node keeps the plugin's ContainerAllocateResponse in
# its checkpoint and shows it in `node status -o json`.
source "$(dirname "$0")/v1-lib.sh"
R=nvidia.com/gpu
cat >"$T/cfg.yaml" <<'YAML'
version: v1
flags:
  plugin:
    passDeviceSpecs: true
    deviceListStrategy: [envvar, cdi-cri, cdi-annotations]
    deviceIDStrategy: index
YAML
start_node
start_agent --profile a100-mixed --config "$T/cfg.yaml"
wait_status "resource $R capacity=8 allocatable=8"
pod p main=$R:2
wait_status "pod default/p phase=Running"
ids=$(held p main $R)
# The kubelet sees uuids whatever deviceIDStrategy says (as with NVIDIA's
# plugin); the index form reaches only the container.
case "$ids" in GPU-*,GPU-*) ;; *) fail "uuids expected in the checkpoint, got '$ids'";; esac
"$DEVPLANE" node status --plugin-dir "$PD" -o json >"$T/status.json"
/usr/bin/python3 - "$T/status.json" "$ids" <<'PY' || fail "status content"
import json, sys
s = json.load(open(sys.argv[1]))
ids = sys.argv[2].split(",")
pod = [p for p in s["pods"] if p["name"] == "p"][0]
d = pod["containers"][0]["devices"][0]
assert d["ids"] == ids, d
idx = d["envs"]["NVIDIA_VISIBLE_DEVICES"].split(",")
assert len(idx) == 2 and all(i.isdigit() for i in idx), d
assert sorted(d["cdiDevices"]) == sorted("k8s.device-plugin.nvidia.com/gpu=" + i for i in idx), d
assert "/dev/nvidiactl" in d["deviceNodes"] and all("/dev/nvidia" + i in d["deviceNodes"] for i in idx), d
assert any(k.startswith("cdi.k8s.io/nvidia-device-plugin_") for k in d.get("annotations", {})), d
PY
pass "uuids $ids advertised, indices in env, CDI devices, CDI annotation and device nodes reach the node"
/usr/bin/python3 - "$PD/kubelet_internal_checkpoint" <<'PY' || fail "checkpoint AllocResp"
import base64, json, sys
e = json.load(open(sys.argv[1]))["Data"]["PodDeviceEntries"][0]
raw = base64.b64decode(e["AllocResp"])
assert b"NVIDIA_VISIBLE_DEVICES" in raw and b"/dev/nvidiactl" in raw, raw
PY
pass "the checkpoint's AllocResp holds the plugin's response"
