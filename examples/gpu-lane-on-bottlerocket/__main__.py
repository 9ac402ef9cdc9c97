"""A Bottlerocket rack, plus another team's GPU pool that also runs Bottlerocket."""

import pulumi
import pulumi_kubernetes as k8s

from mixed_os_racks import Rack, RackArgs, load_stack_config

rack = Rack("rack", RackArgs(spec=load_stack_config()))

team = pulumi.Config("team")
pool = team.require("pool")
k8s.apiextensions.CustomResource(
    f"{pool}-nodeclass",
    api_version="karpenter.k8s.aws/v1",
    kind="EC2NodeClass",
    metadata={"name": pool},
    spec={
        "amiSelectorTerms": [{"alias": "bottlerocket@latest"}],
        "role": "KarpenterNodeRole-example-rack",
        "subnetSelectorTerms": [{"tags": {"karpenter.sh/discovery": "example-rack"}}],
        "securityGroupSelectorTerms": [{"tags": {"karpenter.sh/discovery": "example-rack"}}],
        "blockDeviceMappings": [
            {"deviceName": "/dev/xvda", "ebs": {"volumeSize": "4Gi", "volumeType": "gp3", "encrypted": True}},
            {"deviceName": "/dev/xvdb", "ebs": {"volumeSize": "200Gi", "volumeType": "gp3", "encrypted": True}},
        ],
    },
)
k8s.apiextensions.CustomResource(
    f"{pool}-nodepool",
    api_version="karpenter.sh/v1",
    kind="NodePool",
    metadata={"name": pool},
    spec={"template": {"spec": {
        "nodeClassRef": {"group": "karpenter.k8s.aws", "kind": "EC2NodeClass", "name": pool},
        "requirements": [{"key": "karpenter.k8s.aws/instance-family", "operator": "In",
                          "values": team.require("instance_families").split(",")}],
        "taints": [{"key": "nvidia.com/gpu", "value": "true", "effect": "NoSchedule"}],
    }}},
)
