"""What EKS says of the cluster, read at preview: its authentication mode, its Kubernetes version's support
dates, the zones of its subnets, and the access entries it already holds.

Upstream facts pinned here (read in the upstream sources; in our words):
- EKS authentication modes (the EKS user guide, access entries; botocore's EKS model): ``CONFIG_MAP`` takes
  no access entries; a cluster moves to ``API_AND_CONFIG_MAP`` and then ``API``, never back. An IAM principal
  is in one access entry only; EKS makes the entries of the cluster's creator and of managed node groups'
  roles itself.
- The Amazon EKS Kubernetes release calendar (awsdocs/amazon-eks-user-guide
  ``latest/ug/versioning/kubernetes-versions.adoc``): 1.29 ended extended support on 2026-03-23, 1.30 on
  2026-07-23, 1.31 on 2026-11-26; 1.32 left standard support on 2026-03-23; EKS creates no cluster past the
  end of extended support and upgrades such control planes itself.
- Amazon EKS on AWS Local Zones (EKS user guide): EKS places no cluster network interface in a Local Zone
  subnet and makes no managed node group there.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REPO, rack_config, run_rack
from mixed_os_racks import ArgumentError, ClusterRef
from mixed_os_racks.cli import main
from mixed_os_racks.karpenter_controller import KarpenterController, KarpenterControllerArgs
from mixed_os_racks.offline import Catalog, run_program
from mixed_os_racks.offline.catalog import CatalogError
from mixed_os_racks.facts import upstream
from mixed_os_racks.spec.rack import version_support

PRIVATE = ["subnet-0a1b2c3d4e5f60711", "subnet-0a1b2c3d4e5f60712", "subnet-0a1b2c3d4e5f60713"]
CREATE = dict(cluster_mode="create", vpc_id="vpc-0a1b2c3d4e5f60718", private_subnets_ids=",".join(PRIVATE))


def catalog(**extra: Any) -> dict[str, Any]:
    doc = yaml.safe_load((REPO / "components" / "offline" / "amis.yaml").read_text())
    for key, value in extra.items():
        doc[key] = {**doc.get(key, {}), **value}
    return doc


def preview(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rack: dict[str, Any], doc: dict[str, Any] | None = None
) -> tuple[int, str]:
    stack, amis = tmp_path / "Pulumi.t.yaml", tmp_path / "amis.yaml"
    stack.write_text(yaml.safe_dump({"config": rack_config(**rack)}))
    amis.write_text(yaml.safe_dump(doc or catalog()))
    code = main(["preview", "--config", str(stack), "--amis", str(amis), "--no-policy", "--cwd", str(REPO)])
    return code, without_location(capsys.readouterr().err, stack)


def without_location(err: str, stack: Path) -> str:
    """The errors without the stack file and line each one starts with (``Pulumi.t.yaml:5: rack:...``),
    which every one of them must have."""
    lines = err.splitlines(keepends=True)
    prefix = re.compile(rf"^error: {re.escape(str(stack))}:\d+: ")
    assert all(prefix.match(line) for line in lines if line.startswith("error: ") and "rack:" in line), err
    return "".join(prefix.sub("error: ", line) for line in lines)


# ---- an existing cluster on CONFIG_MAP authentication ---------------------------------------------------------


def test_karpenter_into_a_config_map_cluster_is_refused_with_the_change_to_make(tmp_path, capsys):
    doc = catalog(clusters={"test-rack": {"authentication_mode": "CONFIG_MAP"}})
    code, err = preview(tmp_path, capsys, dict(karpenter_install=True, pod_identity_agent_enable=True), doc)
    assert code == 2 and "Traceback" not in err
    assert err.startswith("error: rack:karpenter_install: cluster 'test-rack' authenticates with CONFIG_MAP")
    assert "aws eks update-cluster-config --name test-rack --access-config authenticationMode=API_AND_CONFIG_MAP" in err


@pytest.mark.parametrize("mode", ["API", "API_AND_CONFIG_MAP"])
def test_a_cluster_that_takes_access_entries_gets_the_nodes_entry(mode):
    run = run_rack(
        rack_config(karpenter_install=True, pod_identity_agent_enable=True),
        Catalog.from_doc(catalog(clusters={"test-rack": {"authentication_mode": mode}})),
    )
    (entry,) = [r for r in run.resources if r.type == "aws:eks/accessEntry:AccessEntry"]
    assert entry.inputs["type"] == "EC2_LINUX"


def test_the_controller_on_its_own_refuses_a_config_map_cluster():
    def program() -> None:
        KarpenterController("k", KarpenterControllerArgs(cluster=ClusterRef.existing("c", "legacy")))

    with pytest.raises(ArgumentError) as caught:
        run_program(
            program,
            {"aws:region": "us-east-1"},
            Catalog.from_doc(catalog(clusters={"legacy": {"authentication_mode": "CONFIG_MAP"}})),
        )
    assert str(caught.value).startswith(
        "KarpenterController 'k': cluster: cluster 'legacy' authenticates with CONFIG_MAP"
    )


def test_pools_alone_need_no_access_entry_in_a_config_map_cluster():
    # no Karpenter installed: the rack makes no access entry, so a CONFIG_MAP cluster is fine
    run = run_rack(
        rack_config(), Catalog.from_doc(catalog(clusters={"test-rack": {"authentication_mode": "CONFIG_MAP"}}))
    )
    assert not [r for r in run.resources if r.type == "aws:eks/accessEntry:AccessEntry"]


# ---- Kubernetes versions past EKS support ---------------------------------------------------------------------


@pytest.mark.parametrize("version, ended", [("1.29", "2026-03-23"), ("1.30", "2026-07-23"), ("1.31", "2026-11-26")])
def test_creating_a_cluster_past_extended_support_is_refused(tmp_path, capsys, version, ended):
    code, err = preview(tmp_path, capsys, dict(**CREATE, k8s_version=version))
    assert code == 2
    assert err.startswith(
        f"error: rack:k8s_version: k8s_version '{version}': Kubernetes {version} reached the end of EKS "
        f"extended support on {ended}"
    )


def test_creating_a_cluster_in_extended_support_is_warned_about(tmp_path, capsys):
    code, err = preview(tmp_path, capsys, dict(**CREATE, k8s_version="1.32"))
    assert code == 0
    assert "warning: cluster 'test-rack': Kubernetes 1.32 is in EKS extended support since 2026-03-23" in err
    # the cost it names (Amazon EKS pricing: $0.60 an hour per cluster in extended support, $0.10 in standard)
    assert "billed $0.60 an hour per cluster instead of standard support's $0.10 until 2027-03-23" in err


def test_minors_eks_lists_without_published_dates_are_not_judged():
    assert upstream.eks_calendar()["1.37"] is None and upstream.eks_calendar()["1.36"] is None
    assert list(upstream.eks_calendar())[-2:] == ["1.36", "1.37"]
    assert version_support("1.37", "2026-12-07") == ("unknown", "")
    assert upstream.eks_support("1.37", "2026-12-07") == ("unknown", None)


def test_an_existing_cluster_past_its_support_is_warned_about_not_refused(tmp_path, capsys):
    code, err = preview(tmp_path, capsys, {}, catalog(clusters={"test-rack": {"version": "1.30"}}))
    assert code == 0
    assert "warning: cluster 'test-rack': Kubernetes 1.30 reached the end of EKS extended support on 2026-07-23" in err


@pytest.mark.parametrize(
    "when, version, status",
    [
        ("2025-03-22", "1.29", "standard"),
        ("2025-03-23", "1.29", "extended"),
        ("2026-03-23", "1.29", "ended"),
        ("2026-12-01", "1.34", "standard"),
        ("2026-12-02", "1.34", "extended"),
        ("2027-12-02", "1.34", "ended"),
        # 1.35: endoflife.date/amazon-eks lists it released on EKS 2026-01-28, standard support to 2027-03-27 and
        # extended support to 2028-03-27 (14 and 26 months, the EKS user guide's Kubernetes version lifecycle)
        ("2027-03-26", "1.35", "standard"),
        ("2027-03-27", "1.35", "extended"),
        ("2028-03-27", "1.35", "ended"),
        ("2030-01-01", "1.36", "unknown"),  # not in the calendar read: not judged
    ],
)
def test_the_support_table_is_read_by_date(when, version, status):
    assert version_support(version, when)[0] == status


# ---- cluster admins the rack already gives an access entry ----------------------------------------------------


@pytest.mark.parametrize(
    "rack, arn, why",
    [
        ({}, "arn:aws:iam::111122223333:role/KarpenterNodeRole-test-rack", "creates for Karpenter's nodes"),
        ({}, "arn:aws:iam::111122223333:role/nodes/karpenternoderole-test-rack", "creates for Karpenter's nodes"),
        (
            dict(node_role_name="rack-nodes"),
            "arn:aws:iam::111122223333:role/rack-nodes",
            "creates for Karpenter's nodes",
        ),
        (
            dict(node_group_role_name="shared-nodes", additional_node_groups_config=[{"id": 1, "type": "m5.large"}]),
            "arn:aws:iam::111122223333:role/shared-nodes",
            "EKS gives a managed node group's role an access entry",
        ),
    ],
)
def test_an_admin_arn_the_rack_already_gave_an_entry_is_refused(tmp_path, capsys, rack, arn, why):
    code, err = preview(tmp_path, capsys, dict(**CREATE, cluster_admin_arns=arn, **rack))
    assert code == 2
    assert err.startswith(f"error: rack:cluster_admin_arns: ARN '{arn}' is the role ") and why in err
    assert "ResourceInUseException" in err


def test_other_admin_roles_still_get_entries():
    run = run_rack(rack_config(**CREATE, cluster_admin_arns="arn:aws:iam::111122223333:role/KarpenterNodeRole-other"))
    assert [
        r.inputs["principalArn"]
        for r in run.resources
        if r.type == "aws:eks/accessEntry:AccessEntry" and r.inputs["type"] == "STANDARD"
    ] == ["arn:aws:iam::111122223333:role/KarpenterNodeRole-other"]


# ---- subnets: Local Zones, and the public ones ----------------------------------------------------------------


def test_a_local_zone_subnet_is_no_availability_zone(tmp_path, capsys):
    subnets = {PRIVATE[0]: "us-east-1a", PRIVATE[1]: "us-east-1-bos-1a", PRIVATE[2]: "us-east-1-bos-1a"}
    code, err = preview(tmp_path, capsys, CREATE, catalog(subnets=subnets))
    assert code == 2
    assert err.startswith(
        f"error: rack:private_subnets_ids: {PRIVATE[1]} (us-east-1-bos-1a), {PRIVATE[2]} "
        f"(us-east-1-bos-1a) are in a Local Zone or Wavelength Zone, not an Availability Zone"
    )


def test_two_availability_zones_and_a_local_zone_is_still_refused(tmp_path, capsys):
    # counting zones alone would pass: two real zones; the Local Zone subnet is refused by itself
    subnets = {PRIVATE[0]: "us-east-1a", PRIVATE[1]: "us-east-1b", PRIVATE[2]: "us-east-1-bos-1a"}
    code, err = preview(tmp_path, capsys, CREATE, catalog(subnets=subnets))
    assert code == 2 and f"{PRIVATE[2]} (us-east-1-bos-1a) is in a Local Zone" in err


def test_public_subnets_are_looked_up_too(tmp_path, capsys):
    unknown, local = "subnet-0a1b2c3d4e5f607aa", "subnet-0a1b2c3d4e5f607bb"
    code, err = preview(tmp_path, capsys, dict(**CREATE, public_subnets_ids=unknown))
    assert code == 2
    assert err.startswith(f"error: rack:public_subnets_ids: subnet '{unknown}' cannot be read in this region/account")
    code, err = preview(
        tmp_path, capsys, dict(**CREATE, public_subnets_ids=local), catalog(subnets={local: "us-east-1-bos-1a"})
    )
    assert code == 2 and err.startswith(
        f"error: rack:public_subnets_ids: {local} (us-east-1-bos-1a) is in a Local Zone"
    )


def test_the_offline_catalog_reads_european_sovereign_cloud_zones():
    doc = catalog()
    doc["subnets"] = {subnet: f"eusc-de-east-1{zone[-1]}" for subnet, zone in doc["subnets"].items()}
    assert Catalog.from_doc(doc).zone_of(PRIVATE[0], "eusc-de-east-1") == "eusc-de-east-1a"


@pytest.mark.parametrize(
    "bad, problem",
    [
        (
            [],
            "clusters: expected a mapping of EKS cluster names to their fields (version, authentication_mode, ...), "
            "got a "
            "list []",
        ),
        (
            {"c": "x"},
            "clusters.c: expected a mapping of a cluster's fields (version, authentication_mode, oidc_issuer, "
            "oidc_provider, node_groups), got text 'x'",
        ),
        ({"c": {"versoin": "1.34"}}, "clusters.c.versoin: unknown key (did you mean version?)"),
        (
            {"c": {"authentication_mode": "api_and_config_map"}},
            "clusters.c.authentication_mode: expected API, "
            "API_AND_CONFIG_MAP or CONFIG_MAP, got text 'api_and_config_map' (did you mean API_AND_CONFIG_MAP?)",
        ),
        (
            {"c": {"node_groups": ["g"]}},
            "clusters.c.node_groups: expected a mapping of node group names to their scaling "
            "config (desired_size, min_size, max_size), got a list ['g']",
        ),
        (
            {"c": {"node_groups": {"g": 3}}},
            "clusters.c.node_groups.g: expected a mapping of a node group's scaling config "
            "(desired_size, min_size, max_size), got a number 3",
        ),
        (
            {"c": {"node_groups": {"g": {"desired_size": 1, "min_size": 1, "maxsize": 3}}}},
            "clusters.c.node_groups.g: missing max_size\n  clusters.c.node_groups.g.maxsize: unknown key (did you mean "
            "max_size?)",
        ),
        (
            {"c": {"node_groups": {"g": {"desired_size": "1", "min_size": 1, "max_size": 3}}}},
            "clusters.c.node_groups.g.desired_size: expected a whole number, got text '1'",
        ),
    ],
)
def test_the_catalogs_clusters_are_worded_as_its_other_sections(tmp_path, capsys, bad, problem):
    """The shape of each level named in the catalog's own words, choices in the case EKS takes, misspelled keys
    with the key meant: as amis:, subnets: and prices: are."""
    amis = tmp_path / "amis.yaml"
    amis.write_text(yaml.safe_dump({"amis": [], "clusters": bad}))
    assert main(["preview", "--stack", "dev", "--cwd", str(REPO), "--no-policy", "--amis", str(amis)]) == 2
    err = capsys.readouterr().err
    assert problem in err and "input should" not in err and "image" not in err, err


def test_the_catalogs_clusters_are_checked():
    for bad, problem in [
        ({"c": {"version": 1.34}}, "expected text, got a number 1.34 (quote it)"),
        ({"c": {"authentication_mode": "IAM"}}, "authentication_mode"),
        (
            {"c": {"node_groups": {"g": {"desired_size": 9, "min_size": 1, "max_size": 3}}}},
            "EKS holds min_size <= desired_size <= max_size (got 1, 9, 3)",
        ),
        ({"c": {"oidc_issuer": "https://example.com"}}, "is not an EKS OIDC issuer"),
        ({"-c": {}}, "is not an EKS cluster name"),
    ]:
        with pytest.raises(CatalogError) as caught:
            Catalog.from_doc({"clusters": bad})
        assert problem in str(caught.value), (bad, str(caught.value))
