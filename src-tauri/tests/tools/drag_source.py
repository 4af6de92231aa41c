#!/usr/bin/python3
"""A drag source for the drag-and-drop end-to-end test (e2e_dnd.rs), as a file manager is one.

    drag_source.py --x X --y Y PATH...

Opens a small undecorated window at (X, Y) whose whole area is a GTK drag source offering PATH... as
`text/uri-list` (the XDND offer a file manager makes). It does not start a drag by itself: the test presses the
mouse on it with xdotool and moves the pointer away, and GTK runs the real XDND conversation with whichever window is
under the pointer. It reports on stdout, one JSON object a line: `ready` (with the window's root position and size),
`begin`, `data` (the URIs handed over), `end` and `failed` (with GTK's reason). It quits after the drag ends.
"""

import argparse
import json
import pathlib
import sys

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402


def say(event, **fields):
    print(json.dumps({"event": event, **fields}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--x", type=int, default=0)
    ap.add_argument("--y", type=int, default=0)
    ap.add_argument("--size", type=int, default=80)
    ap.add_argument("paths", nargs="+")
    args = ap.parse_args()
    # file:// URIs as a file manager writes them (absolute, percent-encoded)
    uris = [pathlib.Path(p).resolve().as_uri() for p in args.paths]

    win = Gtk.Window(title="drag source")
    win.set_decorated(False)
    win.set_default_size(args.size, args.size)
    win.move(args.x, args.y)
    box = Gtk.EventBox()
    label = Gtk.Label(label=f"{len(uris)} file(s)")
    box.add(label)
    win.add(box)

    box.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
    box.drag_source_add_uri_targets()

    def on_get(_w, _ctx, data, _info, _time):
        data.set_uris(uris)
        say("data", uris=uris)

    def on_end(_w, _ctx):
        say("end")
        # let the drop's last messages go out before the window goes
        GLib.timeout_add(300, Gtk.main_quit)

    def on_failed(_w, _ctx, result):
        say("failed", result=result.value_nick)
        return False

    box.connect("drag-begin", lambda *_: say("begin"))
    box.connect("drag-data-get", on_get)
    box.connect("drag-end", on_end)
    box.connect("drag-failed", on_failed)
    win.connect("destroy", Gtk.main_quit)

    def on_map(w, _ev):
        def report():
            _, x, y = w.get_window().get_origin()
            say("ready", x=x, y=y, width=w.get_allocated_width(), height=w.get_allocated_height())
            return False

        GLib.idle_add(report)
        return False

    win.connect("map-event", on_map)
    win.show_all()
    Gtk.main()


if __name__ == "__main__":
    sys.exit(main())
