#!/usr/bin/env python3
# NVIDIA's own example configs, read at test time from
# $DP_SHARED_DIR/conformance/nvidia-device-plugin (never copied): every config
# block of its README, the ConfigMap examples of its Helm values, the configs
# of its config tests and the JSON cases of its config unit tests load (or are
# refused) as NVIDIA's plugin would, and `devplane agent --dry-run` advertises
# the resource names and counts NVIDIA's rules give on the mock backend's
# NVIDIA-like profiles (a100-mixed: GPUs 0-3 in MIG mode with 7 x 1g.10gb,
# GPUs 4-7 whole; a100-80gb-8: 8 whole GPUs). The expected results come
# from a small model of NVIDIA's rules below, not from devplane.
import atexit, shutil, os, re, subprocess, sys, tempfile

import yaml

DEVPLANE = os.environ["DEVPLANE"]
SHARED = os.environ.get("DP_SHARED_DIR", "")
NV = os.path.join(SHARED, "conformance", "nvidia-device-plugin")
if not os.path.isdir(NV):
    print(f"SKIP: no {NV}")
    sys.exit(0)

TMP = tempfile.mkdtemp(prefix="dp-nvcfg.")
atexit.register(shutil.rmtree, TMP, True)
failures = 0
checked = 0

PROFILES = {
    "a100-mixed": {"mig_gpus": 4, "whole": 4, "mig": {"1g.10gb": 7}},
    "a100-80gb-8": {"mig_gpus": 0, "whole": 8, "mig": {}},
}


def full(name):
    return name if "/" in name else "nvidia.com/" + name


def expected(cfg, profile, env):
    """NVIDIA's rules: (resources dict, None) or (None, reason refused)."""
    p = PROFILES[profile]
    flags = cfg.get("flags") or {}
    mig = env.get("MIG_STRATEGY") or flags.get("migStrategy") or "none"
    if mig == "none":
        base = {"nvidia.com/gpu": p["whole"] + p["mig_gpus"]}
    elif mig == "mixed":
        base = {}
        if p["whole"]:
            base["nvidia.com/gpu"] = p["whole"]
        for prof, n in p["mig"].items():
            base["nvidia.com/mig-" + prof] = n * p["mig_gpus"]
    else:  # single
        if p["mig_gpus"] and p["whole"]:
            return None, "single cannot be used"
        base = {"nvidia.com/gpu": p["whole"]}
    sharing = cfg.get("sharing") or {}
    block = sharing.get("mps") if sharing.get("mps") is not None else sharing.get("timeSlicing")
    if sharing.get("mps") is not None:
        if mig == "mixed":
            return None, "mixed is not supported with MPS"
        if not (env.get("MPS_ROOT") or flags.get("mpsRoot")):
            return None, "requires --mps-root"
    out = dict(base)
    for r in (block or {}).get("resources") or []:
        name = full(r["name"])
        if name not in base:
            continue
        del out[name]
        newname = name + ".shared" if block.get("renameByDefault") else name
        out[newname] = base[name] * r["replicas"]
    return out, None


def dry_run(cfg_text, profile, env, extra=()):
    path = os.path.join(TMP, "config.yaml")
    with open(path, "w") as f:
        f.write(cfg_text)
    e = {k: v for k, v in os.environ.items() if k not in ("MPS_ROOT", "MIG_STRATEGY", "CONFIG_FILE")}
    e.update(env)
    r = subprocess.run([DEVPLANE, "agent", "--dry-run", "--profile", profile, "--node-name", "n1",
                        "--config-file", path, *extra], capture_output=True, text=True, env=e, timeout=60)
    got = {}
    for line in r.stdout.splitlines():
        name, n = line.split()
        got[name] = int(n)
    return r.returncode, got, r.stderr


def check(label, cfg_text, profile, env=None, refuse=None):
    """refuse: None = follow the model; a string = must be refused with it."""
    global failures, checked
    env = env or {}
    checked += 1
    rc, got, err = dry_run(cfg_text, profile, env)
    if refuse is None:
        try:
            cfg = yaml.safe_load(cfg_text) or {}
        except yaml.YAMLError:
            cfg = None
        want, why = expected(cfg, profile, env) if isinstance(cfg, dict) else (None, "")
    else:
        want, why = None, refuse
    if want is not None:
        ok = rc == 0 and got == want
    else:
        ok = rc == 2 and not got and why in err
    if not ok:
        failures += 1
        print(f"not ok - {label} on {profile} {env}: rc={rc} got={got} want={want or 'refused: ' + why}\n{err}")
    else:
        print(f"ok - {label} on {profile} {env}: " + (f"{got}" if want is not None else f"refused ({why})"))


