#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# rss-nvml.sh — resident memory of `devplane agent --backend nvml` on the fake
# libnvidia-ml.so.1 (tests/devices/fake-nvml) describing 8 A100-80GB in MIG
# mode with seven 1g.10gb each (tests/devices/fixtures/a100-8x7.nvml.yaml:
# 8 GPUs, 56 MIG devices), migStrategy mixed (nvidia.com/mig-1g.10gb: 56).
# `devplane node` plays the kubelet (and the DRA plugin watcher); the agent
# is measured once the node has it registered and streaming: V1 alone, and
# V1 + DRA (slices written to a directory, DRA driver registered, health
# stream open). Three runs each; prints VmRSS, RssAnon, RssFile (KiB, from
# /proc/PID/status) as median and min-max, then the versions.
#
# Usage, with a build without sanitizers (gcc Release):
#   cmake -S . -B build/n6-rel -DCMAKE_BUILD_TYPE=Release
#   cmake --build build/n6-rel --target devplane fake-nvml -j2
#   bench/nvml/rss-nvml.sh build/n6-rel [runs]
# The fake library's own share (it and libyaml are mapped into the agent)
# is part of the figures, as the real libnvidia-ml.so.1 would be on a node.
set -euo pipefail
BUILD=$(cd "${1:?usage: rss-nvml.sh BUILD_DIR [runs]}" && pwd)
RUNS=${2:-3}
SRC=$(cd "$(dirname "$0")/../.." && pwd)
DEV=$BUILD/devplane
LIB=$BUILD/tests/fake-nvml/libnvidia-ml.so.1
[ -x "$DEV" ] && [ -e "$LIB" ] || { echo "build devplane and fake-nvml in $BUILD first" >&2; exit 2; }
if nm -D "$DEV" 2>/dev/null | grep -q __asan_init; then
        echo "$DEV is built with sanitizers: figures would be meaningless" >&2
        exit 2
fi
export DP_FAKE_NVML_CONFIG=$SRC/tests/devices/fixtures/a100-8x7.nvml.yaml DP_NVML_LIBRARY=$LIB
T=$(mktemp -d "${TMPDIR:-/tmp}/dp-rss-nvml.XXXXXX")
PIDS=()
cleanup() {
        for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
        rm -rf "$T"
}
trap cleanup EXIT
printf 'version: v1\nflags:\n  migStrategy: mixed\n' >"$T/mixed.yaml"
export DP_FAKE_NVML_EVENTS=$T/events
: >"$T/events"

# run MODE -> "VmRSS RssAnon RssFile" of one agent
run() {
        local mode=$1 d
        d=$(mktemp -d "$T/run.XXXXXX")
        mkdir -p "$d/pd" "$d/mf" "$d/st"
        "$DEV" node --plugin-dir "$d/pd" --manifests "$d/mf" --node-name node-a --registry-dir "$d/reg" \
                --claims-dir "$d/claims" --cdi-dir "$d/cdi" >"$d/node.log" 2>&1 &
        local node=$!
        PIDS+=("$node")
        "$DEV" node status --plugin-dir "$d/pd" --timeout 20 --wait "node node-a running pid=$node" -o flat >/dev/null
        local extra=() waits=(--wait "resource nvidia.com/mig-1g.10gb capacity=56 allocatable=56 inuse=0 plugin=connected")
        if [ "$mode" = dra ]; then
                extra=(--dra --registry-dir "$d/reg" --plugins-dir "$d/kp" --cdi-dir "$d/cdi" --slices-dir "$d/slices"
                        --claims-dir "$d/claims")
                waits+=(--wait "dra-health-stream gpu.nvidia.com watching: 56 devices, 0 unhealthy")
        fi
        "$DEV" agent --plugin-dir "$d/pd" --node-name node-a --state-dir "$d/st" --backend nvml --config "$T/mixed.yaml" \
                "${extra[@]}" >"$d/agent.log" 2>&1 &
        local agent=$!
        PIDS+=("$agent")
        "$DEV" node status --plugin-dir "$d/pd" --timeout 20 "${waits[@]}" -o flat >/dev/null ||
                { cat "$d/agent.log" >&2; exit 1; }
        awk '/^VmRSS:/{r=$2} /^RssAnon:/{a=$2} /^RssFile:/{f=$2} END{print r, a, f}' "/proc/$agent/status"
        kill -TERM "$agent" "$node"
        wait "$agent" || true
        wait "$node" || true
        PIDS=()
        rm -rf "$d"
}

# stats "v1 v2 v3" -> "median (min-max)"
stats() { tr ' ' '\n' <<<"$1" | sort -n | awk '{v[NR]=$1} END{printf "%d (%d-%d)", v[int((NR+1)/2)], v[1], v[NR]}'; }

printf '%-36s | %-20s | %-20s | %-20s\n' "agent, 8 GPUs x 7 MIG (KiB)" "VmRSS" "RssAnon" "RssFile"
printf '%-36s-|-%-20s-|-%-20s-|-%-20s\n' "------------------------------------" "--------------------" "--------------------" \
        "--------------------"
for mode in v1 dra; do
        rss="" anon="" file=""
        for ((i = 0; i < RUNS; i++)); do
                read -r r a f < <(run "$mode")
                rss+="$r " anon+="$a " file+="$f "
        done
        label="V1 only (56 x mig-1g.10gb)"
        [ "$mode" = dra ] && label="V1 + DRA (--dra --slices-dir)"
        printf '%-36s | %-20s | %-20s | %-20s\n' "$label" "$(stats "${rss% }")" "$(stats "${anon% }")" "$(stats "${file% }")"
done
echo
echo "median (min-max) of $RUNS runs; $("$DEV" version 2>/dev/null | head -1), commit $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)"
grep -E '^CMAKE_(C_COMPILER|BUILD_TYPE):' "$BUILD/CMakeCache.txt" | sed 's/^/  /'
echo "  $("$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$BUILD/CMakeCache.txt")" --version | head -1)"
echo "  fake NVML: driver $(sed -n 's/^driverVersion: //p' "$DP_FAKE_NVML_CONFIG"), $(uname -sr), $(nproc) cpus"
