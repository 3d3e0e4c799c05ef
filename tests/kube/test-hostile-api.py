# SPDX-License-Identifier: Apache-2.0
"""`devplane agent --dra --kubeconfig` against a hostile API server (issue 21,
F2): bench/hostile_api.py's phases, briefly, with assertions.

  long-line   a watch line that never ends: the agent drops the watch at
              DP_KUBE_MAX_LINE (4 MiB), says why, lists again with backoff
              and watches again. Each attempt costs little CPU (the line was
              rescanned whole on every chunk before: minutes of CPU under
              ASan for one 16 MiB line).
  tiny-flood  tiny events as fast as the server writes them: handed out a
              bounded number per loop turn while curl is paused (before,
              curl read and the callback parsed without end).

All along, separate processes call the agent's V1 and DRA sockets; their
worst latency must stay under a generous bound for a loaded, sanitized build
(the old code made them wait more than 60 s there; the goal, 100 ms, is
measured with a release build in docs/benchmarks.md). Each phase lasts until
its event: three dropped watches, 8 MiB of tiny events read by the agent (the
server can only write what the agent reads).
The Node's answer is 250 KiB (10,000 labels: decoded on the offload
thread, kube/offload.c, before the first publication). Afterwards the
ordinary watch works again: a slice changed by someone else
in a 200 KiB event (decoded on the offload thread, kube/offload.c) is
written back (through a 409 and a 200 KiB LIST answer, decoded there too),
and one deleted by someone else is published again."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.environ["DP_SOURCE_DIR"], "bench"))
import hostile_api  # noqa: E402

DEVPLANE = os.environ["DEVPLANE"]
BOUND = 5.0  # seconds of latency: generous (2 cores shared, ASan); the release build sees < 100 ms
CPU_PER_WATCH = 2.0  # CPU seconds per dropped watch (about 0.1 under ASan; minutes before)


def main():
    def on_phase(name, agent, api):
        if name == "long-line":
            # three drops: each after the backoff, a list and a new watch
            agent.wait_log(r"WATCH ResourceSlices \(status 0\): a watch line longer than 4 MiB .*retrying in",
                           count=3, timeout=120)
        if name == "tiny-flood":
            with hostile_api.flood_cond:
                start = hostile_api.flood_written[0]
                assert hostile_api.flood_cond.wait_for(lambda: hostile_api.flood_written[0] - start >= 8 << 20,
                                                       timeout=120)
        if name == "after":
            # an ordinary watch again (from a new list)
            api.wait(lambda: any(m == "WATCH" for m, _, _ in api.log[api.mark:]), timeout=60)
            name0 = sorted(api.slices)[0]
            n_dev = len(api.slices[name0]["spec"]["devices"])
            # someone else drops a device, in a 200 KiB event: decoded off the
            # loop (kube/offload.c); the agent writes its slice back, gets a
            # 409, lists again (a 200 KiB answer: decoded off the loop too)
            # and writes it back
            published = agent.count(r"ResourceSlices of node-a published")
            with api.lock:
                o = json.loads(json.dumps(api.slices[name0]))
                o["metadata"].setdefault("annotations", {})["fill"] = "x" * (200 << 10)
                o["spec"]["devices"].pop()
                api.put(o)
                api.conflicts = 1
                api.lock.notify_all()
            agent.wait_log(r"ResourceSlice %s changed by someone else: publishing ours again" % name0)
            agent.wait_log(r"update ResourceSlice %s \(status 409\): conflict, reading the slices again" % name0)
            api.wait(lambda: len(api.slices[name0]["spec"]["devices"]) == n_dev)
            assert "fill" not in api.slices[name0]["metadata"].get("annotations", {})
            # someone else deletes it: published again
            agent.wait_log(r"ResourceSlices of node-a published", count=published + 1)
            with api.lock:
                api.delete(name0)
                api.lock.notify_all()
            agent.wait_log(r"ResourceSlice %s deleted by someone else: publishing it again" % name0)
            api.wait(lambda: name0 in api.slices)

    phases = [("long-line", hostile_api._long_line), ("tiny-flood", hostile_api._tiny_flood), ("after", None)]
    # a Node of 10,000 labels: its 250 KiB answer is decoded off the loop
    labels = {"example.com/l%d" % i: "v" for i in range(10000)}
    results = dict(hostile_api.run(DEVPLANE, 0, phases, on_phase, labels))
    hostile_api.print_table(results.items(), 0)

    ll = results["long-line"]
    per_watch = ll["cpu"] / max(1, ll["watches"])
    print("ok - long line: dropped at 4 MiB and listed again with backoff; %d watches, %.2f CPU-s each"
          % (ll["watches"], per_watch))
    assert ll["watches"] >= 3, ll
    assert per_watch < CPU_PER_WATCH, ll
    tf = results["tiny-flood"]
    assert tf["watches"] <= 1, tf  # the flood is valid: the watch stays
    print("ok - tiny-event flood: one watch, the agent keeps serving")
    print("ok - after the attacks: a slice changed by someone else in a 200 KiB event (decoded off the loop) "
          "is written back through a 409 and a 200 KiB LIST answer (decoded off the loop), one deleted is "
          "published again")
    for name in ("long-line", "tiny-flood"):
        for sock in ("v1", "dra"):
            r = results[name][sock]
            assert r["n"] > 0 and r["max"] < BOUND, (name, sock, r)
    print("ok - V1 and DRA sockets: worst latency %.0f ms (bound %.0f ms)"
          % (1000 * max(results[n][s]["max"] for n in ("long-line", "tiny-flood") for s in ("v1", "dra")),
             BOUND * 1000))
    return 0


if __name__ == "__main__":
    sys.exit(main())
