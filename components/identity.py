"""How a controller the rack installs (Karpenter, the Cluster Autoscaler) gets AWS credentials for its
Kubernetes service account: EKS Pod Identity or IAM roles for service accounts (IRSA).

* ``pod_identity``: the role trusts ``pods.eks.amazonaws.com`` (``sts:AssumeRole``, ``sts:TagSession``) and an
  ``aws.eks.PodIdentityAssociation`` binds it to ``<namespace>/<service account>``; the
  ``eks-pod-identity-agent`` add-on hands the pods their credentials (the EKS user guide, EKS Pod Identities).
* ``irsa``: the role trusts the cluster's IAM OIDC provider (``sts:AssumeRoleWithWebIdentity``), for exactly
  one service account (``<issuer>:sub`` is ``system:serviceaccount:<namespace>:<name>``) and the audience
  ``sts.amazonaws.com`` (``<issuer>:aud``), and the service account carries ``eks.amazonaws.com/role-arn``
  (the EKS user guide, IAM roles for service accounts: assign IAM roles to Kubernetes service accounts).
  EKS Pod Identity is not offered in the China Regions, where this is the default
  (``upstream.POD_IDENTITY_UNAVAILABLE``).

Either way the role's ARN is built from names (partition, account, role name), so the chart values that carry
it are known at preview.
"""

import enum
import json
from dataclasses import dataclass, field
from typing import Mapping, Sequence

import pulumi
import pulumi_aws as aws

from .cluster import ClusterRef
from .facts import upstream


class Identity(enum.StrEnum):
    """How a controller the rack installs gets AWS credentials for its service account."""

    POD_IDENTITY = "pod_identity"
    """EKS Pod Identity: an association binds the role to the service account (the eks-pod-identity-agent
    add-on hands the pods their credentials)."""
    IRSA = "irsa"
    """IAM roles for service accounts: the role trusts the cluster's IAM OIDC provider for that one service
    account (the default in the China Regions, where EKS Pod Identity is not offered)."""


def trust(service: str, actions: Sequence[str]) -> str:
    """A role that a service principal may assume."""
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"Service": service}, "Action": list(actions)}],
        }
    )


def irsa_trust(provider_arn: str, issuer: str, namespace: str, service_account: str) -> str:
    """A role that only ``<namespace>/<service_account>`` of the cluster whose OIDC issuer is ``issuer`` may
    assume, with tokens for STS (the EKS user guide's IRSA trust policy)."""
    host = issuer.removeprefix("https://")
    return json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [
                {
                    "Effect": "Allow",
                    "Principal": {"Federated": provider_arn},
                    "Action": "sts:AssumeRoleWithWebIdentity",
                    "Condition": {
                        "StringEquals": {
                            f"{host}:sub": f"system:serviceaccount:{namespace}:{service_account}",
                            f"{host}:aud": upstream.IRSA_AUDIENCE,
                        }
                    },
                }
            ],
        }
    )


@dataclass
class ServiceAccountRole:
    """A controller's role and how its service account reaches it."""

    role: aws.iam.Role
    arn: pulumi.Output[str]
    """The role's ARN, built from names: known at preview."""
    annotations: pulumi.Output[dict[str, str]]
    """The service account's annotations (IRSA's role ARN; none with Pod Identity)."""
    ready: list[pulumi.Resource] = field(default_factory=list)
    """What a chart running the service account waits for (the association, under Pod Identity)."""


def service_account_role(
    owner: tuple[str, str],
    parent: pulumi.Resource,
    cluster: ClusterRef,
    identity: Identity,
    names: tuple[str, str],
    role_name: pulumi.Input[str],
    namespace: str,
    service_account: str,
    tags: Mapping[str, str],
    association_opts: pulumi.ResourceOptions,
) -> ServiceAccountRole:
    """The role of a controller's service account (``names``: the role's and the association's resource
    names; ``role_name``: the IAM role's name), trusted the ``identity`` way, with its Pod Identity
    association under Pod Identity. ``owner`` (component, name) is who a missing OIDC provider is refused for."""
    invoke = pulumi.InvokeOptions(parent=parent)
    partition = aws.get_partition_output(opts=invoke).partition
    account = aws.get_caller_identity_output(opts=invoke).account_id
    if identity == "irsa":
        provider_arn, issuer = cluster.irsa(*owner)
        assume: pulumi.Input[str] = pulumi.Output.all(provider_arn, issuer).apply(
            lambda a: irsa_trust(a[0], a[1], namespace, service_account)
        )
    else:
        assume = trust("pods.eks.amazonaws.com", ["sts:AssumeRole", "sts:TagSession"])
    role = aws.iam.Role(
        names[0], name=role_name, assume_role_policy=assume, tags=dict(tags), opts=pulumi.ResourceOptions(parent=parent)
    )
    arn = pulumi.Output.all(partition, account, role_name).apply(lambda a: f"arn:{a[0]}:iam::{a[1]}:role/{a[2]}")
    if identity == "irsa":
        return ServiceAccountRole(role, arn, arn.apply(lambda a: {upstream.IRSA_ROLE_ANNOTATION: a}))
    association = aws.eks.PodIdentityAssociation(
        names[1],
        cluster_name=cluster.name,
        namespace=namespace,
        service_account=service_account,
        role_arn=role.arn,
        tags=dict(tags),
        opts=association_opts,
    )
    return ServiceAccountRole(role, arn, pulumi.Output.from_input({}), [association])
