#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""soak-node.py — fault-injection soak of the node path (issue 11).

Runs the real `devplane node` (kubelet stand-in: device manager + DRA manager)
and one real `devplane agent --dra` serving both V1 (example.com/gpu) and V2
(gpu.example.com) over the same eight GPUs, then for each round:

  1. changes the workload: adds a V1 pod (1-2 GPUs), adds a V2 pod with an
     allocated ResourceClaim for a device the "scheduler" believes free (its
     view is the last status it read, so it is stale on purpose now and then,
     and sometimes it picks a device V1 holds), or removes a pod;
  2. now and then kills the node or the agent with SIGKILL after a random
     delay of 0-30 ms (so mid-write and mid-prepare kills happen), corrupts
     one of the checkpoints on disk while it is down (one byte changed, or
     the file truncated), and restarts it; while the node is down it may
     also delete its device-manager checkpoint or replace one of its state
     files (checkpoint, DRA state, status file) with a directory or a
     symlink to /dev/zero (issue 21);
  2b. now and then fills the disk of the plugin directory (a small tmpfs in
     a user + mount namespace: the soak re-runs itself under `unshare -Urm`)
     for the workload change and any kill in that round, and frees it before
     settling; and now and then starts a second `devplane node` on the same
     plugin directory, which must be refused at once naming the first one's
     pid (anything else is a violation of kind `second`);
  3. waits until the node's status is stable and checks the promise:
     - no device is held by two consumers (V1 containers as the node holds
       them, V2 claims as the node and the agent's CDI specs hold them);
     - no Running pod lacks its devices (V1 ids, V2 GPU_DEVICE_* env);
     - no claim is left prepared (CDI spec on disk, claim in the node's
       status) 10 s after its pod is gone;
     - every checkpoint on disk parses (kubelet device-manager checkpoint,
       driver checkpoint, node DRA state) once the daemons have settled;
     - a V1 pod does not wait while enough devices are free (devices the
       node withholds because it cannot prove who holds them count as held).

Prints one line per violation and a summary table; exit status 0 when there
is none, 1 otherwise, 2 on a usage error. Everything happens in a temporary
directory (kept with --keep). CI runs a short fixed-seed version
(tests/tools/test-soak-short.sh); the long run and its figures are in
docs/v2-node-path.md.
"""
import argparse, glob, json, os, random, re, shutil, signal, subprocess, sys, tempfile, time

V1_RES = "example.com/gpu"
DRIVER = "gpu.example.com"
NGPU = 8
LEAK_S = 10.0
STARVE_S = 8.0


class Soak:
    def __init__(self, args):
        self.a = args
        self.rng = random.Random(args.seed)
        self.dir = tempfile.mkdtemp(prefix="dp-soak.")
        d = self.dir
        self.pd, self.mf, self.st = f"{d}/plugins", f"{d}/manifests", f"{d}/agent-state"
        self.reg, self.cl, self.cdi = f"{d}/registry", f"{d}/claims", f"{d}/cdi"
        self.sl, self.kp = f"{d}/slices", f"{d}/kplugins"
        for p in (self.pd, self.mf, self.st, self.reg, self.cl, self.cdi, self.sl, self.kp):
            os.makedirs(p)
        self.node = self.agent = None
        self.pods = {}          # name -> ("v1", count) | ("v2", device, uid)
        self.removed = {}       # claim uid -> time its pod was removed
        self.started = {}       # V1 pod -> the devices it was first seen Running with
        self.seq = 0
        self.uuid2id = {}
        self.violations = []
        self.stats = dict(rounds=0, node_kills=0, agent_kills=0, corruptions=0, settle_timeouts=0,
                          disk_full=0, missing=0, odd=0, second_runs=0,
                          double=0, lost=0, leaked=0, unreadable=0, v1_starved=0, second=0,
                          settle_ms=[])
        self.tmpfs = False
        if args.tmpfs_size != "0":
            subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={args.tmpfs_size}", "tmpfs", self.pd], check=True)
            self.tmpfs = True
        self.round = 0

    # ---- processes -------------------------------------------------------
    def log(self, msg):
        with open(f"{self.dir}/soak.log", "a") as f:
            f.write(f"[{time.monotonic():.3f}] round {self.round}: {msg}\n")

    def start_node(self):
        self.node = subprocess.Popen(
            [self.a.devplane, "node", "--plugin-dir", self.pd, "--manifests", self.mf, "--node-name", "node-a",
             "--backoff-initial-ms", "100", "--backoff-max-ms", "400", "--registry-dir", self.reg,
             "--claims-dir", self.cl, "--cdi-dir", self.cdi],
            stdout=open(f"{self.dir}/node.log", "a"), stderr=subprocess.STDOUT)
        self.log(f"node started pid={self.node.pid}")

    def start_agent(self):
        self.agent = subprocess.Popen(
            [self.a.devplane, "agent", "--plugin-dir", self.pd, "--node-name", "node-a", "--state-dir", self.st,
             "--profile", "example-gpu", "--dra", "--registry-dir", self.reg, "--plugins-dir", self.kp,
             "--cdi-dir", self.cdi, "--slices-dir", self.sl, "--claims-dir", self.cl],
            stdout=open(f"{self.dir}/agent.log", "a"), stderr=subprocess.STDOUT)
        self.log(f"agent started pid={self.agent.pid}")

    def kill(self, which):
        p = self.node if which == "node" else self.agent
        if p is None:
            return
        p.send_signal(signal.SIGKILL)
        p.wait()
        self.log(f"{which} killed")

    def stop_all(self):
        for p in (self.agent, self.node):
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGTERM)
                try:
                    p.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()

    def status(self):
        r = subprocess.run([self.a.devplane, "node", "status", "--plugin-dir", self.pd, "-o", "flat"],
                           capture_output=True, text=True, timeout=30)
        return r.stdout.splitlines() if r.returncode == 0 else None

    def wait_ready(self, timeout=30):
        """Both daemons up: waits on the node's status file (inotify, through
        `devplane node status --wait`), not by polling."""
        if self.node.poll() is not None or self.agent.poll() is not None:
            return False
        conds = [f"node node-a running pid={self.node.pid}", "plugin=connected",
                 f"dra-plugin {DRIVER} registered"]
        args = [self.a.devplane, "node", "status", "--plugin-dir", self.pd, "--timeout", str(timeout), "-o", "flat"]
        for c in conds:
            args += ["--wait", c]
        try:
            r = subprocess.run(args, capture_output=True, text=True, timeout=timeout + 5)
        except subprocess.TimeoutExpired:
            return False
        return r.returncode == 0 and self.node.poll() is None and self.agent.poll() is None

    def load_ids(self):
        try:
            lines = open(f"{self.st}/devices").read().split("\n")
        except OSError:
            return
        for i in range(0, len(lines) - 1, 2):
            if lines[i].startswith("gpu-") and lines[i + 1]:
                self.uuid2id[lines[i + 1]] = lines[i]

    # ---- workload --------------------------------------------------------
    def write(self, name, text):
        tmp = f"{self.mf}/.{name}.tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.rename(tmp, f"{self.mf}/{name}.yaml")

    def add_v1(self):
        self.seq += 1
        name, n = f"v1-{self.seq}", self.rng.choice((1, 1, 2))
        self.write(name, f"""apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  containers:
  - name: main
    image: busybox
    resources: {{limits: {{{V1_RES}: {n}}}}}
