#!/usr/bin/env bash
# Hostile files in the directories `devplane node` reads (issue 11, items 7
# and 8): a FIFO named like a manifest, a claim or a CDI spec must not block
# the node in open(); a symlink to /dev/zero is refused, not read up to a
# cap; a manifest with 60,000 labels must not stall the node. After each, an
# ordinary pod still runs and SIGTERM still stops the node.
# generous: a loaded machine and a sanitized build parse 60,000 labels slowly
WAIT_TIMEOUT=${WAIT_TIMEOUT:-120}
source "$(dirname "$0")/v1-lib.sh"
REG=$T/registry CL=$T/claims CDI=$T/cdi
mkdir -p "$CL/default" "$CDI"
mkfifo "$MF/fifo.yaml" "$CL/default/fifo-claim.yaml" "$CDI/fifo.json"
ln -s /dev/zero "$MF/zero.yaml"
ln -s /dev/zero "$CL/default/zero-claim.yaml"
start_node --registry-dir "$REG" --claims-dir "$CL" --cdi-dir "$CDI"

pod p1 main
wait_status "pod default/p1 phase=Running"
grep -q "fifo.yaml: not a regular file (a FIFO)" "$T/node.log" || fail "no error for the FIFO manifest"
grep -q "zero.yaml: not a regular file (a character device)" "$T/node.log" || fail "no error for /dev/zero"
pass "FIFO and /dev/zero manifests and claims refused, an ordinary pod runs"

# 60,000 labels: the node parses it at once (duplicate keys are found by
# sorting, not pair by pair), and the pod next to it runs.
python3 - "$MF/.labels.tmp" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    f.write("apiVersion: v1\nkind: Pod\nmetadata:\n  name: labels\n  namespace: default\n  labels:\n")
    for i in range(60000):
        f.write("    l%d: v\n" % i)
    f.write("spec:\n  containers:\n  - name: main\n    image: busybox\n")
PY
mv "$MF/.labels.tmp" "$MF/labels.yaml"
pod p2 main
wait_status "pod default/p2 phase=Running" "pod default/labels phase=Running"
pass "a pod with 60,000 labels and the pod next to it run"

stop "$NODE_PID"
pass "SIGTERM stops the node"
