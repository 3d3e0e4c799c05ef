#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Kueue's quota over time in the report (queue/history.c, sched/html-queue.c):
# `simulate -o json` carries asWritten.queues.usageOverTime (per ClusterQueue
# and flavor-resource the used quota at each change, against nominal, the
# waiting count, admissions, finishes and preemptions with the workloads'
# names, and where admission stopped for churn), and `--report` draws one step
# chart per ClusterQueue and flavor-resource from it, names escaped, the same
# bytes on every run.
import json, os, re, subprocess, sys, tempfile

DP = os.environ["DEVPLANE"]
tmp = tempfile.mkdtemp()


def fail(msg):
    print("FAIL:", msg, file=sys.stderr)
    sys.exit(1)


def simulate(path, report=None, extra=()):
    cmd = [DP, "simulate", "-f", path, "-o", "json", *extra]
    if report:
        cmd += ["--report", report]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        fail(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)["asWritten"]


def history(run):
    h = run["queues"].get("usageOverTime")
    if h is None:
        fail("no asWritten.queues.usageOverTime")
    return h


def steps(series):
    return [(p["t"], p["cycle"], p["used"], p["borrowed"]) for p in series["points"]]


def page(path):
    return open(path, encoding="utf-8").read()


def chart_steps(html):
    """data-steps of every chart, in page order"""
    return re.findall(r'<svg [^>]*class="qchart"[^>]*data-steps="([^"]*)"', html)


# 1. Over time: research's a100 GPUs are 4 used at cycle 1, 0 once first
#    finishes at t=30s, 4 again when second is admitted then.
rep = os.path.join(tmp, "ot.html")
h = history(simulate("data/over-time.yaml", rep))
if h["axis"] != "time":
    fail(f"axis {h['axis']}")
cq = h["clusterQueues"][0]
if cq["name"] != "research":
    fail(cq["name"])
s = cq["series"][0]
if (s["flavor"], s["resource"], s["nominal"]) != ("a100", "example.com/gpu", 4):
    fail(s)
want = [(0, 0, 0, 0), (0, 1, 4, 0), (30, 3, 0, 0), (30, 4, 4, 0)]
if steps(s) != want:
    fail(f"over-time steps {steps(s)} != {want}")
ev = [(e["t"], e["kind"], e["workload"]) for e in cq["events"]]
want_ev = [(0, "admitted", "default/first"), (30, "finished", "default/first"), (30, "admitted", "default/second")]
if ev != want_ev:
    fail(f"events {ev}")
if [p["waiting"] for p in cq["pending"]] != [2, 1, 0]:
    fail(f"waiting {cq['pending']}")
html = page(rep)
if html.count('<div class="qcard f"><h3>ClusterQueue research</h3>') != 1:
    fail("no card for research")
if chart_steps(html) != ["0/0=0 0/1=4 30/3=0 30/4=4"]:
    fail(f"chart steps {chart_steps(html)}")
for t in ["t=0s (cycle 1): 4 used of 4 nominal, 0 borrowed", "t=30s (cycle 4): 4 used of 4 nominal, 0 borrowed"]:
    if t not in html:
        fail(f"no step tooltip {t!r}")
if "t=30s (cycle 3): finished default/first</title>" not in html:
    fail("no finished mark")
if 'href="#queues"' not in html or '<h2 id="queues">' not in html:
    fail("no Queues section")

# 2. Preemption: the running Workload's 4 GPUs go at cycle 1 (evicted for
#    train-urgent), train-urgent takes 2 at cycle 2; the eviction is marked.
rep = os.path.join(tmp, "pre.html")
h = history(simulate("data/preemption.yaml", rep))
if h["axis"] != "cycle":
    fail(f"axis {h['axis']}")
cq = h["clusterQueues"][0]
if steps(cq["series"][0]) != [(0, 0, 4, 0), (0, 1, 0, 0), (0, 2, 2, 0)]:
    fail(f"preemption steps {steps(cq['series'][0])}")
