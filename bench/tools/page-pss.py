#!/usr/bin/python3
"""What a page keeps in WebKitGTK's web process: its PSS by library, for one-element test pages side by side.

Each case is a small HTML page loaded in a fresh WebKitWebView (the system's WebKitGTK 4.1, compositing off as the app
runs without a GPU, 1100×760 like the app's window) under its own Xvfb; 5 s after the load the web process's
/proc/PID/smaps is summed by mapping. This is how bench/README.md's session-14 figures were found: the search field's
cancel button (libxml2 and an SVG document, ~3 MB) and `Date`'s local-time methods (ICU's zone data, ~1.4 MB) —
the reasons for the sidebar's own clear button and ui/src/lib/util/localtime.ts.

Needs Debian's python3-gi and gir1.2-webkit2-4.1, plus xvfb (not part of `cargo xtask deps`: a diagnostic tool).
Run with the system Python: /usr/bin/python3 bench/tools/page-pss.py [case ...]
"""
import collections
import json
import os
import re
import subprocess
import sys
import tempfile

BODY = "<p>hello</p><script>document.title = 'x' + Math.random()</script>"
CASES = {
    "text field": "<input type=text value=x>",
    "search field": "<input type=search value=x>",
    "search field, empty": "<input type=search>",
    "search field, no cancel button": "<style>input::-webkit-search-cancel-button{display:none;appearance:none}</style>"
    "<input type=search value=x>",
    "Date.now()": "<script>document.title = Date.now()</script>",
    "UTC fields": "<script>document.title = new Date().getUTCHours()</script>",
    "local time": "<script>document.title = new Date().getHours()</script>",
}
SHOWN = ["[anon]", "[heap]", "libwebkit2gtk", "libjavascriptcoregtk", "libicudata", "libicuuc", "libicui18n", "libxml2"]

CHILD = r"""
import os, re, sys, collections, subprocess, json
os.environ.setdefault('WEBKIT_DISABLE_COMPOSITING_MODE', '1')
import gi
gi.require_version('Gtk', '3.0'); gi.require_version('WebKit2', '4.1')
from gi.repository import Gtk, WebKit2, GLib
w = Gtk.Window(); w.set_default_size(1100, 760)
v = WebKit2.WebView(); w.add(v); w.show_all()
v.load_html(open(sys.argv[1]).read(), 'http://localhost/')
def measure():
    pid = subprocess.run(['pgrep', '-P', str(os.getpid()), '-f', 'WebKitWebProcess'], capture_output=True, text=True).stdout.split()[0]
    kb = collections.Counter(); name = None
    for line in open(f'/proc/{pid}/smaps'):
        p = line.split()
        if re.match(r'^[0-9a-f]+-[0-9a-f]+ ', line): name = (p[5] if len(p) > 5 else '[anon]').split('/')[-1]
        elif p[0] == 'Pss:': kb[name] += int(p[1])
    print(json.dumps(kb), flush=True)
    Gtk.main_quit()
GLib.timeout_add(5000, measure)
Gtk.main()
"""


def measure(html: str, display: str) -> collections.Counter:
    with tempfile.NamedTemporaryFile("w", suffix=".html") as f:
        f.write(f"<!doctype html><html><body>{BODY}{html}</body></html>")
        f.flush()
        env = dict(os.environ, DISPLAY=display, NO_AT_BRIDGE="1")
        out = subprocess.run(["dbus-run-session", "--", sys.executable, "-c", CHILD, f.name],
                             env=env, capture_output=True, text=True, timeout=60).stdout
    return collections.Counter(json.loads(out.strip().splitlines()[-1]))


def main() -> None:
    names = sys.argv[1:] or list(CASES)
    display = ":%d" % (200 + os.getpid() % 200)
    xvfb = subprocess.Popen(["Xvfb", display, "-screen", "0", "1280x800x24", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        subprocess.run(["sleep", "1"])
        print(f"{'case':34} {'total':>7} " + " ".join(f"{s:>10.10}" for s in SHOWN) + "   (kB PSS)")
        for name in names:
            kb = measure(CASES[name], display)
            cols = [sum(v for k, v in kb.items() if k.startswith(s)) for s in SHOWN]
            print(f"{name:34} {sum(kb.values()):>7} " + " ".join(f"{c:>10}" for c in cols))
    finally:
        xvfb.kill()


if __name__ == "__main__":
    main()
