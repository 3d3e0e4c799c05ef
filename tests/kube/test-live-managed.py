# SPDX-License-Identifier: Apache-2.0
"""Live mode (`devplane simulate/explain --kubeconfig`) against clusters
shaped like managed ones (issue 23, issue 21 F8), over HTTPS with the fake
API server (tests/kube/fakeapi.py):
  1. resource.k8s.io served at v1beta1 only (1.32), at v1beta2 and v1beta1
     (1.33), not at all (DRA off), or only at v1alpha3 (1.31): the version is
     discovered, objects in that version's shape are read and converted;
     without DRA a warning says so and the claim's pod stays Pending;
  2. exec credential plugins (EKS, GKE, AKS): a script that prints an
     ExecCredential, counting its runs: args, env, KUBERNETES_EXEC_INFO,
     standard input not a terminal, the command relative to the
     kubeconfig's directory, cached until expirationTimestamp, run again on
     a 401; failures name the command with its standard error escaped;
     interactiveMode Always refused; a missing command gives installHint;
  3. the context's namespace is explain's default namespace;
  4. F8: a total deadline and a total byte cap, each a clear error, exit 2;
  5. F9: an API server's error body with ESC/CR/LF reaches the terminal
     escaped;
  6. explain shows kube-scheduler's recorded PodScheduled message beside
     devplane's, so drift is visible.
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from fakeapi import FakeAPI  # noqa: E402

_spec = importlib.util.spec_from_file_location("live_snapshot", os.path.join(HERE, "test-live-snapshot.py"))
live = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(live)

DEVPLANE = os.environ["DEVPLANE"]
TOKEN = live.TOKEN


class SlowAPI(FakeAPI):
    """FakeAPI that can hold a list (`stall`, until the test ends) or answer
    a resource's list with an error body (`broken`: resource -> (code, message))."""

    def __init__(self, *a):
        super().__init__(*a)
        self.stall = set()
        self.broken = {}

    def cluster_list(self, h, path, q):
        resource = path.rsplit("/", 1)[-1]
        if resource in self.stall:
            self.lock.wait_for(lambda: self.stopping, timeout=60)
            return None
        if resource in self.broken:
            code, msg = self.broken[resource]
            self.status(h, code, "InternalError", msg)
            return code
        return super().cluster_list(h, path, q)


def v1beta1(objs):
    """The cluster's DRA objects as a 1.32 server stores them: devices under
    `basic`, requests without `exactly`."""
    out = json.loads(json.dumps(objs))
    for s in out["resourceslices"]:
        s["apiVersion"] = "resource.k8s.io/v1beta1"
        s["spec"]["devices"] = [{"name": d["name"], "basic": {k: v for k, v in d.items() if k != "name"}}
                                for d in s["spec"]["devices"]]
    for c in out["resourceclaims"]:
        c["apiVersion"] = "resource.k8s.io/v1beta1"
        c["spec"]["devices"]["requests"] = [dict({"name": r["name"]}, **r["exactly"])
                                            for r in c["spec"]["devices"]["requests"]]
    for d in out["deviceclasses"]:
        d["apiVersion"] = "resource.k8s.io/v1beta1"
    return out


def run(args, env=None, cwd=None):
    return subprocess.run([DEVPLANE] + args, capture_output=True, text=True, env=env, cwd=cwd, timeout=120)


def ok(args, **kw):
    p = run(args, **kw)
    if p.returncode != 0:
        raise AssertionError("%s: exit %d: %s" % (args, p.returncode, p.stderr))
    return p


def fails(args, want, **kw):
    p = run(args, **kw)
    assert p.returncode == 2 and not p.stdout, (args, p.returncode, p.stdout, p.stderr)
    for w in [want] if isinstance(want, str) else want:
        assert w in p.stderr, (args, w, p.stderr)
    assert "\x1b" not in p.stderr and "\r" not in p.stderr and p.stderr.count("\n") == 1, repr(p.stderr)
    return p


def status_of(out, pod):
    return live.line_of(out, pod)[1]


