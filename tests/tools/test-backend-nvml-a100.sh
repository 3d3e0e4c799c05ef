#!/usr/bin/env bash
# Issue 6 acceptance: `devplane agent --backend nvml` on the fake
# libnvidia-ml.so.1 (tests/devices/fake-nvml, the real dlopen path) describing
# an A100-80GB box in mixed MIG mode (tests/devices/fixtures/a100-mixed.nvml.yaml:
# GPUs 0-3 with seven 1g.10gb each, 4-7 whole; NUMA 0 for 0-3 from NVML, 1 for
# 4-7 from the fake sysfs; NVLink between all), with `devplane node` as the
# kubelet and the DRA plugin watcher.
#
#  - V1 with migStrategy mixed: exactly the resource lines the mock a100-mixed
#    profile gives (scenario 1: nvidia.com/gpu 4, nvidia.com/mig-1g.10gb 28).
#  - V2 (--dra --slices-dir): the MIG instances are partitions consuming
#    `memory` from their GPU's counter set (sharedCounters gpu-<i>-counters
#    for GPUs 0-3 only, the MIG parents unpublished), the whole GPUs consume
#    nothing; the same devices, counter sets, types and NUMA as the mock's.
#  - Ignored Xid 13 (whole GPU and MIG-scoped): nothing changes. Critical
#    Xid 79 on a whole GPU, on a MIG-mode GPU (all seven instances) and
#    scoped to one GPU instance: V1 allocatable drops and the next slice
#    generation taints exactly those devices with gpu.nvidia.com/xid-79 (the
#    instances of a GPU with the Xid take its class).
#  - Recovery clears both, with a new generation: the operator override
#    (`agent health set`), and the backend's own recovery by time
#    (recoverAfterSeconds) for a second agent.
# Every wait is on an event (`node status --wait`, inotify); no sleeps.
source "$(dirname "$0")/v1-lib.sh"
: "${DP_BUILD_DIR:?}" "${DP_SOURCE_DIR:?}"
LIB=$DP_BUILD_DIR/tests/fake-nvml/libnvidia-ml.so.1
[ -e "$LIB" ] || fail "fake NVML not built: $LIB (target fake-nvml)"
PY=/usr/bin/python3
$PY -c 'import yaml' 2>/dev/null || fail "$PY has no yaml module (python3-yaml)"
FIX=$DP_SOURCE_DIR/tests/devices/fixtures
G=nvidia.com/gpu M=nvidia.com/mig-1g.10gb
REG=$T/registry SL=$T/slices
S=$SL/node-a-gpu.nvidia.com.yaml
printf 'version: v1\nflags:\n  migStrategy: mixed\n' >"$T/mixed.yaml"
backend_config() { # recoverAfterSeconds
        printf 'apiVersion: devplane.io/v1alpha1\nkind: BackendConfig\nspec:\n  health: {pollIntervalMilliseconds: 20, recoverAfterSeconds: %s}\n' \
                "$1" >"$T/backend-$1.yaml"
}
backend_config 0
backend_config 2
: >"$T/events"
export DP_FAKE_NVML_CONFIG=$FIX/a100-mixed.nvml.yaml DP_FAKE_NVML_EVENTS=$T/events DP_NVML_LIBRARY=$LIB
uuid() { printf 'GPU-0000000%d-a100-4000-8000-00000000000%d' "$1" "$1"; }
DRA=(--dra --registry-dir "$REG" --plugins-dir "$T/kplugins" --cdi-dir "$T/cdi" --claims-dir "$T/claims")

# check-slices FILE GENERATION TAINTED... (TAINTED: device=key; none listed: no taints)
cat >"$T/check.py" <<'PY'
import re, sys, yaml
path, gen, want = sys.argv[1], int(sys.argv[2]), dict(a.split("=", 1) for a in sys.argv[3:])
docs = [d for d in yaml.safe_load_all(open(path)) if d]
def die(msg):
    sys.exit(f"{path}: {msg}")
