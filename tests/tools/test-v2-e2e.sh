#!/usr/bin/env bash
# The V2 (DRA) node path end to end over real sockets: `devplane agent --dra`
# on example-gpu publishes ResourceSlices, the real `devplane allocate`
# allocates the claims of workloads read from
# $DP_SHARED_DIR/conformance/dra-example-driver/ (never copied), `devplane
# node` registers the driver through the plugin registry, prepares the
# claims of the pods in its manifest directory, and its status shows each
# container's CDI environment, checked against the outcome the workloads
# state (six of them). Then: pods removed -> claims unprepared (CDI specs
# gone); a claim shared by two pods stays prepared until both go; a claim
# whose driver skips node operations is not sent to the driver.
source "$(dirname "$0")/v1-lib.sh"
: "${DP_SHARED_DIR:?}"
W=$DP_SHARED_DIR/conformance/dra-example-driver
REG=$T/registry CL=$T/claims CDI=$T/cdi SL=$T/slices KP=$T/kplugins WORK=$T/work
mkdir -p "$REG" "$CL" "$CDI" "$SL" "$WORK"

"$DEVPLANE" node --plugin-dir "$PD" --manifests "$MF" --node-name node-a --backoff-initial-ms 100 \
        --backoff-max-ms 400 --registry-dir "$REG" --claims-dir "$CL" --cdi-dir "$CDI" >>"$T/node.log" 2>&1 &
NODE_PID=$!
PIDS+=("$NODE_PID")
wait_status "node node-a running pid=$NODE_PID"
start_agent --dra --no-device-plugin --profile example-gpu --registry-dir "$REG" --plugins-dir "$KP" \
        --cdi-dir "$CDI" --slices-dir "$SL" --claims-dir "$CL"
wait_status "dra-plugin gpu.example.com registered endpoint=$KP/gpu.example.com/dra.sock version=v1.DRAPlugin"
[ -s "$SL/node-a-gpu.example.com.yaml" ] || fail "no ResourceSlices written"
pass "agent registered as DRA driver gpu.example.com (v1), slices in $SL"

cat >"$WORK/class.yaml" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'gpu.example.com'"}
YAML

# split WORKLOAD: claims.yaml (the workload's claims and one claim per pod
# template reference, named <pod>-<podClaimName>, as the resource-claim
# controller would create them; uids added) and pods.yaml.
split() {
        /usr/bin/python3 - "$1" "$WORK/claims.yaml" "$WORK/pods.yaml" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
tmpl = {(d["metadata"]["namespace"], d["metadata"]["name"]): d for d in docs if d["kind"] == "ResourceClaimTemplate"}
claims, pods = [], []
for d in docs:
    ns = d["metadata"].get("namespace", "default")
    if d["kind"] == "ResourceClaim":
        d["metadata"]["uid"] = "uid-%s-%s" % (ns, d["metadata"]["name"])
        claims.append(d)
    elif d["kind"] == "Pod":
        pods.append(d)
        for rc in d["spec"].get("resourceClaims", []):
            if "resourceClaimTemplateName" in rc:
                name = "%s-%s" % (d["metadata"]["name"], rc["name"])
                t = tmpl[(ns, rc["resourceClaimTemplateName"])]
                claims.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                               "metadata": {"name": name, "namespace": ns, "uid": "uid-%s-%s" % (ns, name),
                                            "annotations": {"resource.kubernetes.io/pod-claim-name": rc["name"]}},
                               "spec": t["spec"]["spec"]})
yaml.safe_dump_all(claims, open(sys.argv[2], "w"))
yaml.safe_dump_all(pods, open(sys.argv[3], "w"))
PY
}

