// The two mixed-os-racks components this program uses, written as the SDK that `pulumi package add` generates
// from the package's schema (`mixed-os-racks schema`) registers them: a remote ComponentResource with the
// schema's type token (rack:index:<Component>) and its camelCase inputs. The engine hands each one to the
// package's provider (Pulumi.yaml `packages: rack`), which builds the component and its children.
// Once the SDK is generated, `import * as rack from "@mixed-os-racks/rack"` replaces this file.
import * as pulumi from "@pulumi/pulumi";

/** The cluster the lanes join: its name is enough (the provider reads the rest from EKS). */
export interface ClusterRefArgs {
    name: pulumi.Input<string>;
    endpoint?: pulumi.Input<string>;
    certificateAuthority?: pulumi.Input<string>;
    oidcIssuer?: pulumi.Input<string>;
    nodeRoleArn?: pulumi.Input<string>;
}

export type NodeOs = "al2023" | "bottlerocket";

/** A Karpenter pool (the schema's PoolSpec; the fields this program sets, and a few more). */
export interface PoolSpecArgs {
    name: string;
    os?: NodeOs;
    amiId?: string;
    instanceFamilies?: string[];
    instanceTypes?: string[];
    capacityTypes?: string[];
    disk?: number;
    dedicated?: boolean;
    labels?: Record<string, string>;
    consolidationPolicy?: "WhenEmpty" | "WhenEmptyOrUnderutilized";
}

export interface KarpenterPoolArgs {
    cluster: pulumi.Input<ClusterRefArgs>;
    pool: pulumi.Input<PoolSpecArgs>;
    tags?: pulumi.Input<Record<string, pulumi.Input<string>>>;
}

export class KarpenterPool extends pulumi.ComponentResource {
    public static readonly __pulumiType = "rack:index:KarpenterPool";
    public readonly nodeClassName!: pulumi.Output<string>;
    public readonly nodePoolName!: pulumi.Output<string>;
    public readonly labels!: pulumi.Output<Record<string, string>>;
    public readonly taints!: pulumi.Output<{ key: string; value?: string; effect: string }[]>;

    constructor(name: string, args: KarpenterPoolArgs, opts?: pulumi.ComponentResourceOptions) {
        const resourceInputs: pulumi.Inputs = {
            cluster: args.cluster,
            pool: args.pool,
            tags: args.tags,
            nodeClassName: undefined /*out*/,
            nodePoolName: undefined /*out*/,
            labels: undefined /*out*/,
            taints: undefined /*out*/,
            ami: undefined /*out*/,
        };
        super(KarpenterPool.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}

/** An EKS managed node group (the schema's NodeGroupSpec). */
export interface NodeGroupSpecArgs {
    instanceType: string;
    name?: string;
    minSize?: number;
    maxSize?: number;
    disk?: number;
    capacityType?: string;
    label?: string;
    amiId?: string;
    dedicated?: boolean;
}

export interface NodeGroupArgs {
    cluster: pulumi.Input<ClusterRefArgs>;
    group: pulumi.Input<NodeGroupSpecArgs>;
}

export class NodeGroup extends pulumi.ComponentResource {
    public static readonly __pulumiType = "rack:index:NodeGroup";
    public readonly nodeGroupName!: pulumi.Output<string>;
    public readonly taints!: pulumi.Output<{ key: string; value?: string; effect: string }[]>;

    constructor(name: string, args: NodeGroupArgs, opts?: pulumi.ComponentResourceOptions) {
        const resourceInputs: pulumi.Inputs = {
            cluster: args.cluster,
            group: args.group,
            nodeGroupName: undefined /*out*/,
            nodeGroupArn: undefined /*out*/,
            roleArn: undefined /*out*/,
            labels: undefined /*out*/,
            taints: undefined /*out*/,
            ami: undefined /*out*/,
        };
        super(NodeGroup.__pulumiType, name, resourceInputs, opts, true /*remote*/);
    }
}
