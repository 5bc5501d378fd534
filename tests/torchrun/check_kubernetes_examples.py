#!/usr/bin/python3
"""Checks examples/kubernetes/ without a cluster: every file parsed with a real YAML parser
(Debian's python3-yaml), the resources and fields each example relies on, and the shell each
pod runs, run here as processes with the pods' environment variables set by hand, the real
torchrun of torch 2.7.1 (a `torchrun` on PATH that runs torch.distributed.run) and the probe
under test. What this cannot check, and says so: the operators, services, volumes and GPUs.

  check_kubernetes_examples.py PROBE EXAMPLES_DIR SCRATCH TORCH_SITE
Exit 0 all ok, 1 a check failed (one line saying which), 77 when python3-yaml is missing."""
import json, os, re, shutil, socket, subprocess, sys, time

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed", file=sys.stderr)
    sys.exit(77)

probe, examples, scratch, torch_site = sys.argv[1:5]

def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)

def load(name):
    with open(os.path.join(examples, name)) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def containers(doc):
    """Every container spec in a document, wherever its pod template sits."""
    found = []
    def walk(x):
        if isinstance(x, dict):
            if "containers" in x and isinstance(x["containers"], list):
                found.extend(x["containers"])
            for v in x.values(): walk(v)
        elif isinstance(x, list):
            for v in x: walk(v)
    walk(doc)
    return found

def pod_script(c):
    if c.get("command") == ["/bin/sh", "-c"]:
        return c["args"][0]
    fail("container %s does not run a shell script" % c.get("name"))

# Where this machine differs from a GPU node: no GPU (so no --require-gpu), 2 workers per pod.
def localize(script, records=None):
    script = script.replace(" --require-gpu", "").replace("--nproc-per-node 8", "--nproc-per-node 2")
    if records:
        script = script.replace("/records", records).replace("/reports", records)
    return script

os.makedirs(scratch, exist_ok=True)
bindir = os.path.join(scratch, "bin")
os.makedirs(bindir, exist_ok=True)
shutil.copy(probe, os.path.join(bindir, "denpex-probe"))
with open(os.path.join(bindir, "torchrun"), "w") as f:
    f.write('#!/bin/sh\nexec python3 -m torch.distributed.run "$@"\n')
os.chmod(os.path.join(bindir, "torchrun"), 0o755)
with open(os.path.join(scratch, "train.py"), "w") as f:
    f.write('import os\nprint("trained rank", os.environ["RANK"])\n')
base_env = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"], PYTHONPATH=torch_site)

def run_pods(script, envs, timeout=300):
    """Starts one shell per pod environment at once; returns [(exit code, output)]."""
    procs = []
    for e in envs:
        procs.append(subprocess.Popen(["/bin/sh", "-c", script], cwd=scratch,
                                      env=dict(base_env, **e), stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True))
    out = []
    for p in procs:
        try:
            o, _ = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill(); o, _ = p.communicate()
        out.append((p.returncode, o))
    return out

# --- pytorchjob.yaml ------------------------------------------------------------------------
docs = load("pytorchjob.yaml")
job = docs[0]
if (job["apiVersion"], job["kind"]) != ("kubeflow.org/v1", "PyTorchJob"): fail("pytorchjob.yaml: not a PyTorchJob")
specs = job["spec"]["pytorchReplicaSpecs"]
if set(specs) != {"Master", "Worker"}: fail("pytorchjob.yaml: replica specs %s" % sorted(specs))
for role, spec in specs.items():
    cs = containers(spec["template"])
    if [c["name"] for c in cs] != ["pytorch"]: fail("pytorchjob.yaml: %s's container is not named pytorch (the operator's default)" % role)
script = pod_script(cs[0])
if "--max-restarts 0" not in script or "--no-python denpex-probe" not in script: fail("pytorchjob.yaml: the gate is not torchrun --max-restarts 0 --no-python denpex-probe")
port = free_port()
os.makedirs(scratch + "/pj", exist_ok=True)
res = run_pods(localize(script, scratch + "/pj"), [dict(WORLD_SIZE="2", RANK=str(r), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port)) for r in (0, 1)])
for r, (rc, o) in enumerate(res):
    if rc != 0 or "trained rank" not in o: fail("pytorchjob.yaml: pod %d exited %s:\n%s" % (r, rc, o[-3000:]))
print("ok pytorchjob.yaml: 2 pods x 2 workers gated (pass) then trained")

# --- jobset.yaml ----------------------------------------------------------------------------
js = load("jobset.yaml")[0]
if (js["apiVersion"], js["kind"]) != ("jobset.x-k8s.io/v1alpha2", "JobSet"): fail("jobset.yaml: not a JobSet")
rj = js["spec"]["replicatedJobs"][0]
name = "%s-%s-0-0.%s" % (js["metadata"]["name"], rj["name"], js["metadata"]["name"])
c = containers(rj)[0]
rdzv = [e["value"] for e in c["env"] if e["name"] == "RDZV"][0]
if not rdzv.startswith(name + ":"): fail("jobset.yaml: RDZV %s is not pod 0's name %s" % (rdzv, name))
n = rj["template"]["spec"]["parallelism"]
script = pod_script(c)
if "--nnodes %d" % n not in script: fail("jobset.yaml: --nnodes is not the Job's parallelism %d" % n)
script = localize(script).replace("--nnodes %d" % n, "--nnodes 2")
port = free_port()
res = run_pods(script, [dict(RDZV="127.0.0.1:%d" % port)] * 2)
for r, (rc, o) in enumerate(res):
    if rc != 0 or "trained rank" not in o: fail("jobset.yaml: pod %d exited %s:\n%s" % (r, rc, o[-3000:]))
