// @mixed-os-racks/rack: the mixed-os-racks component package's TypeScript SDK, generated from its schema by
// `mixed-os-racks schema --typescript` (version 0.1.0), with the names and types `pulumi package add` writes.
// Do not edit: generate it again when the package changes.
import * as pulumi from "@pulumi/pulumi";

export namespace types {
    export namespace enums {
        export const Arch = {
            /**
             * x86-64.
             */
            AMD64: "amd64",
            /**
             * 64-bit Arm (Graviton).
             */
            ARM64: "arm64",
        } as const;

        /**
         * A CPU architecture, as the `kubernetes.io/arch` label writes it.
         */
        export type Arch = (typeof Arch)[keyof typeof Arch];

        export const CapacityType = {
            /**
             * On-Demand (Karpenter's spelling).
             */
            ON_DEMAND: "on-demand",
            /**
             * Spot (Karpenter's spelling).
             */
            SPOT: "spot",
            /**
             * A capacity reservation (Karpenter's spelling).
             */
            RESERVED: "reserved",
            /**
             * On-Demand (the EKS API's spelling, a node group's).
             */
            EKS_ON_DEMAND: "ON_DEMAND",
            /**
             * Spot (the EKS API's spelling, a node group's).
             */
            EKS_SPOT: "SPOT",
            /**
             * A Capacity Block for ML (the EKS API's spelling, a node group's).
             */
            EKS_CAPACITY_BLOCK: "CAPACITY_BLOCK",
        } as const;

        /**
         * How a lane's instances are bought: Karpenter's `karpenter.sh/capacity-type` values, or the EKS
         * API's `capacityType` of a node group.
         */
        export type CapacityType = (typeof CapacityType)[keyof typeof CapacityType];

        export const ConsolidationPolicy = {
            /**
             * Only nodes that run no workload pods.
             */
            WHEN_EMPTY: "WhenEmpty",
            /**
             * Empty nodes, and nodes whose pods fit elsewhere or on a cheaper node.
             */
            WHEN_EMPTY_OR_UNDERUTILIZED: "WhenEmptyOrUnderutilized",
        } as const;

        /**
         * When Karpenter consolidates a pool's nodes.
         */
        export type ConsolidationPolicy = (typeof ConsolidationPolicy)[keyof typeof ConsolidationPolicy];

        export const Identity = {
            /**
             * EKS Pod Identity: an association binds the role to the service account (the eks-pod-identity-agent
             * add-on hands the pods their credentials).
             */
            POD_IDENTITY: "pod_identity",
            /**
             * IAM roles for service accounts: the role trusts the cluster's IAM OIDC provider for that one service
             * account (the default in the China Regions, where EKS Pod Identity is not offered).
             */
            IRSA: "irsa",
        } as const;

        /**
         * How a controller the rack installs gets AWS credentials for its service account.
         */
        export type Identity = (typeof Identity)[keyof typeof Identity];

        export const LaneKind = {
            /**
             * A Karpenter NodePool (and its EC2NodeClass).
             */
            NODEPOOL: "nodepool",
            /**
             * An EKS managed node group.
             */
            NODEGROUP: "nodegroup",
        } as const;

        /**
         * What makes the lane.
         */
        export type LaneKind = (typeof LaneKind)[keyof typeof LaneKind];

        export const NodeOs = {
            /**
             * Amazon Linux 2023: every lane may use it; GPU lanes and pinned AMIs must.
             */
            AL2023: "al2023",
            /**
             * Bottlerocket: the hardened default lane; no GPU families, no pinned AMI.
             */
            BOTTLEROCKET: "bottlerocket",
        } as const;

        /**
         * The operating system of a lane's nodes.
         */
        export type NodeOs = (typeof NodeOs)[keyof typeof NodeOs];

        export const TaintEffect = {
            /**
             * Pods that do not tolerate it are not scheduled on the node.
             */
            NO_SCHEDULE: "NoSchedule",
            /**
             * The scheduler avoids the node for pods that do not tolerate it.
             */
            PREFER_NO_SCHEDULE: "PreferNoSchedule",
            /**
             * Pods that do not tolerate it are not scheduled, and are evicted.
             */
            NO_EXECUTE: "NoExecute",
            /**
             * `NoSchedule` in the EKS API's spelling.
             */
            EKS_NO_SCHEDULE: "NO_SCHEDULE",
            /**
             * `PreferNoSchedule` in the EKS API's spelling.
             */
            EKS_PREFER_NO_SCHEDULE: "PREFER_NO_SCHEDULE",
            /**
             * `NoExecute` in the EKS API's spelling.
             */
            EKS_NO_EXECUTE: "NO_EXECUTE",
        } as const;

        /**
         * A taint's effect: Kubernetes' spelling (what the rack's `lanes` output writes), or the EKS API's
         * (what a node group's taints are written in, and a hand-written policy config may use).
         */
        export type TaintEffect = (typeof TaintEffect)[keyof typeof TaintEffect];
    }

    export namespace input {
        /**
         * What one node of the lane's largest instance type offers pods: Kubernetes quantities
         * (`3920m`, `14481Mi`, `17Gi`).
         */
        export interface AllocatableArgs {
            /**
             * CPU for pods (`3920m`).
             */
            cpu?: string;
            /**
             * Memory for pods (`14481Mi`).
             */
            memory?: string;
            /**
             * Ephemeral storage for pods, from the root (Bottlerocket: data) volume (`17Gi`).
             */
            ephemeralStorage?: string;
        }

        /**
         * What a lane boots: an alias or an EKS AMI type (both follow releases), or a pinned AMI (which does not).
         */
        export interface AmiRefArgs {
            /**
             * The EC2NodeClass's AMI alias (`al2023@latest`, `bottlerocket@latest`).
             */
            alias?: string;
            /**
             * The EKS AMI type of a node group on EKS's AMI (`AL2023_x86_64_NVIDIA`).
             */
            amiType?: string;
            /**
             * A pinned AMI's id.
             */
            id?: string;
            /**
             * A pinned AMI's name.
             */
            name?: string;
            /**
             * A pinned AMI's creation date: how old the lane's image is.
             */
            created?: string;
        }

        /**
         * The EKS cluster a component goes into: its name, and what reaches it (endpoint and certificate
         * authority; read from the cluster when not given).
         */
        export interface ClusterRefArgs {
            /**
             * The EKS cluster's name.
             */
            name: pulumi.Input<string>;
            /**
             * The API server's endpoint (`https://...`), with `certificateAuthority`. Default: read from the cluster.
             */
            endpoint?: pulumi.Input<string>;
            /**
             * The cluster's certificate authority data (base64), with `endpoint`. Default: read from the cluster.
             */
            certificateAuthority?: pulumi.Input<string>;
            /**
             * The cluster's OIDC issuer URL (`https://oidc.eks.<region>.<suffix>/id/<id>`, for IAM roles for service
             * accounts). Default: read from the cluster.
             */
            oidcIssuer?: pulumi.Input<string>;
            /**
             * The ARN of the cluster's IAM OIDC provider, which IRSA roles trust (`rack:controller_identity: irsa`).
             * Default: the one `RackCluster` makes, or, for a cluster read by name, the one IAM holds for its issuer.
             */
            oidcProviderArn?: pulumi.Input<string>;
            /**
             * The IAM role of the nodes Karpenter launches, its ARN or name: the Karpenter pools' default node role.
             * Default: `KarpenterNodeRole-<name>`.
             */
            nodeRoleArn?: pulumi.Input<string>;
        }

        /**
         * An EKS cluster the rack creates (pulumi-eks `Cluster`) in a network the user brings.
         */
        export interface ClusterSpecArgs {
            /**
             * The EKS cluster's name.
             */
            name: string;
            /**
             * The VPC.
             */
            vpcId: string;
            /**
             * Subnets for the nodes and the cluster, 2-30, in at least two Availability Zones (Karpenter's pools select them by
             * id).
             */
            privateSubnetIds: string[];
            /**
             * Subnets for public load balancers. Default none.
             */
            publicSubnetIds?: string[];
            /**
             * The Kubernetes version of the control plane. Default 1.34.
             */
            version?: string;
            /**
             * Three system nodes and two Karpenter replicas; one of each without. Default true.
             */
            highAvailability?: boolean;
            /**
             * Who may reach the public API endpoint. Default `0.0.0.0/0`.
             */
            publicAccessCidrs?: string[];
            /**
             * AWS tags for the cluster and what the rack creates with it.
             */
            tags?: {[key: string]: string};
            /**
             * The system lane's instance type. Default `t3.large` (Karpenter requests 1 CPU and 1 GiB per replica).
             */
            systemNodeType?: string;
            /**
             * The system lane's root volume GiB, at least 20. Default 20.
             */
            systemNodeDisk?: number;
            /**
             * Protect the cluster from `pulumi destroy` and replacement. Default true.
             */
            protect?: boolean;
            /**
             * IAM role or user ARNs given cluster admin (an access entry with `AmazonEKSClusterAdminPolicy`,
             * cluster scope), besides the cluster's creator, whose entry EKS makes itself. Default none.
             */
            adminArns?: string[];
        }

        /**
         * The NVIDIA device plugin on every AL2023 GPU lane.
         */
        export interface DevicePluginSpecArgs {
            /**
             * Share each GPU this many ways (time-slicing) when greater than 1. Default 1.
             */
            timeSlicingReplicas?: number;
        }

        /**
         * dcgm-exporter on every AL2023 GPU lane.
         */
        export interface GpuObservabilitySpecArgs {
            /**
             * The dcgm-exporter chart version. Default 4.8.2.
             */
            version?: string;
            /**
             * Create the chart's ServiceMonitor (needs the monitoring.coreos.com CRDs). Default false.
             */
            serviceMonitor?: boolean;
        }

        /**
         * `scale.gpu`: a bare number is the count.
         */
        export interface GpuSpecArgs {
            /**
             * GPUs per replica. Default 0.
             */
            count?: number;
            /**
             * `nvidia` (or `nvidia.com`) or `amd` (or `amd.com`). Default `nvidia`.
             */
            vendor?: string;
        }

        /**
         * `health`: a bare string is the path.
         */
        export interface HealthSpecArgs {
            /**
             * The HTTP path the readiness and liveness probes get. Default `/`.
             */
            path?: string;
            /**
             * Seconds before the first readiness check. Default: `interval`.
             */
            grace?: number;
            /**
             * Seconds between checks. Default 5.
             */
            interval?: number;
            /**
             * Seconds a check may take. Default: `interval` - 1 (at least 1).
             */
            timeout?: number;
        }

        /**
         * Karpenter itself, installed by the rack.
         */
        export interface KarpenterSpecArgs {
            /**
             * The Karpenter release (the `karpenter` and `karpenter-crd` chart version): 1.14.x or 1.15.x, one whose
             * charts and notes were read upstream (`upstream.KARPENTER_RELEASES`). Default 1.14.1, the 1.14 LTS line.
             */
            version?: string;
            /**
             * Controller replicas: 2 (1 without high availability).
             */
            replicas?: number;
        }

