# SPDX-License-Identifier: Apache-2.0
"""State files of `devplane agent --dra` that are no files (issue 21, F5): a
directory, or a symlink to /dev/zero, where the driver checkpoint, the
ResourceSlices file, the health file, the devices file, the lock file or the
kubelet checkpoint belongs. The agent does not exit: its own files are set
aside (kept as <name>.corrupt, never deleted) and written again, the
checkpoint rebuilt from the CDI specs as a corrupt one is; the kubelet's
checkpoint (the node's file) is not touched: it leaves the V1 holds unknown,
so DRA prepares are refused with the reason until it reads again."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentfiles as af  # noqa: E402

it = af.it


def hostile(path, kind):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if kind == "dir":
        os.makedirs(os.path.join(path, "inside"))
    else:
        os.symlink("/dev/zero", path)


def regular(path):
    return os.path.isfile(path) and not os.path.islink(path)


def one_round(n, kinds):
    tr = af.Tree("dp-agent-hostile-state.")
    ok = False
    try:
        drv = os.path.join(tr.d["plugins"], "gpu.example.com")
        files = {"checkpoint": tr.ckpt, "slices": tr.slices, "health": os.path.join(tr.d["st"], "health"),
                 "devices": os.path.join(tr.d["st"], "devices"),
                 "state lock": os.path.join(tr.d["st"], "devplane-agent.lock"),
                 "driver lock": os.path.join(drv, "devplane-driver.lock")}
        kube = os.path.join(tr.d["dp"], "kubelet_internal_checkpoint")
        for what, path in files.items():
            hostile(path, kinds)
        hostile(kube, "zero" if kinds == "dir" else "dir")
        agent = tr.start()
        ch = tr.channel()
        assert agent.poll() is None
        for what, path in files.items():
            # a rebuild that recovered nothing leaves the checkpoint absent
            # (as missing, it is rebuilt again) and the health file (no overrides)
            # absent; every other file is written again
            assert regular(path) or (what in ("checkpoint", "health") and not os.path.lexists(path)), (what, path)
            aside = path + ".corrupt"
            assert os.path.isdir(aside) if kinds == "dir" else os.path.islink(aside), (what, os.listdir(
                os.path.dirname(path)))
        assert "kind: ResourceSlice" in open(tr.slices).read()
        print("ok - round %d: %s where the checkpoint, slices, health, devices and lock files belong: the agent "
              "runs, each set aside as .corrupt and written again" % (n, "directories" if kinds == "dir" else
                                                                      "symlinks to /dev/zero"))

        it.write_claim(tr.d["claims"], "c1", "uid-c1", "gpu-1")
        err = it.prepare(ch, af.DRA_V1, [("c1", "uid-c1")]).claims["uid-c1"].error
        assert "the V1 holds are unknown" in err and ("not a regular file" in err or "Is a directory" in err), err
        assert os.path.islink(kube) or os.path.isdir(kube)
        print("ok - round %d: the kubelet checkpoint is no file: left alone, DRA prepares refused (%s)" %
              (n, err[:150]))
        subprocess.run(["rm", "-rf", kube], check=True)
        tr.log.wait("V1 holds known again")
        r = it.prepare(ch, af.DRA_V1, [("c1", "uid-c1")])
        assert not r.claims["uid-c1"].error, r
        assert "uid-c1" in open(tr.ckpt).read()
        p = subprocess.run([af.DEVPLANE, "agent", "health", "--state-dir", tr.d["st"], "set", "gpu-3", "unhealthy"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert p.returncode == 0, p.stdout
        tr.log.wait("ResourceSlices generation 2")
        print("ok - round %d: kubelet checkpoint gone: c1 prepared and checkpointed; `agent health set` writes "
              "the health file and the slices follow" % n)
        ch.close()
        tr.stop(agent)

        # the checkpoint turned into no file while the agent was down:
        # rebuilt from the CDI specs, the claim still holds its GPU
        os.rename(tr.ckpt, tr.ckpt + ".old")
        subprocess.run(["rm", "-rf", tr.ckpt + ".corrupt"], check=True)
        hostile(tr.ckpt, kinds)
        agent = tr.start()
        tr.log.wait("driver checkpoint rebuilt: 1 claim(s) recovered")
        ch = tr.channel()
        e = af.fc.refused(af.fc.allocate, tr.v1sock, [[dev_uuid(tr, 1)]])
        assert "held through V2 by claim" in e and "uid-c1" in e, e
        print("ok - round %d: checkpoint replaced by %s: set aside, rebuilt from the CDI specs, gpu-1 still held" %
              (n, "a directory" if kinds == "dir" else "a symlink to /dev/zero"))
        ch.close()
        tr.stop(agent)
        ok = True
    finally:
        tr.close(ok)


def dev_uuid(tr, i):
    devs = open(os.path.join(tr.d["st"], "devices")).read().split("\n")
    return devs[devs.index("gpu-%d" % i) + 1]


def main():
    one_round(1, "dir")
    one_round(2, "zero")


if __name__ == "__main__":
    main()
