#!/usr/bin/env python3
"""Reads the accessibility tree of a running application over AT-SPI (what a screen reader such as Orca sees) and
prints it as JSON lines, one accessible object a line: {"depth", "role", "name", "states", "text"}.

Usage: atspi_tree.py <application name substring> [max objects]

Exit status 2 when no application with that name is on the accessibility bus. Used by the e2e test
`e2e_a11y_tree_over_atspi` (src-tauri/tests/e2e_a11y.rs), which asserts on what it prints.
"""

import json
import sys

import pyatspi


def text_of(acc):
    try:
        t = acc.queryText()
    except NotImplementedError:
        return None
    except Exception:  # an object that went away while we read it
        return None
    n = t.characterCount
    return t.getText(0, min(n, 2000)) if n > 0 else ""


def walk(acc, depth, out, limit):
    if len(out) >= limit or acc is None:
        return
    try:
        states = [pyatspi.stateToString(s) for s in acc.getState().getStates()]
        out.append(
            {
                "depth": depth,
                "role": acc.getRoleName(),
                "name": acc.name or "",
                "states": states,
                "text": text_of(acc),
            }
        )
        for i in range(acc.childCount):
            walk(acc.getChildAtIndex(i), depth + 1, out, limit)
    except Exception as e:  # noqa: BLE001 - report and go on with the siblings
        out.append({"depth": depth, "role": "error", "name": str(e), "states": [], "text": None})


def main():
    want = sys.argv[1].lower()
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    desktop = pyatspi.Registry.getDesktop(0)
    apps = [desktop.getChildAtIndex(i) for i in range(desktop.childCount)]
    names = [a.name for a in apps if a is not None]
    found = [a for a in apps if a is not None and want in (a.name or "").lower()]
    if not found:
        print(json.dumps({"apps": names}))
        sys.exit(2)
    out = []
    for app in found:
        walk(app, 0, out, limit)
    for o in out:
        print(json.dumps(o, ensure_ascii=False))


if __name__ == "__main__":
    main()