PLUGIN = r'''#!/usr/bin/python3
import json, os, sys
state = os.environ["PLUGIN_STATE"]
mode = os.environ.get("PLUGIN_MODE", "ok")
n = 1
if os.path.exists(state + "/runs"):
    n = int(open(state + "/runs").read()) + 1
open(state + "/runs", "w").write(str(n))
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
assert info["kind"] == "ExecCredential" and info["spec"]["interactive"] is False, info
assert sys.argv[1:] == ["eks", "get-token", "--cluster-name", "fake"], sys.argv
assert not sys.stdin.isatty() and sys.stdin.read() == ""
open(state + "/info", "w").write(json.dumps(info))
if mode == "fail":
    sys.stderr.write("\x1b[31merror: the SSO session has expired\r\nrun aws sso login\n")
    sys.exit(1)
tok = "%TOKEN%"
if mode == "stale" and n == 1:
    tok = "revoked-token"
exp = "2000-01-01T00:00:00Z" if mode == "expired" else "2999-01-01T00:00:00.5+02:00"
print(json.dumps({"apiVersion": info["apiVersion"], "kind": "ExecCredential",
                  "status": {"token": tok, "expirationTimestamp": exp}}))
'''


def exec_user(name, mode, api="client.authentication.k8s.io/v1", interactive="Never", command="./bin/plugin",
              hint=None):
    u = {"apiVersion": api, "command": command, "args": ["eks", "get-token", "--cluster-name", "fake"],
         "env": [{"name": "PLUGIN_MODE", "value": mode}, {"name": "PLUGIN_STATE", "value": "%STATE%"}],
         "provideClusterInfo": True}
    if interactive:
        u["interactiveMode"] = interactive
    if hint:
        u["installHint"] = hint
    return {"name": name, "user": {"exec": u}}


def write_kubeconfig(t, port, state):
    users = [exec_user("ok", "ok"), exec_user("expired", "expired"), exec_user("stale", "stale"),
             exec_user("fail", "fail"), exec_user("always", "ok", interactive="Always"),
             exec_user("beta", "ok", api="client.authentication.k8s.io/v1beta1", interactive=None),
             exec_user("missing", "ok", command="no-such-auth-plugin",
                       hint="install it with: brew install no-such-auth-plugin"),
             {"name": "viewer", "user": {"token": TOKEN}}]
    ctxs = [{"name": u["name"], "context": {"cluster": "fake", "user": u["name"]}} for u in users]
    ctxs.append({"name": "ml", "context": {"cluster": "fake", "user": "viewer", "namespace": "ml"}})
    kc = {"apiVersion": "v1", "kind": "Config", "current-context": "ok",
          "clusters": [{"name": "fake", "cluster": {"server": "https://127.0.0.1:%d" % port,
                                                    "certificate-authority": "ca.crt"}}],
          "users": users, "contexts": ctxs}
    path = os.path.join(t, "kubeconfig")
    with open(path, "w") as f:
        f.write(json.dumps(kc).replace("%STATE%", state))
    os.mkdir(os.path.join(t, "bin"))
    plugin = os.path.join(t, "bin", "plugin")
    with open(plugin, "w") as f:
        f.write(PLUGIN.replace("%TOKEN%", TOKEN))
    os.chmod(plugin, 0o755)
    return path


def runs(state):
    p = os.path.join(state, "runs")
    n = int(open(p).read()) if os.path.exists(p) else 0
    if os.path.exists(p):
        os.unlink(p)
    return n


