# SPDX-License-Identifier: Apache-2.0
# node-files-lib.sh — more helpers for the tests of the node's files (issue
# 21), sourced after v1-lib.sh.

# in_userns: re-run the calling test inside a user + mount namespace, so that
# it may mount a small tmpfs (a real full disk, no root needed). Prints a
# skip line and exits 0 where namespaces are not allowed.
in_userns() {
        [ -n "${DP_IN_USERNS:-}" ] && return 0
        if ! unshare -Urm true 2>/dev/null; then
                echo "skip: user and mount namespaces are not available here"
                exit 0
        fi
        local base rc=0
        base=$(mktemp -d "${TMPDIR:-/tmp}/dp-userns.XXXXXX")
        DP_IN_USERNS=1 TMPDIR=$base unshare -Urm bash "$0" "$@" || rc=$?
        rm -rf "$base"
        exit $rc
}

# mount_small_tmpfs DIR SIZE (inside in_userns, after v1-lib.sh): unmounted
# (lazily, the daemons may still run) before v1-lib's cleanup removes $T.
mount_small_tmpfs() {
        mount -t tmpfs -o "size=$2" tmpfs "$1"
        # cleanup reads the test's exit status from $?: keep it across umount
        trap 'rc_=$?; umount -l "'"$1"'" 2>/dev/null; (exit $rc_); cleanup' EXIT
}

# wait_log PATTERN: until the node's log has a line matching PATTERN
# (tail -F follows the file as it grows; no polling of our own).
wait_log() {
        timeout "$WAIT_TIMEOUT" grep -m1 -q -- "$1" <(tail -n +1 -F --pid=$$ "$T/node.log" 2>/dev/null) ||
                fail "the node never logged: $1"
}

# kill9: the node dies without writing anything more.
kill9() {
        kill -KILL "$NODE_PID"
        wait "$NODE_PID" 2>/dev/null || true
        local keep=()
        for p in "${PIDS[@]}"; do [ "$p" != "$NODE_PID" ] && keep+=("$p"); done
        PIDS=("${keep[@]+"${keep[@]}"}")
}

# fill_disk DIR: the filesystem of DIR has no free block left.
fill_disk() { dd if=/dev/zero of="$1/.fill" bs=4k 2>/dev/null || true; }
free_disk() { rm -f "$1/.fill"; }

# no_overlap WHAT IDS OTHERS: no id of IDS is in OTHERS (comma lists).
no_overlap() {
        local id
        for id in ${2//,/ }; do
                case ",$3," in *",$id,"*) fail "$1: $id is held twice" ;; esac
        done
}