if not docs: die("no slices")
for d in docs:
    s = d["spec"]
    if d["kind"] != "ResourceSlice" or s["driver"] != "gpu.nvidia.com" or s["nodeName"] != "node-a": die(f"slice {d['metadata']}")
    p = s["pool"]
    if p["name"] != "node-a" or p["generation"] != gen or p["resourceSliceCount"] != len(docs):
        die(f"pool {p}, want generation {gen} and {len(docs)} slices")
sets = {c["name"]: c["counters"] for d in docs for c in d["spec"].get("sharedCounters", [])}
if sets != {f"gpu-{i}-counters": {"memory": {"value": "80Gi"}} for i in range(4)}:
    die(f"sharedCounters {sets}: want gpu-0..3-counters with memory 80Gi")
devs = {x["name"]: x for d in docs for x in d["spec"].get("devices", [])}
gpus = {f"gpu-{i}" for i in range(4, 8)}
migs = {f"gpu-{i}-mig-1g10gb-{j}" for i in range(4) for j in range(7)}
if set(devs) != gpus | migs: die(f"devices {sorted(devs)}")
def attr(x, k):
    return next(iter(x["attributes"][k].values()))
def mib(q):
    m = re.fullmatch(r"(\d+)(Mi|Gi)", q)
    return int(m[1]) * (1024 if m[2] == "Gi" else 1)
used = {k: 0 for k in sets}
for n, x in devs.items():
    i = int(n.split("-")[1])
    if attr(x, "numa") != (0 if i < 4 else 1): die(f"{n}: numa {attr(x, 'numa')}")
    if attr(x, "productName") != "NVIDIA A100-SXM4-80GB": die(f"{n}: productName")
    if n in gpus:
        if attr(x, "type") != "gpu" or "consumesCounters" in x: die(f"{n}: a whole GPU consumes nothing: {x}")
        if x["capacity"]["memory"]["value"] != "80Gi": die(f"{n}: capacity {x['capacity']}")
        continue
    if attr(x, "type") != "mig" or attr(x, "nvidia.com/migProfile") != "1g.10gb": die(f"{n}: not a 1g.10gb MIG")
    if attr(x, "parentUUID") != f"GPU-0000000{i}-a100-4000-8000-00000000000{i}": die(f"{n}: parentUUID")
    cc = x.get("consumesCounters", [])
    if len(cc) != 1 or cc[0]["counterSet"] != f"gpu-{i}-counters" or list(cc[0]["counters"]) != ["memory"]:
        die(f"{n}: consumesCounters {cc}: want memory from gpu-{i}-counters")
    q = cc[0]["counters"]["memory"]["value"]
    if q != x["capacity"]["memory"]["value"] or mib(q) != 9728: die(f"{n}: consumes {q}, capacity {x['capacity']}")
    used[cc[0]["counterSet"]] += mib(q)
for k, v in used.items():
    if v != 7 * 9728 or v > mib(sets[k]["memory"]["value"]): die(f"{k}: consumed {v}Mi")
got = {}
for n, x in devs.items():
    for t in x.get("taints", []):
        got.setdefault(n, []).append(t["key"])
    if attr(x, "nvidia.com/healthy") != (n not in want): die(f"{n}: nvidia.com/healthy {attr(x, 'nvidia.com/healthy')}")
if got != {n: [k] for n, k in want.items()}: die(f"taints {got}, want {want}")
PY
check() { $PY "$T/check.py" "$@" || fail "slices do not match (generation $2, taints: ${*:3})"; }
generation() { sed -n 's/^ *generation: //p' "$S" | head -1; }

# ---- scenario 1 on the mock profile, for comparison ---------------------------
start_node --registry-dir "$REG" --claims-dir "$T/claims" --cdi-dir "$T/cdi"
start_agent --profile a100-mixed --config "$T/mixed.yaml" "${DRA[@]}" --slices-dir "$T/mock-slices"
wait_status "resource $G capacity=4 allocatable=4 inuse=0 plugin=connected" \
        "resource $M capacity=28 allocatable=28 inuse=0 plugin=connected" "dra-plugin gpu.nvidia.com registered"
