#!/usr/bin/env bash
# The V2 (DRA) node path end to end over real sockets, for every workload of
# $DP_SHARED_DIR/conformance/dra-example-driver/ that the example-gpu profile
# serves (read at test time, never copied): `devplane agent --dra` publishes
# ResourceSlices, `devplane node` creates the claims of template references
# itself (<pod>-<podClaimName>, or <podGroup>-<podClaimName> for a PodGroup's
# claim), the real `devplane allocate` allocates them (the scheduler's part:
# its output goes into the manifest directory, as the API server would hold
# it), the node prepares, and each container's CDI environment is checked
# against the outcome the workload states. GPU_DEVICE_<ID>: ID is the device
# name after "gpu-" (upper case, '-' as '_'), as the example driver names it
# (docs/dra-driver.md). Outcomes that are the scheduler's or a controller's
# alone are asserted at the allocate step and said so. Then: unprepare on
# pod removal, claims created for a pod deleted with it, a claim shared by
# two pods, skipNodeOperations, a missing claim, V1 admission waiting for the
# claims, a node restart.
source "$(dirname "$0")/v1-lib.sh"
: "${DP_SHARED_DIR:?}"
W=$DP_SHARED_DIR/conformance/dra-example-driver
REG=$T/registry CL=$T/claims CDI=$T/cdi SL=$T/slices KP=$T/kplugins WORK=$T/work
mkdir -p "$REG" "$CL" "$CDI" "$SL" "$WORK"
SPLIT=$HERE/v2-e2e/split.py

start_dra_node() {
        "$DEVPLANE" node --plugin-dir "$PD" --manifests "$MF" --node-name node-a --backoff-initial-ms 100 \
                --backoff-max-ms 400 --registry-dir "$REG" --claims-dir "$CL" --cdi-dir "$CDI" >>"$T/node.log" 2>&1 &
        NODE_PID=$!
        PIDS+=("$NODE_PID")
}
start_dra_agent() {
        start_agent --dra --no-device-plugin --registry-dir "$REG" --plugins-dir "$KP" \
                --cdi-dir "$CDI" --slices-dir "$SL" --claims-dir "$CL" "$@"
        wait_status "dra-plugin gpu.example.com registered endpoint=$KP/gpu.example.com/dra.sock version=v1.DRAPlugin"
}
start_dra_node
wait_status "node node-a running pid=$NODE_PID"
start_dra_agent --profile example-gpu
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

# stage NAME FILE...: the workload's pods, templates and PodGroups go to the
# node, its own claims too (not allocated yet); waits until the node has
# created the template claims and says each pod waits for its allocation.
stage() {
        local name=$1
        shift
        /usr/bin/python3 "$SPLIT" "$WORK" "$name" "$@" || fail "$name: cannot split $*"
        cp "$WORK/$name-claims.yaml" "$MF/.$name-claims.tmp"
        mv "$MF/.$name-claims.tmp" "$MF/$name-claims.yaml"
        cp "$WORK/$name-pods.yaml" "$MF/.$name-pods.tmp"
        mv "$MF/.$name-pods.tmp" "$MF/$name-pods.yaml"
        local conds=()
        while read -r pod claim; do
                conds+=("dra-pod-message $pod ResourceClaim ${pod%%/*}/$claim is not allocated")
        done <"$WORK/$name-pods.txt"
        wait_status "${conds[@]}"
}

