"""The layer benchmark replays what it claims (benchmarks measure; these tests
check the metering, never a figure): the recorded guess is the guess path's AWS calls, one
replay makes exactly those calls, and every replay does the same work (the same calls, a
reply and a row to both duelists)."""

from __future__ import annotations

import pytest

from infra.benchmarks import layers

GUESS_PATH = ["GetItem", "PutItem", "PostToConnection", "PostToConnection"]
"""A valid guess in round 1: one read, one conditional write, one post per duelist (tests/functional
test_guess_cost asserts the same on the in-memory path)."""


@pytest.fixture(scope="module")
def recording() -> layers.Recording:
    return layers.record_guess()


def test_the_recorded_guess_is_one_read_one_write_and_a_post_per_duelist(
    recording: layers.Recording,
) -> None:
    assert recording.operations() == GUESS_PATH
    assert recording.route == "guess"
    posted = {c.params["ConnectionId"] for c in recording.calls if c.operation.startswith("Post")}
    assert len(posted) == 2


def test_a_replay_makes_the_recorded_calls_and_every_layer_is_metered(
    recording: layers.Recording,
) -> None:
    result = layers.measure_guess(repeat=3, rec=recording)

    assert result.replayed_operations == GUESS_PATH
    assert set(result.layers) == set(layers.LAYERS)
    assert result.floor_ms > 0
