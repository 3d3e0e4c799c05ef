# SPDX-License-Identifier: Apache-2.0
"""`devplane agent --dra --kubeconfig` reading ResourceClaims from a hostile
API server (issue 21, F2): NodePrepareResources of claims whose GET answers
are large, while separate processes call the agent's V1 and DRA sockets.

  dense   three valid claims of 3.5 MiB each (240,000 tiny annotation keys,
          below the 4 MiB cap): decoded on the offload thread
          (kube/offload.c), one after the other; all three are prepared.
  huge    a 15 MiB answer of tiny keys: refused at DP_KUBE_MAX_LINE
          (4 MiB) with an error for that claim, never parsed (before: it
          was parsed on the loop, seconds under ASan, and prepared).
  cancel  a dense claim whose NodePrepareResources the kubelet gives up on
          (0.5 s) while it is read or decoded: when the agent sees the
          cancel first, it drops the decoded result (ASan: no leak).

Before, each answer was parsed on the event loop: the sockets waited
about 0.5 s per dense claim and seconds for the huge one under ASan. The
latency bound is generous for a loaded, sanitized build: the old code
passes it in the dense phase, fails it in the huge one."""
import importlib.util
import json
import os
import sys

import grpc

SRC = os.environ["DP_SOURCE_DIR"]
sys.path.insert(0, os.path.join(SRC, "bench"))
import hostile_api  # noqa: E402

_spec = importlib.util.spec_from_file_location("test_api", os.path.join(os.path.dirname(__file__), "test-api.py"))
test_api = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(test_api)

DEVPLANE = os.environ["DEVPLANE"]
BOUND = 1.0  # seconds of latency (2 loaded cores, ASan); the old code: several seconds


def dense_claim(name, uid, dev, keys):
    c = test_api.claim(name, uid, dev)
    c["metadata"]["annotations"] = {"k%d" % i: "" for i in range(keys)}
    return c


def main():
    agents = []

    def on_phase(name, agent, api):
        agents.append(agent)
        if name == "dense":
            for i in range(3):
                api.claims[("default", "d%d" % i)] = dense_claim("d%d" % i, "uid-d%d" % i, "gpu-%d" % i, 240000)
            size = len(json.dumps(api.claims[("default", "d0")]))
            assert 3 << 20 < size < 4 << 20, size
            r = test_api.prepare(agent.dra_sock, [("d%d" % i, "uid-d%d" % i) for i in range(3)], timeout=120)
            for i in range(3):
                one = r.claims["uid-d%d" % i]
                assert not one.error and one.devices[0].device_name == "gpu-%d" % i, r
            print("ok - three valid claims of %.1f MiB each: decoded off the loop and prepared" % (size / 2**20))
        if name == "huge":
            api.claims[("default", "h")] = dense_claim("h", "uid-h", "gpu-5", 1100000)
            r = test_api.prepare(agent.dra_sock, [("h", "uid-h")], timeout=120)
            err = r.claims["uid-h"].error
            assert "longer than 4 MiB" in err and "not decoded" in err and "ResourceClaim default/h" in err, r
            print("ok - a 15 MiB answer refused: %s" % err)
        if name == "cancel":
            api.claims[("default", "x")] = dense_claim("x", "uid-x", "gpu-6", 240000)
            try:
                test_api.prepare(agent.dra_sock, [("x", "uid-x")], timeout=0.5)
                print("ok - (the claim was read and decoded within 0.5 s: nothing cancelled)")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.DEADLINE_EXCEEDED, e
                # the agent sees the kubelet give up, or answers first
                agent.wait_log(r"NodePrepareResources cancelled by the kubelet|prepared default/x ", timeout=60)
                print("ok - a prepare given up by the kubelet while its claim is read or decoded")

    phases = [("dense", None), ("huge", None), ("cancel", None)]
    results = dict(hostile_api.run(DEVPLANE, 0, phases, on_phase))
    hostile_api.print_table(results.items(), 0)
    # stopped (SIGTERM) with nothing leaked (ASan), a decode in flight or not
    assert agents[0].p.returncode == 0, agents[0].p.returncode
    for name in ("dense", "huge"):
        for sock in ("v1", "dra"):
            r = results[name][sock]
            assert r["n"] > 0 and r["max"] < BOUND, (name, sock, r)
    print("ok - V1 and DRA sockets: worst latency %.0f ms (bound %.0f ms)"
          % (1000 * max(results[n][s]["max"] for n in ("dense", "huge") for s in ("v1", "dra")), BOUND * 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
