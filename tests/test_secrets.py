"""No secret anywhere: every error path, with DEBUG logging on, scanned for the key.

Each :class:`Case` pairs a credential with a way to drive one failure. The test runs it with
every logger (urllib3 included) at DEBUG and scans everything the failure produced:

- the exception: ``str``, ``repr``, its attributes and notes, every exception chained to it
  (``__cause__`` and ``__context__``, recursively, and the failures a PartialFailure holds),
  ``traceback.format_exception(..., chain=True)``, and the error pickled and unpickled;
- every log record, formatted with its traceback;
- what was printed (the CLI's stdout and stderr), the value returned and its ``repr``;
- every file written under the test's directory (exports, caches, pages).

A text leaks a secret when it holds one of its forms (:data:`tests.test_redaction.ENCODINGS`)
or when :func:`tests.test_redaction.recoverable` reads it back. A URL's user name is not a
secret but is never shown either (``https://***@host``).

To cover a new credential (as the v2 ``Authorization`` query parameter, a Bearer
token), add cases to :data:`CASES`: a credential, and a function that provokes a failure
while sending it (``drive(secret, tmp_path)``). The figures print with
``pytest -s tests/test_secrets.py``.

The second half runs the ``edgereports`` command in its own process (DEBUG logging on) against
a sandbox that accepts a key with every awkward character, through a URL with a user name and
password, and against servers that echo a key in each of its forms: stdout, stderr, the HTML
page, the export's summary and files, and the cache.
"""

from __future__ import annotations

import base64
import contextlib
import logging
import os
import pickle
import re
import subprocess
import sys
import threading
import traceback
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import pytest

from edgereports import Report, Settings
from edgereports.campaigns import CampaignClient
from edgereports.cli.main import main as cli
from edgereports.content import ContentClient
from edgereports.errors import EdgeReportsError
from edgereports.export import load_job, run_export
from edgereports.http import HttpClient
from edgereports.reporting import ReportingClient, ReportingServiceClient
from edgereports.sandbox import SandboxHandle
from tests.conftest import (
    Step,
    chained,
    closed_port_url,
    every_logger_at_debug,
    raw_server,
    scripted,
)
from tests.test_redaction import ENCODINGS, ONE_LINE, TRICKY, recoverable

#: A credential of each kind the toolkit sends (long and distinctive, so a leak is certain).
API_KEY = "sk-live-7f3a9c1e5b2d4e6f"
#: A key with the URL's reserved characters: it travels percent-encoded, and is echoed so.
ENCODED_KEY = "sk+live/7f3a=9c1e%5b2d 4e6f"
APP_KEY = "ak-app-91c2e7d44b0a"
#: The user name and password of a service URL (``https://USER:PASSWORD@host``).
USER = "ana-analyst"
PASSWORD = "pa55 w0rd:é@Zq"
FIGURES: Counter[str] = Counter()


def with_userinfo(url: str) -> str:
    """``url`` with :data:`USER` and :data:`PASSWORD` as its userinfo (the password quoted)."""
    return url.replace("://", f"://{USER}:{quote(PASSWORD, safe='')}@", 1)


@dataclass(frozen=True)
class Case:
    """One credential and one way to make a call that carries it fail."""

    name: str
    secret: str
    drive: Callable[[str, Path], Any]


# ---------------------------------------------------------------------- servers that misbehave


def echo_body(key: str) -> bytes:
    """A body that echoes the key, as a careless gateway does."""
    return f'{{"message": "invalid key {key}", "url": "/r?apikey={key}&api_key={key}"}}'.encode()


REPORT = (
    Report(account_id="A")
    .between("2022-06-01T00:00:00Z", "2022-06-04T00:00:00Z")
    .granularity("DAY")
    .metric("uplink_bytes", "COUNT")
)
GOOD = (
    b'{"result": [[{"time_stamp": "2022-06-01T00:00:00Z", "name": "uplink_bytes", "value": 1,'
    b' "aggregation_type": "COUNT"}]], "account_id": "A"}'
)
FAST = {"progress": False, "backoff": 0.01, "retry_after_cap": 0.05, "max_workers": 1}