        /**
         * A lane: where workloads land, and what fits there.
         */
        export interface LaneArgs {
            /**
             * The labels every node of the lane carries: what a workload's node selector names.
             */
            labels?: {[key: string]: string};
            /**
             * The taints every node of the lane carries: what a workload must tolerate.
             */
            taints?: types.input.LaneTaintArgs[];
            /**
             * Whether the lane offers NVIDIA GPUs (its nodes carry the GPU-vendor label and the GPU taint).
             */
            gpu?: boolean;
            /**
             * The architectures its nodes can have.
             */
            arch?: types.enums.Arch[];
            /**
             * Exactly the instance types it launches (a node group's one type; a pool that names them).
             */
            instanceTypes?: string[];
            /**
             * The instance families a pool may launch (`g6`); none: any.
             */
            instanceFamilies?: string[];
            /**
             * The instance sizes a pool may launch (`2xlarge`); none: any.
             */
            instanceSizes?: string[];
            /**
             * How its instances are bought.
             */
            capacityTypes?: types.enums.CapacityType[];
            /**
             * The EC2 capacity reservations (ODCRs, Capacity Blocks) a reserved pool launches into first, with capacity
             * type `reserved`, or the one a node group's launch template targets; none for a lane without (in the `Rack`'s
             * `lanes` output; not read from the policy config).
             */
            capacityReservationIds?: string[];
            /**
             * How many instances its capacity reservations hold, together (EC2's instance count of each, read at `up`
             * with `DescribeCapacityReservations`): the nodes it has bought ahead, billed whether they run or not; none for
             * a lane without reservations and for a canary, whose lane counts them (in the `Rack`'s `lanes` output; not
             * read from the policy config).
             */
            reservedNodes?: number;
            /**
             * The most GPUs one of its nodes has.
             */
            maxGpusPerNode?: number;
            /**
             * What one node of its largest instance type offers pods.
             */
            allocatable?: types.input.AllocatableArgs;
            /**
             * The largest instance type it can launch (what `allocatable` is of).
             */
            largestInstanceType?: string;
            /**
             * What makes the lane.
             */
            kind?: types.enums.LaneKind;
            /**
             * The nodes' operating system.
             */
            os?: types.enums.NodeOs;
            /**
             * What it boots (in the `Rack`'s `lanes` output; not read from the policy config).
             */
            ami?: types.input.AmiRefArgs;
            /**
             * The most the lane can cost an hour on demand, in US dollars, in the stack's region (docs/cost.md): a pool's
             * limits filled with the dearest types it can launch, a node group's `maxSize` of its type; none when it is
             * unbounded or not priced (in the `Rack`'s `lanes` output; not read from the policy config).
             */
            worstCaseHourlyUsd?: number;
            /**
             * The most the lane can cost an hour while its nodes roll onto a new AMI or version (docs/cost.md): a node
             * group's `maxSize` plus EKS's update surge, a pool's limits plus the drift replacements its disruption budget
             * lets run beside the nodes they replace; none when it is unbounded or not priced (in the `Rack`'s `lanes`
             * output; not read from the policy config).
             */
            worstCaseRolloutHourlyUsd?: number;
            /**
             * The lane whose candidate AMI this canary lane runs (`<lane>-canary`, `canaryAmiId`); none for a lane
             * of its own (in the `Rack`'s `lanes` output; not read from the policy config).
             */
            canaryOf?: string;
        }

        /**
         * A taint every node of a lane carries.
         */
        export interface LaneTaintArgs {
            /**
             * The taint's key (`nvidia.com/gpu`, `dedicated-node`).
             */
            key: string;
            /**
             * The taint's value; none for a taint without one.
             */
            value?: string;
            /**
             * The taint's effect.
             */
            effect: types.enums.TaintEffect;
        }

        /**
         * One EKS managed node group on Amazon Linux 2023.
         */
        export interface NodeGroupSpecArgs {
            /**
             * The one instance type of the group (`g4dn.xlarge`).
             */
            instanceType: string;
            /**
             * How messages name the group before its component exists (the Rack sets it to the component name).
             */
            name?: string;
            /**
             * A build lane: `dedicated=build:NoSchedule` and `convox-build=true`. Default false.
             */
            build?: boolean;
            /**
             * The rack's system lane: `convox.io/system-node=true`, as a label and a NoSchedule taint. Default false.
             */
            system?: boolean;
            /**
             * Root volume GiB, at least 20. Default 20 (in the stack config: `node_disk`).
             */
            disk?: number;
            /**
             * `ON_DEMAND`, `SPOT` or `CAPACITY_BLOCK` (an EC2 Capacity Block for ML, named by
             * `capacityReservationId`). Default `ON_DEMAND`.
             */
            capacityType?: string;
            /**
             * The EC2 capacity reservation the group launches into (`cr-0123456789abcdef0`): a Capacity Block with
             * `capacityType: CAPACITY_BLOCK`, or an On-Demand Capacity Reservation with `ON_DEMAND`. Its launch template
             * targets it; a `CAPACITY_BLOCK` group has `minSize` 0. Not with `amiId` or `canaryAmiId`. Default
             * none.
             */
            capacityReservationId?: string;
            /**
             * Minimum (and initial) size. Default 1 (build lanes in the stack config: 0).
             */
            minSize?: number;
            /**
             * Maximum size. Default 100.
             */
            maxSize?: number;
            /**
             * `convox.io/label` on the nodes; `null` sets none (not with `dedicated`). Default `custom`
             * (build lanes in the stack config: `custom-build`).
             */
            label?: string;
            /**
             * AWS tags for the group (a mapping, or `k=v,k2=v2`); `name` and `rack` are reserved, in any case.
             */
            tags?: {[key: string]: string};
            /**
             * A custom AL2023 AMI to pin instead of EKS's AMI for the instance type.
             */
            amiId?: string;
            /**
             * Taint the nodes `dedicated-node=<label>:NoSchedule`. Default false.
             */
            dedicated?: boolean;
            /**
             * The group's budget: the most `maxSize` nodes may cost an hour on demand, in US dollars (policy
             * `lane-cost-ceiling`). Default: none (`null` is none too).
             */
            maxHourlyUsd?: number;
            /**
             * A candidate AL2023 AMI to try on a fixed-size second group `<name>-canary` with the group's instance type,
             * label and taints. It is checked as `amiId` is. Default none.
             */
            canaryAmiId?: string;
            /**
             * The canary group's size (its minimum, maximum and desired size), 1 or more. Default 1.
             */
            canarySize?: number;
        }

        /**
         * A pool's canary lane (`canaryAmiId`): where the pool's pods try a candidate AMI first.
         */
        export interface PoolCanaryArgs {
            /**
             * The canary's NodePool and EC2NodeClass: `<pool>-canary`.
             */
            nodePoolName: pulumi.Input<string>;
            /**
             * The candidate AMI it boots (pinned: `{"id", "name", "created"}`).
             */
            ami: pulumi.Input<types.input.AmiRefArgs>;
            /**
             * The most nodes it launches (`canaryNodes`: the NodePool's `limits.nodes`).
             */
            nodes: pulumi.Input<number>;
        }

        /**
         * One Karpenter pool: an EC2NodeClass and a NodePool, both named `name`.
         */
        export interface PoolSpecArgs {
            /**
             * The EC2NodeClass and NodePool name (`metadata.name`); lowercase, digits and dashes, at most 63.
             */
            name: string;
            /**
             * The node OS. Default `al2023`; `bottlerocket` takes no GPU families and no pinned AMI.
             */
            os?: types.enums.NodeOs;
            /**
             * The AL2023 AMI alias when no `amiId` is pinned: `al2023@latest` or `al2023@vYYYYMMDD`.
             */
            amiAlias?: string;
            /**
             * Instance families the pool may launch (`g5`); default: any.
             */
            instanceFamilies?: string[];
            /**
             * Instance sizes (`xlarge`); default: any.
             */
            instanceSizes?: string[];
            /**
             * Exactly these instance types (`c7i.2xlarge`), not the cross-product of their families and
             * sizes; default: any (as the families and sizes allow).
             */
            instanceTypes?: string[];
            /**
             * `on-demand`, `spot` and/or `reserved` (`reserved` needs `capacityReservationIds`: with
             * `on-demand` too the pool falls back to On-Demand when its reservations are full, alone it launches only
             * into them). Default `on-demand`.
             */
            capacityTypes?: string[];
            /**
             * EC2 capacity reservations the pool launches into (On-Demand Capacity Reservations or Capacity Blocks,
             * `cr-0123456789abcdef0`, at most 30): the EC2NodeClass's `capacityReservationSelectorTerms`, one `id`
             * term each; needs `reserved` in `capacityTypes`. Default none.
             */
            capacityReservationIds?: string[];
            /**
             * `amd64` and/or `arm64`. Default `amd64`.
             */
            arch?: string[];
            /**
             * The pool's CPU limit (cores). Default 100.
             */
            cpuLimit?: number;
            /**
             * The pool's memory limit (GiB). Default 400.
             */
            memoryLimitGb?: number;
            /**
             * The pool's GPU limit (`nvidia.com/gpu`, or `amd.com/gpu` for AMD families), GPU pools only. Default: none.
             */
            gpuLimit?: number;
            /**
             * The pool's budget: the most its worst case may cost an hour on demand, in US dollars (policy
             * `lane-cost-ceiling`). Default: none (`null` is none too).
             */
            maxHourlyUsd?: number;
            /**
             * Karpenter's consolidation policy. Default `WhenEmptyOrUnderutilized`.
             */
            consolidationPolicy?: types.enums.ConsolidationPolicy;
            /**
             * How long a node stays before consolidation: `30s`, `5m`, `1h30m` or `Never`. Default `30s`.
             */
            consolidateAfter?: string;
            /**
             * Node lifetime (`expireAfter`): a duration like `720h` or `1h30m`, or `Never`. Default `720h`.
             */
            nodeExpiry?: string;
            /**
             * Nodes disrupted at once: a percentage (`10%`) or a count. Default `10%`.
             */
            disruptionBudgetNodes?: string;
            /**
             * Root volume GiB (Bottlerocket: the data volume). Default 20.
             */
            disk?: number;
            /**
             * EBS volume type: gp2, gp3, io1 or io2. Default `gp3`.
             */
            volumeType?: string;
            /**
             * Provisioned IOPS: gp3 3000-80000 (at most 500 per GiB), io1 100-64000 (50 per GiB), io2
             * 100-256000 (1000 per GiB); required for io1 and io2, refused for gp2. Default: gp3's 3000.
             */
            volumeIops?: number;
            /**
             * Throughput MiB/s, gp3 only: 125-2000, at most 0.25 per IOPS. Default: gp3's 125.
             */
            volumeThroughput?: number;
            /**
             * A custom AL2023 AMI to pin instead of the alias.
             */
            amiId?: string;
            /**
             * The NodePool's weight (preference among pools), 1-100. Default: none.
             */
            weight?: number;
            /**
             * Extra node labels; `convox.io/nodepool`, `convox.io/label`, `convox.io/gpu-vendor` and
             * `convox.io/system-node` are the rack's own.
             */
            labels?: {[key: string]: string};
            /**
             * Extra node taints.
             */
            taints?: types.input.TaintArgs[];
            /**
             * Taint the nodes `dedicated-node=<name>:NoSchedule`. Default false.
             */
            dedicated?: boolean;
            /**
             * A candidate AL2023 AMI to try beside the pool: an EC2NodeClass and NodePool `<name>-canary` with the
             * pool's labels, taints, requirements and disk, a higher weight, and limits for `canaryNodes` nodes. It is
             * checked as `amiId` is. Default none.
             */
            canaryAmiId?: string;
            /**
             * How many of the pool's largest nodes the canary holds, 1 or more: its NodePool's cpu, memory and GPU limits
             * are that many times the largest type's (what Karpenter counts within a scheduling pass), and its `limits.nodes`
             * is that number (counted between passes only). Default 1.
             */
            canaryNodes?: number;
        }

