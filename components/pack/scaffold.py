"""``mixed-os-racks pack init DIR``: a CrossGuard pack folder for another repository.

The folder is what ``pulumi preview --policy-pack DIR`` (and ``pulumi policy publish DIR``) runs:
``PulumiPolicy.yaml`` (a Python pack in its own virtualenv, ``venv``, which ``pulumi install`` in
DIR creates from ``requirements.txt``), ``__main__.py`` serving the rack's policies (add a team's
own with ``serve(extra=[...])``), ``requirements.txt`` installing this package the way it was installed
here, and ``config.json``, the policy config with every policy's level and settings at their defaults
(pass it with ``--policy-pack-config``).

Where this package came from is pip's record of it (PEP 610, ``direct_url.json`` in the installed
distribution's metadata): a VCS URL with the commit it checked out, an archive URL, or a local folder.
Without one the package came from an index, and the version is pinned. A requirement given with
``--requirement`` must install this package: one PEP 508 line naming ``mixed-os-racks`` (a version
range, or ``mixed-os-racks @ <URL>``), or the path of this package's folder, wheel or sdist; pip
options (``--extra-index-url``), other packages and several lines are refused.

The pack's folder is new or empty unless ``--force`` (as Pulumi's own scaffolders refuse a folder that
is not empty); each file is written beside its name and moved over it, so an existing file that is a
symlink is replaced, never written through.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, Optional

FILES = ("PulumiPolicy.yaml", "__main__.py", "requirements.txt", "config.json")
DIST = "mixed-os-racks"
POLICY_SDK = "pulumi-policy>=1.13,<2"


class ScaffoldError(Exception):
    """The pack cannot be written: the folder is not empty, is not a writable directory, or the
    requirement given would not install this package."""


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


@dataclass(frozen=True)
class InstallLine:
    """The ``requirements.txt`` line that installs this package, and where it came from, in words."""

    line: str
    source: str
    portable: bool = True
    """Whether another machine (a CI runner) can install it: not a folder or file of this machine."""


def requirements(package: str) -> str:
    return (
        "# The pack's virtualenv (`pulumi install` creates it): the rack's policies, installed as the package was\n"
        "# installed where this pack was written, and the policy SDK.\n"
        f"{package}\n{POLICY_SDK}\n"
    )


def _canonical(name: str) -> str:
    """A distribution name as PEP 503 compares them (``Mixed_OS.racks`` is ``mixed-os-racks``)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def installed_requirement(version: str) -> InstallLine:
    """How this package was installed, as a requirement line: pip's PEP 610 record (``direct_url.json``)
    of a VCS checkout (pinned to the commit it installed), an archive URL (with its hash) or a local
    folder; without one, the version from an index."""
    pinned = InstallLine(f"{DIST}=={version}", f"version {version} from a package index (pip recorded no URL for it)")
    # the distribution an installer wrote (pip writes INSTALLER): a build's egg-info on the path is none
    found = list(metadata.distributions(name=DIST))
    installed = next((d for d in found if d.read_text("INSTALLER") is not None), None)
    if installed is None:  # run from a checkout that was never installed
        return pinned
    recorded = installed.read_text("direct_url.json")
    try:
        direct = json.loads(recorded) if recorded else None
    except ValueError:
        direct = None
    if not isinstance(direct, dict) or not isinstance(direct.get("url"), str):
        return pinned
    url: str = direct["url"]
    vcs, archive, folder = (
        direct.get(k) if isinstance(direct.get(k), dict) else None for k in ("vcs_info", "archive_info", "dir_info")
    )
    fragment = f"#subdirectory={direct['subdirectory']}" if isinstance(direct.get("subdirectory"), str) else ""
    if vcs is not None and isinstance(vcs.get("vcs"), str) and isinstance(vcs.get("commit_id"), str):
        asked = vcs.get("requested_revision")
        line = f"{DIST} @ {vcs['vcs']}+{url}@{vcs['commit_id']}{fragment}"
        source = f"the {vcs['vcs']} repository {url} at commit {vcs['commit_id']}" + (
            f" ({asked})" if isinstance(asked, str) else ""
        )
    elif archive is not None:
        hashes = archive.get("hashes") if isinstance(archive.get("hashes"), dict) else {}
        digest = next((f"#{algo}={value}" for algo, value in sorted(hashes.items()) if algo == "sha256"), "")
        line, source = f"{DIST} @ {url}{digest}", f"the archive {url}"
    elif folder is not None:
        line, source = (
            f"{DIST} @ {url}",
            f"the folder {url}" + (" (installed editable)" if folder.get("editable") else ""),
        )
    else:
        return pinned
    problem = requirement_problem(line)
    if problem:  # a record no requirement line can repeat: say what we pinned instead
        return InstallLine(
            pinned.line,
            f"version {version} (pip's record of its source, {url!r}, is not a requirement line: {problem})",
        )
    return InstallLine(line, source, portable=not _on_this_machine(line))


