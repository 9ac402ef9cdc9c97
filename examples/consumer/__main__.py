"""GPU lanes for the ML team, in a cluster another team runs, and the model server that uses them.

Written as any team would write it: install the package (`requirements.txt`: its Git repository,
pinned to a release tag), then import the components. The
cluster already runs Karpenter v1 (the platform team installed it); this program adds a Karpenter
pool pinned to the team's own AL2023 NVIDIA image, a managed node group for steady inference, and a
plain Kubernetes Deployment that selects the pool.
"""

import pulumi
import pulumi_kubernetes as k8s

from mixed_os_racks import ClusterRef, KarpenterPool, KarpenterPoolArgs, NodeGroup, NodeGroupArgs, NodeGroupSpec, PoolSpec

config = pulumi.Config()
cluster = ClusterRef.existing("shared", config.require("cluster_name"))

training = KarpenterPool("ml", KarpenterPoolArgs(
    pool=PoolSpec(name="ml", instance_families=["g6", "g6e"], ami_id=config.require("ami_id"), disk=200, dedicated=True),
    cluster=cluster,
    tags={"team": "ml"},
))
inference = NodeGroup("inference", NodeGroupArgs(
    group=NodeGroupSpec(instance_type="g6.xlarge", min_size=1, max_size=4, dedicated=True, label="inference"),
    cluster=cluster,
))

# The model server, as the team writes its manifests: it selects a lane by its label and tolerates
# the lane's taints (dedicated, and the GPU taint every GPU lane carries).
lane = config.require("serving_pool")
k8s.apps.v1.Deployment(
    "model-server",
    metadata={"name": "model-server", "namespace": "default"},
    spec={
        "replicas": 1,
        "selector": {"matchLabels": {"app": "model-server"}},
        "template": {
            "metadata": {"labels": {"app": "model-server"}},
            "spec": {
                "nodeSelector": {"convox.io/nodepool": lane},
                "tolerations": [
                    {"key": "dedicated-node", "operator": "Equal", "value": lane, "effect": "NoSchedule"},
                    {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                ],
                "containers": [{
                    "name": "server",
                    "image": "nvcr.io/nvidia/tritonserver:24.12-py3",
                    "resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "2", "memory": "8Gi"}},
                }],
            },
        },
    },
    opts=pulumi.ResourceOptions(provider=cluster.provider, depends_on=[training]),
)

pulumi.export("trainingNodePool", training.node_pool_name)
pulumi.export("inferenceNodeGroup", inference.node_group_name)
pulumi.export("inferenceTaints", inference.taints)