flat | grep '^resource ' | sort >"$T/mock.resources"
[ "$(wc -l <"$T/mock.resources")" = 2 ] || fail "mock a100-mixed: resources $(cat "$T/mock.resources")"
stop "$AGENT_PID"

# ---- the nvml agent: V1 ------------------------------------------------------------------------
start_agent --backend nvml --backend-config "$T/backend-0.yaml" --sysfs-root "$FIX/sysfs-nvml" \
        --config "$T/mixed.yaml" "${DRA[@]}" --slices-dir "$SL"
mapfile -t want <"$T/mock.resources"
wait_status "${want[@]}" "dra-plugin gpu.nvidia.com registered" "dra-health-stream gpu.nvidia.com watching: 32 devices, 0 unhealthy"
diff <(flat | grep '^resource ' | sort) "$T/mock.resources" || fail "V1 resources differ from the mock's"
[ "$(flat | grep -c "^device $G GPU-0000000[4-7]-a100.* Healthy$")" = 4 ] || fail "want GPUs 4-7 as $G"
[ "$(flat | grep -c "^device $M MIG-000[0-3]000[0-6]-a100.* Healthy$")" = 28 ] || fail "want 28 MIG instances of GPUs 0-3 as $M"
pass "V1 on fake NVML, migStrategy mixed: the mock's scenario-1 lines ($(tr '\n' ';' <"$T/mock.resources"))"

# ---- V2: slices --------------------------------------------------------------------------------
check "$S" 1
# The same devices, counter sets, types, NUMA and counter consumption as the mock
# profile's slices (the amounts differ: NVML reports a 1g.10gb's real 9728 MiB,
# the profile its nominal 10Gi).
$PY - "$T/mock-slices/node-a-gpu.nvidia.com.yaml" "$S" <<'PY' || fail "nvml slices differ from the mock a100-mixed's"
import sys, yaml
def shape(p):
    docs = [d["spec"] for d in yaml.safe_load_all(open(p)) if d]
    sets = {c["name"]: c["counters"] for s in docs for c in s.get("sharedCounters", [])}
    devs = {x["name"]: (x["attributes"]["type"], x["attributes"]["numa"], x["attributes"].get("parentUUID") is None,
                        [(c["counterSet"], sorted(c["counters"])) for c in x.get("consumesCounters", [])])
            for s in docs for x in s.get("devices", [])}
    return sets, devs
(sa, da), (sb, db) = shape(sys.argv[1]), shape(sys.argv[2])
if sa != sb:
    sys.exit(f"counter sets: mock {sa}, nvml {sb}")
for n in sorted(set(da) | set(db)):
    if da.get(n) != db.get(n):
        sys.exit(f"device {n}: mock {da.get(n)}, nvml {db.get(n)}")
PY
pass "V2 generation 1: 28 MIG partitions consume memory 9728Mi from gpu-0..3-counters (80Gi), gpu-4..7 whole, NUMA 0/1, as the mock's slices"

# ---- an ignored and a critical Xid --------------------------------------------------------------
printf '0 xid 13\n5 xid 13\n2 xid 13 gi 7\n4 xid 79\n' >>"$T/events"
wait_status "resource $G capacity=4 allocatable=3" "device $G $(uuid 4) Unhealthy" "resource $M capacity=28 allocatable=28"
[ "$(flat | grep -c '^device .* Unhealthy$')" = 1 ] || fail "only GPU 4 should be unhealthy: $(flat | grep Unhealthy)"
check "$S" 2 gpu-4=gpu.nvidia.com/xid-79
pass "Xid 13 on GPUs 0, 5 and a MIG instance ignored; Xid 79 on GPU 4: $G allocatable 3, generation 2 taints gpu-4 xid-79 only"