        /**
         * A whole rack: its pools (the default `workload` lane first), node groups and GPU add-ons.
         */
        export interface RackSpecArgs {
            /**
             * The EKS cluster.
             */
            clusterName: string;
            /**
             * AWS tags for everything the rack creates in AWS: the cluster, Karpenter's resources, every node
             * group (under its own tags) and the instances and volumes Karpenter launches. Default none.
             */
            tags?: {[key: string]: string};
            /**
             * Install the EKS Pod Identity agent add-on (Karpenter's controller authenticates through it).
             */
            podIdentityAgent?: boolean;
            /**
             * How Karpenter and the Cluster Autoscaler get AWS credentials: EKS Pod Identity, or IAM roles for
             * service accounts (the cluster's IAM OIDC provider: made with the cluster the rack creates, looked up for
             * an existing one).
             */
            controllerIdentity?: types.enums.Identity;
            /**
             * Install the Cluster Autoscaler for the managed node groups (it needs the Pod Identity agent).
             */
            clusterAutoscaler?: boolean;
            /**
             * Install metrics-server (HorizontalPodAutoscalers read CPU use from it).
             */
            metricsServer?: boolean;
            /**
             * The IAM role (name) of Karpenter's nodes. Default `KarpenterNodeRole-<clusterName>`.
             */
            karpenterNodeRole?: string;
            /**
             * Karpenter pools, the default lane first; names are unique.
             */
            pools: types.input.PoolSpecArgs[];
            /**
             * Managed node groups and build lanes; each has its `name` (the component name), unique.
             */
            nodeGroups?: types.input.NodeGroupSpecArgs[];
            /**
             * An existing IAM role (name) shared by every node group. Default: each group gets its own.
             */
            nodeGroupRole?: string;
            /**
             * The NVIDIA device plugin, when enabled.
             */
            devicePlugin?: types.input.DevicePluginSpecArgs;
            /**
             * dcgm-exporter, when enabled (needs the device plugin).
             */
            gpuObservability?: types.input.GpuObservabilitySpecArgs;
            /**
             * The EKS cluster to create; none: an existing cluster named `clusterName`.
             */
            cluster?: types.input.ClusterSpecArgs;
            /**
             * Karpenter to install; none: the cluster already runs Karpenter v1.
             */
            karpenter?: types.input.KarpenterSpecArgs;
            /**
             * Spread the rack's own control parts: three system nodes, two Karpenter replicas.
             */
            highAvailability?: boolean;
            /**
             * The rack's budget: the most the worst cases of all its lanes together may cost an hour on demand, in
             * US dollars (policy `lane-cost-ceiling`). Default: none.
             */
            maxHourlyUsd?: number;
        }

        /**
         * `scale`: a bare number or range is the count.
         */
        export interface ScaleSpecArgs {
            /**
             * Replicas: `2`, a range `2-6` (a HorizontalPodAutoscaler on CPU between them), or `[2, 6]`; held as
             * (minimum, maximum). Default 1.
             */
            count?: number[];
            /**
             * CPU request, millicores. Default 250 (none for a GPU service).
             */
            cpu?: number;
            /**
             * Memory request and limit, MiB. Default 512 (none for a GPU service).
             */
            memory?: number;
            /**
             * GPUs per replica, as request and limit: `1`, or `{count: 1, vendor: nvidia}`.
             */
            gpu?: types.input.GpuSpecArgs;
            /**
             * The autoscaler's targets: `{cpu: 80}`.
             */
            targets?: types.input.TargetsSpecArgs;
        }

        /**
         * What placement gives a workload's pods, in Kubernetes' own field names.
         */
        export interface SchedulingArgs {
            /**
             * The pod's `affinity`: a required node affinity on the lane's labels.
             */
            affinity?: pulumi.Input<{[key: string]: any}>;
            /**
             * The pod's `tolerations`: the lane's `dedicated-node` taint, the GPU taint.
             */
            tolerations?: pulumi.Input<pulumi.Input<{[key: string]: pulumi.Input<string>}>[]>;
            /**
             * What each container requests, and limits, beyond CPU and memory (`nvidia.com/gpu: "1"`).
             */
            gpuResources?: pulumi.Input<{[key: string]: pulumi.Input<string>}>;
        }

        /**
         * `securityContext`: on top of the restrictive defaults every container gets.
         */
        export interface SecurityContextSpecArgs {
            /**
             * Refuse to start an image whose user is root. Default false.
             */
            runAsNonRoot?: boolean;
            /**
             * Mount the image read-only (`/tmp` stays writable, an emptyDir). Default false.
             */
            readOnlyRootFilesystem?: boolean;
        }

        /**
         * One service: a Deployment and a Service named `name`, placed on the lane it selects.
         */
        export interface ServiceSpecArgs {
            /**
             * The Deployment's and the Service's name: a DNS-1035 label (`web`).
             */
            name: string;
            /**
             * The container image (`nginx:1.27`, `123456789012.dkr.ecr.us-east-1.amazonaws.com/app:1`).
             */
            image: string;
            /**
             * The port the container listens on; the Service exposes it. 1-65535.
             */
            port: number;
            /**
             * Readiness and liveness on an HTTP path: `/health`, or `{path, grace, interval, timeout}`.
             */
            health?: types.input.HealthSpecArgs;
            /**
             * Environment variables: `[KEY=value]` or a mapping.
             */
            environment?: {[key: string]: string};
            /**
             * `count`, `cpu` (millicores), `memory` (MiB), `gpu`, `targets`; a bare number is the count.
             */
            scale?: types.input.ScaleSpecArgs;
            /**
             * Labels the nodes must carry: `convox.io/label: gpu-inference` or `convox.io/nodepool: gpu`
             * (and the lane's `dedicated-node` taint is then tolerated).
             */
            nodeSelectorLabels?: {[key: string]: string};
            /**
             * Reachable inside the cluster only (a ClusterIP Service); otherwise a LoadBalancer. Default false.
             */
            internal?: boolean;
            /**
             * `runAsNonRoot`, `readOnlyRootFilesystem`.
             */
            securityContext?: types.input.SecurityContextSpecArgs;
        }

        /**
         * A Kubernetes taint, as a NodePool writes it.
         */
        export interface TaintArgs {
            /**
             * The taint's key (`team`, `example.com/dedicated`).
             */
            key: string;
            /**
             * Its value; none for a taint without one.
             */
            value?: string;
            /**
             * `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
             */
            effect: string;
        }

        /**
         * `scale.targets`: what the autoscaler aims for.
         */
        export interface TargetsSpecArgs {
            /**
             * Average CPU use, percent of the request: 1-1000. Default 80. Above 100 is valid: use is measured
             * against the request, and a pod without a CPU limit (or with a higher one) may use more.
             */
            cpu?: number;
        }
    }

    export namespace output {
        /**
         * What one node of the lane's largest instance type offers pods: Kubernetes quantities
         * (`3920m`, `14481Mi`, `17Gi`).
         */
        export interface Allocatable {
            /**
             * CPU for pods (`3920m`).
             */
            readonly cpu?: string;
            /**
             * Memory for pods (`14481Mi`).
             */
            readonly memory?: string;
            /**
             * Ephemeral storage for pods, from the root (Bottlerocket: data) volume (`17Gi`).
             */
            readonly ephemeralStorage?: string;
        }

        /**
         * What a lane boots: an alias or an EKS AMI type (both follow releases), or a pinned AMI (which does not).
         */
        export interface AmiRef {
            /**
             * The EC2NodeClass's AMI alias (`al2023@latest`, `bottlerocket@latest`).
             */
            readonly alias?: string;
            /**
             * The EKS AMI type of a node group on EKS's AMI (`AL2023_x86_64_NVIDIA`).
             */
            readonly amiType?: string;
            /**
             * A pinned AMI's id.
             */
            readonly id?: string;
            /**
             * A pinned AMI's name.
             */
            readonly name?: string;
            /**
             * A pinned AMI's creation date: how old the lane's image is.
             */
            readonly created?: string;
        }

        /**
         * The EKS cluster a component goes into: its name, and what reaches it (endpoint and certificate
         * authority; read from the cluster when not given).
         */
        export interface ClusterRef {
            /**
             * The EKS cluster's name.
             */
            readonly name: string;
            /**
             * The API server's endpoint (`https://...`), with `certificateAuthority`. Default: read from the cluster.
             */
            readonly endpoint?: string;
            /**
             * The cluster's certificate authority data (base64), with `endpoint`. Default: read from the cluster.
             */
            readonly certificateAuthority?: string;
            /**
             * The cluster's OIDC issuer URL (`https://oidc.eks.<region>.<suffix>/id/<id>`, for IAM roles for service
             * accounts). Default: read from the cluster.
             */
            readonly oidcIssuer?: string;
            /**
             * The ARN of the cluster's IAM OIDC provider, which IRSA roles trust (`rack:controller_identity: irsa`).
             * Default: the one `RackCluster` makes, or, for a cluster read by name, the one IAM holds for its issuer.
             */
            readonly oidcProviderArn?: string;
            /**
             * The IAM role of the nodes Karpenter launches, its ARN or name: the Karpenter pools' default node role.
             * Default: `KarpenterNodeRole-<name>`.
             */
            readonly nodeRoleArn?: string;
        }

        /**
         * An EKS cluster the rack creates (pulumi-eks `Cluster`) in a network the user brings.
         */
        export interface ClusterSpec {
            /**
             * The EKS cluster's name.
             */
            readonly name: string;
            /**
             * The VPC.
             */
            readonly vpcId: string;
            /**
             * Subnets for the nodes and the cluster, 2-30, in at least two Availability Zones (Karpenter's pools select them by
             * id).
             */
            readonly privateSubnetIds: string[];
            /**
             * Subnets for public load balancers. Default none.
             */
            readonly publicSubnetIds?: string[];
            /**
             * The Kubernetes version of the control plane. Default 1.34.
             */
            readonly version?: string;
            /**
             * Three system nodes and two Karpenter replicas; one of each without. Default true.
             */
            readonly highAvailability?: boolean;
            /**
             * Who may reach the public API endpoint. Default `0.0.0.0/0`.
             */
            readonly publicAccessCidrs?: string[];
            /**
             * AWS tags for the cluster and what the rack creates with it.
             */
            readonly tags?: {[key: string]: string};
            /**
             * The system lane's instance type. Default `t3.large` (Karpenter requests 1 CPU and 1 GiB per replica).
             */
            readonly systemNodeType?: string;
            /**
             * The system lane's root volume GiB, at least 20. Default 20.
             */
            readonly systemNodeDisk?: number;
            /**
             * Protect the cluster from `pulumi destroy` and replacement. Default true.
             */
            readonly protect?: boolean;
            /**
             * IAM role or user ARNs given cluster admin (an access entry with `AmazonEKSClusterAdminPolicy`,
             * cluster scope), besides the cluster's creator, whose entry EKS makes itself. Default none.
             */
            readonly adminArns?: string[];
        }

