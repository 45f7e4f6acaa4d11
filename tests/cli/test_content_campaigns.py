"""The content and campaigns commands, run as subprocesses against a sandbox."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from edgereports.sandbox import SandboxHandle

SandboxFactory = Callable[..., SandboxHandle]

CDN = "https://cdn.partner.example/v"


def run(
    sb: SandboxHandle | None, *args: str, key: str | None = None
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EDGEREPORTS_")}
    if sb is not None:
        env.update(
            EDGEREPORTS_API_KEY=key or sb.api_key,
            EDGEREPORTS_BASE_URL=sb.base_url,
            EDGEREPORTS_PARTNER_NAME=sb.partner_name,
        )
    return subprocess.run(
        [sys.executable, "-m", "edgereports.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )


@pytest.mark.slow
def test_content_commands(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox(sync_delay=0)
    out = run(sb, "content", "add", f"{CDN}/1/index.m3u8", "--public", "--json")
    assert out.returncode == 0, out.stderr
    [item] = json.loads(out.stdout)
    assert (item["url"], item["status"]) == (f"{CDN}/1/index.m3u8", "INPROGRESS")
    cid = item["content_id"]

    out = run(sb, "content", "add", f"{CDN}/2/index.m3u8", "--wait", "--poll", "0.1", "--csv")
    assert out.returncode == 0, out.stderr
    [row] = list(csv.DictReader(io.StringIO(out.stdout)))
    assert (row["publish_access"], row["content_upload_status"]) == ("private", "success")
    private = row["content_id"]

    out = run(sb, "content", "list")
    assert out.returncode == 0, out.stderr
    header, *lines = out.stdout.splitlines()
    assert header.split() == [
        "content_id",
        "publish_access",
        "content_upload_status",
        "createdAt",
        "partner_content_file_name",
        "content_url",
    ]
    assert [line.split()[0] for line in lines] == [cid, private]

    out = run(sb, "content", "url", cid)
    assert out.returncode == 0, out.stderr
    edge = out.stdout.strip()
    assert edge.startswith(f"{sb.base_url}/edge/v1/{sb.partner_name}/{cid}/")

    out = run(sb, "content", "sign", private, "--expires-in", "600", "--json")
    assert out.returncode == 0, out.stderr
    assert "&signature=" in json.loads(out.stdout)["url"]

    out = run(sb, "content", "play", cid, "--check")
    assert out.returncode == 0, out.stderr
    assert "api_key=***" in out.stdout and sb.api_key not in out.stdout
    assert "200" in out.stdout and "application/vnd.apple.mpegurl" in out.stdout

    out = run(sb, "content", "play", edge, "--reveal")
    assert out.stdout.strip() == f"{edge}&api_key={sb.api_key}"

    out = run(sb, "content", "play", private, "--check")
    assert out.returncode == 1
    assert "AuthError" in out.stderr and "private content plays only through a signed URL" in (
        out.stderr
    )
    assert sb.api_key not in out.stderr
    out = run(sb, "content", "play", private, "--sign", "--check", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)[0]["status"] == 200


@pytest.mark.slow
def test_whitelist_commands(make_sandbox: SandboxFactory) -> None:
    sb = make_sandbox()
    out = run(sb, "content", "whitelist", "add", "https://player.example/")
    assert out.returncode == 0, out.stderr
    assert "SUCCESS" in out.stdout
    assert "warning: removed the trailing slash of origin 'https://player.example/'" in out.stderr
    out = run(sb, "content", "whitelist", "list", "--json")
    assert json.loads(out.stdout) == [
        {"cors_whitelist_domain": sb.base_url},
        {"cors_whitelist_domain": "https://player.example"},
    ]
    out = run(sb, "content", "whitelist", "remove", "https://player.example")
    assert out.returncode == 0, out.stderr
    out = run(sb, "content", "whitelist", "remove", "https://player.example/embed")
    assert out.returncode == 2
    assert "error: origin 'https://player.example/embed' has a path ('/embed')" in out.stderr
    out = run(sb, "content", "whitelist", "add")
    assert (out.returncode, out.stderr.strip()) == (
        2,
        "edgereports: error: whitelist add needs an ORIGIN such as https://player.example",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("content", "url", "17"), "content_id '17' is purely numeric, which looks like a row id"),
        (("content", "add", "cdn.example/a.mp4"), "urls[0] 'cdn.example/a.mp4' is not an http(s)"),
        (
            ("content", "sign", "https://e.example/x.m3u8", "--expires-in", "0"),
            "expires_in must be a positive number of seconds, got 0",
        ),
    ],
)
def test_bad_input_exits_2(sandbox: SandboxHandle, args: tuple[str, ...], message: str) -> None:
    out = run(sandbox, *args)
    assert out.returncode == 2
    assert message in out.stderr


@pytest.mark.slow
def test_missing_settings_and_a_wrong_key(sandbox: SandboxHandle) -> None:
    out = run(None, "content", "list", "--base-url", sandbox.base_url)
    assert out.returncode == 2
    assert "missing settings: api_key (EDGEREPORTS_API_KEY), partner_name" in out.stderr
    wrong = "wrong-key-0123456789"
    out = run(sandbox, "campaigns", "list", key=wrong)
    assert out.returncode == 1
    assert "AuthError" in out.stderr and wrong not in out.stderr + out.stdout


@pytest.mark.slow
def test_campaign_commands(make_sandbox: SandboxFactory, tmp_path: Path) -> None:
    sb = make_sandbox()
    (tmp_path / "clip.mp4").write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 16)
    (tmp_path / "thumb.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16)
    spec = tmp_path / "campaign.json"
    spec.write_text(
        json.dumps(
            {
                "title": "Spring sale",
                "description": "Twenty percent off",
                "sms_text": "Spring sale: 20% off",
                "number_of_sms": 1,
                "brand_url": "https://brand.example",
                "chat_url": "https://brand.example/chat",
                "call_to_action_url": "https://brand.example/shop",
                "call_to_action_button_text": "Shop",
                "call_to_action_duration": "10",
                "call_to_action_frequency": 2,
            }
        )
    )
    onboard = [
        "campaigns",
        "onboard",
        "--from-json",
        str(spec),
        "--name",
        "spring",
        "--start",
        "2030-03-01T09:00:00",
        "--end",
        "2030-03-02T09:00:00",
        "--time-zone",
        "5.5",
        "--video",
        str(tmp_path / "clip.mp4"),
        "--thumbnail",
        str(tmp_path / "thumb.png"),
        "--is-360",
    ]
    out = run(sb, *onboard)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("Campaign onboarded successfully.")

    out = run(sb, "campaigns", "list", "--json")
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == [
        {
            "campaign_name": "spring",
            "status": "Scheduled",
            "approval_status": "true",
            "start_timestamp": "2030-03-01T03:30:00.000Z",
            "end_timestamp": "2030-03-02T03:30:00.000Z",
            "approved": True,
        }
    ]
    out = run(sb, "campaigns", "status", "spring")
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [
        "campaign_name",
        "status",
        "approval_status",
        "spring",
        "Scheduled",
        "true",
    ]
    out = run(sb, "campaigns", "chart", "--csv")
    [row] = list(csv.DictReader(io.StringIO(out.stdout)))
    assert (row["campaign_name"], row["renewButton"]) == ("spring", "False")

    bad = [*onboard[:-9], "--end", "2030-02-01T09:00:00", *onboard[-7:]]
    out = run(sb, *bad)
    assert out.returncode == 2
    assert "end (campaignEndDate) 2030-02-01T09:00:00 must be after start" in out.stderr
    out = run(sb, "campaigns", "onboard", "--name", "x")
    assert out.returncode == 2
    assert "campaigns onboard needs --title, --description, --start" in out.stderr
