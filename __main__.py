"""The rack program: stack config -> Rack -> exports."""

import pulumi

from mixed_os_racks import Rack, RackArgs, load_stack_config

spec = load_stack_config("rack")
rack = Rack("rack", RackArgs(spec=spec))

pulumi.export("clusterName", spec.cluster_name)
pulumi.export("nodePools", sorted(rack.pools))
pulumi.export("nodeGroups", sorted(rack.node_groups))