""")
        self.pods[name] = ("v1", n)
        self.log(f"add {name} gpus={n}")

    def add_v2(self, view):
        held = view["v1"].keys() | view["v2"].keys()
        free = [f"gpu-{i}" for i in range(NGPU) if f"gpu-{i}" not in held]
        mine = {p[1] for p in self.pods.values() if p[0] == "v2"}
        free = [d for d in free if d not in mine]
        if self.rng.random() < 0.15 or not free:
            # a stale scheduler: a device that V1 may hold (never one of our
            # own claims' devices: two claims on one device is not a state a
            # scheduler writes)
            free = [f"gpu-{i}" for i in range(NGPU) if f"gpu-{i}" not in mine]
        if not free:
            return
        dev = self.rng.choice(free)
        self.seq += 1
        name, uid = f"v2-{self.seq}", f"uid-v2-{self.seq}"
        self.write(name, f"""apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {{name: {name}, namespace: default, uid: {uid}}}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {{deviceClassName: {DRIVER}}}
status:
  allocation:
    devices:
      results:
      - {{request: gpu, driver: {DRIVER}, pool: node-a, device: {dev}}}
---
apiVersion: v1
kind: Pod
metadata: {{name: {name}-pod, namespace: default}}
spec:
  containers:
  - name: main
    image: busybox
    resources: {{claims: [{{name: g}}]}}
  resourceClaims:
  - {{name: g, resourceClaimName: {name}}}
