"""The rack's CrossGuard pack: ``pulumi preview --policy-pack policies``.

The policies live in the installed package (``components/pack/``, imported as
``mixed_os_racks.pack``); this folder only serves them. Its virtualenv (``venv``, made by
``make`` or ``pulumi install``) installs the package from this checkout (``requirements.txt``).
"""

from mixed_os_racks.pack.policies import serve

serve()
