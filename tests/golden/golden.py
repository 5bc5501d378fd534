#!/usr/bin/env python3
"""The reading side's outputs, held byte for byte while its inside changes.

Every input the project can read from outside (the fixtures of the repository, the real pastes
kept beside it, small benchmark inputs made by the benchmark generators) goes through
`denpex-probe diagnose` (text, JSON, HTML, and the same again with --redact) and
`denpex-probe collectives` (text and JSON). Each output, with the exit code and the error
stream, is normalised (paths relative to the input's folder, the tool's version replaced) and
kept as a SHA-256 in tests/golden/hashes.txt: the real pastes are third-party text, so no output
of theirs enters the repository, and hashes keep the file small for the fixtures too.

  golden.py check  PROBE GEN_COLL_LOG GEN_FR_DUMPS REAL_LOG_DIR   (CTest: golden.outputs)
  golden.py update PROBE GEN_COLL_LOG GEN_FR_DUMPS REAL_LOG_DIR   (rewrites hashes.txt)
  golden.py save   PROBE GEN_COLL_LOG GEN_FR_DUMPS REAL_LOG_DIR OUT_DIR

`save` writes every normalised output under OUT_DIR, so that a change is read as a diff: save
from the commit before and from the change, then `diff -r`. `update` is the only way the
goldens change; its commit says why each changed. `check` fails on any output that differs,
on an input with no golden (a new fixture: run update) and on a golden whose input is gone;
without REAL_LOG_DIR (absent beside the clone) it checks the rest and says so.
"""
import hashlib
import os
import random
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
HASHES = os.path.join(HERE, "hashes.txt")
TIMEOUT = 120

# Folders whose files are each one job's paste; every other fixture folder is one job whose
# files are read together (one file per node or rank).
ONE_CASE_PER_FILE = {
    "tests/diagnose/fixtures/env",
    "tests/diagnose/fixtures/families",
    "tests/fixtures/collectives",
    "tests/fixtures/compare",
    "tests/fixtures/evidence/pickle",
}
FIXTURE_ROOTS = ["tests/diagnose/fixtures", "tests/fixtures"]
# Fixtures of the device checks are trees of /proc and /sys, not what a job leaves behind.
NOT_READ_BY_DIAGNOSE = {"tests/fixtures/devices"}


def fixture_cases():
    """(name, cwd, [relative paths]) for every fixture: a folder of files read together, or a
    file of a one-case-per-file folder. README.md files describe a fixture; they are not input."""
    cases = []
    for root in FIXTURE_ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(REPO, root)):
            rel = os.path.relpath(dirpath, REPO)
            dirnames.sort()
            if any(rel == n or rel.startswith(n + "/") for n in NOT_READ_BY_DIAGNOSE):
                dirnames[:] = []
                continue
            files = sorted(f for f in filenames if f != "README.md")
            if not files:
                continue
            if rel in ONE_CASE_PER_FILE:
                for f in files:
                    cases.append(("fixture:" + rel + "/" + f, dirpath, [f]))
            else:
                cases.append(("fixture:" + rel, dirpath, files))
    return cases


def real_cases(real_dir):
    if not real_dir or not os.path.isdir(real_dir):
        return []
    return [("real:" + f, real_dir, [f]) for f in sorted(os.listdir(real_dir))
            if os.path.isfile(os.path.join(real_dir, f)) and f != "MANIFEST.md"]


def bench_cases(gen_coll, gen_fr, scratch):
    """Small inputs from the benchmark generators, which are deterministic."""
    coll = os.path.join(scratch, "bench-coll")
    os.makedirs(coll)
    subprocess.run([gen_coll, os.path.join(coll, "coll.log"), "16", "300"], check=True,
                   stdout=subprocess.DEVNULL)
    fr = os.path.join(scratch, "bench-fr")
    os.makedirs(fr)
    subprocess.run([gen_fr, fr, "24", "40", "6"], check=True, stdout=subprocess.DEVNULL)
    return [("bench:coll-16x300", coll, ["coll.log"]),
            ("bench:fr-24x40x6", fr, sorted(os.listdir(fr)))]


def normalise(data, cwd, scratch, version):
    text = data.replace(cwd.encode() + b"/", b"").replace(cwd.encode(), b".")
    text = text.replace(scratch.encode(), b"<scratch>")
    return text.replace(version.encode(), b"<version>")


