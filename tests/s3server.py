"""A real S3 API server on loopback for the object-store tests: moto's server, with a request log.

moto (PyPI) serves the S3 REST API from a thread in the test process, honours conditional
creates (`If-None-Match: *` -> 412), and stops with the session. The request log wraps its WSGI
app, so a test can count what a read or a commit sends over the wire (method, key, Range).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from moto.server import DomainDispatcherApplication, MotoRequestHandler, ThreadedMotoServer, create_backend_app
from werkzeug.serving import make_server

ACCESS_KEY = "paimon-schema-tests"
SECRET_KEY = "paimon-schema-tests-secret"
REGION = "us-east-1"


@dataclass(frozen=True)
class Request:
    """One request the server answered."""

    method: str
    path: str          # "/bucket/key", unquoted
    query: str
    range: str | None  # the Range header of a ranged GET
    status: int


@dataclass
class RequestLog:
    """Every request since the last `clear()`, in arrival order (thread-safe)."""

    requests: list[Request] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def append(self, request: Request) -> None:
        with self._lock:
            self.requests.append(request)

    def clear(self) -> None:
        with self._lock:
            self.requests.clear()

    def snapshot(self) -> list[Request]:
        with self._lock:
            return list(self.requests)

    def count(self, method: str | None = None, where: Callable[[Request], bool] | None = None) -> int:
        return sum(1 for r in self.snapshot()
                   if (method is None or r.method == method) and (where is None or where(r)))


class _LoggedApp:
    """WSGI middleware that records each request and the status it got."""

    def __init__(self, app: Any, log: RequestLog) -> None:
        self.app, self.log = app, log

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        status: list[int] = []

        def recording_start_response(status_line: str, headers: list, exc_info: Any = None) -> Any:
            status.append(int(status_line.split(" ", 1)[0]))
            return start_response(status_line, headers, exc_info)

        body = self.app(environ, recording_start_response)
        self.log.append(Request(environ["REQUEST_METHOD"], unquote(environ.get("PATH_INFO", "")),
                                environ.get("QUERY_STRING", ""), environ.get("HTTP_RANGE"),
                                status[0] if status else 0))
        return body


class S3Server(ThreadedMotoServer):
    """moto's S3 server on 127.0.0.1 (a free port), recording every request in `log`."""

    def __init__(self) -> None:
        super().__init__(ip_address="127.0.0.1", port=0, verbose=False)
        self.log = RequestLog()

    def _server_entry(self) -> None:
        app = _LoggedApp(DomainDispatcherApplication(create_backend_app), self.log)
        self._server = make_server(self._ip_address, self._port, app, True, request_handler=MotoRequestHandler)
        self._server_ready_event.set()
        self._server.serve_forever()

    @property
    def endpoint(self) -> str:
        host, port = self.get_host_and_port()
        return f"http://{host}:{port}"

    def client(self) -> Any:
        """A boto3 S3 client for this server."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                            aws_secret_access_key=SECRET_KEY, region_name=REGION)

    def create_bucket(self, name: str) -> str:
        self.client().create_bucket(Bucket=name)
        return name

    def upload_tree(self, local: Path, bucket: str, prefix: str) -> str:
        """Copy a local directory (e.g. a Java-written table) under `s3://bucket/prefix`; its URI."""
        client = self.client()
        for path in sorted(p for p in local.rglob("*") if p.is_file()):
            client.put_object(Bucket=bucket, Key=f"{prefix}/{path.relative_to(local).as_posix()}",
                              Body=path.read_bytes())
        return f"s3://{bucket}/{prefix}"

    def storage_options(self) -> dict[str, str]:
        """Endpoint and credentials as key/value options (what a URI-only caller passes)."""
        return {"endpoint": self.endpoint, "access_key": ACCESS_KEY, "secret_key": SECRET_KEY, "region": REGION}
