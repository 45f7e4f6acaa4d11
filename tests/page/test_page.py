"""``edgereports page``: a job file's reports as one self-contained HTML file (sandbox)."""

from __future__ import annotations

import base64
import contextlib
import io
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

from edgereports.cli.main import main
from edgereports.errors import QueryError
from edgereports.export import load_job
from edgereports.page import PageContext, Section, build_page, page_range
from edgereports.reporting import ReportingClient
from edgereports.sandbox import SandboxHandle, serve
from edgereports.sandbox.inventory import write_inventory
from tests.export.conftest import job_text

NOW = "2024-03-10T06:30:00+00:00"
VOID = {"meta", "img", "br", "hr", "link", "input", "col", "wbr", "source"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class Checker(HTMLParser):
    """A strict reader: every element closed in order, and every resource it names."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.problems: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.doctype = ""
        self.text: list[str] = []

    def handle_decl(self, decl: str) -> None:
        self.doctype = decl

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def check(text: str) -> Checker:
    parser = Checker()
    parser.feed(text)
    parser.close()
    assert parser.doctype.lower() == "doctype html"
    assert not parser.problems, parser.problems[:5]
    assert not parser.stack, f"unclosed: {parser.stack}"
    names = [t for t, _ in parser.tags]
    assert names[0] == "html" and names.count("head") == 1 and names.count("body") == 1
    ids = [a["id"] for _, a in parser.tags if a.get("id")]
    assert len(ids) == len(set(ids)), "duplicate ids"
    return parser


def resources(parser: Checker) -> list[str]:
    """Every address the page would load or link to."""
    return [
        str(value)
        for _, attrs in parser.tags
        for name, value in attrs.items()
        if name in ("src", "href", "action", "poster", "data") and value
    ]


@dataclass
class Run:
    status: int
    out: str
    err: str
    page: str
    sandbox: SandboxHandle


@pytest.fixture(scope="module")
def sb() -> Iterator[SandboxHandle]:
    with serve(seed=0, clock=NOW) as handle:
        yield handle


def _job(sb: SandboxHandle, folder: Path, *, extra: str = "") -> Path:
    msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:3]
    path = folder / "weekly.toml"
    path.write_text(job_text(folder / "out", sb.account_id, msisdns) + extra, encoding="utf-8")
    return path


def _run(
    sb: SandboxHandle,
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    *flags: str,
    extra: str = "",
    key: str | None = None,
) -> Run:
    """Run ``edgereports page`` in this process: its status, stdout, stderr and the page."""
    monkeypatch.setenv("EDGEREPORTS_API_KEY", key or sb.api_key)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", sb.reporting_url)
    job = _job(sb, folder, extra=extra)
    out = folder / "page.html"
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        status = main(["page", str(job), "--last", "7d", "--out", str(out), *flags])
    page = out.read_text("utf-8") if out.exists() else ""
    return Run(status, stdout.getvalue(), stderr.getvalue(), page, sb)


BROKEN = """
[[reports]]
name = "elsewhere"
preset = "time_usage_enterprise"
account_id = "000000000000000000000000"
"""


@pytest.fixture(scope="module")
def compared(sb: SandboxHandle, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    with pytest.MonkeyPatch.context() as mp:
        yield _run(sb, tmp_path_factory.mktemp("page"), mp, "--compare", "previous_period")


def test_the_page_is_valid_html_holding_every_report_and_its_comparison(compared: Run) -> None:
    assert compared.status == 0, compared.err
    assert compared.err == "" and compared.out == ""  # quiet under cron: no bar, no chatter
    parser = check(compared.page)
    sections = [a["id"] for t, a in parser.tags if t == "section"]
    assert sections == ["report-usage", "report-bytes", "report-sims"]
    images = [a["src"] for t, a in parser.tags if t == "img"]
    assert len(images) == 3  # a chart per report
    for src in images:
        assert src is not None and src.startswith("data:image/png;base64,")
        assert base64.b64decode(src.split(",", 1)[1])[:8] == PNG_MAGIC
    text = " ".join(parser.text)
    # the summary of each compared report has the other period's figure and the change, and
    # its first rows the comparison's columns
    headers = re.findall(r"<th>([^<]*)</th>", compared.page)
    for header in ("compared", "this", "other", "compare_value", "change_pct", "compare_partial"):
        assert headers.count(header) == 2, header
    assert headers.count("change") == 2 + 2
    assert re.search(r"[+-]\d+\.\d%", text)
    assert (
        "Compared with 25 Feb – 2 Mar 2024 (UTC) (previous period: the range's own length "
        "earlier, from 2024-02-25 00:00 UTC up to 2024-03-03 00:00 UTC)"
    ) in text
    assert "no comparison for SIM counts" in text
    assert "Range: the last 7d, 3–9 Mar 2024 (UTC): from 2024-03-03 00:00 up to 2024-03-10" in text
    assert "Service clock (the Date of its last answer): 2024-03-10 06:30" in text
    assert "edgereports " in text and "job weekly.toml" in text
    assert compared.sandbox.api_key not in compared.page


def test_the_page_is_self_contained(compared: Run) -> None:
    parser = check(compared.page)
    for address in resources(parser):
        assert address.startswith(("data:", "#")), address  # nothing loaded from anywhere
    assert not re.search(r"url\(|@import|https?://", compared.page.split("<body>")[0])
    assert [t for t, _ in parser.tags if t in ("script", "link", "iframe")] == []


def test_a_report_that_fails_is_named_on_the_page_and_the_exit_is_1(
    sb: SandboxHandle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    run = _run(sb, tmp_path, monkeypatch, extra=BROKEN)
    assert run.status == 1
    lines = run.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("edgereports: page: report elsewhere: ")
    assert "NotFoundError" in lines[0]
    parser = check(run.page)
    sections = [a["id"] for t, a in parser.tags if t == "section"]
    assert sections == ["report-usage", "report-bytes", "report-sims", "report-elsewhere"]
    text = " ".join(parser.text)
    assert "1 of 4 sections failed" in text
    assert "Failed: NotFoundError" in text
    assert len([t for t, _ in parser.tags if t == "img"]) == 3  # the others are all there


def test_a_refused_key_still_writes_a_page_naming_every_report(
    sb: SandboxHandle,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    wrong = "wrong-key-0123456789"
    run = _run(sb, tmp_path, monkeypatch, key=wrong)
    assert run.status == 1
    assert len(run.err.strip().splitlines()) == 3  # one line per report
    text = " ".join(check(run.page).text)
    assert "3 of 3 sections failed" in text and "AuthError" in text
    assert wrong not in run.page and wrong not in run.err


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--last", "LAST WEEK"], "--last must be a number of days, weeks or hours back"),
        (
            ["--compare", "yesterday"],
            "--compare must be one of previous_period, previous_week, previous_year, "
            "previous_year_dow, or up to 4 of them separated by commas, got 'yesterday'",
        ),
        (["--compare", "previous_week,previous_week"], "--compare must be one of"),
    ],
)
def test_bad_flags_are_one_line_and_exit_2_before_any_request(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    message: str,
) -> None:
    monkeypatch.setenv("EDGEREPORTS_API_KEY", "k" * 12)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", "http://127.0.0.1:9")  # nothing listens
    job = tmp_path / "job.toml"
    job.write_text(job_text(tmp_path / "out", "A", ["91"]), encoding="utf-8")
    argv = ["page", str(job), "--last", "7d", "--out", str(tmp_path / "p.html")]
    status = main([*argv, *flags])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and message in err
    assert not (tmp_path / "p.html").exists()


def test_health_without_the_health_package_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "edgereports.health", None)  # as if not installed
    monkeypatch.setenv("EDGEREPORTS_API_KEY", "k" * 12)
    monkeypatch.setenv("EDGEREPORTS_REPORTING_URL", "http://127.0.0.1:9")
    job = tmp_path / "job.toml"
    job.write_text(job_text(tmp_path / "out", "A", ["91"]), encoding="utf-8")
    status = main(["page", str(job), "--last", "7d", "--health", "--out", str(tmp_path / "p.html")])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1
    assert "--health needs the health flags (edgereports.health)" in err


def test_a_section_maker_adds_its_section_after_the_reports(
    sb: SandboxHandle, tmp_path: Path
) -> None:
    seen: list[PageContext] = []

    def flags(context: PageContext) -> list[Section]:
        seen.append(context)
        rows = sum(len(f) for f in context.frames.values())
        return [Section("extra", "Extra", f"<p>{rows} rows above</p>")]

    notes: list[str] = []
    with ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
        page = build_page(
            _job(sb, tmp_path), last="2d", client=client, sections=[flags], notify=notes.append
        )
    assert [s.id for s in page.sections][-1] == "extra" and notes == []
    context = seen[0]
    assert (context.start, context.end) == page_range("2d", page.clock or context.end)
    assert context.accounts == (sb.account_id,)
    assert set(context.frames) == {"usage", "bytes", "sims"}
    total = sum(len(f) for f in context.frames.values())
    assert f"<p>{total} rows above</p>" in page.html
    check(page.html)


def test_page_range_counts_back_from_the_service_clock() -> None:
    from datetime import UTC, datetime

    now = datetime(2024, 3, 10, 6, 30, tzinfo=UTC)
    assert [t.isoformat() for t in page_range("24h", now)] == [
        "2024-03-09T06:00:00+00:00",
        "2024-03-10T06:00:00+00:00",
    ]
    assert page_range("1w", now)[0].isoformat() == "2024-03-03T00:00:00+00:00"


def test_the_notes_name_partial_and_provisional_buckets_of_both_periods() -> None:
    from edgereports.page import period_notes

    frame = pd.DataFrame({"value": [1.0]})
    frame.attrs.update(
        partial_buckets=[{"start": "2024-03-03T00:00:00+00:00", "share": 0.5}],
        provisional_from="2024-03-09T00:00:00+00:00",
        compare={
            "mode": "previous_period",
            "start": "2024-02-25T12:00:00+00:00",
            "end": "2024-03-03T12:00:00+00:00",
            "request": {
                "start_date_time": "2024-02-25T12:00:00+00:00",
                "end_date_time": "2024-03-03T12:00:00+00:00",
                "granularity": "DAY",
            },
            "unmatched": 2,
            "unmatched_other": 0,
            "partial_buckets": [{"start": "2024-02-25T00:00:00+00:00", "share": 0.5}],
        },
    )
    assert period_notes(frame) == [
        "Compared with 25 Feb 2024 12:00 – 3 Mar 2024 12:00 (UTC) (previous period: from "
        "2024-02-25 12:00 UTC "
        "up to 2024-03-03 12:00 UTC).",
        "Rows without a counterpart: 2 here (their comparison is blank), 0 in the other period.",
        "Buckets covered only in part (this period): 2024-03-03 00:00 UTC (50%).",
        "Provisional from 2024-03-09 00:00 UTC (this period): figures so far.",
        "Buckets covered only in part (the other period): 2024-02-25 00:00 UTC (50%).",
    ]


def test_health_flags_are_on_the_page(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("edgereports.health", reason="the health flags package is not here")
    with serve(seed=0, clock=NOW) as plain:
        subscriber = plain.network.sims_of(plain.account_id)[0].msisdn
    offline = {
        "kind": "device_offline",
        "subject": subscriber,
        "start": "2024-03-06T00:00:00+00:00",
        "hours": 12,
    }
    with serve(seed=0, clock=NOW, incidents=[offline]) as sb:
        run = _run(sb, tmp_path, monkeypatch, "--health")
    assert run.status == 0, run.err
    parser = check(run.page)
    sections = [a["id"] for t, a in parser.tags if t == "section" and a.get("id")]
    assert sections[-1] == f"health-{sb.account_id}"
    text = " ".join(parser.text)
    assert "0 episode(s) and 1 flag(s) for 3 subscriber(s)." in text
    assert "Judged from a partial list of 3 subscribers" in text
    # the device is the only one of the three at its site, but its site's own report says
    # the site stayed lit: the device is offline, the site is not dark
    row = re.search(
        r"device_offline\s+(\S+)\s+2024-03-06 00:00\+00:00\s+2024-03-06 12:00\+00:00", text
    )
    assert row is not None, text[-2000:]


def test_a_jobs_inventory_feeds_the_health_flags_episodes_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("edgereports.health", reason="the health flags package is not here")
    dark = {"kind": "enodeb_dark", "subject": "10.10.3.2",
            "start": "2024-03-06T02:00:00+00:00", "hours": 10}  # fmt: skip
    extra = '\n[inventory]\ndevices = "inventory.csv"\n'
    with serve(seed=0, clock=NOW, incidents=[dark]) as sb:
        write_inventory(sb.inventory(), tmp_path / "inventory.csv")
        run = _run(sb, tmp_path, monkeypatch, "--health", extra=extra)
        assert run.status == 0, run.err
        text = " ".join(check(run.page).text)
        assert "Judged from an inventory of 64 subscribers" in text
        assert "1 episode(s) and 1 flag(s) for 64 subscriber(s)." in text
        assert text.index("eNodeB 10.10.3.2 at site HYD-1004: 4 of 4 active devices") < text.index(
            "enodeb_dark"
        )
        (tmp_path / "inventory.csv").write_text("msisdn,imsi\n1,2\n", encoding="utf-8")
        (tmp_path / "page.html").unlink()
        sb.reset_counters()
        bad = _run(sb, tmp_path, monkeypatch, "--health", extra=extra)
        assert bad.status == 2 and bad.page == "" and sb.request_count() == 0
        assert bad.err.count("\n") == 1 and "lacks the column(s) customer_site_id" in bad.err


def test_a_section_maker_that_fails_is_a_failed_section(sb: SandboxHandle, tmp_path: Path) -> None:
    def broken(context: PageContext) -> list[Section]:
        raise RuntimeError("no flags today: GET https://h/x?apikey=s3cr3t-value failed")

    notes: list[str] = []
    with ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
        page = build_page(
            _job(sb, tmp_path), last="2d", client=client, sections=[broken], notify=notes.append
        )
    assert [s.title for s in page.failures] == ["broken"]
    assert notes == ["broken: RuntimeError: no flags today: GET https://h/x?apikey=*** failed"]
    assert "s3cr3t-value" not in page.html and 'id="section-broken"' in page.html


V2 = """
[[reports]]
name = "ue_v2"
api_version = "v2"
request = {{ granularity = "HOUR", metrics = [
    {{ name = "ue_session_uplink_bytes", aggregation_type = "COUNT" }}] }}
account_id = "{account}"
"""


def test_a_v2_report_of_the_job_is_compared_on_its_own_version(
    sb: SandboxHandle, tmp_path: Path
) -> None:
    job = _job(sb, tmp_path, extra=V2.format(account=sb.account_id))
    with ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
        page = build_page(job, last="2d", compare="previous_period", client=client)
        v2 = client.for_version("v2")
        report = load_job(job).report("ue_v2").for_window(page.start, page.end)
        expected = v2.fetch(report, compare="previous_period")
        v2.close()
    assert page.failures == []
    section = next(s for s in page.sections if s.id == "report-ue_v2")
    assert section.body.count("<img ") == 1 and "<h3>Compared</h3>" in section.body
    assert "<th>compared</th>" in section.body
    pd.testing.assert_frame_equal(page.frames["ue_v2"], expected)
    assert expected["compare_value"].notna().all()


def test_the_page_compares_with_the_same_weekdays_a_year_before(
    sb: SandboxHandle, tmp_path: Path
) -> None:
    job = _job(sb, tmp_path)
    periods = ["previous_week", "previous_year_dow"]
    with ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
        page = build_page(job, last="7d", compare=periods, client=client)
    assert page.failures == []
    parser = check(page.html)
    text = " ".join(parser.text)
    assert "Compared with the previous week; the previous year, same weekday" in text
    # 3-9 March 2024 (Sunday to Saturday) against 5-11 March 2023, Sunday to Saturday
    assert (
        "Compared with 5–11 Mar 2023 (UTC) (previous year, same weekday: 364 days earlier "
        "(the same weekdays), from 2023-03-05 00:00 UTC up to 2023-03-12 00:00 UTC)."
    ) in text
    usage = page.frames["usage"]
    block = usage[usage["period"] == "previous_year_dow"]
    assert (block["time_stamp"].dt.day_of_week == block["compare_time_stamp"].dt.day_of_week).all()
    section = next(s for s in page.sections if s.id == "report-usage")
    compared = section.body.split("<h3>Compared</h3>", 1)[1].split("</table>", 1)[0]
    assert compared.count("<td>previous year, same weekday</td>") == usage["msisdn"].nunique()
    assert compared.count("<td>previous week</td>") == usage["msisdn"].nunique()
    assert "<td>total</td>" in compared and "<td>mean</td>" not in compared
    with pytest.raises(QueryError, match="compare must be one of previous_period"):
        build_page(job, last="7d", compare=[*periods, "previous_year", "previous_period", "x"])
