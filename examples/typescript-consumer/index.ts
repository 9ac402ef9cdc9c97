// GPU lanes for the ML team, in a cluster another team runs, and the model server that uses them: the TypeScript
// twin of examples/consumer. A Karpenter pool pinned to the team's own AL2023 NVIDIA image, a managed node group
// for steady inference, and a plain Kubernetes Deployment that selects the pool.
import * as pulumi from "@pulumi/pulumi";
import * as k8s from "@pulumi/kubernetes";
import * as rack from "./rack"; // the generated SDK; with `pulumi package add`: import * as rack from "@mixed-os-racks/rack"

const config = new pulumi.Config();
const cluster = { name: config.require("clusterName") };

const training = new rack.KarpenterPool("ml", {
    cluster,
    pool: {
        name: "ml",
        os: (config.get("poolOs") ?? rack.types.enums.NodeOs.AL2023) as rack.types.enums.NodeOs,
        instanceFamilies: ["g6", "g6e"],
        amiId: config.require("amiId"),
        disk: 200,
        dedicated: true,
    },
    tags: { team: "ml" },
});

const inference = new rack.NodeGroup("inference", {
    cluster,
    // a budget: the group's worst case (4 nodes on demand) may cost at most $5 an hour (policy lane-cost-ceiling)
    group: { instanceType: "g6.xlarge", minSize: 1, maxSize: 4, dedicated: true, label: "inference", maxHourlyUsd: 5 },
});

// The model server: a required node affinity on the lane's label, the lane's dedicated-node toleration and the
// GPU toleration and resource (what the Python package's place() gives a Convox service).
const lane = config.require("servingPool");
new k8s.apps.v1.Deployment("model-server", {
    metadata: { name: "model-server", namespace: "default" },
    spec: {
        replicas: 1,
        selector: { matchLabels: { app: "model-server" } },
        template: {
            metadata: { labels: { app: "model-server" } },
            spec: {
                affinity: {
                    nodeAffinity: {
                        requiredDuringSchedulingIgnoredDuringExecution: {
                            nodeSelectorTerms: [{ matchExpressions: [{ key: "convox.io/nodepool", operator: "In", values: [lane] }] }],
                        },
                    },
                },
                tolerations: [
                    { key: "dedicated-node", operator: "Equal", value: lane, effect: "NoSchedule" },
                    { key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" },
                ],
                containers: [{
                    name: "server",
                    image: "nvcr.io/nvidia/tritonserver:24.12-py3",
                    resources: {
                        limits: { "nvidia.com/gpu": "1" },
                        requests: { cpu: "2", memory: "8Gi", "nvidia.com/gpu": "1" },
                    },
                }],
            },
        },
    },
}, { dependsOn: [training] });

export const trainingNodePool = training.nodePoolName;
export const inferenceNodeGroup = inference.nodeGroupName;
export const inferenceTaints = inference.taints;
export const inferenceBudget = inference.maxHourlyUsd;
