#!/usr/bin/env python3
"""Every verify line diagnose prints runs as pasted.

  verify_lines.py PROBE REAL_LOG_DIR

Runs `denpex-probe diagnose` on every fixture of the repository and every real paste (the inputs
golden.py reads) and collects each verify line it prints, in the text and in the JSON
(`verify`, `verify_or`). Each must parse with `bash -n`, hold no <placeholder>, never read
standard input (no `-` word, no diagnose without files), and every `denpex-probe` line among them
must run to completion with standard input closed, on files that exist. For saved rank records
the verify is `denpex-probe compare` on them: it must exit 1 on the originals and 0 on copies
corrected as the finding says (its "found" value replaced by its "expected" one in the records
of the ranks it names). Exit 0 when all hold, 1 otherwise, 77 without the real pastes.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "golden"))
import golden  # noqa: E402  (the one list of inputs the project reads)

SKIP = 77
ENV = dict(os.environ, LC_ALL="C", TZ="UTC", NO_COLOR="1", TERM="dumb")


def verify_lines_of(text, report):
    """The verify commands a report prints: text blocks (continuation lines joined) and JSON."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^  verify: (.*)$|^      or: (.*)$", lines[i])
        if m:
            cmd = [m.group(1) if m.group(1) is not None else m.group(2)]
            while i + 1 < len(lines) and lines[i + 1].startswith("          ") and m.group(1) is not None:
                i += 1
                cmd.append(lines[i][10:])
            out.append("\n".join(cmd))
        i += 1
    for f in report.get("findings", []):
        if f.get("verify"):
            out.append(f["verify"])
        if isinstance(f.get("verify_or"), dict) and f["verify_or"].get("text"):
            out.append(f["verify_or"]["text"])
    return out


def command_words(cmd):
    """The words of the last line (the command; the lines before set variables), assignments dropped."""
    last = cmd.strip().split("\n")[-1]
    words = shlex.split(last)
    while words and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[0]):
        words.pop(0)
    return words


def problems_of(cmd):
    bad = []
    if subprocess.run(["bash", "-n", "-c", cmd], capture_output=True).returncode != 0:
        bad.append("does not parse with bash -n")
        return bad
    if re.search(r"<[A-Za-z][^>]*>", cmd):
        bad.append("holds a <placeholder>")
    words = command_words(cmd)
    # "-" after an option that writes is standard output; anywhere else it reads the terminal.
    writes = ("--json", "--html", "--rank-report", "--write-baseline")
    if any(w == "-" and (i == 0 or words[i - 1] not in writes) for i, w in enumerate(words)):
        bad.append("reads standard input (a '-' word)")
    if words[:1] == ["denpex-probe"] and len(words) >= 2 and words[1] in ("diagnose", "collectives", "compare"):
        if not [w for w in words[2:] if not w.startswith("-")]:
            bad.append("names no input file, so it would read standard input")
    return bad


