"""The rack's rules and CrossGuard policies: pure Python, no Pulumi resources.

``rules`` (formats and the seeds' rules), ``bootfacts`` (what decides a node's boot, read from a
resource; the upstream facts it reads against are ``mixed_os_racks.facts``), ``cost`` (each lane's worst
case per hour and its budgets), ``fit`` (allocatable and a pod's effective requests),
``checks`` (the lanes' checks), ``soak`` (``ami-soaked``: an AMI has run in the environment before),
``reservedlanes`` (reserved capacity: the reservations a lane launches into, and the rules a reserved lane
meets), ``reservation`` (one decoder of an EC2 capacity reservation) and ``reserved`` (the capacity-reservation
policies); the workload checks, one module per job: ``lanemodel``, ``laneconfig`` (the ``lanes`` config,
against the lane contract ``mixed_os_racks.lane``), ``lanesource``, ``pods`` (with ``operators``: the pods GPU
operators make of their custom resources), ``scheduling`` (Kubernetes' matching of labels and taints),
``overlays`` (Karpenter's NodeOverlays), ``wording``, ``reach`` and ``gpudaemons`` (``workloads`` names them
together); ``lookup`` (the optional EC2 and SSM look-up), ``policies`` (the CrossGuard policies and ``serve``)
and ``scaffold`` (``mixed-os-racks pack init``). ``scope`` and ``speedups`` adapt pulumi-policy's server to
the pack; only ``serve`` installs them.

The components import the rules from here and fail fast with the pack's words; the pack folder
(``policies/``, or one written by ``mixed-os-racks pack init``) is a thin entry that serves them.
"""