printf '1 xid 79\n' >>"$T/events"
wait_status "resource $M capacity=28 allocatable=21"
printf '2 xid 79 gi 8\n' >>"$T/events"
wait_status "resource $M capacity=28 allocatable=20" "device $M MIG-00020001-a100-5000-8000-000000000021 Unhealthy" \
        "device $M MIG-00020000-a100-5000-8000-000000000020 Healthy"
tainted=(gpu-4=gpu.nvidia.com/xid-79 gpu-2-mig-1g10gb-1=gpu.nvidia.com/xid-79)
# The fault is the GPU's; its instances are down through their parent and
# take the parent's class.
for j in 0 1 2 3 4 5 6; do tainted+=("gpu-1-mig-1g10gb-$j=gpu.nvidia.com/xid-79"); done
check "$S" 4 "${tainted[@]}"
wait_status "dra-health gpu.nvidia.com node-a/gpu-1-mig-1g10gb-6 Unhealthy xid-79" \
        "dra-health gpu.nvidia.com node-a/gpu-2-mig-1g10gb-1 Unhealthy xid-79" "dra-health gpu.nvidia.com node-a/gpu-2-mig-1g10gb-0 Healthy"
pass "Xid 79 on MIG-mode GPU 1: its 7 instances down (V1 21) and tainted (generation 3); scoped to GPU 2's instance gi 8: that one only (V1 20, generation 4)"

# ---- recovery: the operator override -------------------------------------------------------------
"$DEVPLANE" agent health --state-dir "$ST" set "$(uuid 4)" healthy
wait_status "resource $G capacity=4 allocatable=4"
check "$S" 5 "${tainted[@]:1}"
"$DEVPLANE" agent health --state-dir "$ST" set "$(uuid 1)" healthy
wait_status "resource $M capacity=28 allocatable=27"
check "$S" 6 gpu-2-mig-1g10gb-1=gpu.nvidia.com/xid-79
pass "operator recovery of GPU 4 and MIG-mode GPU 1: allocatable 4 and 27, taints gone (generations 5, 6)"
stop "$AGENT_PID"

# ---- recovery by time: the backend's own (recoverAfterSeconds 2) --------------------------------
start_agent --backend nvml --backend-config "$T/backend-2.yaml" --sysfs-root "$FIX/sysfs-nvml" \
        --config "$T/mixed.yaml" "${DRA[@]}" --slices-dir "$SL"
wait_status "${want[@]}" "dra-health-stream gpu.nvidia.com watching: 32 devices, 0 unhealthy"
g0=$(generation) # the generation goes on from the slices on disk
[ "$g0" = 7 ] || fail "restart: generation $g0, want 7 (6 + 1)"
check "$S" "$g0"
# The down state lasts recoverAfterSeconds (2 s): a waiter started before the
# events (inotify on the node's status file) sees it.
"$DEVPLANE" node status --plugin-dir "$PD" --timeout "$WAIT_TIMEOUT" -o flat --wait "resource $G capacity=4 allocatable=3" \
        --wait "resource $M capacity=28 allocatable=21" --wait "dra-health gpu.nvidia.com node-a/gpu-5 Unhealthy xid-79" \
        --wait "dra-health gpu.nvidia.com node-a/gpu-3-mig-1g10gb-0 Unhealthy" >/dev/null &
W=$!
PIDS+=("$W")
printf '5 xid 79\n3 xid 79\n' >>"$T/events"
wait "$W" || fail "Xid 79 on GPUs 5 and 3 never showed (V1 allocatable 3 and 21, DRA health xid-79)"
wait_status "resource $G capacity=4 allocatable=4" "resource $M capacity=28 allocatable=28" \
        "dra-health-stream gpu.nvidia.com watching: 32 devices, 0 unhealthy"
g=$(generation)
[ "$g" -ge $((g0 + 2)) ] || fail "recovery by time: generation $g, want >= $((g0 + 2)) (down, then up)"
check "$S" "$g"
pass "restarted agent continues at generation $g0; Xid 79 on GPUs 5 and 3 recovers by itself after recoverAfterSeconds: V1 back to 4 and 28, no taints, generation $g"
stop "$AGENT_PID"
