"""The ``Service`` component: what it registers for the seeds' services, and every field checked.

Kubernetes facts relied on (k8s.io/apimachinery ``pkg/util/validation/validation.go``): a Service's
name is a DNS-1035 label (``[a-z]([-a-z0-9]*[a-z0-9])?``, at most 63); a namespace a DNS-1123 label;
a label key ``[prefix/]name`` with a DNS-1123 subdomain prefix and a name of at most 63 alphanumerics,
``-``, ``_`` and ``.``; an environment variable name ``[-._a-zA-Z][-._a-zA-Z0-9]*``. An autoscaling/v2
HorizontalPodAutoscaler's ``minReplicas`` is at least 1, and a CPU ``Utilization`` target is a
percentage of the pods' CPU request, so it needs one. The seeds' defaults (convox/convox
``pkg/manifest/manifest.go``): one replica, 250m CPU and 512Mi when no GPU is asked for, health on
``/`` every 5 s, a GPU service's TCP startup probe of 300 s + 180 x 10 s.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mixed_os_racks import ArgumentError, ClusterRef, Service, ServiceArgs, ServiceError, ServiceSpec
from mixed_os_racks.offline import ProgramRun, run_program

DEPLOYMENT = "kubernetes:apps/v1:Deployment"
SERVICE = "kubernetes:core/v1:Service"
HPA = "kubernetes:autoscaling/v2:HorizontalPodAutoscaler"

WEB = {
    "name": "web",
    "image": "nginxinc/nginx-unprivileged:1.27",
    "port": 8080,
    "health": "/health",
    "scale": {"count": "2-6", "cpu": 256, "memory": 512},
}
INFERENCE = {
    "name": "inference",
    "image": "vllm/vllm-openai:v0.6.4",
    "port": 8000,
    "internal": True,
    "scale": {"count": 1, "memory": 16384, "gpu": {"count": 1, "vendor": "nvidia"}},
    "nodeSelectorLabels": {"convox.io/label": "gpu-inference"},
}


def run(*services: dict[str, Any], namespace: str = "apps") -> ProgramRun:
    def program() -> None:
        cluster = ClusterRef.existing("prod", "prod-rack")
        for fields in services:
            Service(fields["name"], ServiceArgs(service=ServiceSpec(**fields), cluster=cluster, namespace=namespace))

    return run_program(program, {"aws:region": "us-east-1"}, stack="test")


def only(result: ProgramRun, type_: str, name: str) -> dict[str, Any]:
    (found,) = [r for r in result.resources if r.type == type_ and r.name == name]
    return found.inputs


def container(result: ProgramRun, name: str) -> dict[str, Any]:
    (body,) = only(result, DEPLOYMENT, f"{name}-deployment")["spec"]["template"]["spec"]["containers"]
    return body


def refusal(**fields: Any) -> str:
    with pytest.raises(ServiceError) as caught:
        ServiceSpec(**{"name": "web", "image": "nginx:1.27", "port": 80, **fields})
    return str(caught.value)


# ---- what it registers ------------------------------------------------------------------------------------------


def test_web_is_a_public_autoscaled_deployment_on_the_default_lane():
    result = run(WEB)
    component = [r for r in result.resources if r.type == "rack:index:Service"]
    assert [r.name for r in component] == ["web"]
    assert {r.name for r in result.resources if r.parent == component[0].urn} == {
        "web-deployment",
        "web-service",
        "web-autoscaler",
    }

    deployment = only(result, DEPLOYMENT, "web-deployment")
    assert deployment["metadata"]["name"] == "web" and deployment["metadata"]["namespace"] == "apps"
    assert deployment["metadata"]["annotations"] == {"mixed-os-racks/service": "web"}
    assert "replicas" not in deployment["spec"]  # the autoscaler owns it
    pod = deployment["spec"]["template"]["spec"]
    assert "affinity" not in pod and "tolerations" not in pod
    assert deployment["spec"]["selector"]["matchLabels"] == {"app.kubernetes.io/name": "web"}
    assert deployment["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] == "web"

    body = container(result, "web")
    assert body["image"] == "nginxinc/nginx-unprivileged:1.27"
    assert body["ports"] == [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]
    assert body["resources"] == {"requests": {"cpu": "256m", "memory": "512Mi"}, "limits": {"memory": "512Mi"}}
    assert body["readinessProbe"] == {
        "httpGet": {"path": "/health", "port": "http"},
        "initialDelaySeconds": 5,
        "periodSeconds": 5,
        "timeoutSeconds": 4,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
    assert body["livenessProbe"]["httpGet"] == {"path": "/health", "port": "http"}
    assert "startupProbe" not in body

    service = only(result, SERVICE, "web-service")
    assert service["metadata"]["name"] == "web"
    assert service["spec"] == {
        "type": "LoadBalancer",
        "selector": {"app.kubernetes.io/name": "web"},
        "ports": [{"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"}],
    }

    hpa = only(result, HPA, "web-autoscaler")
    assert hpa["metadata"]["name"] == "web"
    assert hpa["spec"] == {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2,
        "maxReplicas": 6,
        "metrics": [
            {
                "type": "Resource",
                "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 80}},
            }
        ],
    }


def test_inference_is_internal_on_the_gpu_node_group_with_its_tolerations():
    result = run(INFERENCE)
    deployment = only(result, DEPLOYMENT, "inference-deployment")
    assert deployment["spec"]["replicas"] == 1
    assert not [r for r in result.resources if r.type == HPA]
    pod = deployment["spec"]["template"]["spec"]
    assert pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "convox.io/label", "operator": "In", "values": ["gpu-inference"]}]}
    ]
    assert pod["tolerations"] == [
        {"key": "dedicated-node", "operator": "Equal", "value": "gpu-inference", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
    ]
    body = container(result, "inference")
    # a GPU service requests no CPU by default (the seeds'), GPUs as request and limit
    assert body["resources"] == {
        "requests": {"memory": "16384Mi", "nvidia.com/gpu": "1"},
        "limits": {"memory": "16384Mi", "nvidia.com/gpu": "1"},
    }
    assert body["startupProbe"] == {
        "tcpSocket": {"port": "http"},
        "initialDelaySeconds": 300,
        "periodSeconds": 10,
        "timeoutSeconds": 5,
        "successThreshold": 1,
        "failureThreshold": 180,
    }
    assert only(result, SERVICE, "inference-service")["spec"]["type"] == "ClusterIP"

    component = next(r for r in result.resources if r.type == "rack:index:Service")
    outputs = result.component_outputs[component.urn]
    assert outputs["deploymentName"] == "inference" and outputs["serviceName"] == "inference"
    assert outputs["namespace"] == "apps" and outputs["serviceType"] == "ClusterIP"
    assert outputs["scheduling"]["tolerations"] == pod["tolerations"]
    assert outputs["scheduling"]["gpuResources"] == {"nvidia.com/gpu": "1"}
    assert "autoscalerName" not in outputs or outputs["autoscalerName"] is None


def test_containers_are_locked_down_by_default_and_can_go_further():
    default = container(run(INFERENCE), "inference")["securityContext"]
    assert default == {
        "allowPrivilegeEscalation": False,
        "capabilities": {"drop": ["ALL"]},
        "seccompProfile": {"type": "RuntimeDefault"},
    }
    strict = {**WEB, "securityContext": {"runAsNonRoot": True, "readOnlyRootFilesystem": True}}
    result = run(strict)
    body = container(result, "web")
    assert body["securityContext"] == {**default, "runAsNonRoot": True, "readOnlyRootFilesystem": True}
    assert body["volumeMounts"] == [{"name": "tmp", "mountPath": "/tmp"}]
    assert only(result, DEPLOYMENT, "web-deployment")["spec"]["template"]["spec"]["volumes"] == [
        {"name": "tmp", "emptyDir": {}}
    ]


def test_the_seeds_defaults_and_environment():
    result = run({"name": "worker", "image": "busybox:1.36", "port": 9000, "environment": ["MODE=batch", "EMPTY="]})
    body = container(result, "worker")
    assert only(result, DEPLOYMENT, "worker-deployment")["spec"]["replicas"] == 1
    assert body["resources"] == {"requests": {"cpu": "250m", "memory": "512Mi"}, "limits": {"memory": "512Mi"}}
    assert body["readinessProbe"]["httpGet"]["path"] == "/"
    assert body["env"] == [{"name": "MODE", "value": "batch"}, {"name": "EMPTY", "value": ""}]


def test_the_python_spelling_and_the_seeds_spelling_are_one_spec():
    seeds = ServiceSpec(**INFERENCE)
    python = ServiceSpec(
        name="inference",
        image="vllm/vllm-openai:v0.6.4",
        port=8000,
        internal=True,
        scale={"count": 1, "memory": 16384, "gpu": 1},
        node_selector_labels={"convox.io/label": "gpu-inference"},
    )
    assert seeds == python
    assert ServiceSpec(name="w", image="i", port=1, scale=3).scale.count == (3, 3)
    assert (
        ServiceSpec(
            name="w", image="i", port=1, scale="1-4", health={"path": "/up", "interval": 10}
        ).health.check_timeout
        == 9
    )


# ---- arguments and values refused ------------------------------------------------------------------------------


def test_component_arguments_are_checked():
    def build(**args: Any) -> None:
        run_program(
            lambda: Service("web", {**args, "cluster": ClusterRef.existing("c", "c")}),  # type: ignore[arg-type]
            {"aws:region": "us-east-1"},
        )

    with pytest.raises(ArgumentError, match=r"^Service 'web': service: required \(expected ServiceSpec\)$"):
        build()
    with pytest.raises(ArgumentError, match=r"^Service 'web': service: expected ServiceSpec, got list"):
        build(service=[WEB])
    # the service as data (as the component provider passes it): its problems at their paths under service
    with pytest.raises(ArgumentError, match=r"^Service 'web': service.port: invalid port '0' \(1-65535\)$"):
        build(service={**WEB, "port": 0})
    with pytest.raises(ArgumentError) as caught:
        build(service=ServiceSpec(**WEB), namespace="Team_A")
    assert str(caught.value).startswith("Service 'web': namespace: invalid namespace 'Team_A' (lowercase letters")


@pytest.mark.parametrize(
    ("fields", "line"),
    [
        (
            {"name": "Web"},
            "Service 'Web': name: invalid name 'Web' (lowercase letters, digits and '-', starting with a letter",
        ),
        ({"name": "9lives"}, "Service '9lives': name: invalid name '9lives'"),
        ({"name": "a" * 64}, f"Service '{'a' * 64}': name: invalid name"),
        (
            {"image": "nginx 1.27"},
            "Service 'web': image: invalid image 'nginx 1.27' (a reference like nginx:1.27, with no spaces)",
        ),
        ({"port": 0}, "Service 'web': port: invalid port '0' (1-65535)"),
        ({"port": 70000}, "Service 'web': port: invalid port '70000' (1-65535)"),
        ({"port": True}, "Service 'web': port: expected a number, got true"),
        (
            {"port": "eighty"},
            "Service 'web': port: input should be a valid integer, unable to parse string as an integer (got "
            '"eighty")',
        ),
        (
            {"scale": {"count": "2-"}},
            "Service 'web': scale.count: invalid count '2-' (use a number like 2 or a range like 2-6)",
        ),
        (
            {"scale": {"count": "6-2"}},
            "Service 'web': scale.count: invalid count '6-2' (the minimum 6 is above the maximum 2)",
        ),
        (
            {"scale": {"count": "0-3"}},
            "Service 'web': scale.count: invalid count '0-3' (an autoscaled range starts at 1 or more)",
        ),
        (
            {"scale": {"count": "1-3", "gpu": 1}},
            "Service 'web': scale.count: range '1-3' autoscales on CPU, which needs scale.cpu",
        ),
        ({"scale": {"cpu": 0}}, "Service 'web': scale.cpu: invalid value '0' (must be positive)"),
        ({"scale": {"memory": -512}}, "Service 'web': scale.memory: invalid value '-512' (must be positive)"),
        ({"scale": {"gpu": -1}}, "Service 'web': scale.gpu.count: invalid count '-1' (0 or more)"),
        (
            {"scale": {"gpu": {"count": 1, "vendor": "intel"}}},
            "Service 'web': scale.gpu.vendor: invalid vendor 'intel' (one of nvidia, nvidia.com, amd, amd.com)",
        ),
        (
            {"scale": {"targets": {"cpu": 1001}}},
            "Service 'web': scale.targets.cpu: invalid cpu target '1001' (percent of the CPU request, 1-1000",
        ),
        ({"scale": {"keda": {}}}, "Service 'web': scale.keda: unknown field"),
        ({"health": "health"}, "Service 'web': health.path: invalid path 'health' (an HTTP path like /health)"),
        (
            {"health": {"path": "/", "interval": 0}},
            "Service 'web': health.interval: invalid value '0' (seconds, 1 to 2147483647: a probe's seconds are a "
            "32-bit integer)",
        ),
        ({"environment": ["SECRET"]}, "Service 'web': environment: entry 'SECRET' has no value (write KEY=value)"),
        ({"environment": ["A=1", "A=2"]}, "Service 'web': environment: 'A' is set twice"),
        (
            {"environment": {"1ST": "x"}},
            "Service 'web': environment: invalid name '1ST' (letters, digits, '_', '-' or '.', not starting with a "
            "digit)",
        ),
        ({"environment": {"PORT": 80}}, "Service 'web': environment.PORT: input should be a valid string (got 80)"),
        (
            {"nodeSelectorLabels": {"convox.io/label": "GPU inference"}},
            "Service 'web': nodeSelectorLabels: invalid value 'GPU inference' for 'convox.io/label'",
        ),
        (
            {"nodeSelectorLabels": {"Convox.IO/label": "gpu"}},
            "Service 'web': nodeSelectorLabels: invalid label key 'Convox.IO/label' (its prefix must be a lowercase "
            "DNS subdomain",
        ),
        ({"securityContext": {"privileged": True}}, "Service 'web': securityContext.privileged: unknown field"),
        ({"domain": "web.example.com"}, "Service 'web': domain: unknown field"),
    ],
)
def test_every_field_is_checked_with_its_path_and_value(fields, line):
    assert refusal(**fields).startswith(line)


def test_every_problem_is_its_own_line():
    lines = refusal(port=0, scale={"count": "x"}, environment=["X"]).splitlines()
    assert lines == [
        "Service 'web': port: invalid port '0' (1-65535)",
        "Service 'web': environment: entry 'X' has no value (write KEY=value)",
        "Service 'web': scale.count: invalid count 'x' (use a number like 2 or a range like 2-6)",
    ]


def test_a_bad_service_stops_the_preview_before_anything_exists(capsys, tmp_path):
    """The offline preview prints it as ``error:`` lines and exits 2, as for a bad rack config."""
    from mixed_os_racks.cli import main
    from conftest import REPO

    config = tmp_path / "Pulumi.bad.yaml"
    text = (REPO / "examples" / "mixed-app" / "Pulumi.example.yaml").read_text().replace("count: 2-6", "count: 2-")
    config.write_text(text)
    code = main(["preview", "--cwd", str(REPO / "examples" / "mixed-app"), "--config", str(config), "--no-policy"])
    err = capsys.readouterr().err
    assert code == 2
    assert (
        f"error: {config}:40: app:services.web.scale.count: invalid count '2-' (use a number like 2 or a range like "
        f"2-6)" in err
    )


@given(low=st.integers(min_value=0, max_value=50), high=st.integers(min_value=0, max_value=50))
def test_counts_and_ranges(low, high):
    text = f"{low}-{high}"
    if low > high or (low != high and low < 1):
        with pytest.raises(ServiceError, match=r"^Service 'w': scale\.count: invalid count"):
            ServiceSpec(name="w", image="i", port=1, scale={"count": text, "cpu": 100})
    else:
        scale = ServiceSpec(name="w", image="i", port=1, scale={"count": text, "cpu": 100}).scale
        assert scale.count == (low, high) and scale.autoscaled == (low != high)


@given(name=st.text(st.sampled_from("abcxyz0189-_.A "), min_size=1, max_size=70))
def test_names_follow_kubernetes_dns_1035(name):
    valid = (
        len(name) <= 63
        and name[0].isalpha()
        and name[0].islower()
        and name[-1] not in "-"
        and all(c.islower() or c.isdigit() or c == "-" for c in name)
    )
    if valid:
        assert ServiceSpec(name=name, image="i", port=1).name == name
    else:
        with pytest.raises(ServiceError, match=r": name: invalid name"):
            ServiceSpec(name=name, image="i", port=1)


@given(key=st.text(st.sampled_from("ab9-_./X"), min_size=1, max_size=20))
def test_label_keys_follow_kubernetes(key):
    import re

    prefix, slash, name = key.rpartition("/")
    prefix_ok = not slash or (
        bool(prefix) and re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", prefix)
    )
    name_ok = bool(name) and len(name) <= 63 and re.fullmatch(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]", name)
    if prefix_ok and name_ok:
        assert ServiceSpec(name="w", image="i", port=1, nodeSelectorLabels={key: "v"}).node_selector_labels == {
            key: "v"
        }
    else:
        with pytest.raises(ServiceError, match=r"nodeSelectorLabels: invalid label key"):
            ServiceSpec(name="w", image="i", port=1, nodeSelectorLabels={key: "v"})