def reporting(key: str, url: str, **options: Any) -> ReportingClient:
    return ReportingClient(key, url, **{**FAST, **options})


def fetch_from(steps: list[Step], **options: Any) -> Callable[[str, Path], Any]:
    def drive(key: str, _: Path) -> Any:
        with scripted(steps) as server:
            return reporting(key, server.url, **options).fetch(REPORT, window=timedelta(days=1))

    return drive


def status_line(line: str) -> Callable[[str, Path], Any]:
    def drive(key: str, _: Path) -> Any:
        with raw_server(line.format(key=key), echo_body(key)) as url:
            return reporting(key, url, retries=1).fetch(REPORT)

    return drive


def echoing_encoded(key: str, _: Path) -> Any:
    """A gateway that echoes the key as it travelled (percent-encoded, ``+`` for a space, and
    lower-case hex) in its status line and body."""
    sent = quote_plus(key)
    lower = re.sub(r"%[0-9A-F]{2}", lambda m: m[0].lower(), sent)
    body = f'{{"message": "invalid key {sent}", "url": "/r?apikey={lower}"}}'.encode()
    with raw_server(f"HTTP/1.1 401 Invalid key {lower}", body) as url:
        return reporting(key, url, retries=1).fetch(REPORT)


def refused(key: str, _: Path) -> Any:
    return reporting(key, closed_port_url(), retries=2).fetch(REPORT)


def userinfo_refused(password: str, _: Path) -> Any:
    """A reporting URL with a user name and password, refused: the message shows the URL, and
    the gateway echoes the Basic credentials requests sent for them."""
    basic = base64.b64encode(f"{USER}:{password}".encode("latin-1")).decode()
    body = f"Authorization: Basic {basic} refused; credentials {basic}".encode()
    with raw_server(f"HTTP/1.1 401 refused Basic {basic}", body) as url:
        return reporting(API_KEY, with_userinfo(url), retries=0).fetch(REPORT)


def userinfo_unreachable(password: str, _: Path) -> Any:
    """A reporting URL with a user name and password where nothing listens (retried)."""
    return reporting(API_KEY, with_userinfo(closed_port_url()), retries=1).fetch(REPORT)


def cached_then_failing(key: str, tmp_path: Path) -> Any:
    """A cached pull through a URL with userinfo answers (and is cached); pulled again, it
    fails echoing the key. The cache's files are scanned with the rest."""
    steps = [Step(200, GOOD), Step(500, echo_body(key))]
    with scripted(steps) as server:
        client = reporting(key, with_userinfo(server.url), retries=0, cache=tmp_path / "cache")
        assert len(client.fetch(REPORT)) == 1
        return client.fetch(REPORT, refresh=True)


def service(
    kind: type[ContentClient | CampaignClient], call: Callable[[Any], Any], steps: list[Step]
) -> Callable[[str, Path], Any]:
    """Drive ``call(client)`` of a content or campaign client against a scripted server."""

    def drive(key: str, _: Path) -> Any:
        with scripted(steps) as server:
            return call(kind(key, "partner", server.url, timeout=(1, 1), retries=1))

    return drive


def content_userinfo_refused(password: str, _: Path) -> Any:
    """The content API at a base URL with a user name and password refuses the key."""
    with raw_server("HTTP/1.1 401 Unauthorized", echo_body(API_KEY)) as url:
        return ContentClient(API_KEY, "partner", with_userinfo(url), retries=0).list()


def signed_url_refused(app_key: str, _: Path) -> Any:
    """The app key travels as a query parameter of signed-url; the answer echoes it."""
    with raw_server(f"HTTP/1.1 403 bad app_key {app_key}", echo_body(app_key)) as url:
        client = ContentClient(API_KEY, "partner", url, retries=0)
        return client.signed_url("https://edge.example/v/1.m3u8", app_key=app_key)


