# SPDX-License-Identifier: Apache-2.0
"""A prepared claim's CDI spec that is deleted or damaged is written again
from the driver checkpoint (issue 21, F7): by the periodic check while the
agent runs (deleted, cut short, one byte changed, replaced by a directory or
by a symlink to /dev/zero, the whole directory removed), and at start. The checkpoint keeps the spec's
bytes; the rewritten spec is byte for byte the one prepare wrote, and the
metrics count it."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentfiles as af  # noqa: E402

it = af.it


def main():
    tr = af.Tree("dp-agent-cdi-rewrite.")
    tr.port = af.free_port()
    os.environ["DP_AGENT_FILE_CHECK_MS"] = "100"
    ok = False
    try:
        agent = tr.start()
        ch = tr.channel()
        it.write_claim(tr.d["claims"], "c1", "uid-c1", "gpu-1")
        r = it.prepare(ch, af.DRA_V1, [("c1", "uid-c1")])
        assert not r.claims["uid-c1"].error, r
        spec = tr.spec("uid-c1")
        want = open(spec, "rb").read()

        def intact():
            return os.path.isfile(spec) and not os.path.islink(spec) and open(spec, "rb").read() == want

        def damaged(how, what):
            how()
            # the check may run between two steps of the damage and repair
            # the first: then the next rewrite is the one of this damage
            while True:
                tr.log.wait("k8s.gpu.example.com-gpu_uid-c1.json of claim uid-c1 was missing or damaged: written "
                            "again")
                if intact():
                    break
            print("ok - %s: written again from the checkpoint, byte for byte" % what)

        def replace(make):
            """Remove the spec and put something else in its place, again
            if the check wrote the spec back in between."""
            while True:
                if os.path.lexists(spec):
                    os.unlink(spec)
                try:
                    make()
                    return
                except FileExistsError:
                    pass

        damaged(lambda: os.unlink(spec), "spec deleted")
        damaged(lambda: open(spec, "wb").write(want[:len(want) // 2]), "spec cut short")
        def flip():
            b = bytearray(want)
            b[b.index(b"GPU_DEVICE_1")] = ord("X")
            open(spec, "wb").write(bytes(b))
        damaged(flip, "one byte changed")
        damaged(lambda: replace(lambda: os.mkdir(spec)), "spec replaced by a directory (set aside as .corrupt)")
        assert os.path.isdir(spec + ".corrupt"), os.listdir(tr.d["cdi"])
        damaged(lambda: replace(lambda: os.symlink("/dev/zero", spec)), "spec replaced by a symlink to /dev/zero")
        m = af.metrics(tr.port)
        assert m["devplane_dra_cdi_specs_rewritten_total"] >= 5, m
        assert m['devplane_dra_file_write_failing{file="cdi"}'] == 0, m
        print("ok - metrics: devplane_dra_cdi_specs_rewritten_total %d" % m["devplane_dra_cdi_specs_rewritten_total"])
        damaged(lambda: subprocess.run(["rm", "-rf", tr.d["cdi"]]), "the whole CDI directory removed")
        ch.close()
        tr.stop(agent)

        # at start: before the driver serves
        os.unlink(spec)
        agent = tr.start()
        tr.log.wait("of claim uid-c1 was missing or damaged: written again")
        tr.log.wait("DRA driver gpu.example.com")
        assert open(spec, "rb").read() == want
        print("ok - spec deleted while the agent was down: written again at start")
        ch = tr.channel()
        u = it.unprepare(ch, [("c1", "uid-c1")])
        assert not u.claims["uid-c1"].error and not os.path.exists(spec), u
        print("ok - unprepared: the spec is removed")
        ch.close()
        tr.stop(agent)
        ok = True
    finally:
        tr.close(ok)


if __name__ == "__main__":
    main()
