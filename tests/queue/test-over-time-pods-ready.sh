#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Kueue's waitForPodsReady (--kueue-config): checked as Kueue's
# validateWaitForPodsReady checks it when enabled (a negative timeout or
# backoff, an unsupported requeuing timestamp: exit 2 with the field path),
# and not modelled: one warning naming the fields set; with enable: false
# Kueue ignores it and so does devplane, without a word.
set -euo pipefail
: "${DEVPLANE:?}"
d=data/over-time-integrations
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cfg() { # apiVersion, then the waitForPodsReady body lines
        local v=$1
        shift
        printf 'apiVersion: config.kueue.x-k8s.io/%s\nkind: Configuration\nwaitForPodsReady:\n' "$v"
        printf '  %s\n' "$@"
}
run() { "$DEVPLANE" simulate -f $d/base.yaml -f $d/pytorchjob.yaml --kueue-config "$tmp/c.yaml" >"$tmp/out" 2>"$tmp/err"; }

cfg v1beta1 'enable: true' 'timeout: 10m' 'blockAdmission: true' \
        'requeuingStrategy: {timestamp: Creation, backoffLimitCount: 5, backoffBaseSeconds: 60, backoffMaxSeconds: 3600}' \
        >"$tmp/c.yaml"
run || fail "enabled: exit $?: $(cat "$tmp/err")"
grep -q 'c.yaml: Configuration: waitForPodsReady: not modelled, ignored (timeout, blockAdmission, requeuingStrategy): devplane neither evicts' "$tmp/err" ||
        fail "warning: $(cat "$tmp/err")"
[ "$(grep -c waitForPodsReady "$tmp/err")" = 1 ] || fail "one warning: $(cat "$tmp/err")"
grep -Eq '^  default/pt +PyTorchJob Admitted' "$tmp/out" || fail "admission changed: $(cat "$tmp/out")"

# v1beta2 has no enable: the section is on when present; an unknown field is its own warning
cfg v1beta2 'recoveryTimeout: 3m' 'colour: blue' >"$tmp/c.yaml"
run || fail "v1beta2: exit $?"
grep -q 'waitForPodsReady: not modelled, ignored (recoveryTimeout): ' "$tmp/err" || fail "v1beta2: $(cat "$tmp/err")"
grep -q 'waitForPodsReady: unknown field "colour"' "$tmp/err" || fail "unknown: $(cat "$tmp/err")"
[ "$(grep -c colour "$tmp/err")" = 1 ] || fail "unknown twice: $(cat "$tmp/err")"

# enable: false: Kueue ignores the rest, bad values included
cfg v1beta1 'enable: false' 'timeout: -1m' >"$tmp/c.yaml"
run || fail "disabled: exit $?"
[ ! -s "$tmp/err" ] || fail "disabled: $(cat "$tmp/err")"

# Kueue's validation (exit 2, the path)
check() { # expected message, then the body lines
        local want=$1
        shift
        cfg v1beta1 'enable: true' "$@" >"$tmp/c.yaml"
        if run; then fail "accepted: $*"; else rc=$?; fi
        [ $rc = 2 ] || fail "exit $rc for $*"
        grep -qF "$want" "$tmp/err" || fail "message for $*: $(cat "$tmp/err")"
}
check 'waitForPodsReady.timeout: must be a duration such as 168h, 5m or 90s, not negative' 'timeout: -5m'
check 'waitForPodsReady.requeuingStrategy.timestamp: Unsupported value: "Admission": supported values: "Creation", "Eviction"' \
        'requeuingStrategy: {timestamp: Admission}'
check 'waitForPodsReady.requeuingStrategy.backoffLimitCount: must be greater than or equal to 0' \
        'requeuingStrategy: {backoffLimitCount: -1}'
check 'waitForPodsReady.requeuingStrategy.backoffBaseSeconds: must be greater than or equal to 0' \
        'requeuingStrategy: {backoffBaseSeconds: -60}'
check 'waitForPodsReady.requeuingStrategy.backoffMaxSeconds: must be greater than or equal to 0' \
        'requeuingStrategy: {backoffMaxSeconds: -1}'
check 'waitForPodsReady.blockAdmission' 'blockAdmission: sometimes'
echo PASS
