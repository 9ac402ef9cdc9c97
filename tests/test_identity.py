"""The stack's partition everywhere, and how the rack's controllers get AWS credentials: EKS Pod Identity,
or IAM roles for service accounts (IRSA), the default where Pod Identity is not offered.

Upstream facts pinned here (read in the upstream sources; in our words):
- botocore ``botocore/data/partitions.json`` (2026-08): the AWS European Sovereign Cloud is the partition
  ``aws-eusc`` (regions ``eusc-de-*``, DNS suffix ``amazonaws.eu``); ``cn-*`` is ``aws-cn``.
- The Amazon EKS user guide for the China Regions (``docs.amazonaws.cn``, EKS Pod Identities): Pod Identity
  is not available there; use IAM roles for service accounts. (botocore's ``endpoints.json`` lists an
  ``eks-auth`` endpoint in both China regions: an SDK endpoint, not the feature's availability.)
- IRSA (the EKS user guide): the cluster's IAM OIDC provider (client id ``sts.amazonaws.com``), a role whose
  trust names it as ``Federated`` principal for ``sts:AssumeRoleWithWebIdentity``, with ``<issuer>:sub`` =
  ``system:serviceaccount:<namespace>:<name>`` and ``<issuer>:aud`` = ``sts.amazonaws.com``, and the service
  account annotated ``eks.amazonaws.com/role-arn``. The ``karpenter`` chart (1.14.1) takes
  ``serviceAccount.annotations``; the ``cluster-autoscaler`` chart takes ``rbac.serviceAccount.annotations``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pulumi_eks as eks
import pytest
import yaml

from conftest import REPO, rack_config, run_rack
from mixed_os_racks import ClusterRef
from mixed_os_racks.addons import ClusterAutoscaler, ClusterAutoscalerArgs
from mixed_os_racks.cli import main
from mixed_os_racks.offline import Catalog, run_program
from test_cluster_facts import without_location

PRIVATE = ["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712", "subnet-0a1b2c3d4e5f60713"]
CREATE = dict(cluster_mode="create", vpc_id="vpc-0a1b2c3d4e5f60718", private_subnets_ids=",".join(PRIVATE))
SCALABLE = [{"id": 1, "type": "g5.xlarge", "min_size": 0, "max_size": 3, "label": "gpu"}]
ISSUER = "https://oidc.eks.us-east-1.amazonaws.com/id/0123456789ABCDEF0123456789ABCDEF"
ASSOCIATION = "aws:eks/podIdentityAssociation:PodIdentityAssociation"
CHART = "kubernetes:helm.sh/v4:Chart"


def catalog_doc(region: str = "us-east-1", **clusters: Any) -> dict[str, Any]:
    doc = yaml.safe_load((REPO / "components" / "offline" / "amis.yaml").read_text())
    doc["subnets"] = {subnet: f"{region}{zone[-1]}" for subnet, zone in doc["subnets"].items()}
    if clusters:
        doc["clusters"] = clusters
    return doc


def preview_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], config: dict[str, Any], doc: dict[str, Any]
) -> tuple[int, dict[str, Any], str]:
    stack, amis, out = tmp_path / "Pulumi.t.yaml", tmp_path / "amis.yaml", tmp_path / "preview.json"
    stack.write_text(yaml.safe_dump({"config": config}))
    amis.write_text(yaml.safe_dump(doc))
    code = main(
        ["preview", "--config", str(stack), "--amis", str(amis), "--no-policy", "--json", str(out), "--cwd", str(REPO)]
    )
    err = without_location(capsys.readouterr().err, stack)
    return code, (json.loads(out.read_text()) if out.exists() else {}), err


def of(doc: dict[str, Any], type_: str) -> list[dict[str, Any]]:
    return [r for r in doc["resources"] if r["type"] == type_]


def chart_values(doc: dict[str, Any], name: str) -> dict[str, Any]:
    (chart,) = [r for r in of(doc, CHART) if r["name"] == name]
    return chart["inputs"]["values"]


# ---- the China regions: IRSA by default ----------------------------------------------------------------------


def test_a_china_rack_gives_its_controllers_irsa(tmp_path, capsys):
    config = {**rack_config(**CREATE, additional_node_groups_config=SCALABLE), "aws:region": "cn-north-1"}
    code, doc, err = preview_json(tmp_path, capsys, config, catalog_doc("cn-north-1"))
    assert code == 0, err
    assert not of(doc, ASSOCIATION)  # no Pod Identity association: EKS offers none there
    assert not [a for a in of(doc, "aws:eks/addon:Addon") if a["inputs"]["addonName"] == "eks-pod-identity-agent"]
    (provider,) = of(doc, "aws:iam/openIdConnectProvider:OpenIdConnectProvider")
    assert provider["inputs"]["clientIdLists"] == ["sts.amazonaws.com"]
    assert chart_values(doc, "rack-karpenter")["serviceAccount"] == {
        "name": "karpenter",
        "annotations": {
            "eks.amazonaws.com/role-arn": "arn:aws-cn:iam::123456789012:role/KarpenterController-test-rack"
        },
    }
    assert chart_values(doc, "rack-cluster-autoscaler")["rbac"]["serviceAccount"]["annotations"] == {
        "eks.amazonaws.com/role-arn": "arn:aws-cn:iam::123456789012:role/ClusterAutoscaler-test-rack"
    }
    assert "arn:aws:" not in json.dumps(doc["resources"])


@pytest.mark.parametrize("key", ["controller_identity", "pod_identity_agent_enable"])
def test_pod_identity_asked_for_in_china_is_refused(tmp_path, capsys, key):
    value = "pod_identity" if key == "controller_identity" else True
    config = {**rack_config(**CREATE, **{key: value}), "aws:region": "cn-northwest-1"}
    code, _, err = preview_json(tmp_path, capsys, config, catalog_doc("cn-northwest-1"))
    assert code == 2
    assert err.startswith(
        f"error: rack:{key}: EKS Pod Identity is not available in the aws-cn partition (the Amazon EKS "
        f"user guide for the China Regions"
    )


# ---- IRSA anywhere, as asked ---------------------------------------------------------------------------------


def test_irsa_in_an_existing_cluster_trusts_its_provider_for_one_service_account(tmp_path, capsys):
    config = rack_config(
        karpenter_install=True,
        controller_identity="irsa",
        cluster_autoscaler_enable=True,
        additional_node_groups_config=SCALABLE,
    )
    code, doc, err = preview_json(tmp_path, capsys, config, catalog_doc(**{"test-rack": {"oidc_issuer": ISSUER}}))
    assert code == 0, err
    host = ISSUER.removeprefix("https://")
    roles = {
        r["name"]: json.loads(r["inputs"]["assumeRolePolicy"])
        for r in of(doc, "aws:iam/role:Role")
        if r["name"] in ("rack-karpenter-controller-role", "rack-cluster-autoscaler-role")
    }
    for role, account in (
        ("rack-karpenter-controller-role", "karpenter"),
        ("rack-cluster-autoscaler-role", "cluster-autoscaler"),
    ):
        assert roles[role]["Statement"] == [
            {
                "Effect": "Allow",
                "Principal": {"Federated": f"arn:aws:iam::123456789012:oidc-provider/{host}"},
                "Action": "sts:AssumeRoleWithWebIdentity",
                "Condition": {
                    "StringEquals": {
                        f"{host}:sub": f"system:serviceaccount:kube-system:{account}",
                        f"{host}:aud": "sts.amazonaws.com",
                    }
                },
            }
        ]
    assert not of(doc, ASSOCIATION) and not of(doc, "aws:iam/openIdConnectProvider:OpenIdConnectProvider")


def test_irsa_needs_no_pod_identity_agent():
    run = run_rack(rack_config(karpenter_install=True, controller_identity="irsa", pod_identity_agent_enable=False))
    assert not [r for r in run.resources if r.type == ASSOCIATION]


def test_an_existing_cluster_without_an_oidc_provider_is_refused_with_the_command(tmp_path, capsys):
    config = rack_config(karpenter_install=True, controller_identity="irsa")
    code, _, err = preview_json(
        tmp_path, capsys, config, catalog_doc(**{"test-rack": {"oidc_issuer": ISSUER, "oidc_provider": False}})
    )
    assert code == 2
    assert err.startswith(
        f"error: KarpenterController 'rack-karpenter': cluster: IAM has no OIDC provider for the issuer "
        f"{ISSUER} of cluster 'test-rack', which IRSA needs"
    )
    assert "eksctl utils associate-iam-oidc-provider --cluster test-rack --approve" in err


def test_pod_identity_stays_the_default_outside_china():
    run = run_rack(rack_config(**CREATE, additional_node_groups_config=SCALABLE))
    assert {r.inputs["serviceAccount"] for r in run.resources if r.type == ASSOCIATION} == {
        "karpenter",
        "cluster-autoscaler",
    }
    assert not [r for r in run.resources if r.type == "aws:iam/openIdConnectProvider:OpenIdConnectProvider"]


def test_a_component_on_a_created_cluster_needs_its_oidc_provider():
    def program() -> None:
        cluster = eks.Cluster("lab", authentication_mode=eks.AuthenticationMode.API, skip_default_node_group=True)
        ClusterAutoscaler(
            "ca",
            ClusterAutoscalerArgs(
                cluster=ClusterRef.created("lab", cluster, cluster_name="lab"),
                kubernetes_version="1.34",
                identity="irsa",
            ),
        )

    with pytest.raises(Exception) as caught:
        run_program(program, {"aws:region": "us-east-1"})
    assert "ClusterAutoscaler 'ca': cluster: IRSA needs the cluster's IAM OIDC provider" in str(caught.value)


def test_a_cluster_given_as_data_brings_its_oidc_provider_for_irsa():
    """The cluster as another language sends it (a ``ClusterRef`` as data, here with its endpoint: nothing is read):
    its IAM OIDC provider and issuer are what the controller's role trusts."""
    provider_arn = f"arn:aws:iam::123456789012:oidc-provider/{ISSUER.removeprefix('https://')}"

    def program() -> None:
        ClusterAutoscaler(
            "ca",
            {
                "cluster": {
                    "name": "lab",
                    "endpoint": "https://lab.eks.example",
                    "certificate_authority": "Q0E=",
                    "oidc_issuer": ISSUER,
                    "oidc_provider_arn": provider_arn,
                },
                "kubernetes_version": "1.34",
                "identity": "irsa",
            },
        )

    run = run_program(program, {"aws:region": "us-east-1"})
    (role,) = [r for r in run.resources if r.type == "aws:iam/role:Role" and r.name == "ca-role"]
    (statement,) = json.loads(role.inputs["assumeRolePolicy"])["Statement"]
    assert statement["Principal"] == {"Federated": provider_arn}
    assert (
        statement["Condition"]["StringEquals"][f"{ISSUER.removeprefix('https://')}:sub"]
        == "system:serviceaccount:kube-system:cluster-autoscaler"
    )