def run_case(probe, version, case, scratch):
    """Every output of one case: {artifact name: normalised bytes}."""
    name, cwd, paths = case
    work = tempfile.mkdtemp(dir=scratch)
    out = {}
    env = dict(os.environ, LC_ALL="C", TZ="UTC", NO_COLOR="1", TERM="dumb", COLUMNS="100")
    runs = [
        ("diagnose", ["diagnose", "--color", "never", "--json", os.path.join(work, "d.json"),
                      "--html", os.path.join(work, "d.html")], ["d.json", "d.html"]),
        ("redact", ["diagnose", "--redact", "--color", "never", "--json",
                    os.path.join(work, "r.json"), "--html", os.path.join(work, "r.html")],
         ["r.json", "r.html"]),
        ("collectives", ["collectives", "--color", "never", "--json",
                         os.path.join(work, "c.json")], ["c.json"]),
    ]
    for label, args, files in runs:
        try:
            p = subprocess.run([probe] + args + paths, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=TIMEOUT)
            rc = str(p.returncode).encode()
            stdout, stderr = p.stdout, p.stderr
        except subprocess.TimeoutExpired:
            rc, stdout, stderr = b"timeout", b"", b""
        out[label + ".rc"] = rc
        out[label + ".stdout"] = stdout
        out[label + ".stderr"] = stderr
        for f in files:
            path = os.path.join(work, f)
            out[label + "." + f.split(".")[1]] = open(path, "rb").read() if os.path.exists(path) else b"<absent>"
            if os.path.exists(path):
                os.unlink(path)
    os.rmdir(work)
    return {k: normalise(v, cwd, scratch, version) for k, v in out.items()}


def read_hashes():
    table = {}
    if os.path.exists(HASHES):
        for line in open(HASHES, encoding="utf-8"):
            if line.startswith("#") or not line.strip():
                continue
            case, artifact, digest = line.rstrip("\n").split("\t")
            table[(case, artifact)] = digest
    return table


def main(argv):
    if len(argv) < 6 or argv[1] not in ("check", "update", "save") or (argv[1] == "save" and len(argv) < 7):
        sys.stderr.write(__doc__)
        return 2
    mode, probe, gen_coll, gen_fr, real_dir = argv[1:6]
    probe = os.path.abspath(probe)
    version = subprocess.run([probe, "--version"], capture_output=True, text=True).stdout.split()[-1]
    with tempfile.TemporaryDirectory(prefix="denpex-golden.") as scratch:
        cases = fixture_cases() + bench_cases(gen_coll, gen_fr, scratch) + real_cases(real_dir)
        with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
            results = list(pool.map(lambda c: run_case(probe, version, c, scratch), cases))
    got = {}
    for case, outputs in zip(cases, results):
        for artifact, data in outputs.items():
            got[(case[0], artifact)] = (hashlib.sha256(data).hexdigest()[:20], data)
    if mode == "save":
        out_dir = argv[6]
        for (case, artifact), (_, data) in got.items():
            path = os.path.join(out_dir, case.replace(":", "/"), artifact)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            open(path, "wb").write(data)
        print(f"golden: {len(cases)} inputs, {len(got)} outputs saved under {out_dir}")
        return 0
    if mode == "update":
        with open(HASHES, "w", encoding="utf-8") as f:
            f.write("# case\tartifact\tthe first 20 hex digits of the SHA-256 of the normalised output; written by tests/golden/golden.py update\n")
            for key in sorted(got):
                f.write(f"{key[0]}\t{key[1]}\t{got[key][0]}\n")
        print(f"golden: {len(cases)} inputs, {len(got)} outputs written to tests/golden/hashes.txt")
        return 0
    want = read_hashes()
    have_real = bool(real_cases(real_dir))
    bad = []
    for key, (digest, data) in sorted(got.items()):
        if key not in want:
            bad.append(f"no golden for {key[0]} {key[1]} (a new input: tests/golden/golden.py update, and say why in the commit)")
        elif want[key] != digest:
            head = data[:300].decode("utf-8", "replace").replace("\n", "\\n")
            bad.append(f"changed: {key[0]} {key[1]}: now begins {head!r}")
    for key in sorted(want):
        if key not in got and (have_real or not key[0].startswith("real:")):
            bad.append(f"gone: {key[0]} {key[1]} (its input no longer exists)")
    for line in bad[:40]:
        print(line)
    if len(bad) > 40:
        print(f"... and {len(bad) - 40} more")
    note = "" if have_real else f" (the real pastes were not checked: {real_dir} is absent)"
    print(f"golden: {len(cases)} inputs, {len(got)} outputs, {len(bad)} differ{note}")
    if bad:
        print("To see a change as a diff: golden.py save ... DIR on the commit before and on this one, then diff -r.")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
