#!/usr/bin/env bash
# The short fault-injection soak of the node path (issue 11): node + agent
# (V1 and V2 on the same GPUs), kill -9 of either at random moments, a
# corrupted checkpoint now and then, restart, and after every round: no device
# held twice, no Running pod without its devices, no claim prepared 10 s after
# its pod went, every checkpoint readable, no V1 pod waiting while GPUs are
# free. Fixed seeds so a failure reproduces; the long run (2,000+ rounds) is
# `tests/tools/soak-node.py --rounds 2000 --seed N` (docs/v2-node-path.md).
set -euo pipefail
: "${DEVPLANE:?DEVPLANE must point to the devplane binary}"
HERE=$(cd "$(dirname "$0")" && pwd)
for seed in 11 12; do
        /usr/bin/python3 "$HERE/soak-node.py" --devplane "$DEVPLANE" --rounds 20 --seed "$seed" \
                --kill-rate 0.6 --corrupt-rate 0.4
done
