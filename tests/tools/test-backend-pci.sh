#!/usr/bin/env bash
# `devplane agent --backend pci` on the fake sysfs tree of the devices tests
# (tests/devices/fixtures/sysfs-pci, rules in pci.backend.yaml), V1 and V2 at
# once, with `devplane node` as the kubelet: one resource per rule type, a pod
# receives a device, the slices list the same devices, and an operator
# health override reaches both paths (V1 allocatable, V2 taint).
source "$(dirname "$0")/v1-lib.sh"
: "${DP_SOURCE_DIR:?}"
FX=$DP_SOURCE_DIR/tests/devices/fixtures
REG=$T/registry SL=$T/slices
start_node --registry-dir "$REG"
start_agent --backend pci --sysfs-root "$FX/sysfs-pci" --backend-config "$FX/pci.backend.yaml" --dra \
        --registry-dir "$REG" --plugins-dir "$T/kp" --cdi-dir "$T/cdi" --slices-dir "$SL"
wait_status "resource example.com/vfio-nic capacity=1 allocatable=1" "resource example.com/nic capacity=1 allocatable=1" \
        "resource example.com/fpga capacity=1 allocatable=1" "dra-plugin pci.example.com registered"
S=$SL/node-a-pci.example.com.yaml
for d in vfio-nic-0 nic-0 fpga-0; do grep -q "name: $d\$" "$S" || fail "slice lacks $d"; done
pass "pci rules: V1 example.com/{vfio-nic,nic,fpga}, V2 driver pci.example.com with the same 3 devices"

pod f main=example.com/fpga:1
wait_status "pod default/f phase=Running"
[ -n "$(held f main example.com/fpga)" ] || fail "pod f got no fpga"
pass "a pod receives the fpga ($(held f main example.com/fpga))"

"$DEVPLANE" agent health --state-dir "$ST" set nic-0 unhealthy
wait_status "resource example.com/nic capacity=1 allocatable=0"
grep -q 'key: pci.example.com/unhealthy' "$S" && grep -q 'generation: 2' "$S" || fail "no taint in generation 2"
pass "nic-0 unhealthy: V1 allocatable 0, V2 taint pci.example.com/unhealthy in generation 2"
stop "$AGENT_PID"