def released_requirement(version: str) -> Optional[str]:
    """The line that installs this release from the package's Git repository (its ``Source`` project URL,
    at the tag ``v<version>``), or None when the metadata names none."""
    try:
        urls = metadata.metadata(DIST).get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return None
    labelled = [url.split(",", 1) for url in urls if "," in url]  # "Source, https://..."
    source = next((url.strip() for label, url in labelled if label.strip().lower() == "source"), None)
    line = f"{DIST} @ git+{source}@v{version}" if source else None
    return line if line is not None and requirement_problem(line) is None else None


REQUIREMENT_EXAMPLES = f"'{DIST}==1.2.3', '{DIST} @ git+https://<host>/<org>/{DIST}@v1.2.3', or the path of its folder"


def requirement_problem(line: str) -> Optional[str]:
    """Why ``line`` is not one requirement that installs this package (None when it is)."""
    from packaging.requirements import InvalidRequirement
    from packaging.requirements import Requirement as Parsed

    if not line.strip() or not line.isprintable():
        # one line of requirements.txt: a line break would add lines of its own (an index URL, another package)
        return "must be one requirements.txt line"
    if line.lstrip().startswith("-"):
        return (
            "is a pip option, not a requirement: the pack's requirements.txt holds no options (an index URL would "
            "send pip elsewhere for every package)"
        )
    try:
        parsed = Parsed(line)
    except InvalidRequirement as exc:
        return f"is not a requirement ({str(exc).splitlines()[0]})"
    if _canonical(parsed.name) != DIST:
        return f"installs {parsed.name}, not {DIST}"
    return None


def _on_this_machine(line: str) -> bool:
    """Whether a (valid) requirement line installs from a path of this machine (``file:``, ``git+file:``)."""
    from packaging.requirements import Requirement as Parsed

    url = Parsed(line).url or ""
    return url.split("+", 1)[-1].lower().startswith("file:")


def requirement_line(given: str) -> str:
    """``--requirement``: a PEP 508 line naming this package, or the path of this package's folder, wheel
    or sdist (written as ``mixed-os-racks @ file:///...``, which pip reads wherever it runs)."""
    given = given.strip()
    path = Path(given).expanduser()
    if given and given.isprintable() and not given.startswith("-") and path.exists():
        name = _package_at(path)
        if name is None or _canonical(name) != DIST:
            raise ScaffoldError(
                f"--requirement {given!r}: {path} is not this package ({DIST}: a folder with its "
                f"pyproject.toml, or its wheel or sdist)"
            )
        return f"{DIST} @ {path.resolve().as_uri()}"
    problem = requirement_problem(given)
    if problem:
        raise ScaffoldError(f"--requirement {given!r}: {problem}; it must install {DIST}: {REQUIREMENT_EXAMPLES}")
    return given


