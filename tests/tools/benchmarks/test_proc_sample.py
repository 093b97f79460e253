"""The capacity figure's CPU and memory include the emulator's descendants (its DynamoDB
process is a child of its forkserver): ``infra.benchmarks.capacity.proc_sample``."""

from __future__ import annotations

import os
import subprocess
import sys

from infra.benchmarks.capacity import descendants, proc_sample

# A child that starts a grandchild, which burns CPU then waits to be killed.
_GRANDPARENT = """
import subprocess, sys
child = subprocess.Popen([sys.executable, "-c", sys.argv[1]], stdout=subprocess.PIPE, text=True)
print(child.pid, child.stdout.readline().strip(), flush=True)
sys.stdin.read()
child.kill()
"""
_BURNER = """
import time
end = time.process_time() + 0.5
while time.process_time() < end:
    pass
print("burnt", flush=True)
time.sleep(120)  # killed by its parent
"""


def test_a_grandchild_s_cpu_and_memory_are_counted_not_the_process_s_own() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _GRANDPARENT, _BURNER],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        grandchild, burnt = proc.stdout.readline().split()
        assert burnt == "burnt"
        assert int(grandchild) in descendants(proc.pid)
        assert int(grandchild) in descendants(os.getpid())

        sample = proc_sample(proc.pid)
        alone = proc_sample(int(grandchild))
        assert sample.cpu_s - sample.own_cpu_s >= 0.45  # the grandchild's 0.5 s
        assert alone.cpu_s == alone.own_cpu_s  # no descendants of its own
        assert sample.rss_kb > alone.rss_kb > 0
    finally:
        if proc.stdin is not None:
            proc.stdin.close()
        proc.wait(30)
