#!/usr/bin/env python3
# NVIDIA's DaemonSet environment starts `devplane agent` unchanged: the
# variables NVIDIA's Helm template sets on its plugin container (read at
# test time from $DP_SHARED_DIR/conformance/nvidia-device-plugin, never
# copied) are given their chart values; the agent starts, serves the
# resources they ask for (MIG_STRATEGY, CONFIG_FILE, DEVICE_ID_STRATEGY ...),
# with the kubelet socket from KUBELET_SOCKET. Also: NVIDIA's static
# DaemonSet (no environment), command-line flags over the environment, and
# failOnInitError false (a backend that cannot start: logged, nothing
# advertised, the agent stays up until SIGTERM) against true (exit).
import atexit, shutil, os, re, select, signal, subprocess, sys, tempfile, time

DEVPLANE = os.environ["DEVPLANE"]
NV = os.path.join(os.environ.get("DP_SHARED_DIR", ""), "conformance", "nvidia-device-plugin")
if not os.path.isdir(NV):
    print(f"SKIP: no {NV}")
    sys.exit(0)
TMP = tempfile.mkdtemp(prefix="dp-nvds.")
atexit.register(shutil.rmtree, TMP, True)
failures = 0


def fail(msg):
    global failures
    failures += 1
    print("not ok - " + msg)


def start(env, args=(), profile="a100-mixed"):
    pd = tempfile.mkdtemp(dir=TMP)
    e = {k: v for k, v in os.environ.items()}
    e.update(env)
    cmd = [DEVPLANE, "agent", "--profile", profile, "--node-name", "gpu-node", "--state-dir", pd + "/state"]
    if "KUBELET_SOCKET" not in env:
        cmd += ["--plugin-dir", pd]
    p = subprocess.Popen(cmd + list(args), env=e, stderr=subprocess.PIPE)
    return p, pd


def wait_line(p, pattern, timeout=60):
    """Lines of stderr until one matches (returned) or the process exits.
    Reads the fd itself: a buffered readline could hold a line select()
    never reports."""
    buf = getattr(p, "dp_buf", b"")
    seen, deadline = [], time.monotonic() + timeout
    fd = p.stderr.fileno()
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            text = line.decode(errors="replace")
            seen.append(text)
            if re.search(pattern, text):
                p.dp_buf = buf
                return text, seen
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            break
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        buf += chunk
    p.dp_buf = buf
    return None, seen


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    return p.wait(timeout=60)


# The environment of NVIDIA's plugin container, from its Helm template.
tpl = open(os.path.join(NV, "deployments/helm/nvidia-device-plugin/templates/daemonset-device-plugin.yml")).read()
ctr = tpl[tpl.index("name: nvidia-device-plugin-ctr"):]
ctr = ctr[:ctr.index("securityContext:")]
names = re.findall(r"- name: ([A-Z_]+)", ctr)
cfg = os.path.join(TMP, "config.yaml")
with open(cfg, "w") as f:  # what the config-manager sidecar would place at /config/config.yaml
    f.write("version: v1\nflags:\n  plugin:\n    deviceListStrategy: envvar\n"
            "sharing:\n  timeSlicing:\n    resources:\n    - name: nvidia.com/mig-1g.10gb\n      replicas: 2\n")
# Chart values a platform team would set (typeIs string/bool in the template).
VALUES = {
    "MPS_ROOT": "/run/nvidia/mps", "MIG_STRATEGY": "mixed", "FAIL_ON_INIT_ERROR": "true",
    "PASS_DEVICE_SPECS": "true", "DEVICE_LIST_STRATEGY": "envvar", "DEVICE_ID_STRATEGY": "index",
    "NVIDIA_DRIVER_ROOT": "/run/nvidia/driver", "NVIDIA_DEV_ROOT": "/", "NVIDIA_CDI_HOOK_PATH": "/usr/bin/nvidia-cdi-hook",
    "CDI_FEATURE_FLAGS": "", "GDRCOPY_ENABLED": "false", "GDS_ENABLED": "false", "MOFED_ENABLED": "false",
    "CONFIG_FILE": cfg, "NVIDIA_MIG_MONITOR_DEVICES": "all", "DEVICE_DISCOVERY_STRATEGY": "auto",
    "NVIDIA_VISIBLE_DEVICES": "all", "NVIDIA_DRIVER_CAPABILITIES": "compute,utility",
}
unknown = [n for n in names if n not in VALUES]
if unknown or len(names) < 10:
    fail(f"NVIDIA's template sets variables this test does not know: {unknown} (of {names})")
env = {n: VALUES[n] for n in names if n in VALUES}
env["KUBELET_SOCKET"] = os.path.join(TMP, "kubelet", "kubelet.sock")
os.makedirs(os.path.dirname(env["KUBELET_SOCKET"]))
p, _ = start(env)
line, seen = wait_line(p, r"serving nvidia.com/mig-1g.10gb: 56 devices")
if not line:
    fail("NVIDIA's DaemonSet environment: no 'serving nvidia.com/mig-1g.10gb: 56 devices'\n" + "\n".join(seen))
