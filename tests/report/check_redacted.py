#!/usr/bin/env python3
"""Checks that no original host name, IP address, user name or private directory of an input
survives in the redacted reports (text, JSON, HTML), and that the unredacted ones did hold some:

  check_redacted.py INPUT... --plain TEXT JSON --redacted TEXT JSON HTML [--also NAME...]

The originals are found here on their own, not by the code under test: the host of every NCCL
line header ("host:pid:tid [dev]"), every IPv4 address (loopback aside), Ray's ip= labels, the
host names and processes the unredacted JSON report names, the directories and users of the
absolute paths it names, and any --also names (domain names read from the log by hand)."""
import json
import re
import sys

HEADER = re.compile(r'(?:^|[\s)\]])([A-Za-z][A-Za-z0-9._-]*):\d+:\d+ \[')
IPV4 = re.compile(r'(?<![\d.])((?:\d{1,3}\.){3}\d{1,3})(?![\d.])')
SYSTEM = ('/usr', '/lib', '/lib32', '/lib64', '/bin', '/sbin', '/etc', '/proc', '/sys', '/dev', '/run')


def walk(j, key, out):
    if isinstance(j, dict):
        for k, v in j.items():
            walk(v, k, out)
    elif isinstance(j, list):
        for v in j:
            walk(v, key, out)
    elif isinstance(j, str):
        if key in ('host', 'hosts') and j and not j.startswith('image ') and j != 'localhost':
            out['hosts'].add(j)
        if key == 'processes' and ':' in j:
            out['hosts'].add(j.rsplit(':', 1)[0])
        for path in re.findall(r'(?:^|[\s=:("\'])(/[^\s\'"`)\],;:<>|]+)', j):
            parts = path.split('/')
            for i, p in enumerate(parts[:-1]):
                if p in ('home', 'Users', 'scratch') and len(parts[i + 1]) >= 2:
                    out['users'].add(parts[i + 1])
            d = path.rsplit('/', 1)[0]
            if d and d != '/tmp' and not any(d == s or d.startswith(s + '/') for s in SYSTEM):
                out['dirs'].add(d)


def main(argv):
    i = argv.index('--plain')
    inputs = argv[1:i]
    plain_text, plain_json = argv[i + 1], argv[i + 2]
    j = argv.index('--redacted')
    red = argv[j + 1:j + 4]
    also = argv[argv.index('--also') + 1:] if '--also' in argv else []
    originals = {'hosts': set(also), 'users': set(), 'dirs': set(), 'ips': set()}
    for path in inputs:
        with open(path, encoding='utf-8', errors='replace') as f:
            for line in f:
                originals['hosts'].update(HEADER.findall(line))
                for ip in IPV4.findall(line):
                    if not ip.startswith('127.') and ip != '0.0.0.0' and all(int(o) <= 255 for o in ip.split('.')):
                        originals['ips'].add(ip)
    with open(plain_json, encoding='utf-8') as f:
        walk(json.load(f), '', originals)
    names = sorted(n for kind in originals.values() for n in kind if n)
    if not names:
        print(f'FAIL: {inputs}: no original names found: the check would pass vacuously')
        return 1
    plain = open(plain_text, encoding='utf-8', errors='replace').read() + open(plain_json, encoding='utf-8').read()
    if not any(n in plain for n in names):
        print(f'FAIL: {inputs}: the unredacted reports name none of {names}')
        return 1
    fail = 0
    for path in red:
        text = open(path, encoding='utf-8', errors='replace').read()
        for n in names:
            if n in text:
                at = text.find(n)
                print(f'FAIL: {path}: {n!r} survives: ...{text[max(0, at - 60):at + 60]!r}...')
                fail = 1
    if not fail:
        print(f'ok: {len(names)} originals gone from {len(red)} reports of {" ".join(inputs)}')
    return fail


if __name__ == '__main__':
    sys.exit(main(sys.argv))
