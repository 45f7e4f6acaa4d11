"""Neither the v2 key nor the reporting service's token appears anywhere (DEBUG logging on).

Drives failures of both new credentials' clients: refused credentials (401), injected 5xx
with retries, a dropped body, a closed port, an answer that is not JSON; then looks for the
secrets in every log record (urllib3's DEBUG lines included), every error message, repr,
note, chained cause and context, and every file the CLI writes.
"""

from __future__ import annotations

import contextlib
import logging
import pickle
import socket
import traceback
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import edgereports as er
from edgereports import presets
from edgereports.cli.main import main

KEY = "v2-key-5ecret-0123456789"
TOKEN = "eyJhbGciOiJIUzI1NiJ9.c2VjcmV0.t0ken-5ecret-abcdef"
SECRETS = (KEY, TOKEN, "5ecret")


@contextlib.contextmanager
def debug_logs() -> Iterator[list[str]]:
    lines: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            lines.append(self.format(record))

    handler = Keep(logging.DEBUG)
    handler.setFormatter(logging.Formatter("%(name)s %(message)s"))
    root = logging.getLogger()
    old = root.level
    root.setLevel(logging.DEBUG)
    root.addHandler(handler)
    try:
        yield lines
    finally:
        root.removeHandler(handler)
        root.setLevel(old)


def texts_of(error: BaseException) -> list[str]:
    out: list[str] = []
    seen: BaseException | None = error
    while seen is not None:
        out += [str(seen), repr(seen), *getattr(seen, "__notes__", ())]
        out += [str(v) for v in vars(seen).values()] if hasattr(seen, "__dict__") else []
        seen = seen.__cause__ or seen.__context__
    out.append("".join(traceback.format_exception(error)))
    out.append(str(pickle.loads(pickle.dumps(error))))
    return out


def assert_clean(texts: list[str]) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text, f"{secret!r} leaked in: {text[:300]}"


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def test_v2_key_and_service_token_never_show(make_sandbox: Any, tmp_path: Path,
                                             capsys: Any) -> None:  # fmt: skip
    sb = make_sandbox(api_key=KEY, service_token=TOKEN)
    report = presets.ue_session_bytes(
        account_id=sb.account_id, start="2022-07-07T00:00:00Z", end="2022-07-07T06:00:00Z"
    )
    service = er.ServiceReport().last("HOUR").step("30m").metric("ap_count", "COUNT")
    errors: list[BaseException] = []
    with debug_logs() as lines:
        clients: list[Any] = [
            er.ReportingClient(KEY, sb.reporting_url, api_version="v2", backoff=0.01, retries=1),
            er.ReportingServiceClient(TOKEN, sb.base_url, sb.core_id, backoff=0.01, retries=1),
        ]
        calls = [lambda: clients[0].fetch(report), lambda: clients[1].fetch(service)]
        for fault in ("500", "drop", "503"):
            for call in calls:
                sb.enqueue_faults(fault, fault)
                with pytest.raises(er.EdgeReportsError) as info:
                    call()
                errors.append(info.value)
        refused = [
            er.ReportingClient(KEY + "x", sb.reporting_url, api_version="v2"),
            er.ReportingServiceClient(TOKEN + "x", sb.base_url, sb.core_id),
            er.ReportingClient(KEY, closed_port(), api_version="v2", retries=0),
            er.ReportingServiceClient(TOKEN, closed_port(), sb.core_id, retries=0),
            er.ReportingServiceClient(TOKEN, sb.base_url + "/openapi.json#", sb.core_id),
        ]
        for client in refused:
            target = report if isinstance(client, er.ReportingClient) else service
            with pytest.raises(er.EdgeReportsError) as info:
                client.run(target)
            errors.append(info.value)
        assert clients[0].fetch(report).shape[0] == 12  # and a success, logged at DEBUG
        assert clients[1].fetch(service).shape[0] == 2
        texts = [repr(c) for c in clients + refused]
    assert any("connectivity/v2/report" in line for line in lines)  # DEBUG did log requests
    assert_clean(lines + texts + [t for e in errors for t in texts_of(e)])
    assert {type(e).__name__ for e in errors} >= {"ApiError", "AuthError", "TransportError"}

    # the CLI: its messages and the files it writes
    env = {"EDGEREPORTS_API_KEY": KEY, "EDGEREPORTS_REPORTING_URL": sb.reporting_url,
           "EDGEREPORTS_SERVICE_TOKEN": TOKEN, "EDGEREPORTS_BASE_URL": sb.base_url,
           "EDGEREPORTS_CORE_ID": sb.core_id}  # fmt: skip
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)
        out = tmp_path
        assert main(["report", "--preset", "ue_session_bytes", "--account-id", sb.account_id,
                     "--start", "2022-07-07T00:00:00Z", "--end", "2022-07-07T03:00:00Z",
                     "--parquet", str(out / "v2.parquet")]) == 0  # fmt: skip
        assert main(["service-report", "--last", "HOUR", "--step", "30m", "--metric",
                     "ue_status:MAX", "--csv", str(tmp_path / "svc.csv")]) == 0  # fmt: skip
        assert main(["service-report", "--last", "HOUR", "--step", "30m", "--metric",
                     "ue_status:MAX", "--core-id", "nope"]) == 1  # fmt: skip
    captured = capsys.readouterr()
    files = [p.read_bytes().decode("latin-1") for p in tmp_path.rglob("*") if p.is_file()]
    assert files and (tmp_path / "svc.csv").is_file()
    assert_clean([captured.out, captured.err, *files])
