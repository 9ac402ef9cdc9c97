"""The pack installed with the package (``mixed_os_racks/pack/bundled``): the rack's policies, served.

The ``mixed-os-racks`` command runs this folder when the project has no ``policies/`` of its own,
with the interpreter the command runs on (the one the package is installed in).
"""

from mixed_os_racks.pack.policies import serve

serve()
