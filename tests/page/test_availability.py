"""The page's availability section: each site this month so far against the previous month."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
from pathlib import Path

import pytest

import edgereports as er
from edgereports.cli.main import main
from edgereports.sandbox import serve
from edgereports.sandbox.inventory import write_inventory
from tests.export.conftest import job_text
from tests.page.test_page import check

NOW = "2024-03-10T06:30:00+00:00"
INCIDENTS = [
    {"kind": "site_dark", "subject": "CHE-1005", "start": "2024-03-05T02:00:00+00:00", "hours": 6},
    {"kind": "site_dark", "subject": "DEL-1003", "start": "2024-02-12T10:00:00+00:00", "hours": 8},
]
INVENTORY = """
[inventory]
devices = "inventory.csv"

[[inventory.maintenance]]
scope = "site"
subject = "MUM-1002"
start = "2024-03-08T02:00:00+05:30"
end = "2024-03-08T06:00:00+05:30"
note = "power work"
"""


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, list[str]]]:
    """The page of a job with an inventory and a window, over a sandbox with two dark sites
    (one this month, one the month before); and the ledger by site, for the same months."""
    folder = tmp_path_factory.mktemp("availability")
    with serve(seed=0, clock=NOW, incidents=INCIDENTS) as sb, pytest.MonkeyPatch.context() as mp:
        write_inventory(sb.inventory(), folder / "inventory.csv")
        msisdns = [s.msisdn for s in sb.network.sims_of(sb.account_id)][:3]
        job = folder / "weekly.toml"
        job.write_text(job_text(folder / "out", sb.account_id, msisdns) + INVENTORY, "utf-8")
        mp.setenv("EDGEREPORTS_API_KEY", sb.api_key)
        mp.setenv("EDGEREPORTS_REPORTING_URL", sb.reporting_url)
        out, err = io.StringIO(), io.StringIO()
        argv = ["page", str(job), "--last", "7d", "--availability", "--out", str(folder / "p.html")]
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            assert main(argv) == 0, err.getvalue()
    text = (folder / "p.html").read_text("utf-8")
    rows = {}
    for row in re.findall(r'<table class="availability">.*?</table>', text, re.S)[0].split("<tr")[
        2:
    ]:
        cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td[^>]*>.*?</td>", row, re.S)]
        rows[cells[0]] = cells[1:]
    return folder / "p.html", text, rows


def test_the_section_sets_each_site_this_month_against_the_previous(
    page: tuple[Path, str, dict[str, list[str]]],
) -> None:
    _, text, rows = page
    parser = check(text)
    sections = [a["id"] for t, a in parser.tags if t == "section" and a.get("id")]
    assert sections[-1] == "availability-62c40843c7a1909709112345"
    so_far = 9 * 24 + 6  # 1 March 00:00 to the clock's hour, 10 March 06:00 UTC
    che = rows["CHE-1005"]  # this month, available h, unavailable h, unknown h, excluded h, ...
    assert che[2:5] == ["6", "0", "0"] and int(che[1]) == so_far - 6
    assert che[0] == f"{100 * (so_far - 6) / so_far:.2f}%" and che[5] == "100.00%"
    assert rows["DEL-1003"][5] == f"{100 * (29 * 24 - 8) / (29 * 24):.2f}%"  # February
    assert rows["MUM-1002"][4] == "5"  # 20:30 to 00:30 UTC touches five whole hours
    assert rows["CHE-1005"][6] == f"{float(che[0][:-1]) - 100:+.2f} pp"
    summed = rows["all sites (hours summed)"]
    assert int(summed[1]) == sum(
        int(r[1]) for name, r in rows.items() if not name.startswith("all")
    )
    words = " ".join(parser.text)
    assert "This month: March 2024 (UTC) so far, 222 hours up to 2024-03-10 06:00 UTC" in words
    assert "site_dark CHE-1005 2024-03-05T02:00–08:00" in words
    assert "1 maintenance window(s) excluded: site MUM-1002" in words


@pytest.mark.slow
def test_the_section_shows_in_a_browser(
    page: tuple[Path, str, dict[str, list[str]]], tmp_path: Path
) -> None:
    """Headless chromium lays the section out: its table is visible, wide enough for its
    columns, and a screenshot of it is a picture of that size."""
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By

    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.fail("Debian's chromium and chromium-driver are missing: run 'make browser'")
    options = webdriver.ChromeOptions()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1280,1000",
                 f"--user-data-dir={tmp_path / 'profile'}"):  # fmt: skip
        options.add_argument(flag)
    options.binary_location = chromium
    browser = webdriver.Chrome(service=Service(driver), options=options)
    try:
        browser.get(page[0].as_uri())
        section = browser.find_element(By.CSS_SELECTOR, "section[id^=availability]")
        table = section.find_element(By.CSS_SELECTOR, "table.availability")
        browser.execute_script("arguments[0].scrollIntoView()", section)
        assert table.is_displayed() and table.size["width"] > 600
        cells = table.find_elements(By.CSS_SELECTOR, "tbody tr:nth-child(2) td")
        assert [c.text for c in cells][:1] == ["CHE-1005"]
        colour = cells[1].value_of_css_property("color")
        assert colour.replace(" ", "") in ("rgba(180,35,24,1)", "rgb(180,35,24)")  # below 99%
        shot = tmp_path / "availability.png"
        section.screenshot(str(shot))
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        browser.quit()


def test_a_job_without_subscribers_or_inventory_of_the_account_says_why(tmp_path: Path) -> None:
    from edgereports.export import load_job
    from edgereports.page import availability_sections, build_page

    with serve(seed=0, clock=NOW) as sb:
        path = tmp_path / "job.toml"
        path.write_text(
            f'output = "out"\n[defaults]\naccount_id = "{sb.account_id}"\nstart = 2024-01-01\n'
            '[[reports]]\nname = "usage"\npreset = "time_usage_enterprise"\n',
            "utf-8",
        )
        with er.ReportingClient(sb.api_key, sb.reporting_url, progress=False) as client:
            built = build_page(load_job(path), last="2d", client=client,
                               sections=[availability_sections])  # fmt: skip
    assert [s.failed for s in built.failures] == [
        "the job has no [inventory] of this account and its reports name no subscriber "
        "(msisdn) of it to count"
    ]