def test_a_misspelled_field_of_the_cluster_as_data_gets_the_field_meant():
    def program() -> None:
        ClusterAutoscaler(
            "ca",
            {
                "cluster": {"name": "lab", "oidc_provider": "arn:aws:iam::123456789012:oidc-provider/x"},
                "kubernetes_version": "1.34",
            },
        )

    with pytest.raises(Exception) as caught:
        run_program(program, {"aws:region": "us-east-1"})
    assert str(caught.value) == (
        "ClusterAutoscaler 'ca': cluster.oidc_provider: unknown field (did you mean oidc_provider_arn? expected one "
        "of: "
        "certificate_authority, endpoint, name, node_role_arn, oidc_issuer, oidc_provider_arn)"
    )


# ---- the European Sovereign Cloud ---------------------------------------------------------------------------


def test_a_european_sovereign_cloud_stack_uses_its_partition_everywhere(tmp_path, capsys):
    config = {
        **rack_config(
            **CREATE,
            additional_node_groups_config=SCALABLE,
            cluster_admin_arns="arn:aws-eusc:iam::123456789012:role/ci",
        ),
        "aws:region": "eusc-de-east-1",
    }
    code, doc, err = preview_json(tmp_path, capsys, config, catalog_doc("eusc-de-east-1"))
    assert code == 0, err
    arns = [
        r["inputs"]["policyArn"] for r in doc["resources"] if r["inputs"].get("policyArn", "<computed>") != "<computed>"
    ]
    assert arns and all(arn.startswith("arn:aws-eusc:") for arn in arns)
    assert "arn:aws:" not in json.dumps(doc["resources"])


