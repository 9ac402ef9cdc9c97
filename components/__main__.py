"""``python -m mixed_os_racks`` and the ``mixed-os-racks`` script: the ``mixed-os-racks`` command."""

import sys

from .errors import OfflineUnavailable


def entry() -> None:
    try:
        from .cli import entry as run
    except OfflineUnavailable as exc:  # the engine's SDK range: say so, without a traceback
        sys.stderr.write(f"error: {exc}\n")
        sys.exit(2)
    run()


if __name__ == "__main__":
    entry()