def _package_at(path: Path) -> Optional[str]:
    """The distribution name of a source folder (its ``pyproject.toml``), wheel or sdist file."""
    if path.is_dir():
        try:
            import tomllib

            with open(path / "pyproject.toml", "rb") as file:
                name = tomllib.load(file).get("project", {}).get("name")
        except (OSError, ValueError):
            return None
        return name if isinstance(name, str) else None
    match = re.fullmatch(r"([A-Za-z0-9][A-Za-z0-9._]*?)-\d[^-]*(-.+\.whl|\.tar\.gz|\.zip)", path.name)
    return match.group(1) if match else None


def shell_word(path: Path | str) -> str:
    """``path`` as one shell word: quoted as ``shlex`` quotes it, or, with a line break or another control
    character in it, as bash's ``$'...'`` (so the printed command stays on one line). A relative path that
    starts with ``-`` is written ``./-pack``: quoting does not stop ``cd`` or ``pulumi`` reading it as an option."""
    text = str(path)
    if isinstance(path, Path) and text.startswith("-"):
        text = f"./{text}"
    if text.isprintable():
        return shlex.quote(text)

    def escaped(c: str) -> str:
        if c in "\\'":
            return "\\" + c
        if c.isprintable():
            return c
        code = ord(c)
        return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"

    return "$'" + "".join(escaped(c) for c in text) + "'"


def _name_too_long(directory: Path) -> None:
    """Refuse a folder name longer than the file system takes (its ``NAME_MAX``, 255 bytes on most), naming it."""
    for part in directory.parts:
        size = len(os.fsencode(part))
        if size <= 255:
            continue
        try:
            most = os.pathconf(next((p for p in directory.absolute().parents if p.exists()), Path("/")), "PC_NAME_MAX")
        except (OSError, ValueError):
            most = 255
        if size > most:
            shown_part = part if len(part) <= 60 else f"{part[:40]}...{part[-10:]}"
            raise ScaffoldError(
                f"the folder name '{shown_part}' is {size} bytes long, more than the file system takes "
                f"in one name ({most} bytes, its NAME_MAX); give a shorter name"
            )


def _empty_or_new(directory: Path, force: bool) -> None:
    _name_too_long(directory)
    if directory.exists() and not directory.is_dir():
        raise ScaffoldError(f"{directory}: exists and is not a directory")
    if not directory.exists() or force:
        return
    try:
        entries = sorted(os.listdir(directory))
    except OSError as exc:
        raise ScaffoldError(f"{directory}: cannot be read: {exc.strerror or exc}") from None
    if entries:
        ours = [name for name in FILES if name in entries]
        has = ", ".join(ours or entries[:5]) + (
            f" and {len(entries) - 5} more" if not ours and len(entries) > 5 else ""
        )
        raise ScaffoldError(
            f"{directory}: is not empty (it has {has}); write the pack into a new or empty folder, "
            f"or pass --force to write its files there (replacing {', '.join(FILES)})"
        )


def _write(path: Path, text: str) -> None:
    """Write ``path`` as a new file moved over the name: a symlink there is replaced, never followed."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as file:
            file.write(text)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def write_pack(
    directory: Path, version: str, force: bool = False, package: Optional[str] = None
) -> tuple[list[Path], InstallLine]:
    """Write the pack's files into ``directory`` (created if missing), which must be new or empty unless
    ``force``. Returns the files written and the requirement ``requirements.txt`` holds."""
    from .policies import DESCRIPTION

    if package is not None:
        line = requirement_line(package)
        wanted = InstallLine(line, "as given with --requirement", portable=not _on_this_machine(line))
    else:
        wanted = installed_requirement(version)
    _empty_or_new(directory, force)
    contents = {
        "PulumiPolicy.yaml": manifest(DESCRIPTION),
        "__main__.py": MAIN,
        "requirements.txt": requirements(wanted.line),
        "config.json": json.dumps(default_config(), indent=2) + "\n",
    }
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, text in contents.items():
            _write(directory / name, text)
    except OSError as exc:
        raise ScaffoldError(f"{directory}: cannot write the pack: {exc.strerror or exc}") from None
    return [directory / name for name in contents], wanted
