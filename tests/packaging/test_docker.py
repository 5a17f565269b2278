"""The Dockerfile's shape, checked where no Docker daemon runs (`make docker` builds it).

Small (two stages on the slim Python, no compiler in the image), bytecode compiled, run as a
user without privileges, labelled for the MCP Registry, started on stdio with the command line
the README's Docker lines use; and the build context holds only the packages and the lock.
"""

import json
import re
from pathlib import Path

import pytest
from extra_libs import script

from mcpkit.hosts import HOSTS, Launch

ROOT = Path(__file__).resolve().parents[2]
DOCKER = ROOT / "packaging/docker"
host_docs = script("host_docs")
registry = script("registry")


def instructions() -> list[tuple[str, str]]:
    """Return the Dockerfile's instructions: (keyword, arguments), continuations joined."""
    text = re.sub(r"\\\n", " ", (DOCKER / "Dockerfile").read_text())
    found: list[tuple[str, str]] = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.append((keyword.upper(), " ".join(rest.split())))
    return found


def stages() -> list[list[tuple[str, str]]]:
    """Return the instructions of each build stage (the ARGs before the first FROM dropped)."""
    result: list[list[tuple[str, str]]] = []
    for keyword, rest in instructions():
        if keyword == "FROM":
            result.append([])
        if result:
            result[-1].append((keyword, rest))
    return result


def test_two_stages_on_the_slim_python() -> None:
    build, image = stages()
    assert build[0] == ("FROM", "python:${PYTHON}-slim AS build")
    assert image[0] == ("FROM", "python:${PYTHON}-slim")
    assert ("COPY", "--from=build /opt/mcpkit /opt/mcpkit") in image


def test_no_compiler_reaches_the_image_and_bytecode_is_compiled() -> None:
    build, image = stages()
    image_text = " ".join(rest for _, rest in image)
    for tool in ("gcc", "build-essential", "clang", "pip install", "uv "):
        assert tool not in image_text
    assert any("UV_COMPILE_BYTECODE=1" in rest for keyword, rest in build if keyword == "RUN")


def test_it_runs_as_a_user_without_privileges() -> None:
    _, image = stages()
    users = [rest for keyword, rest in image if keyword == "USER"]
    assert users, "no USER: the server would run as root"
    assert users[-1].split(":")[0] not in ("0", "root")
    assert image[-1][0] == "ENTRYPOINT"  # nothing runs as root after the switch but the server


def test_the_entrypoint_is_the_server_on_stdio() -> None:
    _, image = stages()
    entrypoint = next(rest for keyword, rest in image if keyword == "ENTRYPOINT")
    assert json.loads(entrypoint) == ["mcp-server"]  # exec form: signals reach the server
    build, _ = stages()
    assert any('/opt/mcpkit/bin/mcp-${SERVER}" /opt/mcpkit/bin/mcp-server' in r for _, r in build)


def test_the_registry_label_names_the_server() -> None:
    _, image = stages()
    labels = " ".join(rest for keyword, rest in image if keyword == "LABEL")
    expected = registry.server_name("mcpkit-${SERVER}")
    assert f'io.modelcontextprotocol.server.name="{expected}"' in labels


def test_the_build_context_is_only_the_packages() -> None:
    lines = (DOCKER / "Dockerfile.dockerignore").read_text().splitlines()
    rules = [line for line in lines if line and not line.startswith("#")]
    assert rules[0] == "*"
    assert {"!pyproject.toml", "!uv.lock", "!shared/", "!servers/"} <= set(rules)


@pytest.mark.parametrize("launch", host_docs.SERVERS.values(), ids=lambda launch: launch.key)
def test_the_readme_docker_lines_run_the_image_make_docker_tags(launch: Launch) -> None:
    docker = next(host for host in HOSTS if host.name == "Docker")
    assert docker.stdio is not None
    command = docker.stdio(launch)[0].text.split()
    assert command[:5] == ["docker", "run", "-i", "--rm", "--init"]
    makefile = (ROOT / "Makefile").read_text()
    assert "-t mcpkit-$$server" in makefile
    assert f"mcpkit-{launch.key}" in command
