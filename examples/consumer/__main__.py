"""GPU lanes for the ML team, in a cluster another team runs, and the model server that uses them.

Written as any team would write it: install the package (`requirements.txt`: its Git repository,
pinned to a release tag), then import the components. The
cluster already runs Karpenter v1 (the platform team installed it); this program adds a Karpenter
pool pinned to the team's own AL2023 NVIDIA image, a managed node group for steady inference, and a
plain Kubernetes Deployment that selects the pool (its scheduling from `place()`).
"""

import pulumi
import pulumi_kubernetes as k8s

from mixed_os_racks import ClusterRef, KarpenterPool, KarpenterPoolArgs, NodeGroup, NodeGroupArgs, NodeGroupSpec, PoolSpec, place

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

# The model server: the scheduling a Convox service gets (place(): a required node affinity on the lane's
# label, the lane's dedicated-node toleration and the GPU toleration and resource), typed as
# pulumi-kubernetes' own inputs, so the Deployment below type-checks as written.
lane = config.require("serving_pool")
placed = place({"convox.io/nodepool": lane}, gpu=1)
k8s.apps.v1.Deployment(
    "model-server",
    metadata={"name": "model-server", "namespace": "default"},
    spec={
        "replicas": 1,
        "selector": {"match_labels": {"app": "model-server"}},
        "template": {
            "metadata": {"labels": {"app": "model-server"}},
            "spec": {
                "affinity": placed.affinity,
                "tolerations": placed.tolerations,
                "containers": [{
                    "name": "server",
                    "image": "nvcr.io/nvidia/tritonserver:24.12-py3",
                    "resources": {"limits": placed.gpu_resources,
                                  "requests": {"cpu": "2", "memory": "8Gi", **placed.gpu_resources}},
                }],
            },
        },
    },
    opts=pulumi.ResourceOptions(provider=cluster.provider, depends_on=[training]),
)

pulumi.export("trainingNodePool", training.node_pool_name)
pulumi.export("inferenceNodeGroup", inference.node_group_name)
pulumi.export("inferenceTaints", inference.taints)
