#!/usr/bin/env bash
# State files of `devplane node` that are not regular files (issue 21, F5):
# the device-manager checkpoint, the DRA manager's state and the status file,
# each replaced by a directory or a symlink to /dev/zero while the node is
# down. The node starts, sets the thing aside (<file>.corrupt...) as it does
# corrupt content, rebuilds from the other records, and running pods keep
# their GPUs. Before: the node exited at start (checkpoint, DRA state) or
# never wrote its status again (a directory in its place).
source "$(dirname "$0")/v1-lib.sh"
source "$(dirname "$0")/node-files-lib.sh"
R=nvidia.com/gpu
REG=$T/registry
mkdir -p "$REG"
start_node --registry-dir "$REG"
start_agent
wait_status "resource $R capacity=8 allocatable=8 inuse=0 plugin=connected"
pod x main=$R:3
wait_status "pod default/x phase=Running"
pod a main=$R:2
wait_status "pod default/a phase=Running"
unpod x
wait_status "!pod default/x " "inuse=2 "
A=$(held a main $R)

for f in kubelet_internal_checkpoint dra_manager_state.json devplane_node_status.json; do
        for kind in directory devzero; do
                kill9
                rm -rf "$PD/$f"
                if [ $kind = directory ]; then mkdir -p "$PD/$f/inside"; else ln -s /dev/zero "$PD/$f"; fi
                start_node --registry-dir "$REG"
                wait_status "pod default/a phase=Running" "inuse=2 plugin=connected"
                [ "$(held a main $R)" = "$A" ] || fail "$f as a $kind: a held $A, now $(held a main $R)"
                [ -f "$PD/$f" ] && [ ! -L "$PD/$f" ] || fail "$f as a $kind: not rewritten as a regular file"
                ls -d "$PD/$f".corrupt* >/dev/null 2>&1 || fail "$f as a $kind: not set aside"
                grep -q "$f.*not a regular file" "$T/node.log" || fail "$f as a $kind: nothing logged"
                rm -rf "$PD/$f".corrupt*
                : >"$T/node.log"
                pass "$f as a $kind: set aside, rebuilt, a keeps its GPUs"
        done
done