def playback_refused(key: str, _: Path) -> Any:
    """A playback URL holds ``&api_key=``; fetching it fails with the URL in the messages."""
    with raw_server(f"HTTP/1.1 401 key {key} refused", echo_body(key)) as url:
        client = ContentClient(key, "partner", url, retries=0)
        playback = client.playback_url(f"{url}/edge/v1/partner/abc/index.m3u8?partner_name=p")
        print(repr(playback), playback.redacted)  # what a notebook shows
        return client.fetch_playback(playback)


def cli_report(key: str, tmp_path: Path) -> Any:
    """``edgereports report`` against a server that refuses the key (and echoes it)."""
    with raw_server(f"HTTP/1.1 401 Invalid key {key}", echo_body(key)) as url, env(key, url):
        return cli(
            [
                "report", "--account-id", "A", "--start", "2022-06-01", "--end", "2022-06-03",
                "--metric", "uplink_bytes:COUNT", "--granularity", "DAY",
                "--json", str(tmp_path / "out.json"), "--retries", "0",
            ]
        )  # fmt: skip


def cli_export(key: str, tmp_path: Path) -> Any:
    """``edgereports export`` whose windows fail (5xx, then refused): files are written."""
    job = tmp_path / "job.toml"
    job.write_text(
        f'output = "{tmp_path / "out"}"\nmax_workers = 1\n[defaults]\naccount_id = "A"\n'
        'start = 2024-03-01\n[[reports]]\nname = "usage"\npreset = "time_usage_enterprise"\n'
        "window_days = 1\n",
        encoding="utf-8",
    )
    steps = [Step(200, GOOD.replace(b"2022-06-01", b"2024-03-01")), Step(503, echo_body(key))]
    with scripted(steps) as server, env(key, server.url):
        return cli(["export", str(job), "--until", "2024-03-04", "--no-progress"])


def export_run(key: str, tmp_path: Path) -> Any:
    """``run_export`` with a client whose key is refused: the summary and the files."""
    job = tmp_path / "job.toml"
    job.write_text(
        f'output = "{tmp_path / "out"}"\n[[reports]]\nname = "usage"\n'
        'preset = "time_usage_enterprise"\nparams = { account_id = "A" }\nstart = 2024-03-01\n',
        encoding="utf-8",
    )
    with raw_server(f"HTTP/1.1 403 apikey={key}", echo_body(key)) as url:
        summary = run_export(job, client=reporting(key, url), until="2024-03-03")
        print(summary)
        return summary


@contextlib.contextmanager
def env(key: str, url: str) -> Iterator[None]:
    names = {
        "EDGEREPORTS_API_KEY": key,
        "EDGEREPORTS_REPORTING_URL": url,
        "EDGEREPORTS_BASE_URL": url,
        "EDGEREPORTS_PARTNER_NAME": "partner",
    }
    old = {n: os.environ.get(n) for n in names}
    os.environ.update(names)
    try:
        yield
    finally:
        for n, v in old.items():
            if v is None:
                os.environ.pop(n, None)
            else:
                os.environ[n] = v


