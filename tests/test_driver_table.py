"""The NVIDIA driver table, dated by AMI release: Blackwell's lower bounds, the per-minor dates from which the
official AMIs carry 580, and the official AMIs that pick their driver per instance type.

Upstream facts pinned here (read in the upstream sources; in our words):
- awslabs/amazon-eks-ami ``templates/al2023/runtime/gpu/nvidia-open-supported-devices-<branch>.txt``: B200 and
  GB200 are listed from 570, the RTX PRO 6000 Blackwell Server Edition (G7e) from 575, B300 and GB300 from 580,
  the RTX PRO 4500 Blackwell Server Edition (G7) only in 595; an unlisted GPU gets the proprietary kernel
  module, which Blackwell refuses (#2768, #2769).
- The release tags' ``templates/al2023/variables-*.json``: 580 for 1.34+ from v20251023, 1.33 from v20251029,
  1.31-1.32 from v20251108, 1.29-1.30 from v20251120; 570 before (575 from v20250715 to v20250806).
- An AWS maintainer on #2768 and PR #2808 (2026-09-21): from release v20260917 the EKS AMIs include two NVIDIA
  drivers and pick one by instance type at first boot (PR #2819: an LTS and a production-branch tree).
- How it picks: ``templates/al2023/runtime/gpu/resolve-nvidia-driver.sh`` (amazon-eks-ami, commit fe18b8b) runs at
  first boot and reads the attached NVIDIA GPUs' PCI device ids; the long-term-support branch's open module when
  its supported-devices list has them all, else the production branch's open module when that list has them, else
  the long-term-support proprietary module; L4 vGPU slices (G6f) take the GRID flavour, and G4dn/G5/G5g are held
  to the long-term-support proprietary module with GSP off. G7's GPU is only in 595's list, so the maintainers'
  word that G7 runs there means 595 is one of the two trees; the rack takes every family below as driven.
- The two trees, by number: ``templates/al2023/variables-default.pkrvars.hcl`` (amazon-eks-ami, commit be7adc2e)
  sets ``nvidia_driver_lts_version = "580"`` and ``nvidia_driver_pb_version = "595"``: 580 drives P3 (595 dropped
  it), 595 drives G7 (only 595 lists its GPU), so such an AMI serves both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import REPO, rack_config
from mixed_os_racks.cli import main
from mixed_os_racks.facts import instances

AMI = "ami-0c1d2e3f4a5b60718"
X86 = "x86_64"


def preview(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    pool: dict[str, Any],
    ami: dict[str, Any] | None = None,
    policy: bool = False,
) -> tuple[int, str, str]:
    doc = yaml.safe_load((REPO / "components" / "offline" / "amis.yaml").read_text())
    if ami is not None:
        doc["amis"].append(
            {
                "id": AMI,
                "description": "",
                "architecture": X86,
                "root_device_name": "/dev/xvda",
                "root_snapshot_gib": 20,
                "creation_date": "2026-11-20T00:00:00.000Z",
                "owner_id": "602401143452",
                **ami,
            }
        )
    stack, amis = tmp_path / "Pulumi.t.yaml", tmp_path / "amis.yaml"
    stack.write_text(
        yaml.safe_dump(
            {
                "config": rack_config(
                    additional_karpenter_nodepools_config=[
                        {
                            "name": "gpu",
                            "disk": 100,
                            "dedicated": True,
                            "cpu_limit": 2000,
                            "memory_limit_gb": 40000,
                            **pool,
                        }
                    ]
                )
            }
        )
    )
    amis.write_text(yaml.safe_dump(doc))
    argv = ["preview", "--config", str(stack), "--amis", str(amis), "--cwd", str(REPO)] + (
        [] if policy else ["--no-policy"]
    )
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def official(minor: str, release: str) -> dict[str, Any]:
    return {"name": f"amazon-eks-node-al2023-x86_64-nvidia-{minor}-v{release}"}


# ---- Blackwell's lower bounds ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "family, refused, driven",
    [
        ("p6-b200", 560, 570),
        ("p6e-gb200", 560, 570),
        ("g7e", 570, 575),
        ("p6-b300", 575, 580),
        ("p6e-gb300", 575, 580),
        ("g7", 580, 595),
    ],
)
def test_a_blackwell_lane_needs_the_branch_that_lists_its_gpu(tmp_path, capsys, family, refused, driven):
    pool = {"instance_families": family, "ami_id": AMI, "arch": "arm64" if "gb" in family else "amd64"}
    arch = "arm64" if "gb" in family else X86
    code, _, err = preview(tmp_path, capsys, pool, {"name": f"custom-al2023-nvidia-{refused}", "architecture": arch})
    assert code == 2
    assert (
        f"its AMI {AMI} runs NVIDIA driver {refused} (its name), which cannot drive instances the lane can launch: "
        f"{family} needs NVIDIA driver {driven} or newer"
    ) in err
    code, _, err = preview(tmp_path, capsys, pool, {"name": f"custom-al2023-nvidia-{driven}", "architecture": arch})
    assert code == 0, err


# ---- the official AMIs' branch by release and Kubernetes minor --------------------------------------------------


@pytest.mark.parametrize(
    "minor, last_570, first_580",
    [
        ("1.34", "20251022", "20251023"),
        ("1.36", "20251022", "20251023"),
        ("1.33", "20251028", "20251029"),
        ("1.32", "20251107", "20251108"),
        ("1.31", "20251107", "20251108"),
        ("1.30", "20251119", "20251120"),
        ("1.29", "20251119", "20251120"),
    ],
)
def test_the_official_ami_carries_580_from_its_minors_release(tmp_path, capsys, minor, last_570, first_580):
    pool = {"instance_families": "p6-b300", "ami_id": AMI}  # B300: 580 or newer
    code, _, err = preview(tmp_path, capsys, pool, official(minor, last_570))
    assert code == 2 and f"runs NVIDIA driver 570 (the EKS AMI of release v{last_570} for {minor})" in err
    code, _, err = preview(tmp_path, capsys, pool, official(minor, first_580))
    assert code == 0, err


def test_the_official_ami_of_summer_2025_carried_575():
    assert instances.ami_driver("amazon-eks-node-al2023-x86_64-nvidia-1.33-v20250801").branch == 575
    assert instances.ami_driver("amazon-eks-node-al2023-x86_64-nvidia-1.33-v20250807").branch == 570


@pytest.mark.parametrize("family", ["g7", "g7e", "g6f", "p3", "p6-b300", "g6"])
def test_the_official_ami_of_v20260917_and_later_drives_every_family(tmp_path, capsys, family):
    code, _, err = preview(tmp_path, capsys, {"instance_families": family, "ami_id": AMI}, official("1.34", "20260917"))
    assert code == 0, err


def test_the_two_trees_of_the_per_instance_amis_drive_every_family_of_the_table():
    lts, pb = instances.EKS_PER_INSTANCE_BRANCHES
    assert (lts, pb) == (580, 595)
    assert instances.driver_problem("g7", lts) and not instances.driver_problem("g7", pb)
    assert instances.driver_problem("p3", pb) and not instances.driver_problem("p3", lts)
    for family in instances.DRIVER_BRANCHES:
        assert not all(instances.driver_problem(family, branch) for branch in (lts, pb)), family


@pytest.mark.parametrize("release", ["20260917", "20261105"])
def test_a_per_instance_stock_ami_is_accepted_on_g7_and_p3_alike(release):
    for minor in (34, 37):
        driver = instances.ami_driver(f"amazon-eks-node-al2023-x86_64-nvidia-1.{minor}-v{release}")
        assert driver is not None and driver.per_instance
        assert driver.problem("g7") is None and driver.problem("p3") is None
    assert instances.stock_ami_problem(["g7", "p3"], release, range(30, 38)) is None


def test_an_official_ami_older_than_the_table_is_not_refused_but_cannot_be_verified(tmp_path, capsys):
    code, out, err = preview(
        tmp_path, capsys, {"instance_families": "g7", "ami_id": AMI}, official("1.29", "20240101"), policy=True
    )
    assert code == 0, err + out
    assert f"cannot verify that the NVIDIA driver of {AMI} drives g7" in out


# ---- the stock AMI: an alias or a node group's AMI type -------------------------------------------------------


def test_g7_runs_on_the_latest_stock_ami(tmp_path, capsys):
    code, _, err = preview(tmp_path, capsys, {"instance_families": "g7"})
    assert code == 0, err


def test_an_alias_pinned_to_an_old_release_is_judged_by_its_driver(tmp_path, capsys):
    stack, amis = tmp_path / "Pulumi.t.yaml", REPO / "components" / "offline" / "amis.yaml"
    stack.write_text(
        yaml.safe_dump(
            {
                "config": rack_config(
                    karpenter_ami_alias="al2023@v20251010",
                    additional_karpenter_nodepools_config=[{"name": "gpu", "instance_families": "g7e", "disk": 100}],
                )
            }
        )
    )
    assert main(["preview", "--config", str(stack), "--amis", str(amis), "--no-policy", "--cwd", str(REPO)]) == 2
    err = capsys.readouterr().err
    assert (
        "karpenter nodepool 'gpu': the EKS-optimized AL2023 NVIDIA AMI of release v20251010 runs NVIDIA driver 570, "
        "which cannot drive instances the lane can launch: g7e needs NVIDIA driver 575 or newer"
    ) in err


def test_an_alias_of_a_release_whose_branch_differs_by_minor_is_not_judged():
    # v20251025: 580 for 1.34+, 570 for 1.29-1.33; the pool does not know the cluster's minor
    assert instances.stock_ami_problem(["g7e"], "20251025", range(29, 37)) is None
    assert instances.stock_ami_problem(["g7e"], "20251010", range(29, 37)) is not None
    assert instances.stock_ami_problem(["g7"], None) is None
    assert instances.stock_ami_problem(["p2"], None) is not None
