"""What a deployment installs, checked where Docker cannot run: the image installs the production lock (hashed,
no development, benchmark or docs package) and the wheel, runs as a user of its own and says when it is ready;
compose restarts and health-checks the app."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def pins(lock: Path) -> dict[str, str]:
    return {
        name.lower().replace("_", "-"): version
        for name, version in re.findall(r"^([A-Za-z0-9_.\-]+)==([^\s;\\]+)", lock.read_text(), re.M)
    }


def name_of(requirement: str) -> str:
    return re.split(r"[\s\[<>=;]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def test_the_production_lock_has_no_development_package_and_the_same_pins_as_the_development_lock():
    production, development = pins(ROOT / "requirements" / "production.lock"), pins(ROOT / "requirements.lock")
    groups = {name_of(requirement) for group in PYPROJECT["dependency-groups"].values() for requirement in group}
    for left_out in ("pytest", "playwright", "mypy", "ruff", "moto", "flask", "matplotlib", "mkdocs", "hypothesis"):
        assert left_out in development and left_out not in production, left_out
    assert not groups & set(production), "a development, benchmark or docs package would reach production"
    differ = {name: version for name, version in production.items() if development.get(name, version) != version}
    assert differ == {}, "the same versions (packages of other platforms aside)"
    assert "--hash=sha256:" in (ROOT / "requirements" / "production.lock").read_text()


def test_the_image_installs_the_production_lock_and_the_wheel_and_runs_as_its_own_user():
    dockerfile = (ROOT / "Dockerfile").read_text()
    final = dockerfile.rsplit("\nFROM ", 1)[1]
    installs = re.findall(r"pip install[^\n]*", final)
    assert installs[0].endswith("--require-hashes -r production.lock"), installs
    assert "--no-deps /wheels/*.whl" in installs[1]
    assert "requirements.lock" not in dockerfile, "the development lock never reaches the image"
    (user,) = re.findall(r"^USER (\S+)", final, re.M)
    assert user not in ("root", "0")
    assert "HEALTHCHECK" in final and "/health/ready" in final
    assert "COPY --from=frontend /frontend/dist ./backend/threadline/page" in dockerfile, "the page is in the wheel"


def test_compose_restarts_and_health_checks_the_app():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    for name in ("app", "app2"):
        assert services[name]["restart"] == "unless-stopped"
        assert "/health/ready" in " ".join(services[name]["healthcheck"]["test"])
    assert services["nginx"]["depends_on"]["app"]["condition"] == "service_healthy"


def test_the_shipped_proxy_rules_never_send_a_timed_out_request_again():
    """nginx's `timeout` in proxy_next_upstream would resend a slow POST /api/chat (an answer waiting its turn, still
    running on the first process) to the next one; only a request that could not connect is tried again."""
    rules = (ROOT / "deploy" / "nginx" / "threadline.conf").read_text()
    (retry,) = re.findall(r"^\s*proxy_next_upstream\s+([^;]+);", rules, re.M)
    assert retry.split() == ["error", "non_idempotent"]
    assert re.search(r"^\s*client_max_body_size\s+(\d+)m;", rules, re.M)[1] == "48", "above the server's 41 MB"
