"""A rack, plus a hand-written EKS node group whose launch template's root disk is below the AMI's snapshot."""

import base64

import pulumi
import pulumi_aws as aws

from mixed_os_racks import Rack, RackArgs, load_stack_config

config = load_stack_config()
rack = Rack("rack", RackArgs(spec=config))

team = pulumi.Config("team")
group = team.require("group")
node_config = f"""MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="BOUNDARY"

--BOUNDARY
Content-Type: application/node.eks.aws

apiVersion: node.eks.aws/v1alpha1
kind: NodeConfig
spec:
  cluster:
    name: {config.cluster_name}
--BOUNDARY--
"""
template = aws.ec2.LaunchTemplate(
    f"{group}-launch-template",
    image_id=team.require("ami_id"),
    user_data=base64.b64encode(node_config.encode()).decode(),
    block_device_mappings=[
        aws.ec2.LaunchTemplateBlockDeviceMappingArgs(
            device_name="/dev/xvda",
            ebs=aws.ec2.LaunchTemplateBlockDeviceMappingEbsArgs(
                volume_size=team.require_int("disk_gib"), volume_type="gp3", encrypted="true"
            ),
        )
    ],
)
aws.eks.NodeGroup(
    group,
    cluster_name=config.cluster_name,
    node_role_arn="arn:aws:iam::123456789012:role/example-rack-gpu-nodes",
    subnet_ids=["subnet-offline-a", "subnet-offline-b"],
    ami_type="CUSTOM",
    instance_types=[team.require("instance_type")],
    launch_template=aws.eks.NodeGroupLaunchTemplateArgs(id=template.id, version=template.latest_version.apply(str)),
    scaling_config=aws.eks.NodeGroupScalingConfigArgs(desired_size=1, min_size=1, max_size=4),
    taints=[aws.eks.NodeGroupTaintArgs(key="nvidia.com/gpu", value="true", effect="NO_SCHEDULE")],
)