pre = [e for e in cq["events"] if e["kind"] == "preempted"]
if pre != [{"t": 0, "cycle": 1, "kind": "preempted", "workload": "default/batch", "by": "default/train-urgent",
            "reason": "InClusterQueue"}]:
    fail(f"preempted {pre}")
html = page(rep)
if chart_steps(html) != ["0/0=4 0/1=0 0/2=2"]:
    fail(f"chart steps {chart_steps(html)}")
if '<g class="qev qev-preempted"><title>cycle 1: preempted default/batch by default/train-urgent</title>' not in html:
    fail("no preempted mark")
if "churnStop" in h or 'class="qchurn' in html:
    fail("churn where there is none")

# 3. Churn: the admission state after cycle 10 is one seen before (a proved
#    preemption loop, queue/loop.c: w4 preempted twice, last by w8), so
#    admission stops there; the page says so and every chart marks it;
#    cohort team sums its queues.
rep = os.path.join(tmp, "churn.html")
h = history(simulate("data/churn.yaml", rep))
c = h.get("churnStop")
if not c or (c["workload"], c["clusterQueue"], c["by"], c["timesPreempted"], c["cycle"]) != (
        "default/w4", "cq2", "default/w8", 2, h["cycles"]):
    fail(f"churnStop {c} (cycles {h['cycles']})")
w4 = [e for q in h["clusterQueues"] for e in q["events"] if e["workload"] == "default/w4" and e["kind"] == "preempted"]
if len(w4) != 2:
    fail(f"w4 preempted {len(w4)} times in the history")
if [q["name"] for q in h["clusterQueues"]] != ["cq0", "cq1", "cq2"]:
    fail("cluster queues")
team = h["cohorts"][0]
if team["name"] != "team" or team["series"][0]["nominal"] != 10:
    fail(f"cohort {team['name']} nominal {team['series'][0]['nominal']}")
for p in team["series"][0]["points"]:  # the cohort's line is its queues' sum at every point
    tot = 0
    for q in h["clusterQueues"]:
        pts = [x for x in q["series"][0]["points"] if x["cycle"] <= p["cycle"]]
        tot += pts[-1]["used"] if pts else 0
    if tot != p["used"]:
        fail(f"cohort at cycle {p['cycle']}: {p['used']} != {tot}")
html = page(rep)
n_charts = len(chart_steps(html))
if n_charts != 4:  # three ClusterQueues and the cohort, one flavor-resource each
    fail(f"{n_charts} charts")
if html.count('<g class="qchurn">') != n_charts:
    fail("churn not marked on every chart")
if "Admission stopped at cycle %d:</b> default/w4 in ClusterQueue cq2 was preempted 2 times" % h["cycles"] not in html:
    fail("no churn note")
# 4. The same input, the same bytes.
simulate("data/churn.yaml", os.path.join(tmp, "churn2.html"))
if open(rep, "rb").read() != open(os.path.join(tmp, "churn2.html"), "rb").read():
    fail("churn pages differ between runs")
simulate("data/over-time.yaml", os.path.join(tmp, "ot2.html"))
if open(os.path.join(tmp, "ot.html"), "rb").read() != open(os.path.join(tmp, "ot2.html"), "rb").read():
    fail("over-time pages differ between runs")

# 5. Names from input are escaped.
src = page("data/over-time.yaml").replace("name: research}", 'name: "re<s>&q"}').replace(
    "clusterQueue: research}", 'clusterQueue: "re<s>&q"}')
esc = os.path.join(tmp, "esc.yaml")
open(esc, "w").write(src)
simulate(esc, os.path.join(tmp, "esc.html"))
html = page(os.path.join(tmp, "esc.html"))
if "<h3>ClusterQueue re&lt;s&gt;&amp;q</h3>" not in html or "re<s>" in html:
    fail("ClusterQueue name not escaped")

# 6. Without Kueue objects: no Queues section.
simulate("data/no-kueue.yaml", os.path.join(tmp, "none.html"))
html = page(os.path.join(tmp, "none.html"))
if 'id="queues"' in html or 'href="#queues"' in html:
    fail("a Queues section without queues")
print("PASS")