def test_versions(api, live_args):
    base = json.loads(json.dumps(api.objects))
    # 1.32: v1beta1 only, objects in v1beta1's shape
    api.dra_versions = ["v1beta1"]
    api.objects = dict(base, **{k: v for k, v in v1beta1(base).items()
                                if k in ("resourceslices", "resourceclaims", "deviceclasses")})
    api.log.clear()
    p = ok(["simulate"] + live_args)
    assert status_of(p.stdout, "ml/pending-dra") == "Running", p.stdout
    assert "dra-0" in live.line_of(p.stdout, "ml/pending-dra") and "gpu-1" in live.line_of(p.stdout, "ml/pending-dra")
    assert "read at v1beta1" in p.stderr, p.stderr
    paths = [x for _, x, _ in api.log]
    assert any(x.startswith("/apis/resource.k8s.io/v1beta1/resourceclaims") for x in paths), paths
    assert not any(x.startswith("/apis/resource.k8s.io/v1/") for x in paths), paths
    p = ok(["explain", "ml/pending-dra"] + live_args)
    assert "not found" not in p.stdout, p.stdout
    print("ok - 1.32: resource.k8s.io at v1beta1 only: discovered, read, converted; the claim is found")

    # 1.33: v1beta2 and v1beta1: v1beta2 (v1's shape)
    api.dra_versions = ["v1beta2", "v1beta1"]
    api.objects = json.loads(json.dumps(base))
    for k in ("resourceslices", "resourceclaims", "deviceclasses"):
        for o in api.objects[k]:
            o["apiVersion"] = "resource.k8s.io/v1beta2"
    api.log.clear()
    p = ok(["simulate"] + live_args)
    assert status_of(p.stdout, "ml/pending-dra") == "Running", p.stdout
    assert "read at v1beta2" in p.stderr, p.stderr
    paths = [x for _, x, _ in api.log]
    assert any(x.startswith("/apis/resource.k8s.io/v1beta2/resourceslices") for x in paths), paths
    print("ok - 1.33: v1beta2 preferred over v1beta1")

    # DRA off: a warning, exit 0, the claim's pod Pending; and 1.31's v1alpha3
    api.objects = base
    for served, want in (([], "does not serve resource.k8s.io"), (["v1alpha3"], "only at v1alpha3")):
        api.dra_versions = served
        p = ok(["simulate"] + live_args)
        assert "warning: " + "the API server " in p.stderr and want in p.stderr, p.stderr
        assert "pods that reference claims stay Pending" in p.stderr, p.stderr
        assert status_of(p.stdout, "ml/pending-dra") == "Pending", p.stdout
        assert status_of(p.stdout, "team/pending-v1") == "Running", p.stdout
    api.dra_versions = ["v1", "v1beta2", "v1beta1"]
    p = ok(["simulate"] + live_args)
    assert not p.stderr, p.stderr
    print("ok - DRA off or only v1alpha3: a plain warning; all three served: v1, no message")


def test_exec(api, kc, state, t):
    elsewhere = tempfile.mkdtemp(prefix="dp-kube-cwd.")
    api.log.clear()
    p = ok(["simulate", "--kubeconfig", kc, "--context", "ok"], cwd=elsewhere)
    assert status_of(p.stdout, "ml/trainer") == "Running", p.stdout
    gets = len(api.log)
    assert gets > 8 and not api.violations, (gets, api.violations)
    assert runs(state) == 1, "cached until expirationTimestamp: one run for %d requests" % gets
    info = json.load(open(os.path.join(state, "info")))
    assert info["apiVersion"] == "client.authentication.k8s.io/v1", info
    assert info["spec"]["cluster"]["server"] == "https://127.0.0.1:%d" % api.port, info
    print("ok - exec plugin: args, env, KUBERNETES_EXEC_INFO, no terminal, relative command; 1 run for %d GETs"
          % gets)

    api.log.clear()
    ok(["simulate", "--kubeconfig", kc, "--context", "expired"])
    n = runs(state)
    assert n == len(api.log), "an expired credential is fetched again for each request: %d runs, %d GETs" % (
        n, len(api.log))
    ok(["simulate", "--kubeconfig", kc, "--context", "beta"])
    assert runs(state) == 1
    assert json.load(open(os.path.join(state, "info")))["apiVersion"] == "client.authentication.k8s.io/v1beta1"
    api.log.clear()
    api.violations.clear()
    ok(["simulate", "--kubeconfig", kc, "--context", "stale"])
    assert runs(state) == 2 and [c for _, _, c in api.log].count(401) == 1, api.log
    api.violations.clear()
    print("ok - expired credentials run the plugin again; v1beta1; a 401 runs it once more")

    p = fails(["simulate", "--kubeconfig", kc, "--context", "fail"],
              ["users[name=fail].user.exec (exec plugin ", "bin/plugin): exited with status 1: ",
               "\\e[31merror: the SSO session has expired\\r\\nrun aws sso login\\n"])
    fails(["simulate", "--kubeconfig", kc, "--context", "always"], "interactiveMode Always needs a terminal")
    fails(["explain", "x", "--kubeconfig", kc, "--context", "missing"],
          "no-such-auth-plugin: command not found: install it with: brew install no-such-auth-plugin")
    runs(state)
    p = run(["agent", "--kubeconfig", kc, "--node-name", "n", "--dra"])
    assert p.returncode == 2 and "not supported by the agent" in p.stderr, p.stderr
    print("ok - plugin failures name the command, its stderr escaped; Always refused; installHint")