        /**
         * The NVIDIA device plugin on every AL2023 GPU lane.
         */
        export interface DevicePluginSpec {
            /**
             * Share each GPU this many ways (time-slicing) when greater than 1. Default 1.
             */
            readonly timeSlicingReplicas?: number;
        }

        /**
         * dcgm-exporter on every AL2023 GPU lane.
         */
        export interface GpuObservabilitySpec {
            /**
             * The dcgm-exporter chart version. Default 4.8.2.
             */
            readonly version?: string;
            /**
             * Create the chart's ServiceMonitor (needs the monitoring.coreos.com CRDs). Default false.
             */
            readonly serviceMonitor?: boolean;
        }

        /**
         * `scale.gpu`: a bare number is the count.
         */
        export interface GpuSpec {
            /**
             * GPUs per replica. Default 0.
             */
            readonly count?: number;
            /**
             * `nvidia` (or `nvidia.com`) or `amd` (or `amd.com`). Default `nvidia`.
             */
            readonly vendor?: string;
        }

        /**
         * `health`: a bare string is the path.
         */
        export interface HealthSpec {
            /**
             * The HTTP path the readiness and liveness probes get. Default `/`.
             */
            readonly path?: string;
            /**
             * Seconds before the first readiness check. Default: `interval`.
             */
            readonly grace?: number;
            /**
             * Seconds between checks. Default 5.
             */
            readonly interval?: number;
            /**
             * Seconds a check may take. Default: `interval` - 1 (at least 1).
             */
            readonly timeout?: number;
        }

        /**
         * Karpenter itself, installed by the rack.
         */
        export interface KarpenterSpec {
            /**
             * The Karpenter release (the `karpenter` and `karpenter-crd` chart version): 1.14.x or 1.15.x, one whose
             * charts and notes were read upstream (`upstream.KARPENTER_RELEASES`). Default 1.14.1, the 1.14 LTS line.
             */
            readonly version?: string;
            /**
             * Controller replicas: 2 (1 without high availability).
             */
            readonly replicas?: number;
        }

        /**
         * A lane: where workloads land, and what fits there.
         */
        export interface Lane {
            /**
             * The labels every node of the lane carries: what a workload's node selector names.
             */
            readonly labels?: {[key: string]: string};
            /**
             * The taints every node of the lane carries: what a workload must tolerate.
             */
            readonly taints?: types.output.LaneTaint[];
            /**
             * Whether the lane offers NVIDIA GPUs (its nodes carry the GPU-vendor label and the GPU taint).
             */
            readonly gpu?: boolean;
            /**
             * The architectures its nodes can have.
             */
            readonly arch?: types.enums.Arch[];
            /**
             * Exactly the instance types it launches (a node group's one type; a pool that names them).
             */
            readonly instanceTypes?: string[];
            /**
             * The instance families a pool may launch (`g6`); none: any.
             */
            readonly instanceFamilies?: string[];
            /**
             * The instance sizes a pool may launch (`2xlarge`); none: any.
             */
            readonly instanceSizes?: string[];
            /**
             * How its instances are bought.
             */
            readonly capacityTypes?: types.enums.CapacityType[];
            /**
             * The EC2 capacity reservations (ODCRs, Capacity Blocks) a reserved pool launches into first, with capacity
             * type `reserved`, or the one a node group's launch template targets; none for a lane without (in the `Rack`'s
             * `lanes` output; not read from the policy config).
             */
            readonly capacityReservationIds?: string[];
            /**
             * How many instances its capacity reservations hold, together (EC2's instance count of each, read at `up`
             * with `DescribeCapacityReservations`): the nodes it has bought ahead, billed whether they run or not; none for
             * a lane without reservations and for a canary, whose lane counts them (in the `Rack`'s `lanes` output; not
             * read from the policy config).
             */
            readonly reservedNodes?: number;
            /**
             * The most GPUs one of its nodes has.
             */
            readonly maxGpusPerNode?: number;
            /**
             * What one node of its largest instance type offers pods.
             */
            readonly allocatable?: types.output.Allocatable;
            /**
             * The largest instance type it can launch (what `allocatable` is of).
             */
            readonly largestInstanceType?: string;
            /**
             * What makes the lane.
             */
            readonly kind?: types.enums.LaneKind;
            /**
             * The nodes' operating system.
             */
            readonly os?: types.enums.NodeOs;
            /**
             * What it boots (in the `Rack`'s `lanes` output; not read from the policy config).
             */
            readonly ami?: types.output.AmiRef;
            /**
             * The most the lane can cost an hour on demand, in US dollars, in the stack's region (docs/cost.md): a pool's
             * limits filled with the dearest types it can launch, a node group's `maxSize` of its type; none when it is
             * unbounded or not priced (in the `Rack`'s `lanes` output; not read from the policy config).
             */
            readonly worstCaseHourlyUsd?: number;
            /**
             * The most the lane can cost an hour while its nodes roll onto a new AMI or version (docs/cost.md): a node
             * group's `maxSize` plus EKS's update surge, a pool's limits plus the drift replacements its disruption budget
             * lets run beside the nodes they replace; none when it is unbounded or not priced (in the `Rack`'s `lanes`
             * output; not read from the policy config).
             */
            readonly worstCaseRolloutHourlyUsd?: number;
            /**
             * The lane whose candidate AMI this canary lane runs (`<lane>-canary`, `canaryAmiId`); none for a lane
             * of its own (in the `Rack`'s `lanes` output; not read from the policy config).
             */
            readonly canaryOf?: string;
        }

        /**
         * A taint every node of a lane carries.
         */
        export interface LaneTaint {
            /**
             * The taint's key (`nvidia.com/gpu`, `dedicated-node`).
             */
            readonly key: string;
            /**
             * The taint's value; none for a taint without one.
             */
            readonly value?: string;
            /**
             * The taint's effect.
             */
            readonly effect: types.enums.TaintEffect;
        }

        /**
         * One EKS managed node group on Amazon Linux 2023.
         */
        export interface NodeGroupSpec {
            /**
             * The one instance type of the group (`g4dn.xlarge`).
             */
            readonly instanceType: string;
            /**
             * How messages name the group before its component exists (the Rack sets it to the component name).
             */
            readonly name?: string;
            /**
             * A build lane: `dedicated=build:NoSchedule` and `convox-build=true`. Default false.
             */
            readonly build?: boolean;
            /**
             * The rack's system lane: `convox.io/system-node=true`, as a label and a NoSchedule taint. Default false.
             */
            readonly system?: boolean;
            /**
             * Root volume GiB, at least 20. Default 20 (in the stack config: `node_disk`).
             */
            readonly disk?: number;
            /**
             * `ON_DEMAND`, `SPOT` or `CAPACITY_BLOCK` (an EC2 Capacity Block for ML, named by
             * `capacityReservationId`). Default `ON_DEMAND`.
             */
            readonly capacityType?: string;
            /**
             * The EC2 capacity reservation the group launches into (`cr-0123456789abcdef0`): a Capacity Block with
             * `capacityType: CAPACITY_BLOCK`, or an On-Demand Capacity Reservation with `ON_DEMAND`. Its launch template
             * targets it; a `CAPACITY_BLOCK` group has `minSize` 0. Not with `amiId` or `canaryAmiId`. Default
             * none.
             */
            readonly capacityReservationId?: string;
            /**
             * Minimum (and initial) size. Default 1 (build lanes in the stack config: 0).
             */
            readonly minSize?: number;
            /**
             * Maximum size. Default 100.
             */
            readonly maxSize?: number;
            /**
             * `convox.io/label` on the nodes; `null` sets none (not with `dedicated`). Default `custom`
             * (build lanes in the stack config: `custom-build`).
             */
            readonly label?: string;
            /**
             * AWS tags for the group (a mapping, or `k=v,k2=v2`); `name` and `rack` are reserved, in any case.
             */
            readonly tags?: {[key: string]: string};
            /**
             * A custom AL2023 AMI to pin instead of EKS's AMI for the instance type.
             */
            readonly amiId?: string;
            /**
             * Taint the nodes `dedicated-node=<label>:NoSchedule`. Default false.
             */
            readonly dedicated?: boolean;
            /**
             * The group's budget: the most `maxSize` nodes may cost an hour on demand, in US dollars (policy
             * `lane-cost-ceiling`). Default: none (`null` is none too).
             */
            readonly maxHourlyUsd?: number;
            /**
             * A candidate AL2023 AMI to try on a fixed-size second group `<name>-canary` with the group's instance type,
             * label and taints. It is checked as `amiId` is. Default none.
             */
            readonly canaryAmiId?: string;
            /**
             * The canary group's size (its minimum, maximum and desired size), 1 or more. Default 1.
             */
            readonly canarySize?: number;
        }

        /**
         * A pool's canary lane (`canaryAmiId`): where the pool's pods try a candidate AMI first.
         */
        export interface PoolCanary {
            /**
             * The canary's NodePool and EC2NodeClass: `<pool>-canary`.
             */
            readonly nodePoolName: string;
            /**
             * The candidate AMI it boots (pinned: `{"id", "name", "created"}`).
             */
            readonly ami: types.output.AmiRef;
            /**
             * The most nodes it launches (`canaryNodes`: the NodePool's `limits.nodes`).
             */
            readonly nodes: number;
        }