# allocate NAME [partial]: the scheduler's part. `devplane allocate` over the
# published slices, the class, the workload's namespaces and taint rules, every claim the node holds
# (those still prepared keep their devices; those it created wait) and the
# workload's claims; the claims of the workload's namespaces that come out
# allocated replace its claims file. "partial": exit status 1 is expected
# (a claim that does not fit; its reason is in $WORK/alloc.err).
allocate() {
        local name=$1 want=${2:-all} in=() rc=0
        for d in "$CL"/*/; do [ -d "$d" ] && in+=(-f "$d"); done
        timeout 60 "$DEVPLANE" allocate -f "$SL" -f "$WORK/class.yaml" -f "$WORK/$name-rules.yaml" "${in[@]}" \
                -f "$MF/$name-claims.yaml" -o yaml >"$WORK/all.yaml" 2>"$WORK/alloc.err" || rc=$?
        if [ "$want" = partial ]; then
                [ "$rc" = 1 ] || fail "$name: allocate exited $rc, expected 1 (a claim does not fit): $(cat "$WORK/alloc.err")"
        else
                [ "$rc" = 0 ] || fail "$name: allocate: $(cat "$WORK/alloc.err")"
        fi
        /usr/bin/python3 - "$WORK/all.yaml" "$WORK/$name-pods.txt" "$WORK/$name.allocated.yaml" <<'PY'
import sys, yaml
nss = {l.split("/")[0] for l in open(sys.argv[2]) if l.strip()}
docs = []
for d in yaml.safe_load_all(open(sys.argv[1])):
    docs += (d.get("items") or []) if d and d.get("kind") == "List" else [d]
out = [d for d in docs if d and d.get("kind") == "ResourceClaim" and d["metadata"].get("namespace") in nss
       and (d.get("status") or {}).get("allocation")]
yaml.safe_dump_all(out, open(sys.argv[3], "w"))
PY
        cp "$WORK/$name.allocated.yaml" "$MF/.$name-claims.tmp"
        mv "$MF/.$name-claims.tmp" "$MF/$name-claims.yaml"
}

# unstage NAME NS...: pods gone -> claims unprepared, files removed; then the
# claims are deleted (the garbage collector's part for the allocated copies).
unstage() {
        local name=$1
        shift
        rm -f "$MF/$name-pods.yaml"
        for ns in "$@"; do wait_status "!dra-pod $ns/" "!dra-claim $ns/"; done
        rm -f "$MF/$name-claims.yaml"
        for ns in "$@"; do
                [ -z "$(ls -A "$CL/$ns" 2>/dev/null)" ] || fail "$name: claims left in the claims directory: $(ls "$CL/$ns")"
        done
}

# gpus NS/POD/CTR: the devices the container sees through GPU_DEVICE_<ID>,
# sorted, one line; fails when an ID does not name its device.
gpus() {
        flat | sed -n "s|^dra-env $1 GPU_DEVICE_\([A-Z0-9_]*\)=\(gpu-.*\)|\1 \2|p" | while read -r id dev; do
                want=$(echo "${dev#gpu-}" | tr 'a-z-' 'A-Z_')
                [ "$id" = "$want" ] || { echo "BAD:GPU_DEVICE_$id=$dev" && continue; }
                echo "$dev"
        done | sort | tr '\n' ' ' | sed 's/ $//'
}
dra_env() { flat | sed -n "s|^dra-env $1 $2=||p"; }
# check_gpus NS/POD/CTR COUNT: exactly COUNT devices, each named right; prints them.
check_gpus() {
        local g
        g=$(gpus "$1")
        case "$g" in *BAD:*) fail "$1: variable does not name its device: $g" ;; esac
        [ "$(echo "$g" | wc -w)" = "$2" ] || fail "$1: expected $2 GPU_DEVICE variables, got '$g': $(flat | grep "dra-env $1 ")"
        echo "$g"
}
# Every pod of a workload with claims is also a V1 pod: its containers start
# only once the claims are prepared.
v1_running() { for p in "$@"; do wait_status "pod $p phase=Running"; done; }

# 1. basic-multiple-requests: one container, two distinct GPUs.
NS=basic-multiple-requests
stage mr "$W/$NS/$NS.yaml"
[ -s "$CL/$NS/pod0-gpus.yaml" ] || fail "mr: the node did not create pod0-gpus from the template"
grep -q "resource.kubernetes.io/pod-claim-name: gpus" "$CL/$NS/pod0-gpus.yaml" || fail "mr: no pod-claim-name annotation"
grep -q "kind: Pod" "$CL/$NS/pod0-gpus.yaml" || fail "mr: the claim is not owned by the pod"
wait_status "dra-pod-claim $NS/pod0 gpus=pod0-gpus" "pod $NS/pod0 phase=WaitingForClaims"
pass "$NS: the node created ResourceClaim pod0-gpus (owned by pod0, status gpus=pod0-gpus); V1 waits for it"
allocate mr
wait_status "dra-pod $NS/pod0 phase=Prepared"
v1_running $NS/pod0
G=$(check_gpus $NS/pod0/ctr0 2)
[ "$(dra_env $NS/pod0/ctr0 DRA_RESOURCE_DRIVER_NAME)" = gpu.example.com ] || fail "mr: spec-level env missing"
pass "$NS: ctr0 sees two distinct GPUs ($G); V1 pod Running once prepared"
n_specs=$(ls "$CDI" | grep -c 'k8s.gpu.example.com-gpu_' || true)
[ "$n_specs" -ge 1 ] || fail "no CDI spec for the prepared claim"
unstage mr $NS
! ls "$CDI" | grep -q "$(sed -n 's/^  uid: //p' "$WORK/mr.allocated.yaml" | head -1)" || fail "CDI spec left behind"
pass "$NS: pod removed -> NodeUnprepareResources, CDI spec and claim file removed"

# 2. basic-resourceclaimtemplate: two pods, one GPU each, distinct.
NS=basic-resourceclaimtemplate
stage rct "$W/$NS/$NS.yaml"
allocate rct
wait_status "dra-pod $NS/pod0 phase=Prepared" "dra-pod $NS/pod1 phase=Prepared"
A=$(check_gpus $NS/pod0/ctr0 1) B=$(check_gpus $NS/pod1/ctr0 1)
[ "$A" != "$B" ] || fail "rct: both pods see $A"
pass "$NS: pod0 sees $A, pod1 sees $B"
unstage rct $NS

# 3. cel-selector: exactly one GPU.
NS=cel-selector
stage cel "$W/$NS/$NS.yaml"
allocate cel
wait_status "dra-pod $NS/pod0 phase=Prepared"
pass "$NS: one GPU ($(check_gpus $NS/pod0/ctr0 1))"
unstage cel $NS

# 4. prioritized-alternatives: each pod one GPU; pod0 via older-gpu, pod1 via latest-gpu.
NS=prioritized-alternatives
stage prio "$W/$NS/$NS.yaml"
allocate prio
wait_status "dra-pod $NS/pod0 phase=Prepared" "dra-pod $NS/pod1 phase=Prepared"
check_gpus $NS/pod0/ctr0 1 >/dev/null
check_gpus $NS/pod1/ctr0 1 >/dev/null
got=$(/usr/bin/python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    print(d["metadata"]["name"], *[r["request"] for r in d["status"]["allocation"]["devices"]["results"]])' \
        "$WORK/prio.allocated.yaml" | sort | tr '\n' ' ')
[ "$got" = "pod0-gpu gpu/older-gpu pod1-gpu gpu/latest-gpu " ] || fail "prio: requests chosen: $got"
pass "$NS: one GPU each, requests gpu/older-gpu and gpu/latest-gpu"
unstage prio $NS

# 5. basic-shared-claim-across-containers: both containers see the same GPU.
NS=basic-shared-claim-across-containers
stage shared "$W/$NS/$NS.yaml"
allocate shared
wait_status "dra-pod $NS/pod0 phase=Prepared"
A=$(check_gpus $NS/pod0/ctr0 1)
[ "$A" = "$(check_gpus $NS/pod0/ctr1 1)" ] || fail "shared: ctr1 sees $(gpus $NS/pod0/ctr1), ctr0 $A"
pass "$NS: ctr0 and ctr1 both see $A"
SHARED_GPU=$A # kept for the restart at the end

# 6. basic-resourceclaim-opaque-config: one claim, two requests with their
# own GpuConfig; containers name a request and see only that GPU.
NS=basic-resourceclaim-opaque-config
stage opaque "$W/$NS/$NS.yaml"
allocate opaque
wait_status "dra-pod $NS/pod0 phase=Prepared"
TS=$(check_gpus $NS/pod0/ts-ctr0 1) SP=$(check_gpus $NS/pod0/sp-ctr0 1)
[ "$TS" = "$(check_gpus $NS/pod0/ts-ctr1 1)" ] && [ "$SP" = "$(check_gpus $NS/pod0/sp-ctr1 1)" ] && [ "$SP" != "$TS" ] ||
        fail "opaque: ts $TS/$(gpus $NS/pod0/ts-ctr1), sp $SP/$(gpus $NS/pod0/sp-ctr1)"
TI=$(echo "${TS#gpu-}" | tr 'a-z-' 'A-Z_') SI=$(echo "${SP#gpu-}" | tr 'a-z-' 'A-Z_')
for c in ts-ctr0 ts-ctr1; do
        [ "$(dra_env $NS/pod0/$c GPU_DEVICE_${TI}_SHARING_STRATEGY)" = TimeSlicing ] &&
                [ "$(dra_env $NS/pod0/$c GPU_DEVICE_${TI}_TIMESLICE_INTERVAL)" = Long ] ||
                fail "opaque: $c: $(flat | grep "dra-env $NS/pod0/$c ")"
done
for c in sp-ctr0 sp-ctr1; do
        [ "$(dra_env $NS/pod0/$c GPU_DEVICE_${SI}_SHARING_STRATEGY)" = SpacePartitioning ] &&
                [ "$(dra_env $NS/pod0/$c GPU_DEVICE_${SI}_PARTITION_COUNT)" = 10 ] ||
                fail "opaque: $c: $(flat | grep "dra-env $NS/pod0/$c ")"
done
pass "$NS: ts-ctr0/1 share $TS (TimeSlicing, Long), sp-ctr0/1 share $SP (SpacePartitioning, 10)"
unstage opaque $NS

# 7. basic-shared-claim-across-pods: one claim, two pods, the same GPU; the
# claim stays prepared until the last pod goes.
NS=basic-shared-claim-across-pods
stage xpods "$W/$NS/$NS.yaml"
allocate xpods
wait_status "dra-pod $NS/pod0 phase=Prepared" "dra-pod $NS/pod1 phase=Prepared"
X0=$(check_gpus $NS/pod0/ctr0 1)
[ "$X0" = "$(check_gpus $NS/pod1/ctr0 1)" ] || fail "xpods: $(flat | grep "dra-env $NS/")"
[ "$(flat | grep -c "^dra-claim $NS/")" = 1 ] || fail "xpods: expected one prepared claim"
pass "$NS: pod0 and pod1 both see $X0 through one claim"
/usr/bin/python3 -c 'import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["metadata"]["name"] != "pod0"]
yaml.safe_dump_all(docs, open(sys.argv[2], "w"))' "$MF/xpods-pods.yaml" "$MF/.xpods.tmp"
mv "$MF/.xpods.tmp" "$MF/xpods-pods.yaml"
wait_status "!dra-pod $NS/pod0 " "dra-pod $NS/pod1 phase=Prepared" "dra-claim $NS/"
pass "$NS: pod0 gone, the claim stays prepared for pod1"
unstage xpods $NS
pass "$NS: pod1 gone, the claim is unprepared"

# 8. initcontainer-shared-gpu: the init container and the container see the same GPU.
NS=initcontainer-shared-gpu
stage init "$W/$NS/$NS.yaml"
allocate init
wait_status "dra-pod $NS/pod0 phase=Prepared"
I0=$(check_gpus $NS/pod0/init0 1)
[ "$I0" = "$(check_gpus $NS/pod0/ctr0 1)" ] || fail "init: ctr0 sees $(gpus $NS/pod0/ctr0), init0 $I0"
pass "$NS: init0 and ctr0 both see $I0"
unstage init $NS

# 9. admin-access: one claim, allocationMode All with adminAccess: every GPU
# of the node, DRA_ADMIN_ACCESS=true (the namespace carries the label
# resource.kubernetes.io/admin-access the allocator asks for). The
# shared-claim pod of step 5 still holds its GPU: admin access is not
# exclusive.
NS=admin-access
stage admin "$W/$NS/$NS.yaml"
allocate admin
wait_status "dra-pod $NS/pod0 phase=Prepared"
G=$(check_gpus $NS/pod0/ctr0 8)
[ "$G" = "gpu-0 gpu-1 gpu-2 gpu-3 gpu-4 gpu-5 gpu-6 gpu-7" ] || fail "admin: $G"
[ "$(dra_env $NS/pod0/ctr0 DRA_ADMIN_ACCESS)" = true ] || fail "admin: DRA_ADMIN_ACCESS=$(dra_env $NS/pod0/ctr0 DRA_ADMIN_ACCESS)"
pass "$NS: ctr0 sees all 8 GPUs (GPU_DEVICE_0..7, including $SHARED_GPU held by another claim), DRA_ADMIN_ACCESS=true"
unstage admin $NS

# 10. binding-conditions: one pod, one GPU. The agent publishes no
# bindingConditions (the example driver does only with
# kubeletPlugin.bindingConditions; the scheduler waits for them, the node does
# not), so at node level the outcome is the pod running with one GPU.
NS=binding-conditions
stage bind "$W/$NS/$NS.yaml"
allocate bind
wait_status "dra-pod $NS/pod0 phase=Prepared"
v1_running $NS/pod0
pass "$NS: pod0 runs with one GPU ($(check_gpus $NS/pod0/ctr0 1))"
unstage bind $NS

# 11. podgroup-resourceclaimtemplate: two PodGroups of two pods (the
# Deployments' pods, named as the test's stand-in for the ReplicaSet
# controller does); the pods of a group share one claim, <group>-gpu, owned
# by the PodGroup; the groups get different GPUs.
NS=podgroup-resourceclaimtemplate
stage pg "$W/$NS/$NS.yaml"
grep -q "kind: PodGroup" "$CL/$NS/group-1-gpu.yaml" || fail "pg: group-1-gpu is not owned by the PodGroup"
allocate pg
wait_status "dra-pod $NS/group-1-0 phase=Prepared" "dra-pod $NS/group-1-1 phase=Prepared" \
        "dra-pod $NS/group-2-0 phase=Prepared" "dra-pod $NS/group-2-1 phase=Prepared" \
        "dra-pod-claim $NS/group-2-1 gpu=group-2-gpu"
P1=$(check_gpus $NS/group-1-0/ctr0 1) P2=$(check_gpus $NS/group-2-0/ctr0 1)
[ "$P1" = "$(check_gpus $NS/group-1-1/ctr0 1)" ] && [ "$P2" = "$(check_gpus $NS/group-2-1/ctr0 1)" ] && [ "$P1" != "$P2" ] ||
        fail "pg: $(flat | grep "dra-env $NS/.*GPU_DEVICE_[0-9]*=")"
[ "$(flat | grep -c "^dra-claim $NS/")" = 2 ] || fail "pg: expected two prepared claims"
pass "$NS: group-1 pods share $P1 (claim group-1-gpu), group-2 pods share $P2 (group-2-gpu)"
unstage pg $NS

# 12. extended-resource-request (KEP-5004). pod0 asks for
# deviceclass.resource.kubernetes.io/gpu.example.com: 1; the scheduler
# creates the claim (one request per container resource) and records it in
# status.extendedResourceClaimStatus; this test plays that part, allocates
# the claim with `devplane allocate`, and the node prepares it and gives ctr0
# the GPU of its mapped request. pod1 asks for example.com/gpu, which no
# DeviceClass maps (extendedResourceName unset): the scheduler leaves it
# Pending, so it never reaches the node (a scheduling outcome, asserted by
# there being nothing to allocate for it).
NS=extended-resource-request
/usr/bin/python3 - "$W/$NS/$NS.yaml" "$WORK" <<'PY'
import sys, yaml
docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d]
pods = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Pod"}
res = lambda p: list(p["spec"]["containers"][0]["resources"]["limits"])[0]
assert res(pods["pod1"]) == "example.com/gpu", res(pods["pod1"])
p = pods["pod0"]
r = res(p)
assert r.startswith("deviceclass.resource.kubernetes.io/"), r
cls = r.split("/", 1)[1]
claim = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "pod0-extended-resources-0", "namespace": "extended-resource-request",
                      "uid": "uid-ext-pod0",
                      "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                      "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "pod0", "uid": "uid-pod0",
                                           "controller": True}]},
         "spec": {"devices": {"requests": [{"name": "container-0-request-0",
                                            "exactly": {"deviceClassName": cls, "count": 1}}]}}}
p["status"] = {"extendedResourceClaimStatus": {"resourceClaimName": claim["metadata"]["name"],
               "requestMappings": [{"containerName": "ctr0", "resourceName": r, "requestName": "container-0-request-0"}]}}
yaml.safe_dump_all([claim], open(sys.argv[2] + "/ext-claims.yaml", "w"))
yaml.safe_dump_all([p], open(sys.argv[2] + "/ext-pods.yaml", "w"))
open(sys.argv[2] + "/ext-rules.yaml", "w").close()
open(sys.argv[2] + "/ext-pods.txt", "w").write("extended-resource-request/pod0 pod0-extended-resources-0\n")
PY
cp "$WORK/ext-claims.yaml" "$MF/ext-claims.yaml"
cp "$WORK/ext-pods.yaml" "$MF/.ext.tmp" && mv "$MF/.ext.tmp" "$MF/ext-pods.yaml"
wait_status "dra-pod-message $NS/pod0 ResourceClaim $NS/pod0-extended-resources-0 is not allocated"
allocate ext
wait_status "dra-pod $NS/pod0 phase=Prepared" "dra-pod-claim $NS/pod0 @extended-resources=pod0-extended-resources-0"
v1_running $NS/pod0
pass "$NS: pod0's extended resource served by DRA: ctr0 sees $(check_gpus $NS/pod0/ctr0 1); V1 did not ask a device plugin; pod1 (example.com/gpu, no class maps it) stays Pending at the scheduler"
unstage ext $NS

# 13. device-taints-tolerations. The DeviceTaintRules are the allocator's
# input (the node and the driver never see them); eviction is the
# device-taint-eviction controller's, not the node's: here the pods the
# rules leave running are checked at node level, the ones they keep out at
# the allocate step.
NS=basic-resourceclaimtemplate
D=$W/device-taints-tolerations
#   noschedule: a pod prepared before the rule keeps running; after it, a new pod is not scheduled.
stage tn "$D/device-taint-pod-noschedule/1-basic-resourceclaimtemplate.yaml" "$D/device-taint-pod-noschedule/2-pod-keeps-running.yaml"
allocate tn
wait_status "dra-pod $NS/pod-keeps-running phase=Prepared"
stage tn2 "$D/device-taint-pod-noschedule/1-basic-resourceclaimtemplate.yaml" \
        "$D/device-taint-pod-noschedule/3-device-taint-rule.yaml" "$D/device-taint-pod-noschedule/4-pod-not-scheduled.yaml"
allocate tn2 partial
grep -q "pod-no-schedule-gpu" "$WORK/alloc.err" || fail "taints: no reason for pod-no-schedule-gpu: $(cat "$WORK/alloc.err")"
wait_status "dra-pod $NS/pod-keeps-running phase=Prepared" "dra-pod-message $NS/pod-no-schedule ResourceClaim $NS/pod-no-schedule-gpu is not allocated"
pass "device-taint-pod-noschedule: pod-keeps-running stays prepared ($(check_gpus $NS/pod-keeps-running/ctr0 1)); pod-no-schedule is not allocated (NoSchedule taint)"
rm -f "$MF/tn2-pods.yaml"
wait_status "!dra-pod $NS/pod-no-schedule "
[ ! -e "$CL/$NS/pod-no-schedule-gpu.yaml" ] || fail "taints: the unallocated claim of a removed pod was not deleted"
rm -f "$MF/tn2-claims.yaml"
unstage tn $NS
pass "a pod that never ran is removed: the claim the node created for it is deleted"
#   noexecute: pod-to-be-evicted prepared; with the NoExecute rule pod-no-execute gets no device.
stage te "$D/device-taint-pod-noexecute/1-basic-resourceclaimtemplate.yaml" "$D/device-taint-pod-noexecute/2-pod-to-be-evicted.yaml"
allocate te
wait_status "dra-pod $NS/pod-to-be-evicted phase=Prepared"
stage te2 "$D/device-taint-pod-noexecute/1-basic-resourceclaimtemplate.yaml" \
        "$D/device-taint-pod-noexecute/3-device-taint-rule.yaml" "$D/device-taint-pod-noexecute/4-pod-no-execute.yaml"
allocate te2 partial
grep -q "pod-no-execute-gpu" "$WORK/alloc.err" || fail "taints: no reason for pod-no-execute-gpu"
pass "device-taint-pod-noexecute: pod-to-be-evicted prepared before the rule (its eviction is the controller's); pod-no-execute is not allocated under NoExecute"
rm -f "$MF/te2-pods.yaml" "$MF/te2-claims.yaml"
wait_status "!dra-pod $NS/pod-no-execute "
unstage te $NS
#   toleration: under a NoExecute rule only the tolerating pod gets a device.
stage tt "$D/device-taint-pod-toleration/1-device-taint-rule.yaml" "$D/device-taint-pod-toleration/2-basic-resourceclaimtemplate.yaml"
allocate tt partial
grep -q "pod-without-toleration-gpu" "$WORK/alloc.err" || fail "taints: no reason for pod-without-toleration-gpu"
wait_status "dra-pod $NS/pod-with-toleration phase=Prepared" "dra-pod-message $NS/pod-without-toleration ResourceClaim $NS/pod-without-toleration-gpu is not allocated"
pass "device-taint-pod-toleration: pod-with-toleration runs ($(check_gpus $NS/pod-with-toleration/ctr0 1)); pod-without-toleration is not allocated"
unstage tt $NS
#   configurable eviction time: the three pods are prepared before the rule; tolerationSeconds is the eviction controller's.
stage tc "$D/device-taint-configurable-pod-eviction-time/1-basic-resourceclaimtemplate.yaml"
allocate tc
wait_status "dra-pod $NS/pod-no-toleration phase=Prepared" "dra-pod $NS/pod-with-toleration phase=Prepared" \
        "dra-pod $NS/pod-with-300s-toleration phase=Prepared"
pass "device-taint-configurable-pod-eviction-time: three pods prepared with one GPU each (eviction after the rule is the controller's)"
unstage tc $NS

# skipNodeOperations (1.37): a claim whose results all skip both operations is
# never sent to the driver.
calls=$("$DEVPLANE" node status --plugin-dir "$PD" -o json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["draPrepareCalls"])')
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

# A claim that does not exist keeps its pod waiting, with the reason, and
# its V1 side does not start.
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
wait_status "dra-pod default/waiter phase=Waiting" "dra-pod-message default/waiter ResourceClaim default/nowhere not found" \
        "pod default/waiter phase=WaitingForClaims"
pass "pod with a missing claim waits: ResourceClaim default/nowhere not found; V1 WaitingForClaims"

# Kubelet restart: the new node walks the registry, registers the driver
# again and prepares the pods' claims again; the driver answers from its
# checkpoint, so the containers see the same GPUs.
stop "$NODE_PID"
start_dra_node
NS=basic-shared-claim-across-containers
wait_status "node node-a running pid=$NODE_PID" "dra-plugin gpu.example.com registered" "dra-pod $NS/pod0 phase=Prepared"
[ "$(check_gpus $NS/pod0/ctr1 1)" = "$SHARED_GPU" ] || fail "after the restart ctr1 sees $(gpus $NS/pod0/ctr1), not $SHARED_GPU"
pass "node restarted: driver registered again, claims prepared again (idempotent), ctr1 still sees $SHARED_GPU"
rm -f "$MF/skip.yaml" "$MF/wait.yaml"
unstage shared $NS

# Partition mode (a profile file: example-gpu with spec.partitions: 4).
stop "$AGENT_PID"
start_dra_agent --profile "$HERE/v2-e2e/example-gpu-partitions.yaml"
wait_status "dra-plugin gpu.example.com registered"
grep -q "gpu-0-partition-0" "$SL"/node-a-gpu.example.com*.yaml || fail "no partitions published"

# 14. partitionable-devices: one container, two partitions (count: 2).
NS=partitionable-devices
stage part "$W/$NS/$NS.yaml"
allocate part
wait_status "dra-pod $NS/pod0 phase=Prepared"
G=$(check_gpus $NS/pod0/ctr0 2)
case "$G" in *-partition-*" "*-partition-*) ;; *) fail "part: expected two partitions, got $G" ;; esac
pass "$NS: ctr0 sees two partitions ($G, GPU_DEVICE_<n>_PARTITION_<m>)"
unstage part $NS

# shared NAME NS MEMORY COMPUTE: pod0 and pod1 of the workload see the same
# device, each with its own share (GPU_DEVICE_<ID>_SHARE_ID) and the capacity
# its claim consumed; prints the device.
shared_device() {
        local ns=$2 d0 d1 id
        d0=$(check_gpus $ns/pod0/ctr0 1)
        d1=$(check_gpus $ns/pod1/ctr0 1)
        [ "$d0" = "$d1" ] || fail "$1: pod0 sees $d0, pod1 $d1"
        id=$(echo "${d0#gpu-}" | tr 'a-z-' 'A-Z_')
        for p in pod0 pod1; do
                [ "$(dra_env $ns/$p/ctr0 GPU_DEVICE_${id}_MEMORY)" = "$3" ] &&
                        [ "$(dra_env $ns/$p/ctr0 GPU_DEVICE_${id}_COMPUTE)" = "$4" ] ||
                        fail "$1: $p: $(flat | grep "dra-env $ns/$p/ctr0 ")"
        done
        [ -n "$(dra_env $ns/pod0/ctr0 GPU_DEVICE_${id}_SHARE_ID)" ] &&
                [ "$(dra_env $ns/pod0/ctr0 GPU_DEVICE_${id}_SHARE_ID)" != "$(dra_env $ns/pod1/ctr0 GPU_DEVICE_${id}_SHARE_ID)" ] ||
                fail "$1: share ids: $(flat | grep "dra-env $ns/pod[01]/ctr0 GPU_DEVICE_${id}_SHARE_ID")"
        echo "$d0"
}

# Consumable capacity: the agent publishes allowMultipleAllocations.
stop "$AGENT_PID"
start_dra_agent --profile "$HERE/v2-e2e/example-gpu-partitions.yaml" --allow-multiple-allocations
grep -q "allowMultipleAllocations: true" "$SL"/node-a-gpu.example.com*.yaml || fail "allowMultipleAllocations not published"

# 15. gpu-allow-multiple-allocations-partitionable: two claims of 8Gi/10
# each, both on one partition.
NS=gpu-allow-multiple-allocations-partitionable
stage mpart "$W/$NS/$NS.yaml"
allocate mpart
wait_status "dra-pod $NS/pod0 phase=Prepared" "dra-pod $NS/pod1 phase=Prepared"
D=$(shared_device mpart $NS 8Gi 10)
case "$D" in *-partition-*) ;; *) fail "mpart: $D is not a partition" ;; esac
pass "$NS: pod0 and pod1 share partition $D (8Gi, compute 10 each, own share ids)"
unstage mpart $NS

# 16. gpu-allow-multiple-allocations: two claims of 16Gi/20 each, one GPU.
stop "$AGENT_PID"
start_dra_agent --profile example-gpu --allow-multiple-allocations
NS=gpu-allow-multiple-allocations
stage multi "$W/$NS/$NS.yaml"
allocate multi
wait_status "dra-pod $NS/pod0 phase=Prepared" "dra-pod $NS/pod1 phase=Prepared"
D=$(shared_device multi $NS 16Gi 20)
pass "$NS: pod0 and pod1 share $D (16Gi, compute 20 each, own share ids)"
unstage multi $NS

# 17. net-consumable-capacity: the example driver's net profile (a profile
# file: one NIC nic-0, 100G each way, allowMultipleAllocations). pod0 takes
# 10G in / 5G out, pod1 5G / 5G, both on nic-0: NET_DEVICE_0=nic-0 with
# NET_DEVICE_0_INGRESS_RATE / _EGRESS_RATE in bits per second.
stop "$AGENT_PID"
cat >>"$WORK/class.yaml" <<'YAML'
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: net.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'net.example.com'"}
YAML
start_agent --dra --no-device-plugin --registry-dir "$REG" --plugins-dir "$KP" --cdi-dir "$CDI" --slices-dir "$SL" \
        --claims-dir "$CL" --profile "$HERE/v2-e2e/example-net.yaml" --allow-multiple-allocations
wait_status "dra-plugin net.example.com registered"
NS=net-consumable-capacity
stage net "$W/$NS/$NS.yaml"
allocate net
wait_status "dra-pod $NS/pod0 phase=Prepared" "dra-pod $NS/pod1 phase=Prepared"
net_env() { flat | sed -n "s|^dra-env $NS/$1/ctr0 NET_DEVICE_0$2=||p"; }
[ "$(net_env pod0 '')" = nic-0 ] && [ "$(net_env pod1 '')" = nic-0 ] || fail "net: $(flat | grep "dra-env $NS/")"
[ "$(net_env pod0 _INGRESS_RATE)" = 10000000000 ] && [ "$(net_env pod0 _EGRESS_RATE)" = 5000000000 ] &&
        [ "$(net_env pod1 _INGRESS_RATE)" = 5000000000 ] && [ "$(net_env pod1 _EGRESS_RATE)" = 5000000000 ] ||
        fail "net: rates: $(flat | grep "dra-env $NS/.*RATE")"
! flat | grep -q "dra-env $NS/.*GPU_DEVICE" || fail "net: GPU variables on a NIC"
pass "$NS: pod0 and pod1 share nic-0 (NET_DEVICE_0), ingress/egress 10G/5G and 5G/5G"
unstage net $NS

# 18. native-resource-request: the example driver's cpu profile (a profile
# file: numa-0 with 2 CPUs as consumable capacity). One claim, two 1-CPU
# requests, both served by numa-0 through two shares (asserted at the
# allocate step); the container sees CPU_DEVICE_0=numa-0 with
# CONSUMED_CPU=1 per share (the second share's variables carry _1). The
# kubelet's accounting of node-allocatable CPU from claims
# (nodeAllocatableResourceClaimStatuses) is not modelled by the node.
stop "$AGENT_PID"
cat >>"$WORK/class.yaml" <<'YAML'
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: cpu.example.com}
spec:
  selectors:
  - cel: {expression: "device.driver == 'cpu.example.com'"}
YAML
start_agent --dra --no-device-plugin --registry-dir "$REG" --plugins-dir "$KP" --cdi-dir "$CDI" --slices-dir "$SL" \
        --claims-dir "$CL" --profile "$HERE/v2-e2e/example-cpu.yaml" --allow-multiple-allocations
wait_status "dra-plugin cpu.example.com registered"
NS=native-resource-request
stage cpu "$W/$NS/$NS.yaml"
allocate cpu
got=$(/usr/bin/python3 -c 'import sys, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    rs = d["status"]["allocation"]["devices"]["results"]
    print(" ".join("%s:%s" % (r["request"], r["device"]) for r in rs), len({r["shareID"] for r in rs}))' \
        "$WORK/cpu.allocated.yaml")
[ "$got" = "cpu0:numa-0 cpu1:numa-0 2" ] || fail "cpu: allocation: $got"
wait_status "dra-pod $NS/pod0 phase=Prepared" "dra-env $NS/pod0/ctr0 CPU_DEVICE_0=numa-0" \
        "dra-env $NS/pod0/ctr0 CPU_DEVICE_0_CONSUMED_CPU=1" "dra-env $NS/pod0/ctr0 CPU_DEVICE_0_1_CONSUMED_CPU=1"
v1_running $NS/pod0
pass "$NS: cpu0 and cpu1 share numa-0 (two share ids); ctr0 sees CPU_DEVICE_0=numa-0, 1 CPU per share"
unstage cpu $NS

stop "$AGENT_PID"
stop "$NODE_PID"
