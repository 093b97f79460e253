"""Runtime: ``thread_fan_out`` — the watchdog's recoveries on threads (``Deps.fan_out``)."""

from __future__ import annotations

import threading

import pytest

from shared.runtime.bootstrap import thread_fan_out


def test_results_come_back_in_the_jobs_order() -> None:
    jobs = [lambda i=i: i * i for i in range(20)]
    assert thread_fan_out(4)(jobs) == [i * i for i in range(20)]


def test_jobs_run_at_once_up_to_the_width() -> None:
    """Four jobs that each wait for the other three finish only if they run together."""
    barrier = threading.Barrier(4, timeout=5)

    def job() -> int:
        barrier.wait()
        return 1

    assert thread_fan_out(4)([job] * 4) == [1, 1, 1, 1]


def test_the_first_error_is_raised_once_every_job_ran() -> None:
    ran: list[int] = []

    def ok(i: int) -> int:
        ran.append(i)
        return i

    def bad() -> int:
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        thread_fan_out(2)([bad, *(lambda i=i: ok(i) for i in range(5))])
    assert sorted(ran) == [0, 1, 2, 3, 4]