K = API_KEY
LIST: Callable[[Any], Any] = lambda client: client.list()  # noqa: E731
STATUS: Callable[[Any], Any] = lambda client: client.status("spring-sale")  # noqa: E731
#: Every (credential, failure) pair the suite drives. Add new credentials here.
CASES = [
    # the reporting API: the key is the apikey query parameter
    Case("401 status line with the key", K, status_line("HTTP/1.1 401 Invalid key {key}")),
    Case("401 echoing the key percent-encoded", ENCODED_KEY, echoing_encoded),
    Case(
        "4xx body echoing a reserved-character key",
        ENCODED_KEY,
        fetch_from([Step(400, echo_body(ENCODED_KEY))]),
    ),
    Case("CLI report, reserved-character key refused", ENCODED_KEY, cli_report),
    Case("run_export, reserved-character key refused", ENCODED_KEY, export_run),
    Case("403 status line apikey=", K, status_line("HTTP/1.1 403 apikey={key}")),
    Case("4xx body echoing the key and URL", K, fetch_from([Step(400, echo_body(K))])),
    Case("retries exhausted (503)", K, fetch_from([Step(503, echo_body(K))], retries=2)),
    Case("429 retries exhausted", K, fetch_from([Step(429, b"", (("Retry-After", "0"),))])),
    Case("connection refused", K, refused),
    Case("reporting_url with a password, refused (Basic echoed)", PASSWORD, userinfo_refused),
    Case("reporting_url with a password, nothing listens", PASSWORD, userinfo_unreachable),
    Case("a cached pull, then a failure echoing the key", TRICKY, cached_then_failing),
    Case("read timeout", K, fetch_from([Step(sleep=0.5)], timeout=(1, 0.1), retries=1)),
    Case("dropped body", K, fetch_from([Step(200, GOOD, drop=True)], retries=1)),
    Case("bad body (not JSON)", K, fetch_from([Step(200, b"<html>" + K.encode())])),
    Case("bad body (deep nesting)", K, fetch_from([Step(200, b"[" * 1000 + b"]" * 1000)])),
    Case("bad body (wrong shape)", K, fetch_from([Step(200, b'{"key": "%s"}' % K.encode())])),
    Case("partial failure", K, fetch_from([Step(200, GOOD), Step(500, echo_body(K))], retries=0)),
    # content and campaign APIs: the key is the api_key header; the app key a query parameter
    Case(
        "content list 401", K, service(ContentClient, lambda c: c.list(), [Step(401, echo_body(K))])
    ),
    Case(
        "content list not JSON",
        K,
        service(ContentClient, lambda c: c.list(), [Step(200, K.encode())]),
    ),
    Case(
        "campaign status 500",
        K,
        service(CampaignClient, lambda c: c.status("x"), [Step(500, echo_body(K))]),
    ),
    Case(
        "campaign list timeout", K, service(CampaignClient, lambda c: c.list(), [Step(sleep=1.5)])
    ),
    Case("signed-url app key refused", APP_KEY, signed_url_refused),
    Case("content base_url with a password, refused", PASSWORD, content_userinfo_refused),
    Case("playback URL &api_key= refused", K, playback_refused),
    # the command line and the export
    Case("CLI report, key refused", K, cli_report),
    Case("CLI export, windows fail", K, cli_export),
    Case("run_export, key refused", K, export_run),
]


# ----------------------------------------------------------------------------- the scanning


class Records(logging.Handler):
    """Keeps every record, formatted with its traceback, as the root logger's handler."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.setFormatter(logging.Formatter("%(name)s %(levelname)s %(message)s"))
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


def texts_of(exc: BaseException | None) -> list[str]:
    out: list[str] = []
    for item in chained(exc):
        out += [str(item), repr(item), *map(repr, item.args), *getattr(item, "__notes__", ())]
        out += [repr(v) for v in vars(item).values()] if hasattr(item, "__dict__") else []
    if exc is not None:
        out.append("".join(traceback.format_exception(exc, chain=True)))
        back = pickle.loads(pickle.dumps(exc))  # as a process pool hands it back
        out += [str(back), repr(back), repr(vars(back))]
    return out


def leaks_of(secret: str, scanned: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Where ``secret`` (in one of its forms, or read back by decoding) or :data:`USER` shows."""
    forms = {encode(secret) for encode in ENCODINGS.values()}
    found = [(where, text) for where, text in scanned for form in forms if form in text]
    found += [(f"{where} ({how})", text) for where, text in scanned
              if (how := recoverable(secret, text))]  # fmt: skip
    found += [(f"{where} (the URL's user)", text) for where, text in scanned if USER in text]
    return found


def files_under(root: Path) -> list[tuple[str, str]]:
    return [
        (str(p), p.read_bytes().decode("utf-8", "replace"))
        for p in sorted(root.rglob("*"))
        if p.is_file()
    ]


@pytest.fixture(scope="module", autouse=True)
def figures() -> Iterator[None]:
    FIGURES.clear()
    yield
    print(
        f"\nsecrets: {FIGURES['paths']} error paths driven, {FIGURES['texts']} messages and "
        f"reprs, {FIGURES['logs']} log lines, {FIGURES['files']} files scanned; "
        f"leaks found: {FIGURES['leaks']}"
    )


