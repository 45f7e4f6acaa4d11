"""``edgereports lab`` / ``explorer`` (``make lab`` / ``make explorer``) start and answer on
loopback, and the explorer served by Voila works in headless Chromium with no request leaving
loopback. Bounded: each server gets 90 s to answer; the browser steps 30 s each."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from edgereports.config import ENV_VARS

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent
START_TIMEOUT = 90
STEP_TIMEOUT = 30
LOOPBACK = ("127.0.0.1", "localhost")
CHROME_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1400,1700",
    # every host but loopback resolves nowhere: Voila's page asks a CDN for a font
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1",
]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:
            return r.status, r.read().decode("utf-8", "replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""


def _wait_for(url: str, proc: subprocess.Popen[str]) -> str:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(
                f"the server exited with {proc.returncode}: {proc.stdout and proc.stdout.read()}"
            )
        try:
            status, body = _get(url)
            if status == 200:
                return body
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"{url} did not answer within {START_TIMEOUT} s")


@pytest.fixture(scope="module")
def start() -> Iterator[Callable[..., tuple[subprocess.Popen[str], int]]]:
    """Start ``edgereports <app>`` as ``make lab``/``make explorer`` do; stopped at the end."""
    procs: list[subprocess.Popen[str]] = []

    def starter(
        app: str, *, cwd: Path = ROOT, notebooks: Path | None = ROOT / "notebooks", **env: str
    ) -> tuple[subprocess.Popen[str], int]:
        port = _free_port()
        clean = {k: v for k, v in os.environ.items() if k not in ENV_VARS.values()}
        where = [] if notebooks is None else ["--notebooks", str(notebooks)]
        proc = subprocess.Popen(
            [sys.executable, "-m", "edgereports.cli", app, "--port", str(port), *where],
            cwd=cwd, env=clean | {"JUPYTER_PREFER_ENV_PATH": "1"} | env,
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True,
        )  # fmt: skip
        procs.append(proc)
        return proc, port

    yield starter
    for proc in procs:
        with contextlib_suppress():
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


class contextlib_suppress:
    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: Any, *_: Any) -> bool:
        return kind is ProcessLookupError


def test_make_targets_run_these_commands() -> None:
    text = (ROOT / "Makefile").read_text()
    assert "$(BIN)/edgereports lab --notebooks notebooks" in text
    assert "$(BIN)/edgereports explorer --notebooks notebooks" in text


def test_lab_starts_on_loopback(start: Callable[..., Any]) -> None:
    pytest.importorskip("jupyterlab")
    proc, port = start("lab", JUPYTER_TOKEN="given-token")
    body = _wait_for(f"http://127.0.0.1:{port}/lab?token=given-token", proc)
    assert "JupyterLab" in body
    status, listing = _get(f"http://127.0.0.1:{port}/api/contents?token=given-token")
    assert status == 200
    assert "02-explorer.ipynb" in listing
    assert _get(f"http://127.0.0.1:{port}/api/contents")[0] == 403  # the token is kept


@pytest.fixture(scope="module")
def explorer_url(start: Callable[..., Any]) -> str:
    pytest.importorskip("voila")
    proc, port = start("explorer")
    url = f"http://127.0.0.1:{port}/"
    _wait_for(url, proc)
    return url


def test_explorer_starts_on_loopback(explorer_url: str) -> None:
    status, body = _get(explorer_url)
    assert (status == 200 and "jupyter-widgets" in body.lower()) or "widget" in body


def test_an_installed_wheel_serves_the_explorer_outside_a_checkout(
    tmp_path: Path, start: Callable[..., Any]
) -> None:
    pytest.importorskip("voila")
    pytest.importorskip("hatchling")  # the build backend, from this environment
    dist = tmp_path / "dist"
    build = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
    subprocess.run([*build, "-w", str(dist), str(ROOT)], check=True, timeout=300)
    [wheel] = dist.glob("edgereports-*.whl")
    # installed alone into a directory of its own; its dependencies are this environment's
    site = tmp_path / "site"
    install = [sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q"]
    subprocess.run([*install, "--target", str(site), str(wheel)], check=True, timeout=300)
    shipped = site / "edgereports" / "notebooks"
    assert sorted(p.name for p in shipped.glob("*.ipynb")) == sorted(
        p.name for p in (ROOT / "notebooks").glob("*.ipynb")
    )
    work = tmp_path / "work"  # no notebooks/ here, nor anywhere above
    work.mkdir()
    proc, port = start("explorer", cwd=work, notebooks=None, PYTHONPATH=str(site))
    body = _wait_for(f"http://127.0.0.1:{port}/", proc)
    assert "jupyter-widgets" in body.lower()
    os.killpg(proc.pid, signal.SIGTERM)  # the sandbox, Voila and its kernel stop
    out, _ = proc.communicate(timeout=30)
    assert f"edgereports explorer: the notebooks in {shipped}" in out, out
    assert f"EDGEREPORTS_EXPORT_DIR={work / 'exports'}" in out
    assert not list(work.iterdir())  # nothing written until Export is pressed


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver:
        pytest.fail("Debian's chromium and chromium-driver are missing: run 'make browser'")
    options = webdriver.ChromeOptions()
    for flag in [*CHROME_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}"]:
        options.add_argument(flag)
    options.binary_location = chromium
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    session = webdriver.Chrome(service=Service(driver), options=options)
    try:
        yield session
    finally:
        session.quit()


def _until(check: Callable[[], Any], what: str) -> Any:
    deadline = time.monotonic() + STEP_TIMEOUT
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.25)
    pytest.fail(f"no {what} within {STEP_TIMEOUT} s")


def _status(browser: Any) -> str:
    return str(
        browser.execute_script(
            "const s = Array.from(document.querySelectorAll('.widget-html-content span'))"
            ".map(e => e.textContent); return s.length ? s[s.length - 1] : '';"
        )
    )


def _run(browser: Any, preset: str, previous: str) -> str:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    select = Select(browser.find_element(By.CSS_SELECTOR, ".widget-dropdown select"))
    select.select_by_value(
        next(
            o.get_attribute("value")
            for o in select.options
            if o.get_attribute("value").startswith(preset + " ")
        )
    )
    button = next(b for b in browser.find_elements(By.TAG_NAME, "button") if b.text == "Run")
    button.click()
    return str(
        _until(
            lambda: (s := _status(browser)) != previous and "…" not in s and s,
            f"message after Run of {preset}",
        )
    )


def _left_loopback(browser: Any) -> list[str]:
    """URLs of http(s) requests to other hosts that were not refused before leaving."""
    sent: dict[str, str] = {}
    failed: set[str] = set()
    answered: list[str] = []
    for entry in browser.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        params = message.get("params", {})
        if message["method"] == "Network.requestWillBeSent":
            sent[params["requestId"]] = params["request"]["url"]
        elif message["method"] == "Network.loadingFailed":
            if "NAME_NOT_RESOLVED" in params.get("errorText", ""):
                failed.add(params["requestId"])
        elif message["method"] == "Network.responseReceived":
            answered.append(params["response"]["url"])

    def outside(url: str) -> bool:
        parts = urlsplit(url)
        return parts.scheme in ("http", "https", "ws", "wss") and parts.hostname not in LOOPBACK

    escaped = [u for rid, u in sent.items() if outside(u) and rid not in failed]
    return escaped + [u for u in answered if outside(u)]


def test_the_explorer_in_a_browser(explorer_url: str, browser: Any, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(explorer_url)
    _until(
        lambda: any(b.text == "Run" for b in browser.find_elements(By.TAG_NAME, "button")),
        "Run button",
    )
    message = _run(browser, "time_usage_enterprise", _status(browser))
    assert "rows ×" in message, message
    chart = _until(
        lambda: browser.execute_script(
            "return Array.from(document.querySelectorAll('.widget-image'))"
            ".some(i => i.naturalWidth > 100 && i.offsetParent !== null)"
        ),
        "visible chart",
    )
    assert chart
    rows = browser.execute_script(
        "return document.querySelectorAll('.widget-tab table.dataframe tbody tr').length"
    )
    assert rows > 0
    browser.save_screenshot(str(tmp_path / "explorer-after-run.png"))
    page = browser.find_element(By.TAG_NAME, "body").text
    assert "from the local sandbox at http://127.0.0.1:" in page, page[:500]
    assert "live service" not in page
    # only the explorer: not the notebook's demonstration cells, nothing done on load
    assert "Driving it from code" not in page and "Wrote " not in page, page[-800:]
    table = browser.execute_script(
        "return document.querySelector('.widget-tab table.dataframe').textContent"
    )
    assert "+05:30" in table and "+00:00" not in table  # the zone of the chart

    pickers = "return Array.from(document.querySelectorAll('input[type=date]')).map(i => i.value)"
    before_range = browser.execute_script(pickers)
    Select(
        next(
            s
            for s in browser.find_elements(By.CSS_SELECTOR, ".widget-dropdown select")
            if "30d" in s.text
        )
    ).select_by_visible_text("30d")
    after_range = _until(
        lambda: (v := browser.execute_script(pickers)) != before_range and v, "30d in the pickers"
    )
    assert after_range[0] < before_range[0] and after_range[1] == before_range[1]
    Select(
        next(
            s
            for s in browser.find_elements(By.CSS_SELECTOR, ".widget-dropdown select")
            if "30d" in s.text
        )
    ).select_by_visible_text("dates")

    second = _run(browser, "ue_connections_avg_peak", message)
    assert "rows ×" in second and second != message

    _run(browser, "time_usage_subscriber", second)
    for close in browser.find_elements(By.CSS_SELECTOR, ".jupyter-widget-tag-close"):
        if close.is_displayed():
            close.click()
            break
    button = next(b for b in browser.find_elements(By.TAG_NAME, "button") if b.text == "Run")
    before = _status(browser)
    button.click()
    error = _until(
        lambda: (s := _status(browser)) != before and "msisdn" in s and s,
        "error message naming msisdn",
    )
    assert "QueryError" in error and "needs msisdn" in error, error
    browser.save_screenshot(str(tmp_path / "explorer-error.png"))
    assert _left_loopback(browser) == []


def _descendants(pid: int) -> set[int]:
    """The processes started under ``pid`` (read from /proc), in any session."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found, frontier = set(), {pid}
    while frontier:
        frontier = {p for p, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text()
    except OSError:
        return ""  # it ended meanwhile


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_sigterm_stops_the_explorer_its_server_and_its_kernels(
    start: Callable[..., Any], browser: Any
) -> None:
    from selenium.webdriver.common.by import By

    pytest.importorskip("voila")
    proc, port = start("explorer")
    url = f"http://127.0.0.1:{port}/"
    _wait_for(url, proc)
    browser.get(url)  # a page load starts a kernel
    _until(
        lambda: any(b.text == "Run" for b in browser.find_elements(By.TAG_NAME, "button")),
        "Run button",
    )
    started = _descendants(proc.pid)
    kernels = [p for p in started if "ipykernel" in _cmdline(p)]
    assert kernels, "no kernel runs for the page"
    os.kill(proc.pid, signal.SIGTERM)  # the command only, not its process group
    assert proc.wait(timeout=START_TIMEOUT) in (130, -signal.SIGTERM, 0)
    left = _until(lambda: not any(_alive(p) for p in started) or None, "every process to stop")
    assert left is True
