"""The rack's rules and CrossGuard policies: pure Python, no Pulumi resources.

``rules`` (formats and the seeds' rules), ``bootfacts`` (what decides a node's boot, read from a
resource; the upstream facts it reads against are ``mixed_os_racks.facts``), ``cost`` (each lane's worst
case per hour and its budgets), ``fit`` (allocatable and a pod's effective requests),
``checks`` (the lanes' checks), ``reservedlanes`` (reserved capacity: the reservations a lane launches into, and
the rules a reserved lane meets), ``reservation`` (one reservation type and its decoder, for every source),
``reserved`` (the reservation policies), ``soak`` (``ami-soaked``), ``overlays`` (Karpenter's NodeOverlays);
the workload checks, one module per job: ``lanemodel``, ``laneconfig`` (the ``lanes`` config, against the lane
contract ``mixed_os_racks.lane``), ``lanesource``, ``pods``, ``operators`` (the pods GPU operators make of their
custom resources), ``scheduling`` (labels and taints as the scheduler reads them), ``wording``, ``reach`` and
``gpudaemons`` (``workloads`` names them together); ``lookup`` (the optional EC2 and SSM look-up), and
``policies`` (the CrossGuard policies and ``serve``). ``scope`` and ``speedups`` adapt pulumi-policy's server to
the pack; only ``serve`` installs them. ``scaffold`` writes a pack folder (``mixed-os-racks pack init``).

The components import the rules from here and fail fast with the pack's words; the pack folder
(``policies/``, or one written by ``mixed-os-racks pack init``) is a thin entry that serves them.
"""
