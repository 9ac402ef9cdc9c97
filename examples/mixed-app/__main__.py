"""The seeds' app on the seeds' rack: ``web`` on the default lane, ``inference`` on the GPU node group.

The rack has the prod stack's lanes (a Bottlerocket default lane, a dedicated GPU Karpenter pool, the
``gpu-inference`` node group). The services are the stack config's ``app:services``, written as a
``convox.yml``'s services are. ``inference`` selects ``convox.io/label: gpu-inference`` and asks for one
NVIDIA GPU; the ``Service`` component gives it the lane's tolerations, so nobody writes them by hand,
and the policy pack's ``workloads-reach-their-lane`` checks that it can land there and fits a node
(12 GiB: a g4dn.xlarge has 16 GiB, of which 14481Mi are allocatable). Given the rack's lanes, the
``Service`` refuses at construction what the pack would refuse.
"""

import pulumi

from mixed_os_racks import Rack, RackArgs, Service, ServiceArgs, load_stack_config, parse_services

rack = Rack("rack", RackArgs(spec=load_stack_config()))

app = pulumi.Config("app")
for name, spec in parse_services(app.require("services")).items():
    service = Service(name, ServiceArgs(
        service=spec,
        cluster=rack.cluster,
        namespace=app.get("namespace") or "default",
        lanes=rack.lane_facts,  # refused here, not at preview, if no lane of the rack can hold it
    ))
    pulumi.export(f"{name}Service", service.service_name)
    pulumi.export(f"{name}Scheduling", service.scheduling)
