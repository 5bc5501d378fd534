#!/usr/bin/env python3
"""The inputs people have beside their logs change nothing they should not.

  inputs_people_have.py PROBE

1. A Flight Recorder JSON dump written by Python's json.dump (indent, every object's keys in
   reverse order), and the same gzip-compressed, is read as the compact dump torch writes: the
   same verdict and findings.
2. A report (--json, also gzip-compressed) and a page (--html) of an earlier run saved into the
   log folder are skipped, one stderr line each saying so, and the verdict, exit code and
   findings stay those of the logs alone.
3. A saved rank record (--rank-report) in the folder is still judged.
Exit 0 when all hold, 1 otherwise.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
ENV = dict(os.environ, LC_ALL="C", TZ="UTC", NO_COLOR="1", TERM="dumb")


def diagnose(probe, folder, *extra):
    out = os.path.join(tempfile.mkdtemp(), "r.json")
    p = subprocess.run([probe, "diagnose", "--json", out, *extra, "."], cwd=folder, env=ENV,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
    report = json.load(open(out)) if os.path.exists(out) else {}
    shape = (p.returncode, report.get("verdict"),
             sorted((f["code"], f.get("ranks"), f.get("message")) for f in report.get("findings", [])))
    return shape, p.stderr.decode("utf-8", "replace"), report


def reversed_keys(j):
    if isinstance(j, dict):
        return {k: reversed_keys(j[k]) for k in reversed(list(j))}
    if isinstance(j, list):
        return [reversed_keys(v) for v in j]
    return j


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    probe = os.path.abspath(argv[1])
    bad = []
    work = tempfile.mkdtemp(prefix="denpex-inputs.")
    try:
        # 1. Flight Recorder JSON, compact against pretty-printed with its keys reversed.
        src = os.path.join(REPO, "tests", "fixtures", "evidence", "fr-gloo-torch-2.8.0", "size_mismatch-json")
        compact, pretty, packed = (os.path.join(work, d) for d in ("compact", "pretty", "packed"))
        shutil.copytree(src, compact)
        os.makedirs(pretty)
        os.makedirs(packed)
        for f in sorted(os.listdir(src)):
            dump = reversed_keys(json.load(open(os.path.join(src, f))))
            json.dump(dump, open(os.path.join(pretty, f), "w"), indent=2)
            with gzip.open(os.path.join(packed, f + ".gz"), "wt") as g:
                json.dump(dump, g, indent=4)
        want, _, _ = diagnose(probe, compact)
        if want[0] != 1 or not want[2]:
            bad.append(f"the compact dumps give no finding: {want}")
        for folder in (pretty, packed):
            got, err, _ = diagnose(probe, folder)
            if got != want:
                bad.append(f"{os.path.basename(folder)} dumps read otherwise than the compact ones: {got} != {want}; {err}")

        # 2. A report and a page of an earlier run, saved into the log folder.
        logs = os.path.join(work, "logs")
        shutil.copytree(os.path.join(REPO, "tests", "diagnose", "fixtures", "oom_two_nodes"), logs)
        want, _, _ = diagnose(probe, logs)
        subprocess.run([probe, "diagnose", "--json", "report.json", "--html", "report.html", "."], cwd=logs, env=ENV,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=60)
        with open(os.path.join(logs, "report.json"), "rb") as f, gzip.open(os.path.join(logs, "old.json.gz"), "wb") as g:
            g.write(f.read())
        got, err, _ = diagnose(probe, logs)
        if got != want:
            bad.append(f"a saved report and page changed the verdict: {got} != {want}")
        for name in ("report.json", "report.html", "old.json.gz"):
            said = [l for l in err.splitlines() if "skipped" in l and name in l]
            if len(said) != 1:
                bad.append(f"{name} was not skipped with one line: {err!r}")

        # 3. A saved rank record there is judged (it adds its facts).
        rec = json.load(open(os.path.join(REPO, "tests", "fixtures", "compare", "rank_torch_wheel_2215.json")))
        json.dump(rec, open(os.path.join(logs, "rank0.json"), "w"), indent=2)
        _, _, report = diagnose(probe, logs)
        if not any(f["code"] == "torch-nccl-mismatch" for f in report.get("findings", [])):
            bad.append("a saved rank record in the folder was not judged")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for b in bad:
        print(b)
    print(f"inputs_people_have: {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
