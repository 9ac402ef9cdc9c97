"""``python -m mixed_os_racks``: the ``mixed-os-racks`` command."""

from .cli import entry

entry()
