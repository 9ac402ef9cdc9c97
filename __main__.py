"""The rack program: stack config -> Rack -> exports."""

import pulumi

from mixed_os_racks import Rack, RackArgs, load_stack_config

spec = load_stack_config("rack")
rack = Rack("rack", RackArgs(spec=spec))

pulumi.export("clusterName", rack.cluster.name)
pulumi.export("endpoint", rack.cluster.endpoint)
pulumi.export("kubeconfig", rack.cluster.kubeconfig)
pulumi.export("nodeRoleArn", rack.node_role_arn)
pulumi.export("interruptionQueueName", rack.interruption_queue_name)
pulumi.export("lanes", rack.lanes)
pulumi.export("worstCaseHourlyUsd", rack.worst_case_hourly_usd)
pulumi.export("nodePools", sorted(rack.pools))
pulumi.export("nodeGroups", sorted(rack.node_groups))
