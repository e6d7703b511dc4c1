"""Helpers of the tests that start real processes (Daphne, workers, ``geon serve``).

A module of its own rather than fixtures in ``tests/conftest.py``, which must not be imported by
name (it would run a second time, with another data folder).
"""

from __future__ import annotations

import signal
import socket
import subprocess


def free_port() -> int:
    """A TCP port on the loopback address that nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def stop_process(
    process: subprocess.Popen[bytes], sig: int = signal.SIGTERM, timeout: float = 15.0
) -> int:
    """Send ``sig`` to a process still running, wait up to ``timeout`` seconds, then kill it;
    its exit status."""
    if process.poll() is None:
        process.send_signal(sig)
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode
