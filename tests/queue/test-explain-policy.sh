#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# devplane explain --queue-policy (kueue|kai|volcano), as simulate takes it: a pod
# Volcano's or KAI-Scheduler's admission holds back is explained with that policy's
# reason, the very text simulate reports for it (not kube-scheduler's "not scheduled
# by default-scheduler"); a pod Volcano's reclaim evicted says so; KAI's policy is
# chosen without the flag when the input has KAI Queues and no Kueue object;
# --queue-policy kueue leaves kai-scheduler's pods to nobody; a bad policy exits 2.
set -euo pipefail
: "${DEVPLANE:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# simulate's reason for a pod (-o json), to compare explain's with
reason_of() { # FILE POD
        python3 - "$1" "$2" <<'PY'
import json, sys
pods = {p["name"]: p for p in json.load(open(sys.argv[1]))["asWritten"]["pods"]}
print(pods[sys.argv[2]].get("reason", ""))
PY
}

# Volcano: gang3 is Inqueue without enough resources, eval's queue has no quota left
"$DEVPLANE" simulate -f data/volcano.yaml --queue-policy volcano -o json >"$tmp/vc.json" 2>/dev/null ||
        fail "simulate volcano: exit $?"
for pod in default/gang3-0 default/eval-0; do
        want=$(reason_of "$tmp/vc.json" "$pod")
        case "$want" in Volcano:*) ;; *) fail "simulate's reason for $pod: '$want'" ;; esac
        "$DEVPLANE" explain "$pod" -f data/volcano.yaml --queue-policy volcano >"$tmp/out" 2>"$tmp/err" ||
                fail "explain $pod: exit $?: $(cat "$tmp/err")"
        grep -Fxq "Held back by its queue policy (--queue-policy volcano): $want" "$tmp/out" ||
                fail "explain $pod: $(cat "$tmp/out")"
        ! grep -q "not scheduled by default-scheduler" "$tmp/out" || fail "explain $pod still says not ours"
done
grep -q "queue resource quota insufficient" "$tmp/out" || fail "eval's reason: $(cat "$tmp/out")"
# the plugin is taken as simulate takes it (capacity: team-a is overused, gang3 not tried)
"$DEVPLANE" explain default/train-0 -f data/volcano.yaml --queue-policy volcano --volcano-plugin capacity \
        >"$tmp/out" 2>/dev/null || fail "explain --volcano-plugin: exit $?"
grep -q '^Pod default/train-0: Running' "$tmp/out" || fail "train-0 under capacity: $(cat "$tmp/out")"
# without the policy the pod is nobody's, as before
"$DEVPLANE" explain default/gang3-0 -f data/volcano.yaml >"$tmp/out" 2>/dev/null
grep -q "not scheduled by default-scheduler: spec.schedulerName volcano" "$tmp/out" || fail "no policy: $(cat "$tmp/out")"

# Volcano's reclaim evicts a-3 for q2's job: explain names the action, not the device taint controller
"$DEVPLANE" explain ns1/a-3 -f volcano/case-reclaim.yaml --queue-policy volcano \
        --volcano-actions enqueue,allocate,backfill,reclaim >"$tmp/out" 2>/dev/null || fail "reclaim: exit $?"
grep -q "^Evicted at t=0s by Volcano's reclaim action: Volcano reclaim: evicted for PodGroup ns1/b of queue q2" \
        "$tmp/out" || fail "reclaim: $(cat "$tmp/out")"
! grep -q "device taint" "$tmp/out" || fail "reclaim blamed on device taints"

# KAI-Scheduler: train-2 is over team-a's GPU limit; with the flag and without it (KAI Queues, no Kueue)
"$DEVPLANE" simulate -f kai/data/limited.yaml -f kai/data/gpu-nodes.yaml --queue-policy kai -o json \
        >"$tmp/kai.json" 2>/dev/null || fail "simulate kai: exit $?"
want=$(reason_of "$tmp/kai.json" default/train-2)
case "$want" in "KAI-Scheduler OverLimit: "*) ;; *) fail "simulate's reason for train-2: '$want'" ;; esac
for flag in "--queue-policy kai" ""; do
        # shellcheck disable=SC2086
        "$DEVPLANE" explain train-2 -f kai/data/limited.yaml -f kai/data/gpu-nodes.yaml $flag >"$tmp/out" 2>/dev/null ||
                fail "explain train-2 ($flag): exit $?"
        grep -Fxq "Held back by its queue policy (--queue-policy kai): $want" "$tmp/out" ||
                fail "explain train-2 ($flag): $(cat "$tmp/out")"
done
# --queue-policy kueue: KAI does not run, nobody admits the pod
"$DEVPLANE" explain train-2 -f kai/data/limited.yaml -f kai/data/gpu-nodes.yaml --queue-policy kueue \
        >"$tmp/out" 2>/dev/null || fail "explain kueue: exit $?"
grep -q "not scheduled by default-scheduler: spec.schedulerName kai-scheduler" "$tmp/out" ||
        fail "--queue-policy kueue: $(cat "$tmp/out")"

# bad values exit 2 naming the flag
if "$DEVPLANE" explain train-2 -f kai/data/limited.yaml --queue-policy bogus >/dev/null 2>"$tmp/err"; then
        fail "--queue-policy bogus accepted"
else
        [ $? = 2 ] || fail "bad policy: exit not 2"
fi
grep -q "explain: --queue-policy bogus: must be .*kai" "$tmp/err" || fail "policy message: $(cat "$tmp/err")"
if "$DEVPLANE" explain default/gang3-0 -f data/volcano.yaml --queue-policy volcano --volcano-actions enqueue \
        >/dev/null 2>"$tmp/err"; then
        fail "--volcano-actions without allocate accepted"
else
        [ $? = 2 ] || fail "bad actions: exit not 2"
fi
echo PASS
