"""``python -m mixed_os_racks.offline``: the ``mixed-os-racks`` command."""

from ..__main__ import entry

entry()
