"""The rack program: stack config -> Rack -> exports."""

import pulumi

from components import Rack, RackArgs, load_stack_config

config = load_stack_config()
rack = Rack("rack", RackArgs(config=config))

pulumi.export("clusterName", config.cluster_name)
pulumi.export("nodePools", sorted(rack.pools))
pulumi.export("nodeGroups", sorted(rack.node_groups))
