"""Run a mock under uvicorn, over HTTP or HTTPS with a certificate Myna makes itself.

Real SaaS clients (pysnc, simple-salesforce) insist on HTTPS, so `--tls` creates a throwaway
certificate authority with trustme, issues a certificate for the host names the server answers
to, and can write the CA's PEM for clients to trust (`--ca-out`). `serving` runs a server on a
background thread for tests and benchmarks and stops it on exit.

uvicorn is handed the bare ASGI callable (`MockAsgi`), not the FastAPI app of `create_app`: the
dispatcher answers every route itself (the service's API, `/openapi.json`, `/worlds/{id}/...` and
the admin API under `/_myna/admin`), so FastAPI's middleware stack and mount would only add their
~20 us to every request.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import multiprocessing.connection
import signal
import socket
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import trustme
import uvicorn

from myna.errors import MockError
from myna.mocks.app import MockAsgi
from myna.mocks.console.app import ConsoleAsgi
from myna.mocks.http_guard import REQUEST_TIMEOUT, guarded_protocol
from myna.mocks.rejection import Rejection
from myna.mocks.runtime import Mock

_LOCAL_NAMES = ("localhost", "127.0.0.1", "::1")
_START_TIMEOUT = 10.0


@dataclass(frozen=True, slots=True)
class TlsFiles:
    certfile: Path
    keyfile: Path
    ca_pem: bytes


def make_tls(directory: Path, host: str) -> TlsFiles:
    """A fresh CA and a server certificate for `host` and the loopback names, written to
    `directory` (the key never leaves it)."""
    ca = trustme.CA(organization_name="Myna mock CA")
    names = list(dict.fromkeys((*_LOCAL_NAMES, host)))
    names = [name for name in names if name not in ("0.0.0.0", "::")]
    cert = ca.issue_cert(*names)
    certfile = directory / "server.pem"
    keyfile = directory / "server.key"
    cert.cert_chain_pems[0].write_to_path(str(certfile))
    for extra in cert.cert_chain_pems[1:]:
        extra.write_to_path(str(certfile), append=True)
    cert.private_key_pem.write_to_path(str(keyfile))
    return TlsFiles(certfile=certfile, keyfile=keyfile, ca_pem=ca.cert_pem.bytes())


def server_for(
    mock: Mock,
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    tls: TlsFiles | None = None,
    threadpool: bool = False,
    log_level: str = "warning",
    model_file: Path | None = None,
    results: Path | None = None,
    request_timeout: float = REQUEST_TIMEOUT,
) -> uvicorn.Server:
    """The server `myna serve` runs: the mock's ASGI callable behind the web console.

    `model_file` is where facts pinned in the console are written (none for a built-in back
    end); `results` is the folder of benchmark results and episodes the console lists;
    `request_timeout` is how long a request may take to arrive whole (`http_guard`).
    """
    app = ConsoleAsgi(
        MockAsgi(mock, threadpool=threadpool), mock, model_file=model_file, results=results
    )
    http = _protocol_for(mock, request_timeout)
    config = uvicorn_config(app, host=host, port=port, tls=tls, log_level=log_level, http=http)
    return uvicorn.Server(config)


def _protocol_for(mock: Mock, timeout: float = REQUEST_TIMEOUT) -> type[asyncio.Protocol]:
    """uvicorn's HTTP protocol with the guards of `http_guard`, refusing what it cannot parse
    with the mock's own 400 and closing a connection whose request takes over `timeout`."""
    refused = mock.error_response(
        Rejection(400, "the request is not valid HTTP", detail="Malformed request")
    )
    content_type = dict(refused.headers).get("Content-Type", "application/json")
    return guarded_protocol(refused.body, content_type, timeout=timeout)


