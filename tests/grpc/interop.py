# SPDX-License-Identifier: Apache-2.0
"""Shared bits of the interop tests: find the peer programs, run one with
its stdout read line by line on a thread, wait for lines (never sleep)."""
import os
import queue
import subprocess
import sys
import tempfile
import threading


def build_dir():
    d = os.environ.get("DP_BUILD_DIR")
    if not d:
        sys.exit("DP_BUILD_DIR is not set (run through ctest)")
    return d


def peer(name):
    return os.path.join(build_dir(), "tests", "grpc-peer-" + name)


class Proc:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def expect(self, prefix, timeout=20):
        while True:
            line = self.lines.get(timeout=timeout)
            if line is None:
                raise AssertionError("peer exited while waiting for %r" % prefix)
            if line.startswith(prefix):
                return line


def tmpdir():
    return tempfile.TemporaryDirectory(prefix="dp-interop-")


class Runner:
    def __init__(self):
        self.failed = 0

    def run(self, fn, *args):
        try:
            fn(*args)
            print("PASS", fn.__name__, flush=True)
        except Exception as e:  # report and go on with the next case
            import traceback
            traceback.print_exc()
            print("FAIL", fn.__name__, e, flush=True)
            self.failed += 1