#: The cases among the slowest of the suite (a whole CLI export whose windows fail, a wait for
#: a timeout).
SLOW_CASES = {"CLI export, windows fail", "campaign list timeout"}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, id=c.name, marks=[pytest.mark.slow] if c.name in SLOW_CASES else [])
        for c in CASES
    ],
)
def test_no_secret_in_any_message_log_line_chain_or_file(
    case: Case, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    records = Records()
    root = logging.getLogger()
    root.addHandler(records)
    error: BaseException | None = None
    result: Any = None
    try:
        with every_logger_at_debug():
            root.setLevel(logging.DEBUG)
            try:
                result = case.drive(case.secret, tmp_path)
            except EdgeReportsError as exc:
                error = exc
    finally:
        root.removeHandler(records)
    printed = capsys.readouterr()
    assert error is not None or result not in (None, 0), f"{case.name}: nothing failed"
    if isinstance(result, int):
        assert result != 0, f"{case.name}: the command succeeded"
    scanned: list[tuple[str, str]] = [("error", t) for t in texts_of(error)]
    scanned += [("result", repr(result)), ("result", str(result))]
    scanned += [("stdout", printed.out), ("stderr", printed.err)]
    scanned += [("log", line) for line in records.lines]
    written = files_under(tmp_path)
    scanned += written
    FIGURES["paths"] += 1
    FIGURES["texts"] += len(scanned) - len(records.lines) - len(written)
    FIGURES["logs"] += len(records.lines)
    FIGURES["files"] += len(written)
    leaks = leaks_of(case.secret, scanned)
    FIGURES["leaks"] += len(leaks)
    assert not leaks, f"{case.name}: the secret shows in {leaks[0][0]}: {leaks[0][1][:400]}"
    assert records.lines, "DEBUG logging was on: some records are expected"


# ----------------------------------------------------------------------------------- reprs


TOKEN = "eyJ0eXAi.Ym9keQ.t0k en\xa0é-5ecret"
SECRET_URL = with_userinfo("https://h.example:8443")


def _job_connection(tmp_path: Path) -> Any:
    job = tmp_path / "job.toml"
    job.write_text(
        f'output = "{tmp_path / "out"}"\n[connection]\nreporting_url = "{SECRET_URL}"\n'
        f'api_key = "{K}"\napi_key_in_file = true\n[[reports]]\nname = "usage"\n'
        'preset = "time_usage_enterprise"\nparams = { account_id = "A" }\nstart = 2024-03-01\n',
        encoding="utf-8",
    )
    return load_job(job).connection


#: Everything that holds a key, a token or a URL with a password, and shows itself.
HOLDERS: dict[str, Callable[[Path], Any]] = {
    "HttpClient": lambda _: HttpClient(SECRET_URL, secrets=[K]),
    "ReportingClient v1": lambda _: ReportingClient(K, SECRET_URL),
    "ReportingClient v2": lambda _: ReportingClient(K, SECRET_URL, api_version="v2"),
    "ReportingServiceClient": lambda _: ReportingServiceClient(TOKEN, SECRET_URL, "core-1"),
    "ContentClient": lambda _: ContentClient(K, "partner", SECRET_URL),
    "CampaignClient": lambda _: CampaignClient(K, "partner", SECRET_URL),
    "Settings": lambda _: Settings(
        api_key=K, service_token=TOKEN, base_url=SECRET_URL, reporting_url=SECRET_URL
    ),
    "Settings from the environment": lambda _: Settings.from_env(
        {"EDGEREPORTS_API_KEY": K, "EDGEREPORTS_REPORTING_URL": SECRET_URL}
    ),
    "an export job's connection": _job_connection,
}


@pytest.mark.parametrize("holder", list(HOLDERS))
def test_reprs_show_no_key_token_url_password_or_user(holder: str, tmp_path: Path) -> None:
    made = HOLDERS[holder](tmp_path)
    shown = [("repr", repr(made)), ("str", str(made))]
    for secret in (K, TOKEN, PASSWORD):
        assert not leaks_of(secret, shown), shown
    assert "://***@h.example:8443" in repr(made)  # the address itself is still shown


@pytest.mark.parametrize(
    "make",
    [
        lambda: Settings(reporting_url=f"ftp://{USER}:{quote(PASSWORD)}@h.example"),
        lambda: ReportingClient(K, f"{USER}:{quote(PASSWORD)}@h.example"),
        lambda: ContentClient(K, "partner", f"ftp://{USER}:{quote(PASSWORD)}@h.example"),
        lambda: ContentClient(K, "p", "https://h.example").allow_domain(SECRET_URL),
    ],
)
def test_a_refused_url_is_named_without_its_userinfo(make: Callable[[], Any]) -> None:
    with pytest.raises(EdgeReportsError) as caught:
        make()
    assert not leaks_of(PASSWORD, [("error", t) for t in texts_of(caught.value)])


# ------------------------------------------------------------ the command, in its own process

#: ``edgereports`` (its ``main``) with every logger at DEBUG on stderr, as a fresh process.
COMMAND = (
    "import logging, sys; logging.basicConfig(level=logging.DEBUG); "
    "from edgereports.cli.main import main; sys.exit(main(sys.argv[1:]))"
)
#: A wrong key, as awkward as :data:`TRICKY`.
WRONG = "wR0ng\xa0key  &<'\"\\é+/%41"
#: The forms the command's export run echoes (its summary lists eight failures).
EXPORT_FORMS = [
    "whitespace collapsed",
    "no-break space for space",
    "lower-cased (a CSV header)",
    "HTML-escaped",
    "HTML hex references",
    "repr",
    "repr of its UTF-8 bytes",
    "base64, wrapped at 76 (offset 1)",
]


def command(tmp_path: Path, *args: str, **env: str) -> dict[str, str]:
    """Run the command; returns its stdout, stderr and every file under ``tmp_path``."""
    environ = {k: v for k, v in os.environ.items() if not k.startswith("EDGEREPORTS_")}
    environ.update(PYTHONIOENCODING="utf-8", XDG_CACHE_HOME=str(tmp_path / "user-cache"))
    environ.update({f"EDGEREPORTS_{k.upper()}": v for k, v in env.items()})
    done = subprocess.run(
        [sys.executable, "-c", COMMAND, *args], env=environ, capture_output=True, timeout=300
    )
    out = {"status": str(done.returncode)}
    out["stdout"], out["stderr"] = (
        b.decode("utf-8", "replace") for b in (done.stdout, done.stderr)
    )
    out.update(files_under(tmp_path))
    return out


def assert_no_leak(secrets: list[str], seen: dict[str, str]) -> None:
    scanned = [(where, text) for where, text in seen.items() if where != "status"]
    for secret in secrets:
        leaks = leaks_of(secret, scanned)
        FIGURES["leaks"] += len(leaks)
        assert not leaks, f"{secret!r} shows in {leaks[0][0]}: {leaks[0][1][:400]}"
    FIGURES["texts"] += len(scanned)


def page_job(tmp_path: Path, account_id: str, reports: int) -> Path:
    job = tmp_path / "job.toml"
    job.write_text(
        f'output = "{tmp_path / "out"}"\nmax_workers = 1\n[defaults]\naccount_id = "{account_id}"\n'
        "start = 2022-07-01\n"
        + "".join(
            f'[[reports]]\nname = "r{n:02d}"\npreset = "active_sim_count"\nwindow_days = 1\n'
            for n in range(reports)
        ),
        encoding="utf-8",
    )
    return job


@pytest.mark.slow
def test_the_command_shows_no_key_password_or_user_against_the_sandbox(
    make_sandbox: Callable[..., SandboxHandle], tmp_path: Path
) -> None:
    sb = make_sandbox(api_key=TRICKY)
    url = with_userinfo(sb.reporting_url)
    job = page_job(tmp_path, sb.account_id, 1)
    span = ["--start", "2022-07-01", "--end", "2022-07-03"]
    report = ["report", "--preset", "active_sim_count", "--account-id", sb.account_id, *span]
    pulled = command(
        tmp_path, *report, "--csv", str(tmp_path / "sims.csv"),
        api_key=TRICKY, reporting_url=url, cache=str(tmp_path / "cache"),
    )  # fmt: skip
    assert pulled["status"] == "0" and pulled[str(tmp_path / "sims.csv")].count("\n") == 3
    assert any("cache" in name for name in pulled), "the cache wrote its files"
    assert "/connectivity/v1/report?apikey=" in pulled["stderr"]  # urllib3's DEBUG lines
    refused = {
        "report": command(tmp_path, *report, "--retries", "0", api_key=WRONG, reporting_url=url),
        "export": command(
            tmp_path, "export", str(job), "--until", "2022-07-03", "--no-progress",
            api_key=WRONG, reporting_url=url,
        ),
        "page": command(
            tmp_path, "page", str(job), "--last", "2d", "--out", str(tmp_path / "p.html"),
            api_key=WRONG, reporting_url=url,
        ),
    }  # fmt: skip
    for name, seen in refused.items():
        assert seen["status"] == "1", (name, seen["stderr"][-2000:])
        assert "AuthError" in seen["stdout"] + seen["stderr"], name
        assert "://***@127.0.0.1" in seen["stdout"] + seen["stderr"], name  # the URL, shown
    assert "AuthError" in refused["page"][str(tmp_path / "p.html")]
    for seen in (pulled, *refused.values()):
        assert_no_leak([TRICKY, WRONG, PASSWORD], seen)


@contextlib.contextmanager
def echoing(secret: str, forms: list[str]) -> Iterator[str]:
    """A loopback server whose n-th POST is answered 400, echoing ``secret`` in ``forms[n]``
    (marked ``echo-NN``) in its body, and in its reason phrase where the form fits on one
    line; other requests are answered 404 (with the ``Date`` a client learns its clock from)."""
    answered = iter(range(len(forms) * 100))

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_POST(self) -> None:
            self.rfile.read(int(self.headers.get("Content-Length") or 0))
            n = next(answered) % len(forms)
            shown = ENCODINGS[forms[n]](secret)
            reason = f"echo-{n:02d} bad key" + (f" {shown}" if forms[n] in ONE_LINE else "")
            self._answer(400, reason, f"echo-{n:02d} invalid key {shown} (refused)".encode())

        def do_GET(self) -> None:
            self._answer(404, "Not Found", b"")

        def _answer(self, status: int, reason: str, body: bytes) -> None:
            self.send_response(status, reason)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.mark.slow
def test_the_command_shows_no_form_of_an_echoed_key_on_its_page_or_summary(
    tmp_path: Path,
) -> None:
    forms = list(ENCODINGS)
    page_dir, export_dir = tmp_path / "page", tmp_path / "export"
    page_dir.mkdir(), export_dir.mkdir()
    with echoing(TRICKY, forms) as url:
        job = page_job(page_dir, "A", len(forms))
        out = page_dir / "p.html"
        paged = command(
            page_dir, "page", str(job), "--last", "1d", "--out", str(out),
            api_key=TRICKY, reporting_url=with_userinfo(url),
        )  # fmt: skip
    with echoing(TRICKY, EXPORT_FORMS) as url:
        job = page_job(export_dir, "A", 1)
        job.write_text(job.read_text().replace("start = 2022-07-01", "start = 2024-03-01"))
        exported = command(
            export_dir, "export", str(job), "--until", "2024-03-09", "--no-progress",
            api_key=TRICKY, reporting_url=with_userinfo(url),
        )  # fmt: skip
    assert paged["status"] == exported["status"] == "1", paged["stderr"][-2000:]
    for n in range(len(forms)):  # every form reached the page and stderr, redacted
        assert f"echo-{n:02d} " in paged[str(out)] and f"echo-{n:02d} " in paged["stderr"], n
    for n in range(len(EXPORT_FORMS)):  # and the export's summary
        assert f"echo-{n:02d} " in exported["stdout"], (n, exported["stdout"][-3000:])
    assert_no_leak([TRICKY, PASSWORD], paged)
    assert_no_leak([TRICKY, PASSWORD], exported)
