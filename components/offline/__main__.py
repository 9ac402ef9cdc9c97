"""``python -m mixed_os_racks.offline``: the ``mixed-os-racks`` command."""

from ..cli import entry

entry()
