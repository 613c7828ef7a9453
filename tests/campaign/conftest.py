"""A Redis server for the campaign tests: Debian's redis-server, started on 127.0.0.1 on a
free port without persistence, stopped after. Without it (or without the redis package)
the tests that need it skip, saying how to install it, except under CI, which installs
both (.ci/run, tox's extras) and so fails instead."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest


def _in_ci() -> bool:
    """CI=true, as CI sets it; tox hands the original value on under its own name."""
    values = (os.environ.get("CI"), os.environ.get("__TOX_ENVIRONMENT_VARIABLE_ORIGINAL_CI"))
    return any(v and v.lower() in ("1", "true", "yes") for v in values)


def _missing(why: str) -> None:
    if _in_ci():
        pytest.fail(f"{why}, and CI must run the Redis campaign tests")
    pytest.skip(why)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def redis_url(tmp_path: Path) -> Iterator[str]:
    """redis://127.0.0.1:PORT of a fresh server, for one test."""
    binary = shutil.which("redis-server")
    if binary is None:
        _missing("redis-server is not installed (apt-get install redis-server)")
    try:
        import redis
    except ImportError:
        _missing("the redis package is not installed (pip install 'vspec[redis]')")
    port = _free_port()
    server = subprocess.Popen(
        [
            binary or "",
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            str(tmp_path),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    client = redis.Redis(host="127.0.0.1", port=port)
    try:
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.exceptions.ConnectionError:
                time.sleep(0.05)
        else:
            pytest.fail(f"redis-server did not answer on port {port}")
        yield f"redis://127.0.0.1:{port}"
    finally:
        client.close()
        server.terminate()
        server.wait(timeout=10)
