#!/usr/bin/env python3
"""Write the Tauri updater manifest (latest.json) for the signed bundles in a folder.

Each updater artifact has a `.sig` beside it (minisign, made by the Tauri CLI with TAURI_SIGNING_PRIVATE_KEY). The
manifest maps `{os}-{arch}[-{installer}]` to the artifact's download URL and signature; the updater plugin looks up
`{os}-{arch}-{installer}` first (deb/rpm/appimage/msi/nsis/app) and falls back to `{os}-{arch}`.
Usage: latest_json.py --dir dist --version 0.2.0 --base-url https://github.com/OWNER/REPO/releases/download/v0.2.0
"""

import argparse
import datetime
import json
import pathlib
import re
import sys
import urllib.parse

ARCH = {"amd64": "x86_64", "x86_64": "x86_64", "x64": "x86_64", "aarch64": "aarch64", "arm64": "aarch64"}


def platforms_for(name: str) -> list[str]:
    """The manifest keys a bundle file serves (the first one is also the OS-arch fallback when listed twice)."""
    m = re.search(r"(?<![A-Za-z0-9])(x86_64|aarch64|amd64|arm64|x64)(?![A-Za-z0-9])", name)
    if m is None:
        return []
    arch = ARCH[m.group(1)]
    if name.endswith(".AppImage"):
        return [f"linux-{arch}-appimage", f"linux-{arch}"]
    if name.endswith(".deb"):
        return [f"linux-{arch}-deb"]
    if name.endswith(".rpm"):
        return [f"linux-{arch}-rpm"]
    if name.endswith(".app.tar.gz"):
        return [f"darwin-{arch}-app", f"darwin-{arch}"]
    if name.endswith("-setup.exe"):
        return [f"windows-{arch}-nsis", f"windows-{arch}"]
    if name.endswith(".msi"):
        return [f"windows-{arch}-msi"]
    return []


def manifest(folder: pathlib.Path, version: str, base_url: str, notes: str) -> dict:
    platforms: dict[str, dict[str, str]] = {}
    for sig in sorted(folder.glob("*.sig")):
        artifact = sig.with_suffix("")
        if not artifact.is_file():
            print(f"warning: {sig.name} has no artifact beside it", file=sys.stderr)
            continue
        entry = {
            "signature": sig.read_text().strip(),
            "url": f"{base_url.rstrip('/')}/{urllib.parse.quote(artifact.name)}",
        }
        for key in platforms_for(artifact.name):
            # NSIS wins the plain windows key over MSI; the AppImage wins linux-<arch> (self-updating in place)
            platforms.setdefault(key, entry)
    if not platforms:
        raise SystemExit("no signed updater artifacts found")
    return {
        "version": version,
        "notes": notes,
        "pub_date": datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z"),
        "platforms": dict(sorted(platforms.items())),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True, type=pathlib.Path)
    ap.add_argument("--version", required=True)
    ap.add_argument("--base-url", required=True)
    ap.add_argument("--notes", default="See the release notes on GitHub.")
    a = ap.parse_args()
    json.dump(manifest(a.dir, a.version, a.base_url, a.notes), sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