        /**
         * One Karpenter pool: an EC2NodeClass and a NodePool, both named `name`.
         */
        export interface PoolSpec {
            /**
             * The EC2NodeClass and NodePool name (`metadata.name`); lowercase, digits and dashes, at most 63.
             */
            readonly name: string;
            /**
             * The node OS. Default `al2023`; `bottlerocket` takes no GPU families and no pinned AMI.
             */
            readonly os?: types.enums.NodeOs;
            /**
             * The AL2023 AMI alias when no `amiId` is pinned: `al2023@latest` or `al2023@vYYYYMMDD`.
             */
            readonly amiAlias?: string;
            /**
             * Instance families the pool may launch (`g5`); default: any.
             */
            readonly instanceFamilies?: string[];
            /**
             * Instance sizes (`xlarge`); default: any.
             */
            readonly instanceSizes?: string[];
            /**
             * Exactly these instance types (`c7i.2xlarge`), not the cross-product of their families and
             * sizes; default: any (as the families and sizes allow).
             */
            readonly instanceTypes?: string[];
            /**
             * `on-demand`, `spot` and/or `reserved` (`reserved` needs `capacityReservationIds`: with
             * `on-demand` too the pool falls back to On-Demand when its reservations are full, alone it launches only
             * into them). Default `on-demand`.
             */
            readonly capacityTypes?: string[];
            /**
             * EC2 capacity reservations the pool launches into (On-Demand Capacity Reservations or Capacity Blocks,
             * `cr-0123456789abcdef0`, at most 30): the EC2NodeClass's `capacityReservationSelectorTerms`, one `id`
             * term each; needs `reserved` in `capacityTypes`. Default none.
             */
            readonly capacityReservationIds?: string[];
            /**
             * `amd64` and/or `arm64`. Default `amd64`.
             */
            readonly arch?: string[];
            /**
             * The pool's CPU limit (cores). Default 100.
             */
            readonly cpuLimit?: number;
            /**
             * The pool's memory limit (GiB). Default 400.
             */
            readonly memoryLimitGb?: number;
            /**
             * The pool's GPU limit (`nvidia.com/gpu`, or `amd.com/gpu` for AMD families), GPU pools only. Default: none.
             */
            readonly gpuLimit?: number;
            /**
             * The pool's budget: the most its worst case may cost an hour on demand, in US dollars (policy
             * `lane-cost-ceiling`). Default: none (`null` is none too).
             */
            readonly maxHourlyUsd?: number;
            /**
             * Karpenter's consolidation policy. Default `WhenEmptyOrUnderutilized`.
             */
            readonly consolidationPolicy?: types.enums.ConsolidationPolicy;
            /**
             * How long a node stays before consolidation: `30s`, `5m`, `1h30m` or `Never`. Default `30s`.
             */
            readonly consolidateAfter?: string;
            /**
             * Node lifetime (`expireAfter`): a duration like `720h` or `1h30m`, or `Never`. Default `720h`.
             */
            readonly nodeExpiry?: string;
            /**
             * Nodes disrupted at once: a percentage (`10%`) or a count. Default `10%`.
             */
            readonly disruptionBudgetNodes?: string;
            /**
             * Root volume GiB (Bottlerocket: the data volume). Default 20.
             */
            readonly disk?: number;
            /**
             * EBS volume type: gp2, gp3, io1 or io2. Default `gp3`.
             */
            readonly volumeType?: string;
            /**
             * Provisioned IOPS: gp3 3000-80000 (at most 500 per GiB), io1 100-64000 (50 per GiB), io2
             * 100-256000 (1000 per GiB); required for io1 and io2, refused for gp2. Default: gp3's 3000.
             */
            readonly volumeIops?: number;
            /**
             * Throughput MiB/s, gp3 only: 125-2000, at most 0.25 per IOPS. Default: gp3's 125.
             */
            readonly volumeThroughput?: number;
            /**
             * A custom AL2023 AMI to pin instead of the alias.
             */
            readonly amiId?: string;
            /**
             * The NodePool's weight (preference among pools), 1-100. Default: none.
             */
            readonly weight?: number;
            /**
             * Extra node labels; `convox.io/nodepool`, `convox.io/label`, `convox.io/gpu-vendor` and
             * `convox.io/system-node` are the rack's own.
             */
            readonly labels?: {[key: string]: string};
            /**
             * Extra node taints.
             */
            readonly taints?: types.output.Taint[];
            /**
             * Taint the nodes `dedicated-node=<name>:NoSchedule`. Default false.
             */
            readonly dedicated?: boolean;
            /**
             * A candidate AL2023 AMI to try beside the pool: an EC2NodeClass and NodePool `<name>-canary` with the
             * pool's labels, taints, requirements and disk, a higher weight, and limits for `canaryNodes` nodes. It is
             * checked as `amiId` is. Default none.
             */
            readonly canaryAmiId?: string;
            /**
             * How many of the pool's largest nodes the canary holds, 1 or more: its NodePool's cpu, memory and GPU limits
             * are that many times the largest type's (what Karpenter counts within a scheduling pass), and its `limits.nodes`
             * is that number (counted between passes only). Default 1.
             */
            readonly canaryNodes?: number;
        }

        /**
         * A whole rack: its pools (the default `workload` lane first), node groups and GPU add-ons.
         */
        export interface RackSpec {
            /**
             * The EKS cluster.
             */
            readonly clusterName: string;
            /**
             * AWS tags for everything the rack creates in AWS: the cluster, Karpenter's resources, every node
             * group (under its own tags) and the instances and volumes Karpenter launches. Default none.
             */
            readonly tags?: {[key: string]: string};
            /**
             * Install the EKS Pod Identity agent add-on (Karpenter's controller authenticates through it).
             */
            readonly podIdentityAgent?: boolean;
            /**
             * How Karpenter and the Cluster Autoscaler get AWS credentials: EKS Pod Identity, or IAM roles for
             * service accounts (the cluster's IAM OIDC provider: made with the cluster the rack creates, looked up for
             * an existing one).
             */
            readonly controllerIdentity?: types.enums.Identity;
            /**
             * Install the Cluster Autoscaler for the managed node groups (it needs the Pod Identity agent).
             */
            readonly clusterAutoscaler?: boolean;
            /**
             * Install metrics-server (HorizontalPodAutoscalers read CPU use from it).
             */
            readonly metricsServer?: boolean;
            /**
             * The IAM role (name) of Karpenter's nodes. Default `KarpenterNodeRole-<clusterName>`.
             */
            readonly karpenterNodeRole?: string;
            /**
             * Karpenter pools, the default lane first; names are unique.
             */
            readonly pools: types.output.PoolSpec[];
            /**
             * Managed node groups and build lanes; each has its `name` (the component name), unique.
             */
            readonly nodeGroups?: types.output.NodeGroupSpec[];
            /**
             * An existing IAM role (name) shared by every node group. Default: each group gets its own.
             */
            readonly nodeGroupRole?: string;
            /**
             * The NVIDIA device plugin, when enabled.
             */
            readonly devicePlugin?: types.output.DevicePluginSpec;
            /**
             * dcgm-exporter, when enabled (needs the device plugin).
             */
            readonly gpuObservability?: types.output.GpuObservabilitySpec;
            /**
             * The EKS cluster to create; none: an existing cluster named `clusterName`.
             */
            readonly cluster?: types.output.ClusterSpec;
            /**
             * Karpenter to install; none: the cluster already runs Karpenter v1.
             */
            readonly karpenter?: types.output.KarpenterSpec;
            /**
             * Spread the rack's own control parts: three system nodes, two Karpenter replicas.
             */
            readonly highAvailability?: boolean;
            /**
             * The rack's budget: the most the worst cases of all its lanes together may cost an hour on demand, in
             * US dollars (policy `lane-cost-ceiling`). Default: none.
             */
            readonly maxHourlyUsd?: number;
        }

        /**
         * `scale`: a bare number or range is the count.
         */
        export interface ScaleSpec {
            /**
             * Replicas: `2`, a range `2-6` (a HorizontalPodAutoscaler on CPU between them), or `[2, 6]`; held as
             * (minimum, maximum). Default 1.
             */
            readonly count?: number[];
            /**
             * CPU request, millicores. Default 250 (none for a GPU service).
             */
            readonly cpu?: number;
            /**
             * Memory request and limit, MiB. Default 512 (none for a GPU service).
             */
            readonly memory?: number;
            /**
             * GPUs per replica, as request and limit: `1`, or `{count: 1, vendor: nvidia}`.
             */
            readonly gpu?: types.output.GpuSpec;
            /**
             * The autoscaler's targets: `{cpu: 80}`.
             */
            readonly targets?: types.output.TargetsSpec;
        }

        /**
         * What placement gives a workload's pods, in Kubernetes' own field names.
         */
        export interface Scheduling {
            /**
             * The pod's `affinity`: a required node affinity on the lane's labels.
             */
            readonly affinity?: {[key: string]: any};
            /**
             * The pod's `tolerations`: the lane's `dedicated-node` taint, the GPU taint.
             */
            readonly tolerations?: {[key: string]: string}[];
            /**
             * What each container requests, and limits, beyond CPU and memory (`nvidia.com/gpu: "1"`).
             */
            readonly gpuResources?: {[key: string]: string};
        }

        /**
         * `securityContext`: on top of the restrictive defaults every container gets.
         */
        export interface SecurityContextSpec {
            /**
             * Refuse to start an image whose user is root. Default false.
             */
            readonly runAsNonRoot?: boolean;
            /**
             * Mount the image read-only (`/tmp` stays writable, an emptyDir). Default false.
             */
            readonly readOnlyRootFilesystem?: boolean;
        }

        /**
         * One service: a Deployment and a Service named `name`, placed on the lane it selects.
         */
        export interface ServiceSpec {
            /**
             * The Deployment's and the Service's name: a DNS-1035 label (`web`).
             */
            readonly name: string;
            /**
             * The container image (`nginx:1.27`, `123456789012.dkr.ecr.us-east-1.amazonaws.com/app:1`).
             */
            readonly image: string;
            /**
             * The port the container listens on; the Service exposes it. 1-65535.
             */
            readonly port: number;
            /**
             * Readiness and liveness on an HTTP path: `/health`, or `{path, grace, interval, timeout}`.
             */
            readonly health?: types.output.HealthSpec;
            /**
             * Environment variables: `[KEY=value]` or a mapping.
             */
            readonly environment?: {[key: string]: string};
            /**
             * `count`, `cpu` (millicores), `memory` (MiB), `gpu`, `targets`; a bare number is the count.
             */
            readonly scale?: types.output.ScaleSpec;
            /**
             * Labels the nodes must carry: `convox.io/label: gpu-inference` or `convox.io/nodepool: gpu`
             * (and the lane's `dedicated-node` taint is then tolerated).
             */
            readonly nodeSelectorLabels?: {[key: string]: string};
            /**
             * Reachable inside the cluster only (a ClusterIP Service); otherwise a LoadBalancer. Default false.
             */
            readonly internal?: boolean;
            /**
             * `runAsNonRoot`, `readOnlyRootFilesystem`.
             */
            readonly securityContext?: types.output.SecurityContextSpec;
        }

        /**
         * A Kubernetes taint, as a NodePool writes it.
         */
        export interface Taint {
            /**
             * The taint's key (`team`, `example.com/dedicated`).
             */
            readonly key: string;
            /**
             * Its value; none for a taint without one.
             */
            readonly value?: string;
            /**
             * `NoSchedule`, `PreferNoSchedule` or `NoExecute`.
             */
            readonly effect: string;
        }

        /**
         * `scale.targets`: what the autoscaler aims for.
         */
        export interface TargetsSpec {
            /**
             * Average CPU use, percent of the request: 1-1000. Default 80. Above 100 is valid: use is measured
             * against the request, and a pod without a CPU limit (or with a higher one) may use more.
             */
            readonly cpu?: number;
        }
    }
}

/**
 * A rack: its cluster (created or existing), Karpenter (when installed), the default workload pool,
 * every additional Karpenter pool, the managed node groups and the GPU tier.
 */
export class Rack extends pulumi.ComponentResource {
    /** @internal */
    public static readonly __pulumiType = "rack:index:Rack";

    /** Whether `obj` is an instance of Rack: true even when another copy of this SDK made it. */
    public static isInstance(obj: any): obj is Rack {
        if (obj === undefined || obj === null) {
            return false;
        }
        return obj["__pulumiType"] === Rack.__pulumiType;
    }