def uvicorn_config(
    app: Callable[..., Awaitable[None]],
    *,
    host: str = "127.0.0.1",
    port: int = 8000,
    tls: TlsFiles | None = None,
    log_level: str = "warning",
    lifespan: Literal["on", "off"] = "off",
    http: type[asyncio.Protocol] | Literal["auto"] = "auto",
) -> uvicorn.Config:
    """The uvicorn settings `myna serve` runs with (the HTTP benchmark gives its bare FastAPI
    handler the same ones); `http` is the protocol class (`_protocol_for` a mock)."""
    return uvicorn.Config(
        app,
        http=http,
        host=host,
        port=port,
        log_level=log_level,
        access_log=False,
        lifespan=lifespan,
        ssl_certfile=str(tls.certfile) if tls else None,
        ssl_keyfile=str(tls.keyfile) if tls else None,
        # Open streams (the console's live calls) must not hold a stopping server forever.
        timeout_graceful_shutdown=3,
    )


def serve_workers(
    build: Callable[[], uvicorn.Server], *, workers: int, host: str, port: int
) -> int:
    """Serve on one port from `workers` processes: the socket is bound here, then each worker
    is forked and builds its own server (its own mock and database connections, which must not
    cross a fork) to accept on it, so the kernel spreads connections between them. They share
    worlds through the database. Returns when one worker ends (it stops the others: a server
    with fewer workers than asked would be slower without saying so) or this process is told to
    stop; the exit status is that worker's."""
    listening = socket.create_server((host, port), reuse_port=False)
    context = multiprocessing.get_context("fork")
    processes = [
        context.Process(target=_work, args=(build, listening), name=f"myna-worker-{n}")
        for n in range(workers)
    ]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        for process in processes:
            process.start()
        multiprocessing.connection.wait([process.sentinel for process in processes])
        ended = next(process for process in processes if not process.is_alive())
        return 0 if ended.exitcode == 0 else 1
    finally:
        for process in processes:
            if process.is_alive():
                process.terminate()
        for process in processes:
            if process.pid is not None:
                process.join(timeout=_START_TIMEOUT)
        listening.close()


def _work(build: Callable[[], uvicorn.Server], listening: socket.socket) -> None:
    build().run(sockets=[listening])


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((host, 0))
        port: int = probe.getsockname()[1]
        return port


@dataclass(frozen=True, slots=True)
class Running:
    base_url: str
    ca_file: Path | None


@contextmanager
def serving(
    mock: Mock,
    *,
    tls: bool = False,
    host: str = "127.0.0.1",
    threadpool: bool = False,
    request_timeout: float = REQUEST_TIMEOUT,
) -> Iterator[Running]:
    """Serve `mock` on a free loopback port in a background thread for the `with` block."""
    app = ConsoleAsgi(MockAsgi(mock, threadpool=threadpool), mock)
    http = _protocol_for(mock, request_timeout)
    with serving_app(app, tls=tls, host=host, http=http) as running:
        yield running


@contextmanager
def serving_app(
    app: Callable[..., Awaitable[None]],
    *,
    tls: bool = False,
    host: str = "127.0.0.1",
    lifespan: Literal["on", "off"] = "off",
    http: type[asyncio.Protocol] | Literal["auto"] = "auto",
) -> Iterator[Running]:
    """Serve any ASGI `app` as `myna serve` would, on a free port in a background thread."""
    port = free_port(host)
    with tempfile.TemporaryDirectory(prefix="myna-tls-") as scratch:
        files = make_tls(Path(scratch), host) if tls else None
        ca_file = None
        if files is not None:
            ca_file = Path(scratch) / "ca.pem"
            ca_file.write_bytes(files.ca_pem)
        config = uvicorn_config(app, host=host, port=port, tls=files, lifespan=lifespan, http=http)
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name="myna-server", daemon=True)
        thread.start()
        deadline = time.monotonic() + _START_TIMEOUT
        while not server.started:
            if not thread.is_alive() or time.monotonic() > deadline:
                raise MockError("the server did not start", host=host, port=port)
            time.sleep(0.01)
        scheme = "https" if tls else "http"
        try:
            yield Running(base_url=f"{scheme}://{host}:{port}", ca_file=ca_file)
        finally:
            server.should_exit = True
            thread.join(timeout=_START_TIMEOUT)
