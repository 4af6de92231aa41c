#!/usr/bin/python3
"""The cost of a page's first `Intl` object in JavaScriptCore (what WebKitGTK's web process runs), per case.

Each case runs in a fresh process: a JavaScriptCore context (the system's libjavascriptcoregtk-4.1 and its ICU),
one warm-up expression, then the case's expressions in order, each timed. This is how bench/README.md's session-11
figures were taken ("the first Intl object costs ~11 ms"), the reason ui/src/lib/i18n/dates.ts exists.

Needs Debian's python3-gi and gir1.2-javascriptcoregtk-4.1 (not part of `cargo xtask deps`: a diagnostic tool).
Run with the system Python: /usr/bin/python3 bench/tools/intl-cost.py
"""
import subprocess
import sys

DTF = "new Intl.DateTimeFormat('en',{hour:'2-digit',minute:'2-digit'}).format(new Date())"
CASES = {
    "DateTimeFormat, then again": [DTF, DTF],
    "timeStyle first": ["new Intl.DateTimeFormat('en',{timeStyle:'short'}).format(new Date())", DTF],
    "NumberFormat first": ["new Intl.NumberFormat('en').format(5)", DTF],
    "PluralRules first": ["new Intl.PluralRules('en').select(2)", DTF],
    "UTC time zone first": [DTF.replace("minute:'2-digit'", "minute:'2-digit',timeZone:'UTC'"), DTF],
}

CHILD = r"""
import sys, time, gi
gi.require_version('JavaScriptCore', '4.1')
from gi.repository import JavaScriptCore as J
c = J.Context()
c.evaluate('1+1', -1)
for src in sys.argv[1:]:
    t = time.perf_counter()
    c.evaluate(src, -1)
    print(f'{(time.perf_counter() - t) * 1000:.1f}')
"""

for name, exprs in CASES.items():
    out = subprocess.run([sys.executable, "-c", CHILD, *exprs], capture_output=True, text=True, check=True)
    print(f"{name}: " + ", then ".join(f"{ms} ms" for ms in out.stdout.split()))
