"""The Helm chart (deploy/helm/threadline), rendered by Helm itself and each manifest checked against
Kubernetes' own schemas: several replicas that stay up through a disruption, probes on /health/live and
/health/ready, the secret and the database from a Secret, resource requests; bad values are refused."""

from __future__ import annotations

import subprocess
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
CHART = ROOT / "deploy" / "helm" / "threadline"
HELM = ROOT / "deploy" / "tools" / "node_modules" / ".bin" / "helm"  # `python3 tasks.py test` installs it

pytestmark = pytest.mark.skipif(not HELM.exists(), reason="no Helm (python3 tasks.py test installs it with npm)")


def helm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(HELM), *args], capture_output=True, text=True, timeout=60)


def rendered(*sets: str) -> dict[str, dict]:
    result = helm("template", "chat", str(CHART), *(arg for value in sets for arg in ("--set", value)))
    assert result.returncode == 0, result.stderr
    return {document["kind"]: document for document in yaml.safe_load_all(result.stdout) if document}


def test_the_chart_lints_and_every_manifest_is_valid_kubernetes():
    linted = helm("lint", "--strict", str(CHART))
    assert linted.returncode == 0, linted.stdout + linted.stderr
    manifests = rendered("redisUrl=redis://redis:6379/0", "env.CHAT_MODEL_PROVIDER=openai")
    assert set(manifests) == {"Deployment", "Service", "PodDisruptionBudget"}
    for manifest in manifests.values():
        kubernetes_validate.validate(manifest, "1.30.0", strict=True)


def test_replicas_probes_secrets_and_resources():
    manifests = rendered("redisUrl=redis://redis:6379/0")
    deployment, budget, service = manifests["Deployment"], manifests["PodDisruptionBudget"], manifests["Service"]
    assert deployment["spec"]["replicas"] >= 2 and budget["spec"]["minAvailable"] == 1
    pod = deployment["spec"]["template"]
    assert budget["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    (container,) = pod["spec"]["containers"]
    assert container["readinessProbe"]["httpGet"]["path"] == "/health/live", "ready through a database outage"
    assert container["livenessProbe"]["httpGet"]["path"] == "/health/live"
    assert container["startupProbe"]["httpGet"]["path"] == "/health/live", "migrations may take a while"
    env = {variable["name"]: variable for variable in container["env"]}
    assert env["THREADLINE_SECRET"]["valueFrom"]["secretKeyRef"] == {"name": "threadline", "key": "secret"}
    assert env["THREADLINE_DATABASE_URL"]["valueFrom"]["secretKeyRef"]["key"] == "database-url"
    assert env["THREADLINE_RATE_LIMIT_STORAGE"]["value"] == "redis://redis:6379/0"
    assert container["resources"]["requests"]["cpu"] and container["resources"]["requests"]["memory"]
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert pod["spec"]["terminationGracePeriodSeconds"] > int(env["THREADLINE_SHUTDOWN_GRACE"]["value"])


def test_the_pod_passes_pod_security_restricted_and_takes_its_redis_url_from_a_secret():
    """Kubernetes' "restricted" profile: non-root, no privilege escalation, every capability dropped, the runtime's
    seccomp profile; no service account token (threadline never calls the API); a password-bearing Redis URL from
    a Secret; and no address range trusted to name its clients unless set."""
    manifests = rendered("redisUrlSecret.name=redis", "redisUrlSecret.key=url")
    pod = manifests["Deployment"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert pod["automountServiceAccountToken"] is False
    env = {variable["name"]: variable for variable in container["env"]}
    assert env["THREADLINE_RATE_LIMIT_STORAGE"]["valueFrom"]["secretKeyRef"] == {"name": "redis", "key": "url"}
    assert "THREADLINE_TRUSTED_PROXIES" not in env


def test_the_operators_token_comes_from_the_secret_when_named():
    """With `secret.adminTokenKey`, CHAT_ADMIN_TOKEN comes from the Secret, and /metrics is the operators' (their
    token, which Prometheus sends as its bearer); without it there is none (NOTES.txt says /metrics is open)."""

    def env(*sets: str) -> dict[str, dict]:
        (container,) = rendered(*sets)["Deployment"]["spec"]["template"]["spec"]["containers"]
        return {variable["name"]: variable for variable in container["env"]}

    token = env("secret.adminTokenKey=admin-token")["THREADLINE_CHAT_ADMIN_TOKEN"]
    assert token["valueFrom"]["secretKeyRef"] == {"name": "threadline", "key": "admin-token"}
    assert "THREADLINE_CHAT_ADMIN_TOKEN" not in env()


def test_bad_values_are_refused_when_rendering():
    refused = helm("template", "chat", str(CHART), "--set", "redisUrl=memcached://x")
    assert refused.returncode != 0 and "redisUrl" in refused.stderr
    refused = helm("template", "chat", str(CHART), "--set", "secret.name=")
    assert refused.returncode != 0 and "secret.name" in refused.stderr
