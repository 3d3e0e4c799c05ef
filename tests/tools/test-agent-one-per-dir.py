# SPDX-License-Identifier: Apache-2.0
"""One `devplane agent` per directory (issue 21, F3). While agent A runs
with a prepared claim:

- B on the same --state-dir (everything else its own) is refused with A's
  pid and stops without touching A's files or sockets;
- C on the same DRA driver directory (--plugins-dir) is refused with A's pid;
- D on the same V1 plugin directory (its own state and driver directories)
  does not replace A's live V1 socket: refused with A's pid;
- A still serves V1 and V2 with the same sockets, and its claim still holds
  its GPU; after A stops (SIGKILL: the kernel drops the lock) an agent
  starts on the same directories and finds the claim.
"""
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentfiles as af  # noqa: E402

it = af.it


def main():
    tr = af.Tree("dp-agent-one-per-dir.")
    ok = False
    try:
        a = tr.start()
        ch = tr.channel()
        it.write_claim(tr.d["claims"], "c1", "uid-c1", "gpu-1")
        r = it.prepare(ch, af.DRA_V1, [("c1", "uid-c1")])
        assert not r.claims["uid-c1"].error, r
        socks = {p: os.stat(p).st_ino for p in (tr.v1sock, tr.reg, os.path.join(tr.d["plugins"], "gpu.example.com",
                                                                                  "dra.sock"))}
        other = {k: os.path.join(tr.t, "other-" + k) for k in af.DIRS}

        rc, out = tr.run(**{k: v for k, v in other.items() if k != "st"})
        assert rc != 0 and "state directory %s is in use by another devplane agent (pid %d" % (tr.d["st"], a.pid) \
            in out, (rc, out)
        print("ok - a second agent on the same --state-dir refused: %s" % out.strip().splitlines()[-1][:200])

        rc, out = tr.run(reg=other["reg"], st=other["st"], dp=other["dp"], slices=other["slices"])
        assert rc != 0 and "DRA driver directory %s/gpu.example.com is in use by another devplane agent (pid %d" % (
            tr.d["plugins"], a.pid) in out, (rc, out)
        print("ok - a second agent on the same driver directory refused, naming pid %d" % a.pid)

        rc, out = tr.run(**{k: v for k, v in other.items() if k != "dp"})
        assert rc != 0 and "%s is served by another process (pid %d" % (tr.v1sock, a.pid) in out, (rc, out)
        print("ok - a second agent on the same V1 plugin directory does not replace the live socket (pid %d)" % a.pid)

        rc, out = tr.run(**{k: v for k, v in other.items() if k != "reg"})
        assert rc != 0 and "%s is served by another process (pid %d" % (tr.reg, a.pid) in out, (rc, out)
        print("ok - a second driver of the same name on the same registry directory is refused (pid %d)" % a.pid)

        for p, ino in socks.items():
            assert os.stat(p).st_ino == ino, p
        assert a.poll() is None
        e = af.fc.refused(af.fc.allocate, tr.v1sock, [[dev_uuid(tr, 1)]])
        assert "held through V2 by claim default/c1 (uid-c1)" in e, e
        r = it.prepare(ch, af.DRA_V1, [("c1", "uid-c1")])
        assert not r.claims["uid-c1"].error, r
        print("ok - the first agent's sockets are the same files and answer; its claim still holds gpu-1")
        ch.close()

        a.send_signal(signal.SIGKILL)
        a.wait()
        b = tr.start()
        ch = tr.channel()
        e = af.fc.refused(af.fc.allocate, tr.v1sock, [[dev_uuid(tr, 1)]])
        assert "held through V2 by claim default/c1 (uid-c1)" in e, e
        print("ok - after kill -9 of the first agent the lock is free: a new agent starts and holds gpu-1 for c1")
        ch.close()
        tr.stop(b)
        ok = True
    finally:
        tr.close(ok)


def dev_uuid(tr, i):
    devs = open(os.path.join(tr.d["st"], "devices")).read().split("\n")
    return devs[devs.index("gpu-%d" % i) + 1]


if __name__ == "__main__":
    main()