# run WORKLOAD NAME: allocate its claims against the published slices and
# hand claims + pods to the node.
run() {
        local name=$2
        split "$1"
        # Claims allocated before (still on the node) keep their devices.
        local prev=()
        for f in "$MF"/*-claims.yaml; do [ -e "$f" ] && prev+=(-f "$f"); done
        timeout 60 "$DEVPLANE" allocate -f "$SL" -f "$WORK/class.yaml" "${prev[@]+"${prev[@]}"}" -f "$WORK/claims.yaml" \
                -o yaml >"$WORK/all.yaml" 2>"$WORK/alloc.err" || fail "$name: allocate: $(cat "$WORK/alloc.err")"
        /usr/bin/python3 - "$WORK/all.yaml" "$WORK/claims.yaml" "$WORK/$name.allocated.yaml" <<'PY'
import sys, yaml
mine = {(d["metadata"]["namespace"], d["metadata"]["name"]) for d in yaml.safe_load_all(open(sys.argv[2])) if d}
docs = []
for d in yaml.safe_load_all(open(sys.argv[1])):
    docs += (d.get("items") or []) if d and d.get("kind") == "List" else [d]
out = [d for d in docs if d and d.get("kind") == "ResourceClaim"
       and (d["metadata"].get("namespace"), d["metadata"]["name"]) in mine]
assert len(out) == len(mine), "allocate printed %d of %d claims" % (len(out), len(mine))
yaml.safe_dump_all(out, open(sys.argv[3], "w"))
PY
        cp "$WORK/$name.allocated.yaml" "$MF/.$name-claims.tmp"
        mv "$MF/.$name-claims.tmp" "$MF/$name-claims.yaml"
        cp "$WORK/pods.yaml" "$MF/.$name-pods.tmp"
        mv "$MF/.$name-pods.tmp" "$MF/$name-pods.yaml"
}

dra_env() { flat | sed -n "s|^dra-env $1 $2=||p"; }
gpu_vars() { flat | grep -c "^dra-env $1 GPU_DEVICE_[0-9]*=" || true; }

# 1. basic-multiple-requests: one container, two distinct GPUs.
run "$W/basic-multiple-requests/basic-multiple-requests.yaml" mr
P=basic-multiple-requests/pod0
wait_status "dra-pod $P phase=Prepared"
G0=$(dra_env $P/ctr0 GPU_DEVICE_0)
G1=$(dra_env $P/ctr0 GPU_DEVICE_1)
[ -n "$G0" ] && [ -n "$G1" ] && [ "$G0" != "$G1" ] || fail "mr: expected two distinct GPUs, got '$G0' '$G1'"
[ "$(gpu_vars $P/ctr0)" = 2 ] || fail "mr: expected exactly 2 GPU_DEVICE_<n> variables"
[ "$(dra_env $P/ctr0 DRA_RESOURCE_DRIVER_NAME)" = gpu.example.com ] || fail "mr: spec-level env missing"
pass "basic-multiple-requests: ctr0 sees GPU_DEVICE_0=$G0 GPU_DEVICE_1=$G1"

# 2. cel-selector: exactly one GPU_DEVICE variable.
run "$W/cel-selector/cel-selector.yaml" cel
P=cel-selector/pod0
wait_status "dra-pod $P phase=Prepared"
[ "$(gpu_vars $P/ctr0)" = 1 ] || fail "cel: expected 1 GPU_DEVICE variable: $(flat | grep "dra-env $P")"
pass "cel-selector: 1 GPU ($(dra_env $P/ctr0 GPU_DEVICE_0))"

# 3. prioritized-alternatives: each pod one GPU; pod0 via older-gpu, pod1 via latest-gpu.
run "$W/prioritized-alternatives/prioritized-alternatives.yaml" prio
wait_status "dra-pod prioritized-alternatives/pod0 phase=Prepared" "dra-pod prioritized-alternatives/pod1 phase=Prepared"
for p in pod0 pod1; do
        [ "$(gpu_vars prioritized-alternatives/$p/ctr0)" = 1 ] || fail "prio: $p should have 1 GPU"
done
got=$(/usr/bin/python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    print(d["metadata"]["name"], *[r["request"] for r in d["status"]["allocation"]["devices"]["results"]])' \
        "$WORK/prio.allocated.yaml" | sort | tr '\n' ' ')
[ "$got" = "pod0-gpu gpu/older-gpu pod1-gpu gpu/latest-gpu " ] || fail "prio: requests chosen: $got"
pass "prioritized-alternatives: one GPU each, requests gpu/older-gpu and gpu/latest-gpu"

# 4. basic-shared-claim-across-containers: both containers see the same GPU.
run "$W/basic-shared-claim-across-containers/basic-shared-claim-across-containers.yaml" shared
NS=basic-shared-claim-across-containers
wait_status "dra-pod $NS/pod0 phase=Prepared"
A=$(dra_env $NS/pod0/ctr0 GPU_DEVICE_0)
B=$(dra_env $NS/pod0/ctr1 GPU_DEVICE_0)
[ -n "$A" ] && [ "$A" = "$B" ] || fail "shared: containers see '$A' and '$B'"
pass "basic-shared-claim-across-containers: ctr0 and ctr1 both see $A"

# Every prepared claim is in the claims directory and has its CDI spec.
n_specs=$(ls "$CDI" | grep -c 'k8s.gpu.example.com-gpu_' || true)
[ "$n_specs" -ge 5 ] || fail "expected CDI specs for the prepared claims, found $n_specs"
[ -s "$CL/basic-multiple-requests/pod0-gpus.yaml" ] || fail "claim not written to the claims directory"
pass "$n_specs CDI spec files written; claims directory filled"

# Pods gone -> claims unprepared, CDI specs and claim files removed.
rm -f "$MF/mr-pods.yaml"
wait_status "!dra-pod basic-multiple-requests/" "!dra-claim basic-multiple-requests/"
[ ! -e "$CL/basic-multiple-requests/pod0-gpus.yaml" ] || fail "claim file left behind"
! ls "$CDI" | grep -q 'uid-basic-multiple-requests' || fail "CDI spec left behind"
pass "pod removed: NodeUnprepareResources, CDI spec and claim file removed"
rm -f "$MF/mr-claims.yaml" # the claim is deleted too: its devices are free for the next allocations

# 5. basic-resourceclaim-opaque-config: one claim, two requests with their own
# GpuConfig; containers name a request and see only that GPU. (The README
# shows GPU_DEVICE_0 for the sp containers too; our driver core numbers the
# claim's devices, so the index is not compared here, only the outcome.)
run "$W/basic-resourceclaim-opaque-config/basic-resourceclaim-opaque-config.yaml" opaque
NS=basic-resourceclaim-opaque-config
wait_status "dra-pod $NS/pod0 phase=Prepared"
gpu_of() { flat | sed -n "s|^dra-env $NS/pod0/$1 GPU_DEVICE_[0-9]*=||p"; }
var_of() { flat | sed -n "s|^dra-env $NS/pod0/$1 GPU_DEVICE_[0-9]*_$2=||p"; }
TS=$(gpu_of ts-ctr0) SP=$(gpu_of sp-ctr0)
[ -n "$TS" ] && [ "$TS" = "$(gpu_of ts-ctr1)" ] || fail "opaque: ts containers see '$TS' and '$(gpu_of ts-ctr1)'"
[ -n "$SP" ] && [ "$SP" = "$(gpu_of sp-ctr1)" ] && [ "$SP" != "$TS" ] || fail "opaque: sp containers see '$SP'/'$(gpu_of sp-ctr1)', ts '$TS'"
for c in ts-ctr0 ts-ctr1; do
        [ "$(var_of $c SHARING_STRATEGY)" = TimeSlicing ] && [ "$(var_of $c TIMESLICE_INTERVAL)" = Long ] ||
                fail "opaque: $c: $(flat | grep "dra-env $NS/pod0/$c ")"
done
for c in sp-ctr0 sp-ctr1; do
        [ "$(var_of $c SHARING_STRATEGY)" = SpacePartitioning ] && [ "$(var_of $c PARTITION_COUNT)" = 10 ] ||
                fail "opaque: $c: $(flat | grep "dra-env $NS/pod0/$c ")"
done
pass "basic-resourceclaim-opaque-config: ts-ctr0/1 share $TS (TimeSlicing, Long), sp-ctr0/1 share $SP (SpacePartitioning, 10)"

# 6. basic-shared-claim-across-pods: one claim, two pods, the same GPU; the
# claim stays prepared until the last pod goes.
run "$W/basic-shared-claim-across-pods/basic-shared-claim-across-pods.yaml" xpods
NS=basic-shared-claim-across-pods
wait_status "dra-pod $NS/pod0 phase=Prepared" "dra-pod $NS/pod1 phase=Prepared"
X0=$(dra_env $NS/pod0/ctr0 GPU_DEVICE_0)
[ -n "$X0" ] && [ "$X0" = "$(dra_env $NS/pod1/ctr0 GPU_DEVICE_0)" ] || fail "xpods: $(flat | grep "dra-env $NS/")"
[ "$(flat | grep -c "^dra-claim $NS/")" = 1 ] || fail "xpods: expected one prepared claim"
pass "basic-shared-claim-across-pods: pod0 and pod1 both see $X0 through one claim"
/usr/bin/python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["metadata"]["name"] != "pod0"]
yaml.safe_dump_all(docs, open(sys.argv[2], "w"))' "$MF/xpods-pods.yaml" "$MF/.xpods.tmp"
mv "$MF/.xpods.tmp" "$MF/xpods-pods.yaml"
wait_status "!dra-pod $NS/pod0 " "dra-pod $NS/pod1 phase=Prepared" "dra-claim $NS/"
pass "pod0 gone: the claim stays prepared for pod1"
rm "$MF/xpods-pods.yaml"
wait_status "!dra-pod $NS/" "!dra-claim $NS/"
pass "pod1 gone: the claim is unprepared"

# skipNodeOperations (1.37): a claim whose results all skip both operations is
# never sent to the driver.
calls=$(flat >/dev/null; "$DEVPLANE" node status --plugin-dir "$PD" -o json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["draPrepareCalls"])')
cat >"$MF/.skip.tmp" <<'YAML'
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: skip, namespace: default, uid: uid-skip}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.example.com}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: node-a, device: gpu-7, skipNodeOperations: ["*"]}
---
apiVersion: v1
kind: Pod
metadata: {name: skipper, namespace: default}
spec:
  containers:
  - name: main
    image: busybox
    resources: {claims: [{name: g}]}
  resourceClaims:
  - {name: g, resourceClaimName: skip}
YAML
mv "$MF/.skip.tmp" "$MF/skip.yaml"
wait_status "dra-pod default/skipper phase=Prepared" "dra-claim default/skip uid=uid-skip driver=gpu.example.com devices=- skipped"
calls2=$("$DEVPLANE" node status --plugin-dir "$PD" -o json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["draPrepareCalls"])')
[ "$calls" = "$calls2" ] || fail "a skipped claim caused driver calls ($calls -> $calls2)"
pass "skipNodeOperations: prepared without calling the driver"

# A claim that is not allocated keeps its pod waiting, with the reason.
cat >"$MF/.wait.tmp" <<'YAML'
apiVersion: v1
kind: Pod
metadata: {name: waiter, namespace: default}
spec:
  containers:
  - {name: main, image: busybox, resources: {claims: [{name: g}]}}
  resourceClaims:
  - {name: g, resourceClaimName: nowhere}
YAML
mv "$MF/.wait.tmp" "$MF/wait.yaml"
wait_status "dra-pod default/waiter phase=Waiting" "dra-pod-message default/waiter ResourceClaim default/nowhere not found"
pass "pod with a missing claim waits: ResourceClaim default/nowhere not found"
# Kubelet restart: the new node walks the registry, registers the driver
# again and prepares the pods' claims again; the driver answers from its
# checkpoint, so the containers see the same GPUs.
stop "$NODE_PID"
"$DEVPLANE" node --plugin-dir "$PD" --manifests "$MF" --node-name node-a --backoff-initial-ms 100 \
        --backoff-max-ms 400 --registry-dir "$REG" --claims-dir "$CL" --cdi-dir "$CDI" >>"$T/node.log" 2>&1 &
NODE_PID=$!
PIDS+=("$NODE_PID")
NS=basic-shared-claim-across-containers
wait_status "node node-a running pid=$NODE_PID" "dra-plugin gpu.example.com registered" "dra-pod $NS/pod0 phase=Prepared"
[ "$(dra_env $NS/pod0/ctr1 GPU_DEVICE_0)" = "$A" ] || fail "after the restart ctr1 sees $(dra_env $NS/pod0/ctr1 GPU_DEVICE_0), not $A"
pass "node restarted: driver registered again, claims prepared again (idempotent), ctr1 still sees $A"
stop "$AGENT_PID"
stop "$NODE_PID"