    /**
     * The EKS cluster's name.
     */
    public readonly clusterName!: pulumi.Output<string>;
    /**
     * The cluster's API server endpoint.
     */
    public readonly endpoint!: pulumi.Output<string>;
    /**
     * A kubeconfig for the cluster (`aws eks get-token`, the stack's region and profile), as a secret.
     */
    public readonly kubeconfig!: pulumi.Output<string>;
    /**
     * The role of the nodes Karpenter launches.
     */
    public readonly nodeRoleArn!: pulumi.Output<string>;
    /**
     * The SQS queue of Karpenter's interruption events (none when the rack does not install Karpenter).
     */
    public readonly interruptionQueueName!: pulumi.Output<string | undefined>;
    /**
     * The Karpenter pools' names, sorted.
     */
    public readonly nodePoolNames!: pulumi.Output<string[]>;
    /**
     * The managed node groups' names, sorted.
     */
    public readonly nodeGroupNames!: pulumi.Output<string[]>;
    /**
     * Lane name -> `kind` (nodepool or nodegroup), `os`, `labels`, `taints`, `gpu`, what sizes its
     * nodes (`arch`, `instanceFamilies`/`instanceSizes` or `instanceTypes`, `capacityTypes`,
     * `maxGpusPerNode`, the `allocatable` of its `largestInstanceType`), `ami` (an alias or AMI type
     * that follows releases, or a pinned id with its creation date) and `worstCaseHourlyUsd` (the most it can
     * cost an hour on demand, in the stack's region: docs/cost.md): where each workload lands and fits,
     * which lanes stopped receiving AMI updates, and what each can spend. A canary lane (`<lane>-canary`)
     * also has `canaryOf`; a reserved lane `capacityReservationIds` and `reservedNodes` (the instances its
     * reservations hold, read from EC2).
     */
    public readonly lanes!: pulumi.Output<{[key: string]: types.output.Lane}>;
    /**
     * The sum of the lanes' `worstCaseHourlyUsd` and the EKS control plane's `controlPlaneHourlyUsd`
     * (docs/cost.md); none when a lane is unbounded or not priced.
     */
    public readonly worstCaseHourlyUsd!: pulumi.Output<number | undefined>;
    /**
     * The cluster's EKS control plane an hour: $0.10 in standard support, $0.60 in extended support (or when its
     * version's support is not known or has ended); `controlPlanePrice` says which.
     */
    public readonly controlPlaneHourlyUsd!: pulumi.Output<number>;
    /**
     * Which price `controlPlaneHourlyUsd` is: `EKS standard support`, `EKS extended support`, ...
     */
    public readonly controlPlanePrice!: pulumi.Output<string>;
    /**
     * The rack's budget in US dollars per hour (`spec.maxHourlyUsd`), held by the policy lane-cost-ceiling;
     * unset when the rack has none.
     */
    public readonly maxHourlyUsd!: pulumi.Output<number | undefined>;

