#!/usr/bin/env bash
# run-fuzzer.sh BINARY SEED_DIR SECONDS — run a libFuzzer target briefly over
# its seed corpus; new inputs go to a scratch directory removed afterwards.
set -euo pipefail
bin=$1 seeds=$2 secs=$3
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
[ -d "$seeds" ] || { echo "missing seed corpus $seeds" >&2; exit 1; }
"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 "$scratch" "$seeds"
