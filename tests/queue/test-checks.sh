#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kueue's AdmissionChecks (src/queue/checks.c), facts from Kueue's tests:
# - a ClusterQueue's state from its checks, Kueue's
#   pkg/cache/scheduler/clusterqueue_test.go TestClusterQueueUpdateWithAdmissionCheck
#   (data/checks.yaml: cq with v1beta1's admissionChecks, cq2 with admissionChecksStrategy):
#   all found and active: active; one missing: AdmissionCheckNotFound; one not Active:
#   AdmissionCheckInactive; two MultiKueue checks: MultipleMultiKueueAdmissionChecks; two
#   checks of one controller: active; Kueue's messages;
# - which checks hold a workload whose quota is reserved, pkg/workload/workload_test.go
#   TestAdmissionChecksForWorkload / TestAdmissionChecksForAdmission
#   (data/checks-workloads.yaml), and SyncAdmittedCondition: Admitted only when every check
#   is Ready; QuotaReserved otherwise, its Job suspended, its Pod gated; a Rejected check
#   deactivates it (workload_controller.go reconcileCheckBasedEviction);
# - devplane's own rule offline: a check's state not in the input is not Ready;
# - devplane's what-if --set-check NAME=Ready|Pending over the input's states;
# - over time (data/checks-over-time.yaml): a QuotaReserved Job's pod is never created;
# - explain's lines, bad values (exit 2), v1beta1's admissionChecks in a v1beta2 object.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# CASE: the ClusterQueues' state once check3's object is edited by sed expression $2
cq_state() { # NAME SED
        sed "$2" data/checks.yaml >"$tmp/$1.yaml"
        "$DEVPLANE" simulate -f "$tmp/$1.yaml" -o json >"$tmp/$1.json" 2>"$tmp/$1.err" ||
                fail "$1: exit $?: $(cat "$tmp/$1.err")"
        python3 - "$tmp/$1.json" <<'PY'
import json, sys
q = json.load(open(sys.argv[1]))["asWritten"]["queues"]
for c in q["clusterQueues"]:
    print(c["name"], str(c["active"]).lower(), c.get("inactiveReason", "Ready"), c.get("inactiveMessage", ""), sep="|")
PY
}
expect_cqs() { # NAME WANT (for cq and cq2 alike)
        local got
        got=$(cq_state "$1" "$2")
        [ "$got" = "cq|$3
cq2|$3" ] || fail "$1: got
$got
expected cq|$3 and cq2|$3"
}

# "Pending clusterQueue updated valid AC list": active, the workloads wait for their checks
expect_cqs valid 's/^x//' 'true|Ready|'
python3 - "$tmp/valid.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["asWritten"]
w = {x["name"]: x for c in run["queues"]["clusterQueues"] for x in c["workloads"]}
for name in ("default/job", "default/solo"):
    assert w[name]["state"] == "QuotaReserved", w[name]
    assert w[name]["reason"] == "UnsatisfiedChecks", w[name]
    assert w[name]["admissionChecksPending"] == "check1, check2, check3", w[name]
    assert w[name]["flavors"] == {"cpu": "default"}, w[name]
    assert "unplacedPods" not in w[name], w[name]
c = {x["name"]: x for x in run["queues"]["clusterQueues"]}
assert c["cq"]["admitted"] == 0 and c["cq"]["quotaReserved"] == 1, c["cq"]
assert c["cq"]["usage"][0]["used"] == "1", c["cq"]["usage"]   # the quota is reserved
pods = {p["name"]: p for p in run["pods"]}
assert set(pods) == {"default/solo"}, pods                   # the Job stays suspended: no pod
assert pods["default/solo"]["state"] == "Pending" and "scheduling gates" in pods["default/solo"]["reason"], pods
PY
# "Active clusterQueue updated with not found AC"
expect_cqs missing 's/metadata: {name: check3}/metadata: {name: unrelated}/' \
        "false|AdmissionCheckNotFound|Can't admit new workloads: references missing AdmissionCheck(s): check3."
python3 - "$tmp/missing.json" <<'PY'
import json, sys
w = {x["name"]: x for c in json.load(open(sys.argv[1]))["asWritten"]["queues"]["clusterQueues"] for x in c["workloads"]}
assert w["default/job"]["state"] == "Pending" and w["default/job"]["message"] == "ClusterQueue cq is inactive", w
PY
# "Active clusterQueue updated with inactive AC"
expect_cqs inactive '/name: check3}/,/^---/s/status: "True"/status: "False"/' \
        "false|AdmissionCheckInactive|Can't admit new workloads: references inactive AdmissionCheck(s): check3."
# "... updated with duplicate single instance AC Controller": two MultiKueue checks
expect_cqs multikueue 's#controllerName: controller[13]#controllerName: kueue.x-k8s.io/multikueue#' \
        "false|MultipleMultiKueueAdmissionChecks|Can't admit new workloads: Cannot use multiple MultiKueue AdmissionChecks on the same ClusterQueue, found: check1,check3."
# "Active clusterQueue with an AC strategy updated": two checks of one controller
expect_cqs samecontroller 's/controllerName: controller3/controllerName: controller2/' 'true|Ready|'
# a MultiKueue check on some flavors only (Kueue's MultiKueueAdmissionCheckAppliedPerFlavor)
sed -e 's/controllerName: controller1/controllerName: kueue.x-k8s.io\/multikueue/' \
        -e 's/{name: check1}, {name: check2}/{name: check1, onFlavors: [other]}, {name: check2}/' data/checks.yaml \
        >"$tmp/perflavor.yaml"
"$DEVPLANE" simulate -f "$tmp/perflavor.yaml" -o json 2>/dev/null | python3 -c '
import json, sys
c = {x["name"]: x for x in json.load(sys.stdin)["asWritten"]["queues"]["clusterQueues"]}
assert c["cq"]["active"], c["cq"]
assert c["cq2"].get("inactiveReason") == "MultiKueueAdmissionCheckAppliedPerFlavor", c["cq2"]
assert c["cq2"]["inactiveMessage"] == "Can'"'"'t admit new workloads: Cannot specify MultiKueue AdmissionCheck per flavor, found: check1.", c["cq2"]
' || fail "per-flavor MultiKueue check"

# which checks a workload waits for, and the input's states
"$DEVPLANE" simulate -f data/checks-workloads.yaml -o json >"$tmp/wl.json" 2>"$tmp/wl.err" ||
        fail "checks-workloads: exit $?: $(cat "$tmp/wl.err")"
python3 - "$tmp/wl.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["asWritten"]
c = {x["name"]: x for x in run["queues"]["clusterQueues"]}
w = {x["name"]: x for x in sum((x["workloads"] for x in c.values()), [])}
# "Only relevant checks returned for an admitted workload"
assert w["ns/wl"]["state"] == "QuotaReserved" and w["ns/wl"]["admissionChecksPending"] == "ac1, ac2, ac3, ac4, ac6", w["ns/wl"]
# all Ready: Admitted
assert w["ns/wl-ready"]["state"] == "Admitted" and "admissionChecksPending" not in w["ns/wl-ready"], w["ns/wl-ready"]
# one Pending in the input
assert w["ns/wl-waiting"]["state"] == "QuotaReserved" and w["ns/wl-waiting"]["admissionChecksPending"] == "ac2", w["ns/wl-waiting"]
# Rejected: deactivated, holds no quota
r = w["ns/wl-rejected"]
assert r["state"] == "Pending" and r["reason"] == "DeactivatedDueToAdmissionCheck", r
assert r["message"] == "Admission check(s): ac1, were rejected", r
use = {(u["flavor"], u["resource"]): u["used"] for u in c["cq"]["usage"]}
assert use[("flavor1", "cpu")] == "3", use      # wl, wl-ready, wl-waiting
# "Two AdmissionCheckStrategies, one with flavor, one without flavor"
assert w["ns/job-one"]["state"] == "QuotaReserved" and w["ns/job-one"]["admissionChecksPending"] == "ac1, ac2", w["ns/job-one"]
# "AdmissionCheckStrategy with only a non-existent flavor": none, it runs
assert w["ns/job-none"]["state"] == "Admitted" and "admissionChecksPending" not in w["ns/job-none"], w["ns/job-none"]
pods = {p["name"]: p["state"] for p in run["pods"]}
assert pods == {"ns/job-none-0": "Running"}, pods   # job-one stays suspended
PY

# explain: the checks, their controllers, the input's message
"$DEVPLANE" explain workload/ns/wl-waiting -f data/checks-workloads.yaml >"$tmp/out" 2>/dev/null ||
        fail "explain wl-waiting: exit $?"
grep -q '^Workload ns/wl-waiting (Workload), LocalQueue lq, ClusterQueue cq: QuotaReserved$' "$tmp/out" ||
        fail "explain header: $(cat "$tmp/out")"
grep -q '^Not admitted yet (Kueue: UnsatisfiedChecks, The workload has not all checks ready): admission check(s) ac2$' \
        "$tmp/out" || fail "explain checks: $(cat "$tmp/out")"
grep -q '^  ac2 (example.com/budget): Pending in the input: waiting for budget approval$' "$tmp/out" ||
        fail "explain ac2: $(cat "$tmp/out")"
"$DEVPLANE" explain job/job-one -n ns -f data/checks-workloads.yaml >"$tmp/out" 2>/dev/null || fail "explain job-one"
grep -q '^  ac1 (kueue.x-k8s.io/provisioning-request): its controller decides at run time' "$tmp/out" ||
        fail "explain job-one: $(cat "$tmp/out")"
! grep -q 'Pods: ' "$tmp/out" || fail "explain counts pods of a QuotaReserved Job: $(cat "$tmp/out")"
sed 's/metadata: {name: check3}/metadata: {name: unrelated}/' data/checks.yaml >"$tmp/m.yaml"
"$DEVPLANE" explain job/job -f "$tmp/m.yaml" >"$tmp/out" 2>/dev/null || fail "explain on a missing check"
grep -q "^  ClusterQueue cq active: every AdmissionCheck it names in the input, Active (Kueue: Can't admit new workloads: references missing AdmissionCheck(s): check3.)$" \
        "$tmp/out" || fail "explain missing check: $(cat "$tmp/out")"
"$DEVPLANE" simulate -f "$tmp/m.yaml" 2>/dev/null | grep -q "^  AdmissionCheckNotFound: Can't admit new workloads: references missing AdmissionCheck(s): check3.$" ||
        fail "simulate's text for an inactive ClusterQueue"

# what if the checks pass (--set-check, devplane's what-if): with all three Ready the Job runs and
# the Pod is ungated; one left Pending keeps them QuotaReserved; Pending overrides the input's Ready
"$DEVPLANE" simulate -f data/checks.yaml --set-check check1=Ready --set-check check2=Ready --set-check check3=Ready \
        -o json >"$tmp/ready.json" 2>/dev/null || fail "--set-check: exit $?"
python3 - "$tmp/ready.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["asWritten"]
w = {x["name"]: x for c in run["queues"]["clusterQueues"] for x in c["workloads"]}
assert w["default/job"]["state"] == "Admitted" and w["default/solo"]["state"] == "Admitted", w
pods = {p["name"]: p["state"] for p in run["pods"]}
assert pods == {"default/job-0": "Running", "default/solo": "Running"}, pods
PY
"$DEVPLANE" simulate -f data/checks.yaml --set-check check1=Ready --set-check check2=Ready -o json 2>/dev/null |
        python3 -c '
import json, sys
w = {x["name"]: x for c in json.load(sys.stdin)["asWritten"]["queues"]["clusterQueues"] for x in c["workloads"]}
assert w["default/job"]["state"] == "QuotaReserved" and w["default/job"]["admissionChecksPending"] == "check3", w
' || fail "--set-check with check3 left"
"$DEVPLANE" simulate -f data/checks-workloads.yaml --set-check ac2=Pending -o json 2>/dev/null | python3 -c '
import json, sys
w = {x["name"]: x for c in json.load(sys.stdin)["asWritten"]["queues"]["clusterQueues"] for x in c["workloads"]}
assert w["ns/wl-ready"]["state"] == "QuotaReserved" and w["ns/wl-ready"]["admissionChecksPending"] == "ac2", w
' || fail "--set-check ac2=Pending"
"$DEVPLANE" explain workload/ns/wl-waiting -f data/checks-workloads.yaml 2>/dev/null |
        grep -q '^Its pods stay suspended or gated until every check is Ready. What if they pass: --set-check ac2=Ready$' ||
        fail "explain's --set-check hint"
if "$DEVPLANE" simulate -f data/checks.yaml --set-check nope=Ready >/dev/null 2>"$tmp/sc.err"; then
        fail "--set-check of a check not in the input accepted"
fi
grep -q -- "--set-check nope=Ready: AdmissionCheck nope is not in the input" "$tmp/sc.err" || fail "$(cat "$tmp/sc.err")"
if "$DEVPLANE" simulate -f data/checks.yaml --set-check check1=Maybe >/dev/null 2>"$tmp/sc.err"; then
        fail "--set-check check1=Maybe accepted"
fi
grep -q -- "--set-check check1=Maybe: must be ADMISSIONCHECK=Ready or ADMISSIONCHECK=Pending" "$tmp/sc.err" ||
        fail "$(cat "$tmp/sc.err")"

# over time (a Timeline): the Job waiting on prov (onFlavors [spot]) holds spot's quota and its pod is
# never created; when first's pod is deleted, third is admitted on a100 and runs, second still waits
"$DEVPLANE" simulate -f data/checks-over-time.yaml -o json >"$tmp/ot.json" 2>/dev/null || fail "over time: exit $?"
python3 - "$tmp/ot.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["asWritten"]
w = {x["name"]: x for x in d["queues"]["clusterQueues"][0]["workloads"]}
assert w["default/first"]["state"] == "Finished", w
assert w["default/second"]["state"] == "QuotaReserved" and w["default/second"]["flavors"] == {"example.com/gpu": "spot"}, w
assert w["default/third"]["state"] == "Admitted" and w["default/third"]["flavors"] == {"example.com/gpu": "a100"}, w
pods = {p["name"]: p["state"] for p in d["pods"]}
assert pods == {"default/first-0": "Deleted", "default/second-0": "NotCreated", "default/third-0": "Running"}, pods
assert "t=30s Kueue: default/third admitted in ClusterQueue research" in d["events"], d["events"]
assert not [e for e in d["events"] if "second" in e], d["events"]
PY

# bad values exit 2 with the path; v1beta1's admissionChecks in v1beta2 is a field it does not have
bad() { # NAME SED MESSAGE
        sed "$2" "${4:-data/checks.yaml}" >"$tmp/$1.yaml"
        if "$DEVPLANE" simulate -f "$tmp/$1.yaml" >/dev/null 2>"$tmp/$1.err"; then fail "$1 accepted"; fi
        grep -q -- "$3" "$tmp/$1.err" || fail "$1: $(cat "$tmp/$1.err")"
}
bad both 's/^  admissionChecks: \[check1, check2, check3\]/  admissionChecks: [check1]\n  admissionChecksStrategy: {admissionChecks: [{name: check2}]}/' \
        "ClusterQueue cq: spec: Invalid value: Either AdmissionChecks or AdmissionCheckStrategy can be set, but not both"
bad nocontroller '0,/controllerName: controller1/s//colour: red/' "AdmissionCheck check1: spec.controllerName: Required value"
bad dup 's/{name: check2}, {name: check3}/{name: check2}, {name: check2}/' \
        'ClusterQueue cq2: spec.admissionChecksStrategy.admissionChecks\[2\]: name: Duplicate value: "check2"'
bad state 's/{name: ac2, state: Pending,/{name: ac2, state: Maybe,/' \
        'Workload ns/wl-waiting: status.admissionChecks\[1\]: state: Unsupported value: "Maybe"' data/checks-workloads.yaml
sed 's/^  admissionChecksStrategy:/  admissionChecks: [check1]\n  admissionChecksStrategy:/' data/checks.yaml >"$tmp/v2.yaml"
"$DEVPLANE" simulate -f "$tmp/v2.yaml" >/dev/null 2>"$tmp/v2.err" || fail "v1beta2 admissionChecks: exit $?"
grep -q 'ClusterQueue cq2: spec: unknown field "admissionChecks".*not a field devplane reads, ignored' "$tmp/v2.err" ||
        fail "v1beta2 admissionChecks: $(cat "$tmp/v2.err")"

# Kueue's provisioning example: its ClusterQueue runs the check; the sample Job waits on it
ex="${DP_SHARED_DIR:-}/conformance/kueue/site/static/examples"
if [ -f "$ex/provisioning/provisioning-setup.yaml" ]; then
        printf 'apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus: {allocatable: {cpu: "16", memory: 64Gi, pods: "110"}}\n' \
                >"$tmp/node.yaml"
        "$DEVPLANE" simulate -f "$ex/provisioning/provisioning-setup.yaml" -f "$ex/jobs/sample-job.yaml" -f "$tmp/node.yaml" -o json \
                >"$tmp/prov.json" 2>/dev/null || fail "provisioning example: exit $?"
        python3 - "$tmp/prov.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["asWritten"]["queues"]["clusterQueues"][0]
assert c["active"], c
w = c["workloads"][0]
assert w["state"] == "QuotaReserved" and w["admissionChecksPending"] == "sample-prov", w
PY
fi
echo PASS
