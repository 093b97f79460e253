"""Cold start: a client that many invocations never use (Step Functions: most
schedule nothing; the Management API: ``$connect`` never pushes) is built on first use, and a
container's clients come from one boto3 session."""

from __future__ import annotations

from typing import Any

import pytest

from shared.adapters.notifier import ApiGatewayNotifier
from shared.adapters.step_functions import StepFunctionsClock
from shared.runtime import bootstrap
from shared.runtime.settings import Settings
from shared.services.ports import Timer, TimerKind


class _Sfn:
    def __init__(self) -> None:
        self.started: list[dict[str, Any]] = []

    def start_execution(self, **kwargs: Any) -> dict[str, Any]:
        self.started.append(kwargs)
        return {"executionArn": "arn"}


def test_the_step_functions_client_is_built_on_the_first_schedule_only() -> None:
    built: list[_Sfn] = []

    def factory() -> _Sfn:
        built.append(_Sfn())
        return built[-1]

    clock = StepFunctionsClock(None, "arn:machine", lambda: 1_000, client_factory=factory)
    assert built == []  # a guess that passes the turn, a ping: nothing scheduled, no client
    clock.schedule(Timer(TimerKind.INTRO, "t1", 1, 7_000))
    clock.schedule(Timer(TimerKind.RECONNECT, "p1", 1, 61_000))
    assert len(built) == 1
    assert [c["stateMachineArn"] for c in built[0].started] == ["arn:machine", "arn:machine"]


def test_a_clock_without_a_client_or_a_factory_is_refused() -> None:
    with pytest.raises(ValueError, match="client"):
        StepFunctionsClock(None, "arn:machine")


def test_build_makes_its_clients_from_one_session_and_no_step_functions_client(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made: list[tuple[str, Any]] = []
    real = bootstrap.client

    def recording(
        service: str, settings: Settings, endpoint: Any = None, session: Any = None
    ) -> Any:
        made.append((service, session))
        return real(service, settings, endpoint, session=session)

    monkeypatch.setattr(bootstrap, "client", recording)
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "x")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "x")
    settings = Settings.from_env(
        {"CALLBACK_URL": "https://abc.execute-api.us-east-1.amazonaws.com/prod"}
    )
    deps = bootstrap.build(settings)
    assert [service for service, _ in made] == ["dynamodb"]
    assert made[0][1] is not None
    assert isinstance(deps.clock, StepFunctionsClock)
    assert deps.clock.client is not None  # built now, on demand, from the same session
    assert isinstance(deps.notifier, ApiGatewayNotifier)
    assert deps.notifier.client is deps.notifier.client  # built once, on demand
    assert [service for service, _ in made] == [
        "dynamodb",
        "stepfunctions",
        "apigatewaymanagementapi",
    ]
    assert made[0][1] is made[1][1] is made[2][1]
    assert deps.notifier.client.meta.endpoint_url == settings.callback_url


class _Management:
    def __init__(self) -> None:
        self.posted: list[str] = []

    def post_to_connection(self, ConnectionId: str, Data: bytes) -> None:  # noqa: N803 (boto3)
        self.posted.append(ConnectionId)


def test_the_management_api_client_is_built_on_the_first_post_only() -> None:
    built: list[_Management] = []

    def factory() -> _Management:
        built.append(_Management())
        return built[-1]

    notifier = ApiGatewayNotifier(None, client_factory=factory)
    assert built == []  # $connect never pushes: no client
    assert notifier.send([]) == []
    assert built == []
    assert notifier.send([("c-1", "{}"), ("c-2", "{}")]) == []
    notifier.send([("c-3", "{}")])
    assert len(built) == 1
    assert built[0].posted == ["c-1", "c-2", "c-3"]


def test_a_notifier_without_a_client_or_a_factory_is_refused() -> None:
    with pytest.raises(ValueError, match="client"):
        ApiGatewayNotifier(None)
