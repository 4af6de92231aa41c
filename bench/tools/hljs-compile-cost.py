#!/usr/bin/python3
"""What each bundled highlight.js grammar costs the first time it is used, in JavaScriptCore (what WebKitGTK's web
process runs): hljs compiles a grammar on its first `highlight`. The figures behind ui/src/lib/markdown/
highlight.svelte.ts compiling a grammar on demand, out of the render, instead of all twelve at launch.

Needs Debian's python3-gi and gir1.2-javascriptcoregtk-4.1 and ui/node_modules (npm install in ui/).
Run with the system Python: /usr/bin/python3 bench/tools/hljs-compile-cost.py
"""
import pathlib
import time

import gi

gi.require_version("JavaScriptCore", "4.1")
from gi.repository import JavaScriptCore  # noqa: E402

LIB = pathlib.Path(__file__).resolve().parents[2] / "ui/node_modules/highlight.js/lib"
# the grammars ui/src/lib/markdown/hljs-engine.ts bundles
NAMES = ["bash", "css", "diff", "go", "javascript", "json", "python", "rust", "sql", "typescript", "xml", "yaml"]


def cjs(path):
    """A CommonJS file (none of these require anything) as an expression of its exports."""
    return "(function(){var module={exports:{}};var exports=module.exports;" + path.read_text() + "\n;return module.exports;})()"


ctx = JavaScriptCore.Context()
ctx.evaluate("var hljs=" + cjs(LIB / "core.js") + ";", -1)
for n in NAMES:
    ctx.evaluate(f"hljs.registerLanguage('{n}', {cjs(LIB / 'languages' / (n + '.js'))});", -1)
for n in NAMES:
    t0 = time.perf_counter()
    ctx.evaluate(f"hljs.highlight('x',{{language:'{n}',ignoreIllegals:true}}).value", -1)
    t1 = time.perf_counter()
    ctx.evaluate(f"hljs.highlight('let x = 1; // c\\nfn a() {{}}',{{language:'{n}',ignoreIllegals:true}}).value", -1)
    t2 = time.perf_counter()
    print(f"{n:12s} first use {1000 * (t1 - t0):6.2f} ms   next {1000 * (t2 - t1):5.2f} ms")