else:
    _, more = wait_line(p, r"serving nvidia.com/gpu: 4 devices", timeout=10)
    sock = os.path.join(TMP, "kubelet", "devplane-nvidia.com_gpu.sock")
    if not os.path.exists(sock):
        fail(f"KUBELET_SOCKET: no {sock}")
    else:
        print(f"ok - NVIDIA's DaemonSet environment ({len(names)} variables): mixed MIG, time-sliced "
              "mig-1g.10gb from CONFIG_FILE, sockets beside KUBELET_SOCKET")
if stop(p) != 0:
    fail("agent did not stop cleanly on SIGTERM")

# NVIDIA's static DaemonSet: `env: []`, nothing mounted but the plugin dir.
p, _ = start({})
line, seen = wait_line(p, r"serving nvidia.com/gpu: 8 devices")
print("ok - static DaemonSet (no environment): nvidia.com/gpu 8") if line else fail("static: " + "\n".join(seen))
stop(p)

# A flag wins over the variable (urfave/cli): MIG_STRATEGY=single, --mig-strategy=mixed.
p, _ = start({"MIG_STRATEGY": "single"}, ["--mig-strategy=mixed"])
line, seen = wait_line(p, r"serving nvidia.com/mig-1g.10gb: 28 devices")
print("ok - --mig-strategy over MIG_STRATEGY") if line else fail("flag over env: " + "\n".join(seen))
stop(p)

# A bad value is refused with its origin.
r = subprocess.run([DEVPLANE, "agent", "--dry-run", "--node-name", "n"], env={**os.environ, "MIG_STRATEGY": "maybe"},
                   capture_output=True, text=True, timeout=60)
if r.returncode != 2 or "MIG_STRATEGY: unknown MIG strategy: maybe" not in r.stderr:
    fail(f"bad MIG_STRATEGY: rc={r.returncode} {r.stderr}")
else:
    print("ok - MIG_STRATEGY=maybe refused, naming the variable")

# failOnInitError: a backend that cannot start (no libnvidia-ml).
nvml = {"DP_NVML_LIBRARY": os.path.join(TMP, "no-such-libnvidia-ml.so.1")}
p, _ = start({**nvml, "FAIL_ON_INIT_ERROR": "false"}, ["--backend", "nvml"])
line, seen = wait_line(p, r"failOnInitError is false: advertising nothing")
if not line or p.poll() is not None:
    fail("FAIL_ON_INIT_ERROR=false: the agent should log and stay up\n" + "\n".join(seen))
else:
    print("ok - FAIL_ON_INIT_ERROR=false: init error logged, nothing advertised, agent stays up")
if stop(p) != 0:
    fail("blocked agent did not stop cleanly on SIGTERM")
p, _ = start(nvml, ["--backend", "nvml"])
rc = p.wait(timeout=60)
print("ok - failOnInitError default true: exit %d" % rc) if rc != 0 else fail("default failOnInitError: exit 0")

# The driver root mounted in the container (NVIDIA's chart mounts
# nvidiaDriverRoot at /driver-root): libnvidia-ml.so.1 is loaded from it.
fake = os.path.join(os.environ.get("DP_BUILD_DIR", ""), "tests", "fake-nvml", "libnvidia-ml.so.1")
if os.path.exists(fake):
    root = os.path.join(TMP, "driver-root")
    os.makedirs(os.path.join(root, "usr", "lib64"))
    os.symlink(fake, os.path.join(root, "usr", "lib64", "libnvidia-ml.so.1"))
    box = os.path.join(TMP, "box.nvml.yaml")
    with open(box, "w") as f:
        f.write("driverVersion: 550.54.15\ncudaDriverVersion: 12040\ngpus:\n"
                "- {name: NVIDIA H100, uuid: GPU-0000aaaa-h100-4000-8000-000000000000, architecture: 9, "
                "memoryMiB: 81920, pciBusId: '00000000:10:00.0', numaNode: 0, minor: 0, computeCapability: '9.0'}\n")
    e = {k: v for k, v in os.environ.items() if k != "DP_NVML_LIBRARY"}
    e.update({"DRIVER_ROOT_CTR_PATH": root, "DP_FAKE_NVML_CONFIG": box})
    r = subprocess.run([DEVPLANE, "agent", "--dry-run", "--backend", "nvml", "--node-name", "n"], env=e,
                       capture_output=True, text=True, timeout=60)
    if r.returncode == 0 and r.stdout == "nvidia.com/gpu 1\n":
        print("ok - DRIVER_ROOT_CTR_PATH: libnvidia-ml.so.1 loaded from the mounted driver root")
    else:
        fail(f"driver root: rc={r.returncode} {r.stdout} {r.stderr}")
else:
    print(f"# no fake NVML at {fake}: driver-root lookup not checked")

sys.exit(1 if failures else 0)
