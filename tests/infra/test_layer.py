"""Infrastructure: the dependency layer ships ``pyproject.toml``'s runtime dependencies for
the functions' runtime and platform, less boto3 (the Lambda runtime has it)."""

from __future__ import annotations

from infra.constructs.functions import ARCHITECTURE, RUNTIME
from infra.layer import PLATFORM, PYTHON_VERSION, build_layer, layer_requirements


def test_requirements_are_the_runtime_dependencies_less_boto3():
    reqs = layer_requirements()
    names = " ".join(reqs)
    assert "aws-lambda-powertools" in names
    assert "pydantic" in names
    assert "boto3" not in names


def test_wheels_target_the_functions_runtime_and_architecture():
    assert RUNTIME.name == f"python{PYTHON_VERSION}"
    assert ARCHITECTURE.name == "arm64"
    assert PLATFORM.endswith("_aarch64")


def test_a_finished_build_is_reused_without_pip(tmp_path, monkeypatch):
    def no_pip(*args, **kwargs):
        raise AssertionError("pip must not run for a cached layer")

    reqs = ["example==1.0"]
    first = tmp_path / "cache"
    monkeypatch.setattr("infra.layer.subprocess.run", lambda *a, **k: None)
    built = build_layer(reqs, build_root=first)
    assert (built / "python").is_dir()
    monkeypatch.setattr("infra.layer.subprocess.run", no_pip)
    assert build_layer(reqs, build_root=first) == built