def test_namespace(api, kc):
    p = ok(["explain", "pending-dra", "--kubeconfig", kc, "--context", "ml"])
    assert "Pod ml/pending-dra:" in p.stdout, p.stdout
    p = ok(["explain", "pending-v1", "-n", "team", "--kubeconfig", kc, "--context", "ml"])
    assert "Pod team/pending-v1:" in p.stdout, p.stdout
    p = ok(["explain", "team/pending-v1b", "--kubeconfig", kc, "--context", "ml", "--live-timeout", "50",
            "--cordon", "gpu-1", "--cordon", "gpu-2"])
    assert "Every node's reason: devplane explain team/pending-v1b --kubeconfig %s --context ml --live-timeout 50 " \
        "--cordon gpu-1 --cordon gpu-2 --details" % kc in p.stdout, p.stdout
    print("ok - explain: the context's namespace is the default, -n overrides it; hints keep --kubeconfig")


def test_recorded(api, live_args):
    """kube-scheduler's PodScheduled condition as the API server returns it."""
    said = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: " \
           "4 No preemption victims found for incoming pod."
    for p in api.objects["pods"]:
        if p["metadata"]["name"] in ("pending-v1", "pending-dra"):
            p["status"]["conditions"] = [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                                          "message": said, "lastTransitionTime": "2026-12-06T04:59:01Z",
                                          "lastProbeTime": None}]
    out = ok(["explain", "ml/pending-dra"] + live_args).stdout
    assert "kube-scheduler said at 2026-12-06T04:59:01Z: %s; devplane says now: it fits, on dra-0" % said in out, out
    out = ok(["explain", "team/pending-v1", "--cordon", "gpu-2", "--cordon", "gpu-1"] + live_args).stdout
    now = [l for l in out.splitlines() if l.startswith("0/4 nodes are available")]
    assert now and "kube-scheduler said at 2026-12-06T04:59:01Z: %s; devplane says now: %s" % (said, now[0]) in out, out
    out = ok(["explain", "team/pending-v1b"] + live_args).stdout
    assert "kube-scheduler said" not in out, out
    print("ok - explain shows kube-scheduler's recorded PodScheduled message beside devplane's")


def test_limits(api, live_args):
    api.objects["nodes"] = [live.node("gpu-%d" % i, gpus=2) for i in range(40)]
    fails(["simulate"] + live_args + ["--live-max-bytes", "20Ki"],
          ["the cluster's lists passed 20480 bytes", "GET /api/v1/nodes", "more than devplane keeps in memory",
           "--live-max-bytes allows more"])
    ok(["simulate"] + live_args + ["--live-max-bytes", "4Mi"])
    api.stall = {"pods"}
    # generous: the lists before pods must all come back first on a loaded machine
    fails(["simulate"] + live_args + ["--live-timeout", "6"],
          ["reading the cluster took longer than 6 s: stopped at GET /api/v1/pods?", "after 20 pages",
           "--live-timeout SECONDS allows longer"])
    api.stall = set()
    p = run(["simulate"] + live_args + ["--live-timeout", "0"])
    assert p.returncode == 2 and "--live-timeout 0: must be" in p.stderr, p.stderr
    print("ok - F8: a total byte cap and a total deadline, each exit 2 with the flag to change it")


def test_escape(api, live_args):
    api.broken = {"pods": (500, "etcdserver: \x1b]0;owned\x07request timed out\r\nERROR fake line\u202e")}
    fails(["simulate"] + live_args, "HTTP 500: etcdserver: \\e]0;owned\\x07request timed out\\r\\nERROR fake line"
          "\\u{202E}")
    api.broken = {}
    print("ok - F9: an API server's error body reaches the terminal escaped")


def main():
    t = tempfile.mkdtemp(prefix="dp-kube-managed.")
    api = SlowAPI(TOKEN, "unused", "unused", t)
    port = api.start()
    live.cluster(api)
    state = os.path.join(t, "state")
    os.mkdir(state)
    kc = write_kubeconfig(t, port, state)
    live_args = ["--kubeconfig", kc, "--context", "ml"]
    test_versions(api, live_args)
    test_exec(api, kc, state, t)
    test_namespace(api, kc)
    test_escape(api, live_args)
    test_recorded(api, live_args)
    test_limits(api, live_args)
    assert all(m == "GET" for m, _, _ in api.log), api.log
    api.stop()


if __name__ == "__main__":
    main()