""")
        self.pods[name] = ("v2", dev, uid)
        self.log(f"add {name} device={dev}")

    def remove(self):
        if not self.pods:
            return
        name = self.rng.choice(sorted(self.pods))
        os.unlink(f"{self.mf}/{name}.yaml")
        p = self.pods.pop(name)
        self.started.pop(name, None)
        if p[0] == "v2":
            self.removed[p[2]] = time.monotonic()
        self.log(f"remove {name}")

    # ---- observation -----------------------------------------------------
    def view(self, lines):
        """Who holds what, as the node says and as the agent's CDI specs say."""
        v = dict(v1={}, v2={}, v1pods={}, v2pods={}, phase={}, claims={}, waiting_msg={}, withheld=set())
        for l in lines:
            m = re.match(r"container default/([^/]+)/(\S+) " + re.escape(V1_RES) + r"=(\S*)$", l)
            if m:
                ids = [self.uuid2id.get(u, u) for u in m.group(3).split(",") if u and u != "-"]
                v["v1pods"][m.group(1)] = ids
                for d in ids:
                    v["v1"].setdefault(d, []).append(f"V1 pod {m.group(1)}")
                continue
            m = re.match(r"resource " + re.escape(V1_RES) + r" .* withheld=(\S+)", l)
            if m:
                for u in m.group(1).split(","):
                    if u and u != "-":
                        v["withheld"].add(self.uuid2id.get(u, u))
                continue
            m = re.match(r"pod default/(\S+) phase=(\S+)", l)
            if m:
                v["phase"][m.group(1)] = m.group(2)
                continue
            m = re.match(r"dra-env default/([^/]+)/\S+ GPU_DEVICE_(\d+)=(gpu-\d+)$", l)
            if m:
                v["v2pods"].setdefault(m.group(1), set()).add(m.group(3))
                continue
            m = re.match(r"dra-claim default/(\S+) uid=(\S+) driver=\S+ devices=(\S+)", l)
            if m:
                v["claims"][m.group(2)] = [x.split("/")[-1] for x in m.group(3).split(",") if x != "-"]
        for f in glob.glob(f"{self.cdi}/*.json"):
            m = re.search(r"_(uid-v2-\d+)\.json$", f)
            if not m:
                continue
            try:
                spec = json.load(open(f))
            except (OSError, ValueError):
                continue
            for dv in spec.get("devices", []):
                for e in dv.get("containerEdits", {}).get("env", []):
                    mm = re.match(r"GPU_DEVICE_\d+=(gpu-\d+)$", e)
                    if mm:
                        v["v2"].setdefault(mm.group(1), set()).add(m.group(1))
        for uid, devs in v["claims"].items():
            for d in devs:
                v["v2"].setdefault(d, set()).add(uid)
        return v

    def signature(self, lines):
        keep = []
        for l in lines:
            if l.startswith(("pod ", "container ", "dra-pod ", "dra-claim ", "dra-env ")):
                keep.append(re.sub(r" (attempts|allocate-calls)=\d+", "", l))
        return "\n".join(sorted(keep))

    def settle(self):
        """Until the node's status has not changed for --settle-ms: quiescence
        has no event of its own, so this one wait polls, with a deadline."""
        t0 = time.monotonic()
        end = t0 + self.a.settle_timeout
        last, since = None, t0
        while time.monotonic() < end:
            s = self.status()
            if s is not None:
                sig = self.signature(s)
                if sig != last:
                    last, since = sig, time.monotonic()
                elif time.monotonic() - since >= self.a.settle_ms / 1000:
                    self.stats["settle_ms"].append((since - t0) * 1000)
                    return s
            time.sleep(0.1)
        self.stats["settle_timeouts"] += 1
        self.log("did not settle")
        return self.status() or []

    # ---- checks ----------------------------------------------------------
    def violate(self, kind, msg):
        self.stats[kind] += 1
        line = f"VIOLATION round {self.round} {kind}: {msg}"
        self.violations.append(line)
        self.log(line)
        print(line, flush=True)

    def check(self, lines):
        v = self.view(lines)
        now = time.monotonic()
        # 1. no device held by two consumers
        for d in sorted(set(v["v1"]) | set(v["v2"])):
            users = list(v["v1"].get(d, [])) + [f"V2 claim {u}" for u in sorted(v["v2"].get(d, ()))]
            if len(users) > 1:
                self.violate("double", f"{d} held by {', '.join(users)}")
        # 2. no Running pod without its devices
        for name, p in sorted(self.pods.items()):
            pod = name if p[0] == "v1" else f"{name}-pod"
            if v["phase"].get(pod) != "Running":
                continue
            if p[0] == "v1" and len(v["v1pods"].get(name, [])) != p[1]:
                self.violate("lost", f"{pod} Running with {v['v1pods'].get(name)} (wants {p[1]})")
            elif p[0] == "v1":
                # a running container keeps the devices it started with: if the
                # node now says others, it forgot them and may hand them out
                got = sorted(v["v1pods"][name])
                first = self.started.setdefault(name, got)
                if got != first:
                    self.violate("lost", f"{pod} started with {first}, the node now says {got}")
                    self.started[name] = got
            if p[0] == "v2" and v["v2pods"].get(pod) != {p[1]}:
                self.violate("lost", f"{pod} Running with {v['v2pods'].get(pod)} (claim for {p[1]})")
        # 3. no claim prepared 10 s after its pod is gone
        for uid, t in sorted(self.removed.items()):
            gone = not glob.glob(f"{self.cdi}/*_{uid}.json") and uid not in v["claims"]
            if gone:
                del self.removed[uid]
            elif now - t > LEAK_S:
                self.violate("leaked", f"claim {uid} still prepared {now - t:.1f} s after its pod went")
                del self.removed[uid]
        # 4. every checkpoint parses
        for f in self.checkpoints():
            try:
                json.load(open(f))
            except ValueError as e:
                self.violate("unreadable", f"{os.path.relpath(f, self.dir)}: {e}")
            except OSError:
                pass
        # 5. a V1 pod does not wait while enough devices are free: a pod that
        # waits with devices free must be Running within STARVE_S (the
        # node's backoff is 400 ms at most; the rest is a loaded machine)
        starved = self.starved(v)
        end = time.monotonic() + STARVE_S
        while starved and time.monotonic() < end:
            time.sleep(0.2)
            v2 = self.view(self.status() or [])
            starved = {n: m for n, m in self.starved(v2).items() if n in starved}
        for name, msg in sorted(starved.items()):
            self.violate("v1_starved", msg)
        return v

    def starved(self, v):
        free = NGPU - len(set(v["v1"]) | set(v["v2"]) | v["withheld"])
        return {name: f"{name} {v['phase'][name]} wanting {p[1]} while {free} GPUs are free"
                for name, p in self.pods.items()
                if p[0] == "v1" and v["phase"].get(name) not in (None, "Running") and p[1] <= free}

    def checkpoints(self):
        out = [f"{self.pd}/kubelet_internal_checkpoint"] + glob.glob(f"{self.kp}/*/checkpoint.json")
        out += [f for f in glob.glob(f"{self.pd}/*") + glob.glob(f"{self.dir}/*/dra*state*")
                if re.search(r"dra.*(state|checkpoint)", os.path.basename(f)) and not f.endswith(".corrupt")]
        return sorted(set(out))

    def corrupt(self, which):
        files = [f"{self.pd}/kubelet_internal_checkpoint"] if which == "node" else []
        files += [f for f in self.checkpoints() if which == "node" and "dra" in os.path.basename(f)]
        if which == "agent":
            files += glob.glob(f"{self.kp}/*/checkpoint.json")
        files = [f for f in files if os.path.isfile(f) and os.path.getsize(f) > 0]
        if not files:
            return
        f = self.rng.choice(files)
        data = bytearray(open(f, "rb").read())
        if self.rng.random() < 0.2:
            data = data[: self.rng.randrange(len(data))]
            how = f"truncated to {len(data)} bytes"
        else:
            i = self.rng.randrange(len(data))
            old = data[i]
            data[i] = (old + self.rng.randrange(1, 255)) % 256
            how = f"byte {i} {old:#x}->{data[i]:#x}"
        with open(f, "wb") as fh:
            fh.write(data)
        self.stats["corruptions"] += 1
        self.log(f"corrupted {os.path.relpath(f, self.dir)}: {how}")

    def fill_disk(self):
        """No free block left on the plugin directory's tmpfs."""
        try:
            with open(f"{self.pd}/.soak-fill", "wb") as f:
                while True:
                    f.write(b"\0" * 65536)
        except OSError:
            pass
        self.stats["disk_full"] += 1
        self.log("disk full")

    def free_disk(self):
        try:
            os.unlink(f"{self.pd}/.soak-fill")
            self.log("disk space back")
        except FileNotFoundError:
            pass

    def damage_node_files(self):
        """While the node is down: delete its checkpoint, or put a directory
        or a symlink to /dev/zero where one of its state files is."""
        ck = f"{self.pd}/kubelet_internal_checkpoint"
        if self.rng.random() < self.a.missing_rate:
            if os.path.lexists(ck):
                os.unlink(ck) if not os.path.isdir(ck) or os.path.islink(ck) else shutil.rmtree(ck)
                self.stats["missing"] += 1
                self.log("checkpoint deleted")
        if self.rng.random() < self.a.odd_rate:
            f = self.rng.choice([ck, f"{self.pd}/dra_manager_state.json", f"{self.pd}/devplane_node_status.json"])
            if os.path.isdir(f) and not os.path.islink(f):
                shutil.rmtree(f)
            elif os.path.lexists(f):
                os.unlink(f)
            if self.rng.random() < 0.5:
                os.makedirs(f"{f}/inside")
                how = "a directory"
            else:
                os.symlink("/dev/zero", f)
                how = "a symlink to /dev/zero"
            self.stats["odd"] += 1
            self.log(f"{os.path.basename(f)} replaced by {how}")

    def second_node(self):
        """A second node on the same plugin directory must be refused at
        once, naming the first one's pid, and change nothing."""
        other = f"{self.dir}/other-manifests"
        os.makedirs(other, exist_ok=True)
        self.stats["second_runs"] += 1
        try:
            r = subprocess.run([self.a.devplane, "node", "--plugin-dir", self.pd, "--manifests", other,
                                "--node-name", "node-b", "--registry-dir", self.reg],
                               capture_output=True, text=True, timeout=15)
        except subprocess.TimeoutExpired:
            self.violate("second", "a second node on the same plugin directory kept running")
            return
        if r.returncode == 0 or f"held by pid {self.node.pid}" not in r.stderr + r.stdout:
            self.violate("second", f"second node: exit {r.returncode}, {(r.stderr + r.stdout).strip()[:200]}")
        else:
            self.log("second node refused")

    def clean_aside(self):
        """Damaged files the node set aside are an operator's to read; the
        soak drops them so that they do not fill the small tmpfs."""
        for f in glob.glob(f"{self.pd}/*.corrupt*"):
            shutil.rmtree(f) if os.path.isdir(f) and not os.path.islink(f) else os.unlink(f)

    # ---- the run ---------------------------------------------------------
    def one_round(self, view):
        full = self.tmpfs and self.rng.random() < self.a.disk_full_rate
        if full:
            self.fill_disk()
        r = self.rng.random()
        if r < 0.35 and len(self.pods) < 10:
            self.add_v1()
        elif r < 0.7 and len(self.pods) < 10:
            self.add_v2(view)
        else:
            self.remove()
        if self.rng.random() < self.a.kill_rate:
            which = self.rng.choice(("node", "agent"))
            time.sleep(self.rng.random() * 0.03)
            self.kill(which)
            self.stats[f"{which}_kills"] += 1
            if self.rng.random() < self.a.corrupt_rate:
                self.corrupt(which)
            if which == "node":
                self.damage_node_files()
            if self.rng.random() < 0.3:
                # the workload changes while the daemon is down
                self.remove() if self.pods and self.rng.random() < 0.6 else self.add_v1()
            (self.start_node if which == "node" else self.start_agent)()
            if full:
                # the restarted daemon meets the full disk for a moment
                time.sleep(0.1 + self.rng.random() * 0.3)
                self.free_disk()
            if not self.wait_ready():
                self.violate("lost", f"{which} did not come back (see {which}.log)")
                return None
        if full:
            time.sleep(0.05 + self.rng.random() * 0.3)
            self.free_disk()
        if self.rng.random() < self.a.second_rate and self.node.poll() is None:
            self.second_node()
        v = self.check(self.settle())
        self.clean_aside()
        return v

    def run(self):
        self.start_node()
        self.start_agent()
        if not self.wait_ready():
            print(f"soak: node and agent did not start (logs in {self.dir})", file=sys.stderr)
            return 2
        self.load_ids()
        view = self.view(self.status() or [])
        t0 = time.monotonic()
        for self.round in range(1, self.a.rounds + 1):
            self.stats["rounds"] = self.round
            v = self.one_round(view)
            if v is None:
                break
            view = v
            if self.a.progress and self.round % 50 == 0:
                print(f"soak: {self.round} rounds, {len(self.violations)} violations, "
                      f"{time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
        # the end: every pod goes; nothing may stay prepared
        for name in sorted(self.pods):
            os.unlink(f"{self.mf}/{name}.yaml")
            p = self.pods[name]
            if p[0] == "v2":
                self.removed[p[2]] = time.monotonic()
        self.pods.clear()
        end = time.monotonic() + LEAK_S + 1
        while self.removed and time.monotonic() < end:
            time.sleep(0.2)
            self.check(self.status() or [])
        self.check(self.status() or [])
        self.elapsed = time.monotonic() - t0
        return 0

    def summary(self):
        s = self.stats
        ms = sorted(s["settle_ms"]) or [0]
        print("| seed | rounds | node kills | agent kills | corruptions | disk full | checkpoint deleted "
              "| non-regular files | second nodes | double allocations | lost devices "
              "| leaked claims | unreadable checkpoints | V1 starved | second not refused | settle timeouts "
              "| settle p50/p99 ms | wall s |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        print(f"| {self.a.seed} | {s['rounds']} | {s['node_kills']} | {s['agent_kills']} | {s['corruptions']} "
              f"| {s['disk_full']} | {s['missing']} | {s['odd']} | {s['second_runs']} "
              f"| {s['double']} | {s['lost']} | {s['leaked']} | {s['unreadable']} | {s['v1_starved']} "
              f"| {s['second']} "
              f"| {s['settle_timeouts']} | {ms[len(ms) // 2]:.0f}/{ms[min(len(ms) - 1, len(ms) * 99 // 100)]:.0f} "
              f"| {self.elapsed:.0f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--devplane", default=os.environ.get("DEVPLANE"), help="the devplane binary ($DEVPLANE)")
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--kill-rate", type=float, default=0.5, help="share of rounds that kill a daemon")
    ap.add_argument("--corrupt-rate", type=float, default=0.2, help="share of kills followed by a corruption")
    ap.add_argument("--settle-timeout", type=float, default=20.0)
    ap.add_argument("--settle-ms", type=int, default=1200, help="status unchanged this long = settled")
    ap.add_argument("--disk-full-rate", type=float, default=0.0,
                    help="share of rounds that fill the plugin directory's disk (needs --tmpfs-size)")
    ap.add_argument("--missing-rate", type=float, default=0.0,
                    help="share of node kills followed by deleting its checkpoint")
    ap.add_argument("--odd-rate", type=float, default=0.0,
                    help="share of node kills followed by a state file turned into a directory or a /dev/zero link")
    ap.add_argument("--second-rate", type=float, default=0.0,
                    help="share of rounds that start a second node on the same plugin directory")
    ap.add_argument("--tmpfs-size", default="0",
                    help="mount a tmpfs of this size (e.g. 1m) on the plugin directory, in a user + mount "
                         "namespace (the soak re-runs itself under `unshare -Urm`); 0: none")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--progress", action="store_true")
    a = ap.parse_args()
    if not a.devplane or not os.access(a.devplane, os.X_OK):
        ap.error("--devplane or $DEVPLANE must name the devplane binary")
    if a.disk_full_rate > 0 and a.tmpfs_size == "0":
        ap.error("--disk-full-rate needs --tmpfs-size")
    if a.tmpfs_size != "0" and not os.environ.get("DP_SOAK_USERNS"):
        if subprocess.run(["unshare", "-Urm", "true"], capture_output=True).returncode != 0:
            print("soak: user and mount namespaces are not available: no tmpfs, no disk-full rounds", file=sys.stderr)
            a.tmpfs_size, a.disk_full_rate = "0", 0.0
        else:
            os.environ["DP_SOAK_USERNS"] = "1"
            argv = ["unshare", "-Urm", sys.executable, os.path.abspath(__file__)] + sys.argv[1:]
            if not any(x.startswith("--devplane") for x in sys.argv[1:]):
                argv += ["--devplane", a.devplane]
            os.execvp("unshare", argv)
    s = Soak(a)
    rc = 2
    try:
        rc = s.run()
    finally:
        s.stop_all()
        if s.tmpfs:
            subprocess.run(["umount", "-l", s.pd], capture_output=True)
        if rc == 0:
            s.summary()
        if a.keep or s.violations or rc != 0:
            print(f"soak: logs kept in {s.dir}", file=sys.stderr)
        else:
            shutil.rmtree(s.dir, ignore_errors=True)
    if rc != 0:
        return rc
    return 1 if s.violations else 0


if __name__ == "__main__":
    sys.exit(main())