def run_case(probe, case, work):
    name, cwd, paths = case
    j = os.path.join(work, re.sub(r"[^A-Za-z0-9]+", "_", name) + ".json")
    p = subprocess.run([probe, "diagnose", "--color", "never", "--json", j] + paths, cwd=cwd, env=ENV,
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
    report = json.load(open(j)) if os.path.exists(j) else {}
    return name, cwd, verify_lines_of(p.stdout.decode("utf-8", "replace"), report), report


def runs_to_completion(probe_dir, cwd, cmd):
    """Runs a denpex-probe verify line as pasted; returns a problem or None."""
    words = command_words(cmd)
    for w in words[2:] if len(words) > 1 and words[1] in ("diagnose", "collectives", "compare") else []:
        if not w.startswith("-") and "$" not in w and not os.path.exists(os.path.join(cwd, w)):
            return f"names {w}, which does not exist"
    env = dict(ENV, PATH=probe_dir + os.pathsep + ENV.get("PATH", ""))
    try:
        subprocess.run(["bash", "-c", cmd], cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        return "did not finish within 30 s with standard input closed"
    return None


def saved_record_cases(scratch):
    """The gate records among the fixtures, and a pair that disagrees made from one of them."""
    src = os.path.join(REPO, "tests", "fixtures", "compare")
    cases = [("record:" + f, src, [f]) for f in sorted(os.listdir(src)) if f.startswith("rank_")]
    pair = os.path.join(scratch, "pair")
    os.makedirs(pair)
    base = json.load(open(os.path.join(src, "rank_ok.json")))
    # Three nodes, the third with another NCCL: a strict majority, so the third is the odd one.
    for rank in range(3):
        rec = json.loads(json.dumps(base))
        rec["rank"], rec["host"], rec["pid"] = rank, f"node{rank + 1}", 100 + rank
        text = json.dumps(rec, indent=1)
        if rank == 2:
            text = text.replace(base["nccl"]["version"], "2.18.1").replace(str(base["nccl"]["version_code"]), "21801")
        open(os.path.join(pair, f"rank{rank}.json"), "w").write(text)
    cases.append(("record:three-nodes", pair, ["rank0.json", "rank1.json", "rank2.json"]))
    return cases


def check_saved_records(probe, cases, scratch):
    bad, checked = [], 0
    for name, cwd, paths in cases:
        j = os.path.join(scratch, "saved.json")
        subprocess.run([probe, "diagnose", "--json", j] + paths, cwd=cwd, env=ENV, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=60)
        for f in json.load(open(j))["findings"]:
            argv = f.get("verify_argv") or []
            if argv[:2] != ["denpex-probe", "compare"]:
                continue
            checked += 1
            rc = subprocess.run([probe] + argv[1:], cwd=cwd, env=ENV, stdin=subprocess.DEVNULL,
                                capture_output=True, timeout=60).returncode
            if rc != 1:
                bad.append(f"{name}: {f['code']}: {' '.join(argv)} exits {rc} on the originals, not 1")
            # The fix makes an odd node like the others: its record becomes a record of a rank
            # the finding does not name, with its own identity. Alone (a rule of one rank), its
            # "found" value becomes the "expected" one.
            files = [w for w in argv[2:] if not w.startswith("-")]
            records = {w: json.load(open(os.path.join(cwd, w))) for w in files}
            odd = set(f.get("ranks", []))
            reference = next((r for r in records.values() if r.get("rank") not in odd), None)
            fixed = tempfile.mkdtemp(dir=scratch)
            for w, rec in records.items():
                text = json.dumps(rec)
                if rec.get("rank") in odd and reference is not None:
                    copy = json.loads(json.dumps(reference))
                    for k in ("rank", "host", "pid"):
                        copy[k] = rec.get(k)
                    text = json.dumps(copy)
                elif rec.get("rank") in odd and f.get("found") and f.get("expected"):
                    text = text.replace(f["found"], f["expected"])
                os.makedirs(os.path.dirname(os.path.join(fixed, w)) or fixed, exist_ok=True)
                open(os.path.join(fixed, w), "w").write(text)
            rc = subprocess.run([probe] + argv[1:], cwd=fixed, env=ENV, stdin=subprocess.DEVNULL,
                                capture_output=True, timeout=60).returncode
            if rc != 0:
                bad.append(f"{name}: {f['code']}: {' '.join(argv)} exits {rc} on the corrected copies, not 0")
    if checked == 0:
        bad.append("no saved-record finding had a compare verify line")
    return bad, checked


def main(argv):
    if len(argv) != 3:
        sys.stderr.write(__doc__)
        return 2
    probe, real_dir = os.path.abspath(argv[1]), argv[2]
    real = golden.real_cases(real_dir)
    if not real:
        print(f"verify_lines: {real_dir} is absent: skipped")
        return SKIP
    cases = golden.fixture_cases() + real
    bad = []
    with tempfile.TemporaryDirectory(prefix="denpex-verify.") as scratch:
        with ThreadPoolExecutor(max_workers=2) as pool:
            results = list(pool.map(lambda c: run_case(probe, c, scratch), cases))
        seen, runs, lines = set(), [], 0
        for name, cwd, cmds, _ in results:
            for cmd in cmds:
                lines += 1
                for problem in problems_of(cmd):
                    bad.append(f"{name}: {problem}: {cmd!r}")
                words = command_words(cmd) if not problems_of(cmd) else []
                if words[:1] == ["denpex-probe"] and (cwd, cmd) not in seen:
                    seen.add((cwd, cmd))
                    runs.append((name, cwd, cmd))
        with ThreadPoolExecutor(max_workers=2) as pool:
            outcomes = list(pool.map(lambda r: runs_to_completion(os.path.dirname(probe), r[1], r[2]), runs))
        for (name, _, cmd), problem in zip(runs, outcomes):
            if problem:
                bad.append(f"{name}: {problem}: {cmd!r}")
        saved_bad, checked = check_saved_records(probe, saved_record_cases(scratch), scratch)
        bad += saved_bad
    for b in bad[:60]:
        print(b)
    print(f"verify_lines: {len(cases)} inputs, {lines} verify lines, {len(runs)} denpex-probe lines run, "
          f"{checked} saved-record verify lines checked before and after the fix; {len(bad)} problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
