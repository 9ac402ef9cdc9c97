"""Trim pulumi-eks's and pulumi-awsx's recorded runs to what the tests here read, and write them beside this file.

Usage: python tests/recorded/trim.py CHECKOUT   (a checkout of pulumi/pulumi-eks or pulumi/pulumi-awsx, in a folder
of the repository's name, at the commit README.md names). For each recorded ``grpc.json`` with its state
(``stack.json`` or ``state.json``; pulumi-eks: ``tests/testdata/recorded/``, pulumi-awsx:
``provider/testdata/recorded/``): the registrations and provider ``Check`` calls of the run's last ``pulumi up`` (the
log of an older run holds a preview, an ``up``, a second preview and ``up``, and a destroy), each with only the fields
the engine's plan reads; and the state, whole; each gzipped. A string longer than ``LONG`` characters (a CloudFormation
template body) is replaced on both sides by the same short stand-in, so equal values stay equal; user data, kubeconfigs
and certificates are kept whole (the policy pack reads user data). pulumi-awsx's harness exported each stack under
the name ``test`` while the log has the generated name it ran under: the log's URNs are renamed to the state's.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from pathlib import Path

LONG = 20000
REQUEST_KEYS = (
    "type",
    "name",
    "parent",
    "custom",
    "remote",
    "object",
    "protect",
    "dependencies",
    "provider",
    "propertyDependencies",
    "version",
    "ignoreChanges",
    "replaceOnChanges",
    "retainOnDelete",
    "deletedWith",
)


def short(value):
    if isinstance(value, str) and len(value) > LONG:
        return f"<{len(value)} characters, sha256 {hashlib.sha256(value.encode()).hexdigest()[:16]}>"
    if isinstance(value, dict):
        return {k: short(v) for k, v in value.items()}
    if isinstance(value, list):
        return [short(v) for v in value]
    return value


def last_up(entries):
    runs, run = [], []
    for entry in entries:
        run.append(entry)
        if entry["method"] == "/pulumirpc.LanguageRuntime/Run":
            runs.append(run)
            run = []
    return [r for r in runs if not r[-1]["request"].get("dryRun")][-1]


def renamed(value, old: str, new: str):
    """``value`` with the stack name ``old`` changed to ``new`` wherever it appears (URNs, the stack resource's
    name ``<project>-<stack>``)."""
    if isinstance(value, str):
        return value.replace(old, new)
    if isinstance(value, dict):
        return {k: renamed(v, old, new) for k, v in value.items()}
    if isinstance(value, list):
        return [renamed(v, old, new) for v in value]
    return value


def trim(source: Path, target: Path) -> None:
    entries = [json.loads(line) for line in source.joinpath("grpc.json").read_text().splitlines() if line.strip()]
    state = next(p for p in (source / "stack.json", source / "state.json") if p.exists())
    doc = json.loads(state.read_text())
    resources = (doc.get("deployment") or (doc.get("checkpoint") or {}).get("latest") or {}).get("resources") or []
    stack = resources[0]["urn"].split("::")[0].removeprefix("urn:pulumi:") if resources else ""
    run = last_up(entries)
    recorded = next(
        (
            e["response"]["urn"].split("::")[0].removeprefix("urn:pulumi:")
            for e in run
            if e["method"] == "/pulumirpc.ResourceMonitor/RegisterResource" and (e.get("response") or {}).get("urn")
        ),
        "",
    )
    if stack and recorded and recorded != stack:
        # pulumi-awsx's harness exports the stack it ran (a generated name) as ``test``: the log follows the state
        run = [renamed(e, recorded, stack) for e in run]
    kept = []
    for entry in run:
        method, request, response = entry["method"], entry.get("request") or {}, entry.get("response") or {}
        if method == "/pulumirpc.ResourceMonitor/RegisterResource":
            kept.append(
                {
                    "method": method,
                    "request": {k: request[k] for k in REQUEST_KEYS if k in request},
                    "response": {k: response[k] for k in ("urn", "id") if k in response},
                }
            )
        elif method == "/pulumirpc.ResourceProvider/Check":
            kept.append(
                {
                    "method": method,
                    "request": {k: request[k] for k in ("urn", "olds", "news") if k in request},
                    "response": {k: response[k] for k in ("inputs", "failures") if k in response},
                }
            )
    target.mkdir(parents=True, exist_ok=True)
    write(target / "grpc.jsonl.gz", "".join(json.dumps(short(e), sort_keys=True) + "\n" for e in kept))
    write(target / f"{state.name}.gz", json.dumps(short(doc), indent=1) + "\n")


def write(path: Path, text: str) -> None:
    """Gzip, with no time or name in the header, so the same input writes the same bytes."""
    path.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))


SOURCES = {"pulumi-eks": ("tests", "testdata", "recorded"), "pulumi-awsx": ("provider", "testdata", "recorded")}
"""Where each repository keeps its recorded runs."""


def main(checkout: str) -> None:
    repo = Path(checkout).resolve().name if Path(checkout).resolve().name in SOURCES else "pulumi-eks"
    root = Path(checkout).joinpath(*SOURCES[repo])
    here = Path(__file__).parent / repo
    for log in sorted(root.glob("**/grpc.json")):
        if any(log.parent.joinpath(name).exists() for name in ("stack.json", "state.json")):
            trim(log.parent, here / log.parent.relative_to(root))


if __name__ == "__main__":
    main(sys.argv[1])
