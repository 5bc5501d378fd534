#!/usr/bin/env python3
"""Loads report pages in headless Chromium over the DevTools protocol (Debian's chromium and
python3-websocket) and checks them as a person would see them:

  browser_check.py CHROMIUM PAGE.html[:CHECK,CHECK...]... [--screenshot PAGE.html=OUT.png]...

Every page: it loads; no console message of level error or warning, no exception, no
Content-Security-Policy violation; no dialog opened; the page's own script ran (it sets
data-script="ran" on <html>); exactly one <script> element; a copy button, clicked, answers.
Checks a page can ask for (after ':'):
  first=N          the leftmost mark of the timeline (by where it is drawn) is the initiating
                   rank N (a number) or process N
  rows<=N          the timeline has at most N rows
  hosts=N          its rows cover N hosts, none twice (no more than one row per host)
  text=FILE        the page shows the text in FILE verbatim (a log line holding a script)
  grid             a collective grid with a highlighted call in the divergence's column
Exit 0 when all pass, 1 when one fails (each failure one line), 77 when Chromium cannot start.
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket

SKIP = 77


class Page:
    def __init__(self, ws_url):
        self.ws = websocket.create_connection(ws_url, timeout=30, suppress_origin=True)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({'id': my_id, 'method': method, 'params': params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get('id') == my_id:
                if 'error' in msg:
                    raise RuntimeError(f'{method}: {msg["error"]}')
                return msg.get('result', {})
            self.events.append(msg)

    def wait_for(self, event, seconds=30):
        deadline = time.time() + seconds
        dismissed = 0
        while time.time() < deadline:
            # A dialog (an alert() that should never have run) holds the page until answered: it
            # is kept among the events, to be reported, and dismissed.
            dialogs = sum(1 for e in self.events if e.get('method') == 'Page.javascriptDialogOpening')
            while dismissed < dialogs:
                dismissed += 1
                self.call('Page.handleJavaScriptDialog', accept=True)
            for i, e in enumerate(self.events):
                if e.get('method') == event:
                    return self.events.pop(i)
            self.ws.settimeout(max(0.1, deadline - time.time()))
            try:
                self.events.append(json.loads(self.ws.recv()))
            except websocket.WebSocketTimeoutException:
                break
        raise RuntimeError(f'no {event} within {seconds} s')

    def drain(self, seconds):
        self.ws.settimeout(seconds)
        try:
            while True:
                self.events.append(json.loads(self.ws.recv()))
        except websocket.WebSocketTimeoutException:
            pass

    def evaluate(self, expression):
        r = self.call('Runtime.evaluate', expression=expression, returnByValue=True, awaitPromise=True)
        if 'exceptionDetails' in r:
            raise RuntimeError(f'evaluate failed: {r["exceptionDetails"]}')
        return r['result'].get('value')


def start_chromium(binary, profile):
    args = [binary, '--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--no-default-browser-check',
            '--disable-extensions', '--disable-background-networking', '--remote-debugging-port=0',
            f'--user-data-dir={profile}', '--window-size=1200,900', 'about:blank']
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = os.path.join(profile, 'DevToolsActivePort')
    deadline = time.time() + 30
    while time.time() < deadline:
        if proc.poll() is not None:
            return proc, None
        if os.path.exists(port_file):
            lines = open(port_file).read().split()
            if lines:
                return proc, int(lines[0])
        time.sleep(0.1)
    return proc, None


def open_page(port):
    with urllib.request.urlopen(f'http://127.0.0.1:{port}/json/list', timeout=10) as r:
        targets = json.load(r)
    page = next(t for t in targets if t.get('type') == 'page')
    return Page(page['webSocketDebuggerUrl'])


# The DOM facts every check reads, gathered in one evaluation.
FACTS = r'''(() => {
  const marks = [...document.querySelectorAll('svg.timeline g.mark[data-role]')].map(g => {
    const c = g.querySelector('circle').getBoundingClientRect();
    return {role: g.dataset.role, ranks: g.dataset.ranks, procs: g.dataset.procs, x: c.x + c.width / 2};
  });
  const rows = [...document.querySelectorAll('svg.timeline g.row')].map(r => ({
    hosts: Number(r.dataset.hosts), label: r.dataset.label}));
  return {
    script: document.documentElement.dataset.script || '',
    scripts: document.scripts.length,
    text: document.body.innerText,
    marks, rows,
    grid_diff_at: document.querySelectorAll('table.grid td.diff.at').length,
    grid_rows: document.querySelectorAll('table.grid tbody tr').length,
    buttons: document.querySelectorAll('button.copy').length,
    bytes: document.documentElement.outerHTML.length,
  };
})()'''


def problems_of(page, facts):
    out = []
    for e in page.events:
        m, p = e.get('method'), e.get('params', {})
        if m == 'Runtime.consoleAPICalled' and p.get('type') in ('error', 'warning', 'assert'):
            out.append('console %s: %s' % (p['type'], ' '.join(str(a.get('value', a.get('description', ''))) for a in p.get('args', []))))
        elif m == 'Runtime.exceptionThrown':
            out.append('exception: %s' % p.get('exceptionDetails', {}).get('text'))
        elif m == 'Log.entryAdded' and p.get('entry', {}).get('level') in ('error', 'warning'):
            out.append('log %s: %s' % (p['entry']['level'], p['entry'].get('text')))
        elif m == 'Page.javascriptDialogOpening':
            out.append('a dialog opened: %s' % p.get('message'))
    if facts['script'] != 'ran':
        out.append("the page's script did not run (blocked, or failed)")
    if facts['scripts'] != 1:
        out.append(f'{facts["scripts"]} <script> elements, not 1')
    return out


def check_copy(page, facts):
    if facts['buttons'] == 0:
        return []
    label = page.evaluate('''(() => { const b = document.querySelector('button.copy'); b.click();
                              return new Promise(r => setTimeout(() => r(b.textContent), 200)); })()''')
    return [] if label in ('copied', 'select and copy') else [f'the copy button did not answer ({label!r})']


def check_asks(asks, facts):
    out = []
    for ask in asks:
        if ask.startswith('first='):
            want = ask[6:]
            if not facts['marks']:
                out.append('no timeline marks')
                continue
            first = min(facts['marks'], key=lambda m: m['x'])
            who = first['ranks'] or first['procs']
            if first['role'] != 'initiating' or want not in who.split(' ') and who != want:
                out.append(f'the first mark is {first["role"]} {who!r}, not initiating {want}')
        elif ask.startswith('rows<='):
            if not facts['rows'] or len(facts['rows']) > int(ask[6:]):
                out.append(f'{len(facts["rows"])} timeline rows, not 1 to {ask[6:]}')
        elif ask.startswith('hosts='):
            covered = sum(r['hosts'] for r in facts['rows'])
            if covered != int(ask[6:]) or len(facts['rows']) > covered:
                out.append(f'timeline rows cover {covered} hosts in {len(facts["rows"])} rows, not {ask[6:]}')
        elif ask.startswith('text='):
            want = open(ask[5:], encoding='utf-8').read().strip()
            if want not in facts['text']:
                out.append(f'the page does not show {want!r}')
        elif ask == 'grid':
            if facts['grid_diff_at'] < 1 or facts['grid_rows'] < 2:
                out.append(f'no grid with a highlighted call at the divergence ({facts["grid_rows"]} rows)')
        else:
            out.append(f'unknown check {ask}')
    return out


def run_page(port, path, asks, screenshot):
    page = open_page(port)
    for domain in ('Runtime', 'Log', 'Page'):
        page.call(f'{domain}.enable')
    # Log.enable replays what earlier pages of this tab logged: only this page's count.
    page.call('Log.clear')
    page.call('Runtime.discardConsoleEntries')
    page.events.clear()
    page.call('Page.navigate', url='file://' + os.path.abspath(path))
    page.wait_for('Page.loadEventFired')
    page.drain(0.5)
    facts = page.evaluate(FACTS)
    out = problems_of(page, facts) + check_asks(asks, facts)
    if screenshot:
        height = page.evaluate('document.documentElement.scrollHeight')
        page.call('Emulation.setDeviceMetricsOverride', width=1200, height=min(int(height), 2400), deviceScaleFactor=1,
                  mobile=False)
        shot = page.call('Page.captureScreenshot', format='png')
        with open(screenshot, 'wb') as f:
            f.write(base64.b64decode(shot['data']))
    out += check_copy(page, facts)
    page.ws.close()
    return out, facts


def main(argv):
    if len(argv) < 3:
        print(__doc__)
        return 2
    binary = argv[1]
    shots = {}
    pages = []
    i = 2
    while i < len(argv):
        if argv[i] == '--screenshot':
            src, dst = argv[i + 1].split('=', 1)
            shots[src] = dst
            i += 2
            continue
        path, _, asks = argv[i].partition(':')
        pages.append((path, [a for a in asks.split(',') if a]))
        i += 1
    profile = tempfile.mkdtemp(prefix='denpex-chromium-')
    proc, port = start_chromium(binary, profile)
    if port is None:
        print(f'SKIP: {binary} did not start (no DevToolsActivePort)')
        proc.kill()
        shutil.rmtree(profile, ignore_errors=True)
        return SKIP
    fail = 0
    try:
        for path, asks in pages:
            try:
                out, facts = run_page(port, path, asks, shots.get(path))
            except (RuntimeError, OSError, websocket.WebSocketException) as e:
                out, facts = [f'could not be checked: {e}'], {'rows': [], 'marks': []}
            size = os.path.getsize(path)
            for o in out:
                print(f'FAIL: {path}: {o}')
            if not out:
                print(f'ok: {path} ({size} bytes, {len(facts["rows"])} timeline rows, {len(facts["marks"])} marks) '
                      f'{",".join(asks)}')
            fail = fail or bool(out)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)
    return 1 if fail else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
