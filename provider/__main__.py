"""The rack's component provider: ``pulumi package add`` of this folder serves every public component.

The components live in the installed package (``components/``, imported as ``mixed_os_racks``); this
folder only serves them (``mixed_os_racks.provider``). Its virtualenv (``venv``, made by the CLI or
``pulumi install``) installs the package from this checkout (``requirements.txt``).
"""

from mixed_os_racks.provider import serve

serve()
