#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# devplane cel: per-device results, class selectors, runtime errors (exit 1),
# compile errors with a caret at the column and bad input (exit 2).
set -uo pipefail
fixture="$DP_SOURCE_DIR/tests/cel/cli-slices.yaml"
fail=0
check() { # name, expected status, expected output fragment, command...
        local name=$1 want_rc=$2 want=$3
        shift 3
        local out rc
        out=$("$@" 2>&1)
        rc=$?
        if [[ $rc -ne $want_rc ]] || [[ "$out" != *"$want"* ]]; then
                echo "FAIL $name: status $rc (want $want_rc), output:"
                echo "$out"
                fail=1
        else
                echo "PASS $name"
        fi
}
check match 0 $'node-a/gpu-0: true\nnode-a/gpu-1: false' \
        "$DEVPLANE" cel "device.attributes['gpu.example.com'].model == 'LATEST-GPU-MODEL'" -f "$fixture"
check capacity 0 $'node-a/gpu-0: true\nnode-a/gpu-1: false' \
        "$DEVPLANE" cel "device.capacity['gpu.example.com'].memory.compareTo(quantity('4Gi')) >= 0" -f "$fixture"
check class 0 'node-a/gpu-0: false' \
        "$DEVPLANE" cel "true" -f "$fixture" --class other.example.com
check class-missing 2 'DeviceClass nosuch not found' \
        "$DEVPLANE" cel "true" -f "$fixture" --class nosuch
check runtime-error 1 'node-a/gpu-1: error: the expression: CEL runtime error: no such key: driverVersion' \
        "$DEVPLANE" cel "device.attributes['gpu.example.com'].driverVersion.major() == 1" -f "$fixture"
check compile-error 2 $'ERROR: <input>:1:12: found no matching overload for \'_+_\' applied to \'(int, uint)\'\n | 1 + 1 == 2 + 1u\n | ...........^' \
        "$DEVPLANE" cel "1 + 1 == 2 + 1u" -f "$fixture"
check not-bool 2 'must evaluate to bool' "$DEVPLANE" cel "device.driver" -f "$fixture"
check missing-file 2 'No such file' "$DEVPLANE" cel "true" -f "$DP_SOURCE_DIR/tests/cel/no-such-file.yaml"
check usage 2 'usage: devplane cel' "$DEVPLANE" cel "true"
check cost 0 '# estimated cost 2 (limit 1000000)' "$DEVPLANE" cel "device.driver == ''" -f "$fixture" --cost
exit $fail
