"""``NvidiaDevicePlugin`` and ``GpuObservability``: the charts they register, their values against the
charts' own ``values.yaml``, where they land, and the prod example's GPU tier in the offline preview."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

import pulumi

from mixed_os_racks import contract
from mixed_os_racks import ClusterRef, GpuObservability, NvidiaDevicePlugin
from conftest import reference
from mixed_os_racks.offline import ProgramRun, Resource, run_program
from mixed_os_racks.cli import main as offline_cli

REPO = Path(__file__).resolve().parents[1]
CHART = "kubernetes:helm.sh/v4:Chart"
MNG = "eks:index:ManagedNodeGroup"
NODEPOOL = "kubernetes:karpenter.sh/v1:NodePool"


def run(**rack: Any) -> ProgramRun:
    config: dict[str, Any] = {"aws:region": "us-east-1", "rack:cluster_name": "test-rack"}
    config.update({f"rack:{k}": v for k, v in rack.items()})
    return run_program(REPO, config, stack="test")


def charts(run_: ProgramRun) -> dict[str, dict[str, Any]]:
    """Chart inputs by chart name."""
    return {r.inputs["chart"]: r.inputs for r in run_.resources if r.type == CHART}


def only(run_: ProgramRun, type_: str) -> Resource:
    found = [r for r in run_.resources if r.type == type_]
    assert len(found) == 1, [r.name for r in found]
    return found[0]


@pytest.fixture(scope="module")
def gpu_tier() -> ProgramRun:
    return run(
        nvidia_device_plugin_enable=True,
        nvidia_device_time_slicing_replicas=4,
        gpu_observability_enable=True,
        additional_node_groups_config=[{"type": "g5.xlarge", "dedicated": True, "label": "gpu"}],
        additional_build_groups_config=[{"type": "g4dn.xlarge", "dedicated": True, "label": "gpu-builds"}],
        additional_karpenter_nodepools_config=[
            {"name": "gpu", "instance_families": "g5,g6", "dedicated": True, "taints": "nvidia.com/gpu=true:NoSchedule"}
        ],
    )


# ---- what each chart registers ---------------------------------------------------------------------------


def test_device_plugin_chart(gpu_tier: ProgramRun) -> None:
    chart = charts(gpu_tier)["nvidia-device-plugin"]
    assert chart["version"] == "0.20.0"
    assert chart["repositoryOpts"] == {"repo": "https://nvidia.github.io/k8s-device-plugin"}
    assert chart["namespace"] == "kube-system"
    values = chart["values"]
    assert values["affinity"] == {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [
                    {"matchExpressions": [{"key": "convox.io/gpu-vendor", "operator": "In", "values": ["nvidia"]}]}
                ]
            }
        }
    }
    tolerated = {(t["key"], t["operator"], t["effect"]) for t in values["tolerations"]}
    assert {
        ("CriticalAddonsOnly", "Exists", "NoSchedule"),
        ("nvidia.com/gpu", "Exists", "NoSchedule"),
        ("dedicated-node", "Exists", "NoSchedule"),
    } <= tolerated


def test_device_plugin_time_slicing_uses_the_charts_config_map(gpu_tier: ProgramRun) -> None:
    config = charts(gpu_tier)["nvidia-device-plugin"]["values"]["config"]
    assert set(config) == {"map", "default"}
    assert config["default"] in config["map"]
    plugin_config = yaml.safe_load(config["map"][config["default"]])
    assert plugin_config == {
        "version": "v1",
        "sharing": {"timeSlicing": {"resources": [{"name": "nvidia.com/gpu", "replicas": 4}]}},
    }


def test_no_time_slicing_config_by_default() -> None:
    values = charts(run(nvidia_device_plugin_enable=True))["nvidia-device-plugin"]["values"]
    assert "config" not in values


def test_dcgm_exporter_chart(gpu_tier: ProgramRun) -> None:
    chart = charts(gpu_tier)["dcgm-exporter"]
    assert chart["version"] == "4.8.2"
    assert chart["repositoryOpts"] == {"repo": "https://nvidia.github.io/dcgm-exporter/helm-charts"}
    assert chart["namespace"] == "kube-system"
    values = chart["values"]
    plugin = charts(gpu_tier)["nvidia-device-plugin"]["values"]
    assert values["affinity"] == plugin["affinity"]
    assert values["tolerations"] == plugin["tolerations"]
    assert values["resources"] == {
        "requests": {"cpu": "100m", "memory": "128Mi"},
        "limits": {"cpu": "200m", "memory": "512Mi"},
    }
    assert values["serviceMonitor"] == {"enabled": False}  # the chart's default is true


def test_dcgm_exporter_version_and_service_monitor_from_config() -> None:
    chart = charts(
        run(
            nvidia_device_plugin_enable=True,
            gpu_observability_enable=True,
            gpu_observability_chart_version="4.9.1",
            gpu_observability_service_monitor=True,
        )
    )["dcgm-exporter"]
    assert chart["version"] == "4.9.1"
    assert chart["values"]["serviceMonitor"] == {"enabled": True}


def test_charts_only_when_enabled() -> None:
    assert charts(run()) == {}
    assert set(charts(run(nvidia_device_plugin_enable=True))) == {"nvidia-device-plugin"}


def test_chart_components_nest_under_the_rack_with_its_kubernetes_provider(gpu_tier: ProgramRun) -> None:
    plugin = only(gpu_tier, "rack:index:NvidiaDevicePlugin")
    exporter = only(gpu_tier, "rack:index:GpuObservability")
    assert (plugin.name, exporter.name) == ("rack-nvidia-device-plugin", "rack-gpu-observability")
    assert plugin.parent.endswith("rack:index:Rack::rack") and exporter.parent.endswith("rack:index:Rack::rack")
    provider = only(gpu_tier, "pulumi:providers:kubernetes")
    for chart in (r for r in gpu_tier.resources if r.type == CHART):
        assert chart.parent in (plugin.urn, exporter.urn)
        assert chart.provider.startswith(provider.urn + "::")


# ---- the DaemonSets land on every GPU lane --------------------------------------------------------------


def _selected(affinity: dict[str, Any], labels: dict[str, str]) -> bool:
    terms = affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    return any(
        all(e["operator"] == "In" and labels.get(e["key"]) in e["values"] for e in term["matchExpressions"])
        for term in terms
    )


def _tolerated(tolerations: list[dict[str, str]], taint: dict[str, str]) -> bool:
    return any(
        t["key"] == taint["key"] and t["operator"] == "Exists" and t.get("effect") in (None, taint["effect"])
        for t in tolerations
    )


def _lanes(run_: ProgramRun) -> Iterator[tuple[str, dict[str, str], list[dict[str, str]]]]:
    """(name, node labels, node taints in Kubernetes spelling) of every GPU node group and pool."""
    effects = {"NO_SCHEDULE": "NoSchedule", "NO_EXECUTE": "NoExecute", "PREFER_NO_SCHEDULE": "PreferNoSchedule"}
    for r in run_.resources:
        if r.type == MNG:
            taints = [{**t, "effect": effects[t["effect"]]} for t in r.inputs.get("taints", [])]
            yield r.name, r.inputs["labels"], taints
        elif r.type == NODEPOOL:
            template = r.inputs["spec"]["template"]
            yield r.name, template["metadata"]["labels"], template["spec"].get("taints", [])


def test_daemonsets_land_on_every_gpu_lane_and_no_other(gpu_tier: ProgramRun) -> None:
    lanes = list(_lanes(gpu_tier))
    assert {name for name, _, _ in lanes} == {
        "rack-ng-0",
        "rack-build-0",
        "rack-gpu-nodepool",
        "rack-workload-nodepool",
    }
    for chart in ("nvidia-device-plugin", "dcgm-exporter"):
        values = charts(gpu_tier)[chart]["values"]
        for name, labels, taints in lanes:
            is_gpu = name != "rack-workload-nodepool"
            assert _selected(values["affinity"], labels) is is_gpu, (chart, name)
            if is_gpu:
                untolerated = [t for t in taints if not _tolerated(values["tolerations"], t)]
                assert untolerated == [], (chart, name)


# ---- values keys exist in the charts' own values.yaml ------------------------------------------------------


def unknown_keys(values: dict[str, Any], reference: dict[str, Any], path: str = "") -> list[str]:
    """Key paths set in ``values`` that the chart's ``values.yaml`` does not have. Below a list, a
    scalar or an empty map (``affinity: {}``, ``config.map: {}``) the chart takes free-form values."""
    missing: list[str] = []
    for key, value in values.items():
        where = f"{path}.{key}" if path else key
        if key not in reference:
            missing.append(where)
        elif isinstance(value, dict) and isinstance(reference[key], dict) and reference[key]:
            missing += unknown_keys(value, reference[key], where)
    return missing


def reference_values(chart_dir: str) -> dict[str, Any]:
    return yaml.safe_load(reference(chart_dir, "values.yaml").read_text())


def test_unknown_keys_finds_a_misspelt_key() -> None:
    reference = {"serviceMonitor": {"enabled": True}, "affinity": {}, "config": {"map": {}}}
    assert unknown_keys({"serviceMonitor": {"enable": False}, "afinity": {}}, reference) == [
        "serviceMonitor.enable",
        "afinity",
    ]
    assert unknown_keys({"affinity": {"nodeAffinity": {}}, "config": {"map": {"any": "x"}}}, reference) == []


@pytest.mark.parametrize("replicas", [1, 4])
def test_device_plugin_values_exist_in_the_chart(replicas: int) -> None:
    reference = reference_values("nvidia-device-plugin-0.20.0")
    values = charts(run(nvidia_device_plugin_enable=True, nvidia_device_time_slicing_replicas=replicas))[
        "nvidia-device-plugin"
    ]["values"]
    assert unknown_keys(values, reference) == []


@pytest.mark.parametrize("service_monitor", [False, True])
def test_dcgm_exporter_values_exist_in_the_chart(service_monitor: bool) -> None:
    reference = reference_values("dcgm-exporter-4.8.2")
    values = charts(
        run(
            nvidia_device_plugin_enable=True,
            gpu_observability_enable=True,
            gpu_observability_service_monitor=service_monitor,
        )
    )["dcgm-exporter"]["values"]
    assert unknown_keys(values, reference) == []


# ---- used on their own, in another program ---------------------------------------------------------------------


def test_components_work_outside_the_rack() -> None:
    def program() -> None:
        cluster = ClusterRef.existing("other", "other")
        plugin = NvidiaDevicePlugin("plugin", {"cluster": cluster, "time_slicing_replicas": 2})
        GpuObservability("metrics", {"cluster": cluster, "version": "4.8.2", "service_monitor": True})
        pulumi.export("release", plugin.release_name)
        pulumi.export("namespace", plugin.namespace)

    r = run_program(program, {})
    assert r.outputs == {"release": "plugin", "namespace": "kube-system"}
    found = charts(r)
    assert (
        yaml.safe_load(found["nvidia-device-plugin"]["values"]["config"]["map"]["time-slicing"])["sharing"][
            "timeSlicing"
        ]["resources"][0]["replicas"]
        == 2
    )
    assert found["dcgm-exporter"]["values"]["serviceMonitor"] == {"enabled": True}
    assert {r.name for r in r.resources if r.type == CHART} == {"plugin", "metrics"}


# ---- the prod example ------------------------------------------------------------------------------------------


def test_prod_offline_preview_shows_the_gpu_tier(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out_json = tmp_path / "prod.json"
    code = offline_cli(["preview", "--stack", "prod", "--cwd", str(REPO), "--json", str(out_json)])
    out = capsys.readouterr().out
    assert code == 0
    lines = out.splitlines()
    for type_, name in [
        ("rack:index:NodeGroup", "rack-ng-1"),
        ("aws:ec2/launchTemplate:LaunchTemplate", "rack-ng-1-launch-template"),
        ("aws:iam/role:Role", "rack-ng-1-role"),
        ("eks:index:ManagedNodeGroup", "rack-ng-1"),
        ("rack:index:NvidiaDevicePlugin", "rack-nvidia-device-plugin"),
        ("kubernetes:helm.sh/v4:Chart", "rack-nvidia-device-plugin"),
    ]:
        assert any(type_ in line and line.endswith(f" {name}") for line in lines), (type_, name)
    assert any(line.startswith("    nodeGroups ") and line.endswith(': ["rack-ng-1"]') for line in lines)

    resources = yaml.safe_load(out_json.read_text())["resources"]
    group = next(r for r in resources if r["type"] == MNG and r["name"] == "rack-ng-1")["inputs"]
    assert group["instanceTypes"] == ["g4dn.xlarge"]
    assert group["scalingConfig"] == {"minSize": 1, "maxSize": 3, "desiredSize": 1}
    assert group["labels"] == {
        contract.NODEGROUP_LABEL: "gpu-inference",
        contract.GPU_VENDOR_LABEL: "nvidia",
        "k8s.amazonaws.com/accelerator": "nvidia-tesla-t4",
    }
    assert {"key": "dedicated-node", "value": "gpu-inference", "effect": "NO_SCHEDULE"} in group["taints"]
    assert group["amiType"] == "AL2023_x86_64_NVIDIA"