def test_a_european_sovereign_cloud_stack_refuses_commercial_arns(tmp_path, capsys):
    config = {
        **rack_config(**CREATE, cluster_admin_arns="arn:aws:iam::123456789012:role/ci"),
        "aws:region": "eusc-de-east-1",
    }
    code, _, err = preview_json(tmp_path, capsys, config, catalog_doc("eusc-de-east-1"))
    assert code == 2
    assert err.strip() == (
        "error: rack:cluster_admin_arns: ARN 'arn:aws:iam::123456789012:role/ci' is in the 'aws' partition, "
        "and the stack's region eusc-de-east-1 is in 'aws-eusc' (write arn:aws-eusc:...)"
    )


# ---- a component on a created cluster waits for it ------------------------------------------------------------


def test_a_cluster_named_to_clusterref_created_is_waited_for():
    def program() -> None:
        cluster = eks.Cluster("lab", authentication_mode=eks.AuthenticationMode.API, skip_default_node_group=True)
        ClusterAutoscaler(
            "ca",
            ClusterAutoscalerArgs(
                cluster=ClusterRef.created("lab", cluster, cluster_name="lab"), kubernetes_version="1.34"
            ),
        )

    run = run_program(program, {"aws:region": "us-east-1"})
    cluster = next(r.urn for r in run.resources if r.type == "eks:index:Cluster")
    (association,) = [r for r in run.resources if r.type == ASSOCIATION]
    assert association.inputs["clusterName"] == "lab"  # still known at preview
    assert cluster in association.dependencies and association.property_dependencies["clusterName"] == [cluster]