# 1. README: every fenced block holding a config (`version: v1`); the
# templates with <placeholders> or `...` are not configs and are refused.
readme = open(os.path.join(NV, "README.md")).read()
blocks = re.findall(r"```[a-z]*\n(.*?)```", readme, re.S)
n_readme = 0
for i, b in enumerate(blocks):
    if "version: v1" not in b:
        continue
    lines = [l for l in b.splitlines() if not l.startswith("cat <<") and l.strip() != "EOF"]
    text = "\n".join(lines) + "\n"
    n_readme += 1
    template = "<" in text or re.search(r"^\s*\.\.\.\s*$", text, re.M)
    for profile in PROFILES:
        for env in ({}, {"MPS_ROOT": "/run/nvidia/mps"}):
            check(f"README block {i}", text, profile, env, refuse="" if template else None)
assert n_readme >= 8, n_readme

# 2. Helm values: the ConfigMap example in the comment on `config.map`.
values = open(os.path.join(NV, "deployments/helm/nvidia-device-plugin/values.yaml")).read()
m = re.search(r"^# config:\n((?:#.*\n)+?)config:", values, re.M)
assert m, "no config.map example in values.yaml"
example = yaml.safe_load("config:\n" + "".join(l[2:] + "\n" for l in m.group(1).splitlines()))
cmap = example["config"]["map"]
assert set(cmap) >= {"default", "mig-single", "mig-mixed"}, cmap
for name, text in cmap.items():
    for profile in PROFILES:
        check(f"Helm config.map {name}", text + "\n", profile)

# 3. The configs of NVIDIA's config tests (raw YAML in backquotes).
for f in ("config_test.go",):
    src = open(os.path.join(NV, "api/config/v1", f)).read()
    for j, text in enumerate(re.findall(r"`(\nversion: v1\n.*?)`", src, re.S)):
        for profile in PROFILES:
            for env in ({}, {"MPS_ROOT": "/run/nvidia/mps"}):
                check(f"{f} config {j}", text, profile, env)

# 4. The JSON cases of NVIDIA's config unit tests, each inside a config:
# `err: true` must be refused, the others must load.
def go_cases(path, func):
    src = open(path).read()
    i = src.index("func " + func + "(")
    j = src.find("\nfunc ", i + 10)
    for inp, rest in re.findall(r"\{\s*input:\s*`([^`]*)`,(.*?)\n\t\t\},", src[i:j], re.S):
        yield inp, bool(re.search(r"err:\s*true", rest))

wraps = {
    ("flags_test.go", "TestUnmarshalFlags"): '{"version": "v1", "flags": %s}',
    ("replicas_test.go", "TestUnmarshalReplicatedResources"): '{"version": "v1", "sharing": {"timeSlicing": %s}}',
    ("replicas_test.go", "TestUnmarshalReplicatedResource"):
        '{"version": "v1", "sharing": {"timeSlicing": {"resources": [%s]}}}',
    ("replicas_test.go", "TestUnmarshalReplicatedDevices"):
        '{"version": "v1", "sharing": {"timeSlicing": {"resources": [{"name": "gpu", "replicas": 2, "devices": %s}]}}}',
}
for (f, func), wrap in wraps.items():
    cases = list(go_cases(os.path.join(NV, "api/config/v1", f), func))
    assert cases, (f, func)
    for k, (inp, err) in enumerate(cases):
        if not inp.strip():
            continue  # an empty JSON value: no config file can hold one
        text = wrap % inp.replace("\t", " ") + "\n"
        if err:
            check(f"{func} case {k} (NVIDIA: error)", text, "a100-80gb-8", refuse="")
        else:
            check(f"{func} case {k} (NVIDIA: loads)", text, "a100-80gb-8")

print(f"{checked} checks, {failures} failed")
sys.exit(1 if failures else 0)
