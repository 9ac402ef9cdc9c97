"""Trim pulumi-eks's recorded runs to what the tests here read, and write them beside this file.

Usage: python tests/recorded/trim.py PULUMI_EKS_CHECKOUT   (a checkout of pulumi/pulumi-eks at the commit
README.md names). For each ``tests/testdata/recorded/**/grpc.json`` with its state (``stack.json`` or
``state.json``): the registrations and provider ``Check`` calls of the run's last ``pulumi up`` (the log of an
older run holds a preview, an ``up``, a second preview and ``up``, and a destroy), each with only the fields
the engine's plan reads; and the state, whole; each gzipped. A string longer than ``LONG`` characters (a CloudFormation template
body) is replaced on both sides by the same short stand-in, so equal values stay equal; user data, kubeconfigs
and certificates are kept whole (the policy pack reads user data).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys
from pathlib import Path

LONG = 20000
REQUEST_KEYS = ("type", "name", "parent", "custom", "remote", "object", "protect", "dependencies", "provider",
                "propertyDependencies", "version", "ignoreChanges", "replaceOnChanges", "retainOnDelete", "deletedWith")


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


def trim(source: Path, target: Path) -> None:
    entries = [json.loads(line) for line in source.joinpath("grpc.json").read_text().splitlines() if line.strip()]
    kept = []
    for entry in last_up(entries):
        method, request, response = entry["method"], entry.get("request") or {}, entry.get("response") or {}
        if method == "/pulumirpc.ResourceMonitor/RegisterResource":
            kept.append({"method": method, "request": {k: request[k] for k in REQUEST_KEYS if k in request},
                         "response": {k: response[k] for k in ("urn", "id") if k in response}})
        elif method == "/pulumirpc.ResourceProvider/Check":
            kept.append({"method": method, "request": {k: request[k] for k in ("urn", "olds", "news") if k in request},
                         "response": {k: response[k] for k in ("inputs", "failures") if k in response}})
    state = next(p for p in (source / "stack.json", source / "state.json") if p.exists())
    target.mkdir(parents=True, exist_ok=True)
    write(target / "grpc.jsonl.gz", "".join(json.dumps(short(e), sort_keys=True) + "\n" for e in kept))
    write(target / f"{state.name}.gz", json.dumps(short(json.loads(state.read_text())), indent=1) + "\n")


def write(path: Path, text: str) -> None:
    """Gzip, with no time or name in the header, so the same input writes the same bytes."""
    path.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))


def main(checkout: str) -> None:
    root = Path(checkout) / "tests" / "testdata" / "recorded"
    here = Path(__file__).parent / "pulumi-eks"
    for log in sorted(root.glob("**/grpc.json")):
        trim(log.parent, here / log.parent.relative_to(root))


if __name__ == "__main__":
    main(sys.argv[1])
