"""Unit tests of this program, with no cloud and no Pulumi CLI: `pytest` in this folder.

The components look AWS up as they are built (the pinned AMI, the existing cluster, the account's
region and partition); `RackMocks` answers those look-ups from `amis.yaml`, as the offline preview does.
"""

import runpy
from pathlib import Path

import pulumi
import pytest

from mixed_os_racks.testing import RackMocks, set_mocks

HERE = Path(__file__).parent
CONFIG = {"ml-platform:cluster_name": "shared-dev", "ml-platform:ami_id": "ami-0c1d2e3f405162738",
          "ml-platform:serving_pool": "ml"}


@pulumi.runtime.test
def run_program() -> None:
    """Runs __main__.py under the mocks, then waits for every registration (the SDK's test helper)."""
    runpy.run_path(str(HERE / "__main__.py"))


@pytest.fixture
def mocks() -> RackMocks:
    return set_mocks(RackMocks(amis=HERE / "amis.yaml", region="us-east-1"), project="ml-platform", stack="dev", config=CONFIG)


def test_the_training_pool_runs_the_teams_image_on_a_disk_that_fits_it(mocks):
    run_program()
    node_class = mocks.registered("kubernetes:karpenter.k8s.aws/v1:EC2NodeClass", "ml-nodeclass").inputs
    assert node_class["spec"]["amiSelectorTerms"] == [{"id": "ami-0c1d2e3f405162738"}]
    assert node_class["spec"]["blockDeviceMappings"][0]["ebs"]["volumeSize"] == "200Gi"
    # the root snapshot the look-up read (amis.yaml: 40 GiB), recorded for the policy pack
    assert node_class["metadata"]["annotations"]["mixed-os-racks/ami-root-snapshot-gib"] == "40"


def test_the_model_server_tolerates_the_lane_it_selects(mocks):
    run_program()
    # the inputs as the Kubernetes provider gets them: the SDK names the fields as Kubernetes does
    pod = mocks.registered("kubernetes:apps/v1:Deployment", "model-server").inputs["spec"]["template"]["spec"]
    (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert term == {"matchExpressions": [{"key": "convox.io/nodepool", "operator": "In", "values": ["ml"]}]}
    pool = mocks.registered("kubernetes:karpenter.sh/v1:NodePool", "ml-nodepool").inputs
    taints = pool["spec"]["template"]["spec"]["taints"]
    assert all(any(t["key"] == taint["key"] and t.get("value") in (None, taint.get("value")) for t in pod["tolerations"])
               for taint in taints)


def test_a_disk_below_the_images_snapshot_is_refused_when_the_program_runs():
    small = RackMocks(amis={"amis": [{
        "id": "ami-0c1d2e3f405162738", "name": "ml-al2023-x86_64-nvidia-580-1.34-v20261120",
        "description": "the team's image, rebuilt on a 500 GiB root disk", "architecture": "x86_64",
        "root_device_name": "/dev/xvda", "root_snapshot_gib": 500, "creation_date": "2026-11-20T10:00:00.000Z",
        "owner_id": "123456789012"}]})
    set_mocks(small, project="ml-platform", stack="dev", config=CONFIG)
    with pytest.raises(Exception, match=r"PoolSpec.disk: karpenter nodepool 'ml': disk 200 GiB is smaller than the root "
                                        r"snapshot of ami-0c1d2e3f405162738 \(500 GiB\); give it a disk of 500 GiB or more"):
        run_program()
