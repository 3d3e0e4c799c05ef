# SPDX-License-Identifier: Apache-2.0
"""The agent's V1/V2 ledger when a record is lost or the two records
disagree (fail closed: nobody gets a device the node cannot place, no
device goes to two consumers), python3-grpcio playing the kubelet:

- no kubelet checkpoint on a fresh node: no V1 holds, claims are prepared;
- a checkpoint the agent has read and that then goes missing leaves the V1
  holds unknown: DRA prepares are refused with the reason until it is
  back, and after a restart too (the agent remembers it read the file);
- a device named by both checkpoints at start (a V1 pod and a prepared
  claim) stays held by both: the conflict is logged and counted
  (devplane_ledger_conflicts), nobody new gets it, and when the V1 pod
  goes the claim still holds it;
- the node's `devplane.unproven` entries withhold their devices from
  claims, id by id (one id that clashes does not free the others).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentfiles as af  # noqa: E402
import kubeletckpt  # noqa: E402

it, fc = af.it, af.fc
R = "example.com/gpu"
CKPT = "kubelet_internal_checkpoint"
MISSING = "missing, though this agent has read it before"


def prepared(ch, name, dev):
    it.write_claim(ch.claims, name, "uid-" + name, dev)
    return it.prepare(ch.ch, af.DRA_V1, [(name, "uid-" + name)]).claims["uid-" + name].error


class Kubelet:
    """The DRA channel and the claims directory of one agent run."""
    def __init__(self, tr):
        self.ch = tr.channel()
        self.claims = tr.d["claims"]


def main():
    tr = af.Tree("dp-v2-ledger-lost.")
    tr.port = af.free_port()
    seen = os.path.join(tr.d["st"], "kubelet-checkpoint-seen")
    ok = False
    try:
        agent = tr.start()
        k = Kubelet(tr)
        devs = open(os.path.join(tr.d["st"], "devices")).read().split("\n")
        U = {i: devs[devs.index("gpu-%d" % i) + 1] for i in range(8)}
        reg = {R: [U[i] for i in range(8)]}

        def write(entries):
            kubeletckpt.write(tr.d["dp"], kubeletckpt.encode(entries, reg))

        p1 = [("pod-p1", "main", R, {-1: [U[1]]}, b"")]
        err = prepared(k, "c0", "gpu-0")
        assert not err and not os.path.exists(seen), err
        print("ok - fresh node, no kubelet checkpoint ever seen: no V1 holds, gpu-0 prepared for c0")

        write(p1)
        tr.log.wait("%s: 1 entry of 1 for this agent's resources" % CKPT)
        assert os.path.exists(seen)
        os.unlink(os.path.join(tr.d["dp"], CKPT))
        tr.log.wait("V1 holds unknown")
        err = prepared(k, "c2", "gpu-2")
        assert "cannot be handed out through V2: the V1 holds are unknown" in err and MISSING in err, err
        print("ok - the checkpoint read before goes missing: prepare of gpu-2 refused: %s" % err[:150])
        write(p1)
        tr.log.wait("V1 holds known again")
        err = prepared(k, "c2", "gpu-2")
        assert not err, err
        print("ok - the checkpoint is back: gpu-2 prepared")

        tr.stop(agent)
        os.unlink(os.path.join(tr.d["dp"], CKPT))
        agent = tr.start()
        k = Kubelet(tr)
        err = prepared(k, "c4", "gpu-4")
        assert MISSING in err, err
        print("ok - restarted with the checkpoint missing: the agent remembers reading it, prepare refused")
        write(p1)
        tr.log.wait("V1 holds known again")
        err = prepared(k, "c4", "gpu-4")
        assert not err, err
        print("ok - the checkpoint is back: gpu-4 prepared for c4")

        # both checkpoints name gpu-4: the kubelet's (pod px) and the driver's (claim c4)
        tr.stop(agent)
        px = [("pod-px", "main", R, {-1: [U[4]]}, b"")]
        write(p1 + px)
        agent = tr.start()
        line = tr.log.wait("conflict: device gpu-4")
        assert "claim default/c4 (uid-c4)" in line and "pod pod-px/main" in line, line
        k = Kubelet(tr)
        m = af.metrics(tr.port)
        assert m["devplane_ledger_conflicts"] == 1, m
        e = fc.refused(fc.allocate, tr.v1sock, [[U[4]]])
        assert "held through" in e, e
        err = prepared(k, "c5", "gpu-4")
        assert "held through" in err, err
        err = prepared(k, "c4", "gpu-4")
        assert not err, err
        print("ok - gpu-4 in both checkpoints at start: both keep it (%s), "
              "devplane_ledger_conflicts 1, Allocate and a new claim refused" % line.strip()[:160])
        write(p1)
        tr.log.wait("%s: 1 entry of 1 for this agent's resources" % CKPT)
        assert af.metrics(tr.port)["devplane_ledger_conflicts"] == 0
        e = fc.refused(fc.allocate, tr.v1sock, [[U[4]]])
        assert "held through V2 by claim default/c4 (uid-c4)" in e, e
        print("ok - pod px gone: claim c4 still holds gpu-4 (%s)" % e)

        # the node's unproven mark: its devices go to no claim
        # (gpu-4 in it too, as a stale node might write: that clash must not free gpu-5 and gpu-6)
        write(p1 + [("pod-lost", "devplane.unproven", R, {-1: [U[4], U[5], U[6]]}, b"")])
        tr.log.wait("%s: 2 entries of 2 for this agent's resources" % CKPT)
        err = prepared(k, "c6", "gpu-6")
        assert "held through V1 by the node's unproven mark for pod pod-lost" in err, err
        assert not prepared(k, "c7", "gpu-7")
        print("ok - a devplane.unproven entry withholds gpu-5 and gpu-6 from claims (%s); gpu-7 prepared" % err[:140])
        tr.stop(agent)
        ok = True
    finally:
        tr.close(ok)


if __name__ == "__main__":
    main()
