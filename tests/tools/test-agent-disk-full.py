# SPDX-License-Identifier: Apache-2.0
"""A full disk under `devplane agent --dra` (issue 21, F6), for real: the
test re-runs itself in a user + mount namespace (unshare -Urm) and mounts
64 KiB tmpfs file systems, filled with a file that is deleted to give the
space back.

- Slices directory full at start: the agent starts anyway, V1 serves
  (Allocate answers), the DRA driver registers, the log and the metrics
  say why the slices file is not written; once space is back the periodic
  check writes it, and the metrics say so.
- CDI directory full: NodePrepareResources fails for that claim with the
  reason and leaves nothing behind (no spec, no temp file, no checkpoint
  entry, no hold: another claim of the same GPU prepares once space is back).
- Driver directory full (the checkpoint cannot be saved): the prepare fails
  the same way, its CDI spec is removed again, nothing held.
- A slices directory that cannot be made (read-only file system): the agent
  serves and makes it once the file system is writable again.
"""
import errno
import os
import subprocess
import sys

INNER = "DP_TEST_IN_USERNS"
if os.environ.get(INNER) != "1":
    if subprocess.run(["unshare", "-Urm", "true"], stderr=subprocess.DEVNULL).returncode != 0:
        print("SKIP: no user and mount namespaces (unshare -Urm) here")
        sys.exit(0)
    os.environ[INNER] = "1"
    os.execvp("unshare", ["unshare", "-Urm", sys.executable, os.path.abspath(__file__)] + sys.argv[1:])

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentfiles as af  # noqa: E402

it = af.it


def small_fs(path):
    os.makedirs(path, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", path], check=True)


def fill(path):
    """Fill the file system of directory path; the filler's name."""
    f = os.path.join(path, "filler")
    fd = os.open(f, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 4096)
    except OSError as e:
        assert e.errno == errno.ENOSPC, e
    for n in (512, 64, 1):  # the last blocks too
        try:
            while True:
                os.write(fd, b"\0" * n)
        except OSError:
            pass
    os.close(fd)
    return f


def main():
    tr = af.Tree("dp-agent-disk-full.")
    tr.port = af.free_port()
    mounts = []
    ok = False
    try:
        for k in ("slices", "cdi", "plugins"):
            small_fs(tr.d[k])
            mounts.append(tr.d[k])
        filler = fill(tr.d["slices"])
        os.environ["DP_AGENT_FILE_CHECK_MS"] = "200"
        agent = tr.start()
        ch = tr.channel()  # the driver registers
        devs = open(os.path.join(tr.d["st"], "devices")).read().split("\n")
        U = {i: devs[devs.index("gpu-%d" % i) + 1] for i in range(8)}
        af.fc.allocate(tr.v1sock, [[U[7]]])
        assert agent.poll() is None
        tr.log.wait("slices not written")
        assert not os.path.exists(tr.slices)
        m = af.metrics(tr.port)
        assert m['devplane_dra_file_write_failing{file="slices"}'] == 1, m
        assert m['devplane_dra_file_write_failures_total{file="slices"}'] >= 1, m
        print("ok - slices directory full at start: the agent runs, V1 Allocate answers, the driver registers; "
              "log and metrics say why the slices are not written")
        os.unlink(filler)
        tr.log.wait("slices written again")
        assert "kind: ResourceSlice" in open(tr.slices).read()
        m = af.metrics(tr.port)
        assert m['devplane_dra_file_write_failing{file="slices"}'] == 0, m
        print("ok - space back: the periodic check writes the slices file, the failure gauge drops to 0")

        # the CDI directory full: the prepare fails and leaves nothing
        filler = fill(tr.d["cdi"])
        it.write_claim(tr.d["claims"], "c1", "uid-c1", "gpu-1")
        err = it.prepare(ch, af.DRA_V1, [("c1", "uid-c1")]).claims["uid-c1"].error
        assert "No space left on device" in err and af.SPEC % "uid-c1" in err, err
        assert os.listdir(tr.d["cdi"]) == ["filler"], os.listdir(tr.d["cdi"])
        assert "uid-c1" not in open(tr.ckpt).read() if os.path.exists(tr.ckpt) else True
        os.unlink(filler)
        it.write_claim(tr.d["claims"], "c1b", "uid-c1b", "gpu-1")
        r = it.prepare(ch, af.DRA_V1, [("c1b", "uid-c1b")])
        assert not r.claims["uid-c1b"].error, r
        print("ok - CDI directory full: prepare of c1 fails (%s), no spec, no temp file, no checkpoint entry, "
              "no hold: c1b prepares gpu-1 once space is back" % err[:90])

        # the driver directory full: the checkpoint cannot be saved
        filler = fill(tr.d["plugins"])
        it.write_claim(tr.d["claims"], "c2", "uid-c2", "gpu-2")
        err = it.prepare(ch, af.DRA_V1, [("c2", "uid-c2")]).claims["uid-c2"].error
        assert "No space left on device" in err and "checkpoint.json" in err, err
        assert not os.path.exists(tr.spec("uid-c2")), os.listdir(tr.d["cdi"])
        os.unlink(filler)
        assert "uid-c2" not in open(tr.ckpt).read()
        it.write_claim(tr.d["claims"], "c2b", "uid-c2b", "gpu-2")
        r = it.prepare(ch, af.DRA_V1, [("c2b", "uid-c2b")])
        assert not r.claims["uid-c2b"].error, r
        assert "uid-c2b" in open(tr.ckpt).read()
        print("ok - driver directory full: prepare of c2 fails (%s), its CDI spec removed again, nothing held: "
              "c2b prepares gpu-2 once space is back" % err[:90])
        ch.close()
        tr.stop(agent)

        # a slices directory that cannot even be made (read-only file
        # system): the agent serves, and makes it once it can
        ro = os.path.join(tr.t, "ro")
        os.makedirs(ro)
        subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", ro], check=True)
        mounts.append(ro)
        agent = tr.start(slices=os.path.join(ro, "slices"))
        ch = tr.channel()
        af.fc.allocate(tr.v1sock, [[U[6]]])
        line = tr.log.wait("slices not written")
        assert "Read-only file system" in line, line
        subprocess.run(["mount", "-o", "remount,rw", ro], check=True)
        tr.log.wait("slices written again")
        assert "kind: ResourceSlice" in open(os.path.join(ro, "slices", "node-a-gpu.example.com.yaml")).read()
        print("ok - slices directory on a read-only file system: the agent serves, says why, and makes the "
              "directory and the file once it is writable")
        ch.close()
        tr.stop(agent)
        ok = True
    finally:
        for p in tr.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for m in mounts:
            subprocess.run(["umount", m], stderr=subprocess.DEVNULL)
        tr.close(ok)


if __name__ == "__main__":
    main()