print("ok jobset.yaml: 2 pods (of %d) x 2 workers gated through the c10d rendezvous, then trained" % n)

# --- shared-volume-compare.yaml --------------------------------------------------------------
docs = load("shared-volume-compare.yaml")
if [d["kind"] for d in docs] != ["PersistentVolumeClaim", "Job"]: fail("shared-volume-compare.yaml: kinds %s" % [d["kind"] for d in docs])
if docs[0]["spec"]["accessModes"] != ["ReadWriteMany"]: fail("shared-volume-compare.yaml: the volume is not ReadWriteMany")
job = docs[1]["spec"]
if job["completionMode"] != "Indexed" or job["completions"] != job["parallelism"]: fail("shared-volume-compare.yaml: not an Indexed Job of parallel pods")
c = containers(docs[1])[0]
env = {e["name"]: e for e in c["env"]}
if int(env["WORLD_SIZE"]["value"]) != job["completions"]: fail("shared-volume-compare.yaml: WORLD_SIZE is not the Job's completions")
if "job-completion-index" not in env["RANK"]["valueFrom"]["fieldRef"]["fieldPath"]: fail("shared-volume-compare.yaml: RANK is not the completion index")
records = os.path.join(scratch, "records")
shutil.rmtree(records, ignore_errors=True); os.makedirs(records)
script = localize(pod_script(c), records)
w = job["completions"]
for uid in ("uid-a", "uid-b"):   # a rerun into the same volume reads only its own records
    res = run_pods(script, [dict(WORLD_SIZE=str(w), RANK=str(r), JOB_ID=uid) for r in range(w)])
    for r, (rc, o) in enumerate(res):
        if rc != 0: fail("shared-volume-compare.yaml: pod %d exited %s:\n%s" % (r, rc, o[-3000:]))
    v = json.load(open(os.path.join(records, uid + "-verdict.json")))
    if (v["verdict"], v["nranks"]) != ("pass", w): fail("shared-volume-compare.yaml: %s judged %s ranks: %s" % (uid, v["nranks"], v["verdict"]))
# One pod with another NCCL_PROTO: pod 0's compare rejects, so the Job fails.
res = run_pods(script, [dict(WORLD_SIZE=str(w), RANK=str(r), JOB_ID="uid-c", **({"NCCL_PROTO": "Simple"} if r == 2 else {})) for r in range(w)])
if [rc for rc, _ in res] != [1] + [0] * (w - 1): fail("shared-volume-compare.yaml: exit codes %s, expected pod 0 to reject" % [rc for rc, _ in res])
print("ok shared-volume-compare.yaml: %d pods' records compared by pod 0 (pass twice, reruns apart; reject on one pod's NCCL_PROTO)" % w)

# --- node-problem-detector.yaml --------------------------------------------------------------
docs = load("node-problem-detector.yaml")
cm, ds = docs
if (cm["kind"], ds["kind"]) != ("ConfigMap", "DaemonSet"): fail("node-problem-detector.yaml: kinds")
mon = json.loads(cm["data"]["denpex-monitor.json"])
if mon["plugin"] != "custom": fail("npd: not a custom plugin monitor")
rule = mon["rules"][0]
if rule["condition"] != mon["conditions"][0]["type"]: fail("npd: the rule sets a condition the monitor does not declare")
mount = [m for m in containers(ds)[0]["volumeMounts"] if m["name"] == "config"][0]["mountPath"]
if rule["path"] != mount + "/denpex-check.sh" or "denpex-check.sh" not in cm["data"]: fail("npd: the rule's path is not the ConfigMap's script")
json.loads(cm["data"]["baseline.json"])
args = containers(ds)[0]["command"]
if "--config.custom-plugin-monitor=" + mount + "/denpex-monitor.json" not in args: fail("npd: the DaemonSet does not load the monitor")
npd = os.path.join(scratch, "npd"); os.makedirs(npd, exist_ok=True)
with open(os.path.join(npd, "baseline.json"), "w") as f: f.write(cm["data"]["baseline.json"])
check = cm["data"]["denpex-check.sh"].replace("/opt/denpex/bin/denpex-probe", os.path.join(bindir, "denpex-probe")) \
    .replace("--root /host", "--root /").replace("/etc/denpex/", npd + "/")
res = run_pods(check, [dict(NODE_NAME="testnode")])
rc, o = res[0]
lines = o.strip().splitlines()
# This machine's NCCL (2.28.9, CUDA 13.0 toolkit) is not the baseline's 2.21.5: NonOK.
if rc != 1 or len(lines) != 1 or not lines[0].startswith("denpex-probe: REJECT"): fail("npd: the check printed %r and exited %s, expected one REJECT line and 1 (NonOK)" % (o, rc))
print("ok node-problem-detector.yaml: the plugin prints one line, exits 1 (NonOK) for a node off the baseline")

load("init-container.yaml")
print("ok: every example parses; the pods' commands ran here (not on a cluster)")
