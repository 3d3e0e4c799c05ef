#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# rss-breakdown.sh — what the memory of `devplane agent` (V1, profile
# a100-80gb-8 unless given) is made of, once `devplane node` shows it
# registered and its devices connected: /proc/PID/smaps_rollup (Pss and its
# anonymous and file parts, Anonymous), /proc/PID/status (VmRSS, RssAnon,
# RssFile), then /proc/PID/smaps summed per mapping name (the executable,
# each library, [heap], [stack], anonymous mappings, thread stacks), Pss, Rss
# and its anonymous part, largest Pss first; the thread count. Where a
# memory cgroup can be made (root, cgroup v2 or v1), the agent runs alone in
# a new one and its charge is printed too (memory.current, or v1's
# memory.usage_in_bytes): what the kubelet would count for its container,
# less the file pages other processes read first.
#
#   bench/v1/rss-breakdown.sh BUILD_DIR [PROFILE]
set -euo pipefail
BUILD=$(cd "${1:?usage: rss-breakdown.sh BUILD_DIR [PROFILE]}" && pwd)
PROFILE=${2:-a100-80gb-8}
DEV=$BUILD/devplane
[ -x "$DEV" ] || { echo "build devplane in $BUILD first" >&2; exit 2; }
T=$(mktemp -d "${TMPDIR:-/tmp}/dp-rss-v1.XXXXXX")
PIDS=()
cleanup() {
        for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
        for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
        rm -rf "$T"
        [ -z "$CG" ] || rmdir "$CG" 2>/dev/null || true
}
trap cleanup EXIT
mkdir -p "$T/pd" "$T/mf" "$T/st"
"$DEV" node --plugin-dir "$T/pd" --manifests "$T/mf" --node-name node-a >"$T/node.log" 2>&1 &
node=$!
PIDS+=("$node")
"$DEV" node status --plugin-dir "$T/pd" --timeout 20 --wait "node node-a running pid=$node" -o flat >/dev/null
# A memory cgroup of its own, where one can be made.
CG=
for parent in /sys/fs/cgroup /sys/fs/cgroup/memory; do
        case $(stat -f -c %T "$parent" 2>/dev/null) in cgroup2fs | cgroupfs) ;; *) continue ;; esac
        if [ -w "$parent" ] && mkdir "$parent/dp-rss-$$" 2>/dev/null; then CG=$parent/dp-rss-$$; break; fi
done
# shellcheck disable=SC2016 # $$ and "$@" belong to the inner shell
sh -c '[ -z "$1" ] || echo $$ >"$1/cgroup.procs"; shift; exec "$@"' sh "$CG" \
        "$DEV" agent --plugin-dir "$T/pd" --node-name node-a --state-dir "$T/st" --profile "$PROFILE" -v \
        >"$T/agent.log" 2>&1 &
agent=$!
PIDS+=("$agent")
"$DEV" node status --plugin-dir "$T/pd" --timeout 20 \
        --wait "resource nvidia.com/gpu capacity=8 allocatable=8 inuse=0 plugin=connected" -o flat >/dev/null ||
        { cat "$T/agent.log" >&2; exit 1; }
for _ in $(seq 1000); do grep -q epoll "/proc/$agent/wchan" && break; done
grep -E '^(Rss|Pss|Pss_Anon|Pss_File|Anonymous):' "/proc/$agent/smaps_rollup" | tr -s ' \t' ' '
grep -E '^(VmRSS|RssAnon|RssFile|RssShmem|VmHWM|Threads):' "/proc/$agent/status" | tr -s ' \t' ' '
if [ -n "$CG" ]; then
        for f in memory.current memory.usage_in_bytes; do
                [ -r "$CG/$f" ] && echo "cgroup $f: $(($(cat "$CG/$f") / 1024)) kB"
        done
fi
awk '
/^[0-9a-f]+-[0-9a-f]+ / { name = (NF >= 6) ? $6 : "[anon]"; sub(/.*\//, "", name); next }
/^Rss:/       { rss[name] += $2 }
/^Pss:/       { pss[name] += $2 }
/^Anonymous:/ { anon[name] += $2 }
END { for (n in rss) if (rss[n] > 0) printf "%8d KiB pss %8d KiB rss %8d KiB anon  %s\n", pss[n], rss[n], anon[n], n }
' "/proc/$agent/smaps" | sort -rn