    /**
     * Create a Rack component.
     */
    constructor(name: string, args: RackArgs, opts?: pulumi.ComponentResourceOptions) {
        let resourceInputs: pulumi.Inputs = {};
        opts = opts || {};
        if (args?.spec === undefined && !opts.urn) {
            throw new Error("Missing required property 'spec'");
        }
        resourceInputs["spec"] = args?.spec;
        resourceInputs["cluster"] = args?.cluster;
        resourceInputs["clusterName"] = undefined /*out*/;
        resourceInputs["endpoint"] = undefined /*out*/;
        resourceInputs["kubeconfig"] = undefined /*out*/;
        resourceInputs["nodeRoleArn"] = undefined /*out*/;
        resourceInputs["interruptionQueueName"] = undefined /*out*/;
        resourceInputs["nodePoolNames"] = undefined /*out*/;
        resourceInputs["nodeGroupNames"] = undefined /*out*/;
        resourceInputs["lanes"] = undefined /*out*/;
        resourceInputs["worstCaseHourlyUsd"] = undefined /*out*/;
        resourceInputs["controlPlaneHourlyUsd"] = undefined /*out*/;
        resourceInputs["controlPlanePrice"] = undefined /*out*/;
        resourceInputs["maxHourlyUsd"] = undefined /*out*/;
        opts = pulumi.mergeOptions({ version: "0.1.0" }, opts);
        super(Rack.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/**
 * The set of arguments for constructing a Rack component.
 */
export interface RackArgs {
    /**
     * The rack: its cluster, Karpenter, pools, node groups and GPU add-ons.
     */
    spec: types.input.RackSpecArgs;
    /**
     * The cluster, when the program has one already. Default: the one `spec.cluster` creates, or else the
     * existing EKS cluster `spec.clusterName`, read by name (nothing created).
     */
    cluster?: types.input.ClusterRefArgs;
}

/**
 * An EKS cluster with access entries, secrets encryption, the Pod Identity agent and a system lane.
 */
export class RackCluster extends pulumi.ComponentResource {
    /** @internal */
    public static readonly __pulumiType = "rack:index:RackCluster";

    /** Whether `obj` is an instance of RackCluster: true even when another copy of this SDK made it. */
    public static isInstance(obj: any): obj is RackCluster {
        if (obj === undefined || obj === null) {
            return false;
        }
        return obj["__pulumiType"] === RackCluster.__pulumiType;
    }

    /**
     * The EKS cluster's name.
     */
    public readonly clusterName!: pulumi.Output<string>;
    /**
     * The API server's endpoint.
     */
    public readonly endpoint!: pulumi.Output<string>;
    /**
     * The cluster's certificate authority data (base64): with `endpoint`, what reaches the cluster (pass
     * both, with `clusterName` as `name`, as another component's `cluster`).
     */
    public readonly certificateAuthority!: pulumi.Output<string>;
    /**
     * The cluster's OIDC issuer URL.
     */
    public readonly oidcIssuer!: pulumi.Output<string>;
    /**
     * The EKS-managed cluster security group (the rack's Karpenter pools select it by id).
     */
    public readonly securityGroupId!: pulumi.Output<string>;
    /**
     * The KMS key that encrypts the cluster's Kubernetes secrets.
     */
    public readonly kmsKeyArn!: pulumi.Output<string>;
    /**
     * The IAM principals given cluster admin (`spec.adminArns`).
     */
    public readonly adminArns!: pulumi.Output<string[]>;
    /**
     * The system lane's `aws.eks.NodeGroup` name.
     */
    public readonly systemLaneName!: pulumi.Output<string>;
    /**
     * The ARN of the cluster's IAM OIDC provider, which IRSA roles trust (when `oidcProvider` is set).
     */
    public readonly oidcProviderArn!: pulumi.Output<string | undefined>;

    /**
     * Create a RackCluster component.
     */
    constructor(name: string, args: RackClusterArgs, opts?: pulumi.ComponentResourceOptions) {
        let resourceInputs: pulumi.Inputs = {};
        opts = opts || {};
        if (args?.spec === undefined && !opts.urn) {
            throw new Error("Missing required property 'spec'");
        }
        resourceInputs["spec"] = args?.spec;
        resourceInputs["podIdentityAgent"] = args?.podIdentityAgent;
        resourceInputs["oidcProvider"] = args?.oidcProvider;
        resourceInputs["clusterName"] = undefined /*out*/;
        resourceInputs["endpoint"] = undefined /*out*/;
        resourceInputs["certificateAuthority"] = undefined /*out*/;
        resourceInputs["oidcIssuer"] = undefined /*out*/;
        resourceInputs["securityGroupId"] = undefined /*out*/;
        resourceInputs["kmsKeyArn"] = undefined /*out*/;
        resourceInputs["adminArns"] = undefined /*out*/;
        resourceInputs["systemLaneName"] = undefined /*out*/;
        resourceInputs["oidcProviderArn"] = undefined /*out*/;
        opts = pulumi.mergeOptions({ version: "0.1.0" }, opts);
        super(RackCluster.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/**
 * The set of arguments for constructing a RackCluster component.
 */
export interface RackClusterArgs {
    /**
     * The cluster to create.
     */
    spec: types.input.ClusterSpecArgs;
    /**
     * Install the EKS Pod Identity agent add-on. Default true.
     */
    podIdentityAgent?: boolean;
    /**
     * Create the cluster's IAM OIDC provider, which IAM roles for service accounts (IRSA) trust. Default false.
     */
    oidcProvider?: boolean;
}

/**
 * Karpenter (1.14.x or 1.15.x; default 1.14.1): its IAM, its interruption queue and rules, and its two charts.
 */
export class KarpenterController extends pulumi.ComponentResource {
    /** @internal */
    public static readonly __pulumiType = "rack:index:KarpenterController";

    /** Whether `obj` is an instance of KarpenterController: true even when another copy of this SDK made it. */
    public static isInstance(obj: any): obj is KarpenterController {
        if (obj === undefined || obj === null) {
            return false;
        }
        return obj["__pulumiType"] === KarpenterController.__pulumiType;
    }

    /**
     * The ARN of the role of the nodes Karpenter launches (`KarpenterNodeRole-<cluster>`).
     */
    public readonly nodeRoleArn!: pulumi.Output<string>;
    /**
     * The ARN of the role the controller's pods assume through EKS Pod Identity.
     */
    public readonly controllerRoleArn!: pulumi.Output<string>;
    /**
     * The SQS queue that carries interruption events to the controller.
     */
    public readonly interruptionQueueName!: pulumi.Output<string>;
    /**
     * The controller's policy documents (JSON) by part, as attached.
     */
    public readonly policies!: pulumi.Output<{[key: string]: string}>;
    /**
     * How the controller gets AWS credentials: `pod_identity` or `irsa`.
     */
    public readonly identity!: pulumi.Output<types.enums.Identity>;

    /**
     * Create a KarpenterController component.
     */
    constructor(name: string, args: KarpenterControllerArgs, opts?: pulumi.ComponentResourceOptions) {
        let resourceInputs: pulumi.Inputs = {};
        opts = opts || {};
        if (args?.cluster === undefined && !opts.urn) {
            throw new Error("Missing required property 'cluster'");
        }
        resourceInputs["cluster"] = args?.cluster;
        resourceInputs["nodeRoleName"] = args?.nodeRoleName;
        resourceInputs["version"] = args?.version;
        resourceInputs["replicas"] = args?.replicas;
        resourceInputs["namespace"] = args?.namespace;
        resourceInputs["nodeSelector"] = args?.nodeSelector;
        resourceInputs["tolerations"] = args?.tolerations;
        resourceInputs["tags"] = args?.tags;
        resourceInputs["identity"] = args?.identity;
        resourceInputs["nodeRoleArn"] = undefined /*out*/;
        resourceInputs["controllerRoleArn"] = undefined /*out*/;
        resourceInputs["interruptionQueueName"] = undefined /*out*/;
        resourceInputs["policies"] = undefined /*out*/;
        opts = pulumi.mergeOptions({ version: "0.1.0" }, opts);
        super(KarpenterController.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/**
 * The set of arguments for constructing a KarpenterController component.
 */
export interface KarpenterControllerArgs {
    /**
     * The cluster (it must use access entries: API or API_AND_CONFIG_MAP authentication).
     */
    cluster: types.input.ClusterRefArgs;
    /**
     * The node role to create. Default `KarpenterNodeRole-<cluster>`.
     */
    nodeRoleName?: string;
    /**
     * The Karpenter release (the `karpenter` and `karpenter-crd` chart version): 1.14.x or 1.15.x, one whose
     * charts and notes were read upstream (`upstream.KARPENTER_RELEASES`). Default 1.14.1.
     */
    version?: string;
    /**
     * Controller replicas, one node each. Default 2.
     */
    replicas?: number;
    /**
     * Where the controller runs. Default `kube-system`.
     */
    namespace?: string;
    /**
     * Labels of the nodes the controller runs on (e.g. the rack's system lane). Default: any Linux node Karpenter does
     * not manage.
     */
    nodeSelector?: {[key: string]: string};
    /**
     * Taints of those nodes the controller tolerates (besides `CriticalAddonsOnly`). Default none.
     */
    tolerations?: {[key: string]: string}[];
    /**
     * AWS tags for the roles, policies, queue and rules. Default none.
     */
    tags?: {[key: string]: string};
    /**
     * How the controller gets AWS credentials: `pod_identity` (an EKS Pod Identity association; needs the
     * eks-pod-identity-agent add-on) or `irsa` (a role trusting the cluster's IAM OIDC provider for
     * `<namespace>/karpenter` only). Default `pod_identity`.
     */
    identity?: types.enums.Identity;
}

/**
 * A Karpenter pool: an EC2NodeClass and a NodePool, both named after the pool.
 */
export class KarpenterPool extends pulumi.ComponentResource {
    /** @internal */
    public static readonly __pulumiType = "rack:index:KarpenterPool";

    /** Whether `obj` is an instance of KarpenterPool: true even when another copy of this SDK made it. */
    public static isInstance(obj: any): obj is KarpenterPool {
        if (obj === undefined || obj === null) {
            return false;
        }
        return obj["__pulumiType"] === KarpenterPool.__pulumiType;
    }

    /**
     * The EC2NodeClass's `metadata.name`.
     */
    public readonly nodeClassName!: pulumi.Output<string>;
    /**
     * The NodePool's `metadata.name`: what `convox.io/nodepool` selects.
     */
    public readonly nodePoolName!: pulumi.Output<string>;
    /**
     * The labels every node of the pool carries.
     */
    public readonly labels!: pulumi.Output<{[key: string]: string}>;
    /**
     * The taints every node of the pool carries (`key`, `value`, `effect`).
     */
    public readonly taints!: pulumi.Output<types.output.LaneTaint[]>;
    /**
     * What the pool boots: `{"alias": ...}`, or a pinned `{"id", "name", "created"}` (which gets no updates).
     */
    public readonly ami!: pulumi.Output<types.output.AmiRef>;
    /**
     * The pool's budget in US dollars per hour (`pool.maxHourlyUsd`), held by the policy lane-cost-ceiling;
     * unset when the pool has none.
     */
    public readonly maxHourlyUsd!: pulumi.Output<number | undefined>;
    /**
     * The canary lane (`canaryAmiId`): its NodePool's name, the candidate AMI it boots and its node limit;
     * unset without one.
     */
    public readonly canary!: pulumi.Output<types.output.PoolCanary | undefined>;

    /**
     * Create a KarpenterPool component.
     */
    constructor(name: string, args: KarpenterPoolArgs, opts?: pulumi.ComponentResourceOptions) {
        let resourceInputs: pulumi.Inputs = {};
        opts = opts || {};
        if (args?.cluster === undefined && !opts.urn) {
            throw new Error("Missing required property 'cluster'");
        }
        if (args?.pool === undefined && !opts.urn) {
            throw new Error("Missing required property 'pool'");
        }
        resourceInputs["pool"] = args?.pool;
        resourceInputs["cluster"] = args?.cluster;
        resourceInputs["subnetIds"] = args?.subnetIds;
        resourceInputs["securityGroupIds"] = args?.securityGroupIds;
        resourceInputs["nodeRole"] = args?.nodeRole;
        resourceInputs["tags"] = args?.tags;
        resourceInputs["nodeClassName"] = undefined /*out*/;
        resourceInputs["nodePoolName"] = undefined /*out*/;
        resourceInputs["labels"] = undefined /*out*/;
        resourceInputs["taints"] = undefined /*out*/;
        resourceInputs["ami"] = undefined /*out*/;
        resourceInputs["maxHourlyUsd"] = undefined /*out*/;
        resourceInputs["canary"] = undefined /*out*/;
        opts = pulumi.mergeOptions({ version: "0.1.0" }, opts);
        super(KarpenterPool.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/**
 * The set of arguments for constructing a KarpenterPool component.
 */
export interface KarpenterPoolArgs {
    /**
     * The pool: its name names the EC2NodeClass and the NodePool.
     */
    pool: types.input.PoolSpecArgs;
    /**
     * The cluster: its name finds subnets and security groups (`karpenter.sh/discovery`) unless
     * `subnetIds`/`securityGroupIds` are given; its Kubernetes provider applies the objects.
     */
    cluster: types.input.ClusterRefArgs;
    /**
     * The nodes' subnets, selected by id (1-30). Default: the subnets tagged `karpenter.sh/discovery: <cluster>`.
     */
    subnetIds?: pulumi.Input<pulumi.Input<string>[]>;
    /**
     * The nodes' security groups, selected by id (1-30). Default: the one tagged `karpenter.sh/discovery: <cluster>`.
     *
     */
    securityGroupIds?: pulumi.Input<pulumi.Input<string>[]>;
    /**
     * The nodes' IAM role: its name or its ARN. Default: the cluster's
     * `nodeRoleArn`, else the role named `KarpenterNodeRole-<cluster name>`.
     */
    nodeRole?: pulumi.Input<string>;
    /**
     * AWS tags for the instances and volumes Karpenter launches for the pool. Default none.
     */
    tags?: {[key: string]: string};
}

/**
 * An EKS managed node group on AL2023: GPU, Neuron, Graviton or x86, optionally on a pinned AMI.
 */
export class NodeGroup extends pulumi.ComponentResource {
    /** @internal */
    public static readonly __pulumiType = "rack:index:NodeGroup";

    /** Whether `obj` is an instance of NodeGroup: true even when another copy of this SDK made it. */
    public static isInstance(obj: any): obj is NodeGroup {
        if (obj === undefined || obj === null) {
            return false;
        }
        return obj["__pulumiType"] === NodeGroup.__pulumiType;
    }

    /**
     * The `aws.eks.NodeGroup`'s name.
     */
    public readonly nodeGroupName!: pulumi.Output<string>;
    /**
     * The `aws.eks.NodeGroup`'s ARN.
     */
    public readonly nodeGroupArn!: pulumi.Output<string>;
    /**
     * The nodes' IAM role ARN.
     */
    public readonly roleArn!: pulumi.Output<string>;
    /**
     * The labels every node of the group carries.
     */
    public readonly labels!: pulumi.Output<{[key: string]: string}>;
    /**
     * The taints every node of the group carries, in Kubernetes' spelling (`NoSchedule`), as pods tolerate them
     * (the `aws.eks.NodeGroup` itself takes the EKS API's `NO_SCHEDULE`).
     */
    public readonly taints!: pulumi.Output<types.output.LaneTaint[]>;
    /**
     * What the group boots: `{"amiType": ...}` (EKS's AMI, updated by EKS releases), or a pinned
     * `{"id", "name", "created"}`.
     */
    public readonly ami!: pulumi.Output<types.output.AmiRef>;
    /**
     * The group's budget in US dollars per hour (`group.maxHourlyUsd`), held by the policy lane-cost-ceiling;
     * unset when the group has none.
     */
    public readonly maxHourlyUsd!: pulumi.Output<number | undefined>;

    /**
     * Create a NodeGroup component.
     */
    constructor(name: string, args: NodeGroupArgs, opts?: pulumi.ComponentResourceOptions) {
        let resourceInputs: pulumi.Inputs = {};
        opts = opts || {};
        if (args?.cluster === undefined && !opts.urn) {
            throw new Error("Missing required property 'cluster'");
        }
        if (args?.group === undefined && !opts.urn) {
            throw new Error("Missing required property 'group'");
        }
        resourceInputs["group"] = args?.group;
        resourceInputs["cluster"] = args?.cluster;
        resourceInputs["nodeRole"] = args?.nodeRole;
        resourceInputs["rack"] = args?.rack;
        resourceInputs["subnetIds"] = args?.subnetIds;
        resourceInputs["nodeGroupName"] = undefined /*out*/;
        resourceInputs["nodeGroupArn"] = undefined /*out*/;
        resourceInputs["roleArn"] = undefined /*out*/;
        resourceInputs["labels"] = undefined /*out*/;
        resourceInputs["taints"] = undefined /*out*/;
        resourceInputs["ami"] = undefined /*out*/;
        resourceInputs["maxHourlyUsd"] = undefined /*out*/;
        opts = pulumi.mergeOptions({ version: "0.1.0" }, opts);
        super(NodeGroup.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/**
 * The set of arguments for constructing a NodeGroup component.
 */
export interface NodeGroupArgs {
    /**
     * The group; `build` true makes it a build lane.
     */
    group: types.input.NodeGroupSpecArgs;
    /**
     * The cluster the group joins.
     */
    cluster: types.input.ClusterRefArgs;
    /**
     * The nodes' IAM role ARN (`arn:<partition>:iam::<account>:role/...`).
     * Default: a role of the group's own with the three EKS worker policies.
     */
    nodeRole?: pulumi.Input<string>;
    /**
     * The rack's name, written as the `rack` tag. Default: the component's name.
     */
    rack?: string;
    /**
     * Subnets for the nodes. Default: the cluster's.
     */
    subnetIds?: pulumi.Input<pulumi.Input<string>[]>;
}

/**
 * The Kubernetes Cluster Autoscaler for a cluster's managed node groups, with its IAM and Pod Identity.
 *
 * One per cluster: a second one in the same program for the same `ClusterRef` is refused (two
 * autoscalers would fight over the same groups' desired sizes, and their charts' objects collide).
 */
export class ClusterAutoscaler extends pulumi.ComponentResource {
    /** @internal */
    public static readonly __pulumiType = "rack:index:ClusterAutoscaler";

    /** Whether `obj` is an instance of ClusterAutoscaler: true even when another copy of this SDK made it. */
    public static isInstance(obj: any): obj is ClusterAutoscaler {
        if (obj === undefined || obj === null) {
            return false;
        }
        return obj["__pulumiType"] === ClusterAutoscaler.__pulumiType;
    }

    /**
     * The ARN of the role its pods assume (through EKS Pod Identity, or IRSA).
     */
    public readonly roleArn!: pulumi.Output<string>;
    /**
     * How it gets AWS credentials: `pod_identity` or `irsa`.
     */
    public readonly identity!: pulumi.Output<types.enums.Identity>;
    /**
     * The autoscaler's IAM policy document (JSON), as attached.
     */
    public readonly policy!: pulumi.Output<string>;
    /**
     * The Cluster Autoscaler release it runs: the one of the cluster's Kubernetes minor.
     */
    public readonly imageTag!: pulumi.Output<string>;

    /**
     * Create a ClusterAutoscaler component.
     */
    constructor(name: string, args: ClusterAutoscalerArgs, opts?: pulumi.ComponentResourceOptions) {
        let resourceInputs: pulumi.Inputs = {};
        opts = opts || {};
        if (args?.cluster === undefined && !opts.urn) {
            throw new Error("Missing required property 'cluster'");
        }
        resourceInputs["cluster"] = args?.cluster;
        resourceInputs["kubernetesVersion"] = args?.kubernetesVersion;
        resourceInputs["namespace"] = args?.namespace;
        resourceInputs["nodeSelector"] = args?.nodeSelector;
        resourceInputs["tolerations"] = args?.tolerations;
        resourceInputs["tags"] = args?.tags;
        resourceInputs["identity"] = args?.identity;
        resourceInputs["roleArn"] = undefined /*out*/;
        resourceInputs["policy"] = undefined /*out*/;
        resourceInputs["imageTag"] = undefined /*out*/;
        opts = pulumi.mergeOptions({ version: "0.1.0" }, opts);
        super(ClusterAutoscaler.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/**
 * The set of arguments for constructing a ClusterAutoscaler component.
 */
export interface ClusterAutoscalerArgs {
    /**
     * The cluster whose managed node groups it scales (each between its `minSize` and `maxSize`).
     */
    cluster: types.input.ClusterRefArgs;
    /**
     * The cluster's Kubernetes minor (`1.34`): the autoscaler release follows it. Default: the cluster's
     * version (known at preview for a cluster the program creates with a `version`; else read).
     */
    kubernetesVersion?: string;
    /**
     * Where it runs. Default `kube-system`.
     */
    namespace?: string;
    /**
     * Labels of the nodes it runs on (e.g. the rack's system lane). Default none.
     */
    nodeSelector?: {[key: string]: string};
    /**
     * Taints of those nodes it tolerates. Default none.
     */
    tolerations?: {[key: string]: string}[];
    /**
     * AWS tags for its role, policy and Pod Identity association. Default none.
     */
    tags?: {[key: string]: string};
    /**
     * How it gets AWS credentials: `pod_identity` (an EKS Pod Identity association) or `irsa` (a role
     * trusting the cluster's IAM OIDC provider for `<namespace>/cluster-autoscaler` only). Default `pod_identity`.
     */
    identity?: types.enums.Identity;
}

/**
 * metrics-server, which serves the resource metrics API HorizontalPodAutoscalers read.
 */
export class MetricsServer extends pulumi.ComponentResource {
    /** @internal */
    public static readonly __pulumiType = "rack:index:MetricsServer";

    /** Whether `obj` is an instance of MetricsServer: true even when another copy of this SDK made it. */
    public static isInstance(obj: any): obj is MetricsServer {
        if (obj === undefined || obj === null) {
            return false;
        }
        return obj["__pulumiType"] === MetricsServer.__pulumiType;
    }

    /**
     * The metrics-server chart version it installs.
     */
    public readonly chartVersion!: pulumi.Output<string>;

    /**
     * Create a MetricsServer component.
     */
    constructor(name: string, args: MetricsServerArgs, opts?: pulumi.ComponentResourceOptions) {
        let resourceInputs: pulumi.Inputs = {};
        opts = opts || {};
        if (args?.cluster === undefined && !opts.urn) {
            throw new Error("Missing required property 'cluster'");
        }
        resourceInputs["cluster"] = args?.cluster;
        resourceInputs["replicas"] = args?.replicas;
        resourceInputs["namespace"] = args?.namespace;
        resourceInputs["nodeSelector"] = args?.nodeSelector;
        resourceInputs["tolerations"] = args?.tolerations;
        resourceInputs["chartVersion"] = undefined /*out*/;
        opts = pulumi.mergeOptions({ version: "0.1.0" }, opts);
        super(MetricsServer.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/**
 * The set of arguments for constructing a MetricsServer component.
 */
export interface MetricsServerArgs {
    /**
     * The cluster.
     */
    cluster: types.input.ClusterRefArgs;
    /**
     * Replicas, 1-2 (the metrics API is unavailable while none runs). Default 1.
     */
    replicas?: number;
    /**
     * Where it runs. Default `kube-system`.
     */
    namespace?: string;
    /**
     * Labels of the nodes it runs on. Default none.
     */
    nodeSelector?: {[key: string]: string};
    /**
     * Taints of those nodes it tolerates. Default none.
     */
    tolerations?: {[key: string]: string}[];
}

/**
 * The NVIDIA device plugin DaemonSet, on every AL2023 GPU lane and nowhere else.
 */
export class NvidiaDevicePlugin extends pulumi.ComponentResource {
    /** @internal */
    public static readonly __pulumiType = "rack:index:NvidiaDevicePlugin";

    /** Whether `obj` is an instance of NvidiaDevicePlugin: true even when another copy of this SDK made it. */
    public static isInstance(obj: any): obj is NvidiaDevicePlugin {
        if (obj === undefined || obj === null) {
            return false;
        }
        return obj["__pulumiType"] === NvidiaDevicePlugin.__pulumiType;
    }

    /**
     * The Helm release name (the chart's objects are named after it).
     */
    public readonly releaseName!: pulumi.Output<string>;
    /**
     * The namespace the chart's objects are in.
     */
    public readonly namespace!: pulumi.Output<string>;
    /**
     * The chart version installed.
     */
    public readonly chartVersion!: pulumi.Output<string>;

    /**
     * Create a NvidiaDevicePlugin component.
     */
    constructor(name: string, args: NvidiaDevicePluginArgs, opts?: pulumi.ComponentResourceOptions) {
        let resourceInputs: pulumi.Inputs = {};
        opts = opts || {};
        if (args?.cluster === undefined && !opts.urn) {
            throw new Error("Missing required property 'cluster'");
        }
        resourceInputs["cluster"] = args?.cluster;
        resourceInputs["timeSlicingReplicas"] = args?.timeSlicingReplicas;
        resourceInputs["version"] = args?.version;
        resourceInputs["namespace"] = args?.namespace;
        resourceInputs["releaseName"] = undefined /*out*/;
        resourceInputs["chartVersion"] = undefined /*out*/;
        opts = pulumi.mergeOptions({ version: "0.1.0" }, opts);
        super(NvidiaDevicePlugin.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/**
 * The set of arguments for constructing a NvidiaDevicePlugin component.
 */
export interface NvidiaDevicePluginArgs {
    /**
     * The cluster to install into (its Kubernetes provider).
     */
    cluster: types.input.ClusterRefArgs;
    /**
     * Share each GPU this many ways (time-slicing) when greater than 1. Default 1.
     */
    timeSlicingReplicas?: number;
    /**
     * The chart version. Default 0.20.0.
     */
    version?: string;
    /**
     * Default `kube-system`.
     */
    namespace?: string;
}

/**
 * NVIDIA dcgm-exporter: GPU metrics from every AL2023 GPU lane.
 */
export class GpuObservability extends pulumi.ComponentResource {
    /** @internal */
    public static readonly __pulumiType = "rack:index:GpuObservability";

    /** Whether `obj` is an instance of GpuObservability: true even when another copy of this SDK made it. */
    public static isInstance(obj: any): obj is GpuObservability {
        if (obj === undefined || obj === null) {
            return false;
        }
        return obj["__pulumiType"] === GpuObservability.__pulumiType;
    }

    /**
     * The Helm release name (the chart's objects are named after it).
     */
    public readonly releaseName!: pulumi.Output<string>;
    /**
     * The namespace the chart's objects are in.
     */
    public readonly namespace!: pulumi.Output<string>;
    /**
     * The chart version installed.
     */
    public readonly chartVersion!: pulumi.Output<string>;

    /**
     * Create a GpuObservability component.
     */
    constructor(name: string, args: GpuObservabilityArgs, opts?: pulumi.ComponentResourceOptions) {
        let resourceInputs: pulumi.Inputs = {};
        opts = opts || {};
        if (args?.cluster === undefined && !opts.urn) {
            throw new Error("Missing required property 'cluster'");
        }
        resourceInputs["cluster"] = args?.cluster;
        resourceInputs["version"] = args?.version;
        resourceInputs["serviceMonitor"] = args?.serviceMonitor;
        resourceInputs["namespace"] = args?.namespace;
        resourceInputs["releaseName"] = undefined /*out*/;
        resourceInputs["chartVersion"] = undefined /*out*/;
        opts = pulumi.mergeOptions({ version: "0.1.0" }, opts);
        super(GpuObservability.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/**
 * The set of arguments for constructing a GpuObservability component.
 */
export interface GpuObservabilityArgs {
    /**
     * The cluster to install into (its Kubernetes provider).
     */
    cluster: types.input.ClusterRefArgs;
    /**
     * The dcgm-exporter chart version. Default 4.8.2.
     */
    version?: string;
    /**
     * Create the chart's ServiceMonitor; only when the cluster has the monitoring.coreos.com CRDs. Default false.
     */
    serviceMonitor?: boolean;
    /**
     * Default `kube-system`.
     */
    namespace?: string;
}

/**
 * A service as a Convox app declares one: a Deployment, a Service, and an autoscaler for a count range.
 */
export class Service extends pulumi.ComponentResource {
    /** @internal */
    public static readonly __pulumiType = "rack:index:Service";

    /** Whether `obj` is an instance of Service: true even when another copy of this SDK made it. */
    public static isInstance(obj: any): obj is Service {
        if (obj === undefined || obj === null) {
            return false;
        }
        return obj["__pulumiType"] === Service.__pulumiType;
    }

    /**
     * The Deployment's `metadata.name`.
     */
    public readonly deploymentName!: pulumi.Output<string>;
    /**
     * The Service's `metadata.name`: in-cluster DNS `<name>.<namespace>.svc`.
     */
    public readonly serviceName!: pulumi.Output<string>;
    /**
     * The namespace of the Deployment and the Service.
     */
    public readonly namespace!: pulumi.Output<string>;
    /**
     * `ClusterIP` (internal) or `LoadBalancer`.
     */
    public readonly serviceType!: pulumi.Output<string>;
    /**
     * The HorizontalPodAutoscaler's name, or none for a fixed count.
     */
    public readonly autoscalerName!: pulumi.Output<string | undefined>;
    /**
     * What placement gave the pods: `affinity`, `tolerations`, `gpuResources`.
     */
    public readonly scheduling!: pulumi.Output<types.output.Scheduling>;

    /**
     * Create a Service component.
     */
    constructor(name: string, args: ServiceArgs, opts?: pulumi.ComponentResourceOptions) {
        let resourceInputs: pulumi.Inputs = {};
        opts = opts || {};
        if (args?.cluster === undefined && !opts.urn) {
            throw new Error("Missing required property 'cluster'");
        }
        if (args?.service === undefined && !opts.urn) {
            throw new Error("Missing required property 'service'");
        }
        resourceInputs["service"] = args?.service;
        resourceInputs["cluster"] = args?.cluster;
        resourceInputs["namespace"] = args?.namespace;
        resourceInputs["gpuWaitSeconds"] = args?.gpuWaitSeconds;
        resourceInputs["lanes"] = args?.lanes;
        resourceInputs["deploymentName"] = undefined /*out*/;
        resourceInputs["serviceName"] = undefined /*out*/;
        resourceInputs["serviceType"] = undefined /*out*/;
        resourceInputs["autoscalerName"] = undefined /*out*/;
        resourceInputs["scheduling"] = undefined /*out*/;
        opts = pulumi.mergeOptions({ version: "0.1.0" }, opts);
        super(Service.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/**
 * The set of arguments for constructing a Service component.
 */
export interface ServiceArgs {
    /**
     * The service: its name names the Deployment, the Service and the autoscaler.
     */
    service: types.input.ServiceSpecArgs;
    /**
     * The cluster (its Kubernetes provider applies the objects).
     */
    cluster: types.input.ClusterRefArgs;
    /**
     * An existing namespace. Default `default`.
     */
    namespace?: string;
    /**
     * How long `pulumi up` waits for a GPU service's Deployment and Service to be ready, in seconds,
     * 1200 to 86400 (a GPU node launching, a multi-GB image pulling, a model loading). Default 2400. Only
     * for a service with `scale.gpu`.
     */
    gpuWaitSeconds?: number;
    /**
     * The rack's lanes: its `lanes` output (`Rack.lanes`, or another stack's `lanes` output through a stack
     * reference). The service is then refused, with the policy pack's
     * words, if no lane can hold its pod (a lane that does not exist, GPUs with no GPU lane selected, more GPUs than
     * the lane's instances have, CPU or memory beyond the allocatable of its largest instance): when it is built, or
     * for lanes known later when they are, before its Deployment is registered. Default: judged at preview only, by
     * the pack.
     */
    lanes?: pulumi.Input<{[key: string]: types.input.LaneArgs}>;
}
