"""``mixed-os-racks pack init DIR``: a CrossGuard pack folder for another repository.

The folder is what ``pulumi preview --policy-pack DIR`` (and ``pulumi policy publish DIR``) runs:
``PulumiPolicy.yaml`` (a Python pack in its own virtualenv, ``venv``, which ``pulumi install`` in
DIR creates from ``requirements.txt``), ``__main__.py`` serving the rack's policies (add a team's
own with ``serve(extra=[...])``), ``requirements.txt`` pinning this package's version, and
``config.json``, the policy config with every policy's level and settings at their defaults (pass
it with ``--policy-pack-config``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

FILES = ("PulumiPolicy.yaml", "__main__.py", "requirements.txt", "config.json")
POLICY_SDK = "pulumi-policy>=1.13,<2"


class ScaffoldError(Exception):
    """The folder cannot be written (a file exists, or the path is not a writable directory)."""


def manifest(description: str) -> str:
    return (
        "# A CrossGuard pack: the rack's policies from the mixed-os-racks package.\n"
        "# `pulumi install` here creates its virtualenv; then `pulumi preview --policy-pack <this folder>`.\n"
        f"description: {json.dumps(description)}\n"
        "runtime:\n"
        "  name: python\n"
        "  options:\n"
        "    toolchain: pip\n"
        "    virtualenv: venv\n"
    )


MAIN = '''"""The rack's CrossGuard policies, served as this pack.

Add a team's own policies with ``serve(extra=[...])`` (pulumi_policy ``ResourceValidationPolicy`` or
``StackValidationPolicy`` objects); ``mixed_os_racks.pack.policies.policies()`` lists the rack's.
"""

from mixed_os_racks.pack.policies import serve

serve()
'''


def default_config() -> dict[str, Any]:
    """Every policy's enforcement level and its settings' defaults, from the policies' own schemas, in
    the Pulumi CLI's policy-config format (``{"<policy>": {"enforcementLevel": ..., "<setting>": ...}}``)."""
    from .policies import policies  # pulumi_policy: only when a pack is written

    config: dict[str, Any] = {}
    for policy in policies():
        level = getattr(policy.enforcement_level, "value", policy.enforcement_level)
        entry: dict[str, Any] = {"enforcementLevel": level}
        schema = policy.config_schema.properties if policy.config_schema else {}
        entry.update({name: prop["default"] for name, prop in schema.items() if "default" in prop})
        config[policy.name] = entry
    return config


def requirements(package: str) -> str:
    return (
        "# The pack's virtualenv (`pulumi install` creates it): the rack's policies, at the version this\n"
        "# pack was written with, and the policy SDK.\n"
        f"{package}\n{POLICY_SDK}\n"
    )


def write_pack(directory: Path, version: str, force: bool = False, package: Optional[str] = None) -> list[Path]:
    """Write the pack's files into ``directory`` (created if missing); refuses to overwrite any of them
    unless ``force``. Returns the files written."""
    from .policies import DESCRIPTION

    if package is not None and (not package.strip() or not package.isprintable()):
        # one line of requirements.txt: a line break would add lines of its own (an index URL, another package)
        raise ScaffoldError(f"--requirement {package!r}: must be one requirements.txt line, such as "
                            f"'mixed-os-racks=={version}' or a path or URL pip installs")
    if directory.exists() and not directory.is_dir():
        raise ScaffoldError(f"{directory}: exists and is not a directory")
    # a symlink counts, dangling or not: writing through it would write somewhere else
    existing = [name for name in FILES if (directory / name).exists() or (directory / name).is_symlink()]
    if existing and not force:
        raise ScaffoldError(f"{directory}: already has {', '.join(existing)}; pass --force to overwrite")
    contents = {
        "PulumiPolicy.yaml": manifest(DESCRIPTION),
        "__main__.py": MAIN,
        "requirements.txt": requirements(package.strip() if package is not None else f"mixed-os-racks=={version}"),
        "config.json": json.dumps(default_config(), indent=2) + "\n",
    }
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in contents.items():
            (directory / name).write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ScaffoldError(f"{directory}: cannot write the pack: {exc.strerror or exc}") from None
    return [directory / name for name in contents]
