"""Settings: environment, validation, and a repr that never shows the key."""

from __future__ import annotations

import dataclasses

import pytest

import edgereports as er

KEY = "live-key-0123456789"


def test_from_env_reads_the_documented_variables() -> None:
    s = er.Settings.from_env(
        {
            "EDGEREPORTS_API_KEY": KEY,
            "EDGEREPORTS_PARTNER_NAME": "partner-1",
            "EDGEREPORTS_BASE_URL": "https://content.example/",
            "EDGEREPORTS_REPORTING_URL": "https://reports.example",
            "EDGEREPORTS_TIMEOUT": "12.5",
        }
    )
    assert (s.api_key, s.partner_name, s.base_url, s.reporting_url, s.timeout) == (
        KEY,
        "partner-1",
        "https://content.example",
        "https://reports.example",
        12.5,
    )
    assert er.Settings.from_env({}) == er.Settings()


def test_repr_and_str_never_show_the_key() -> None:
    s = er.Settings(api_key=KEY, reporting_url="https://r.example")
    for text in (repr(s), str(s), f"{s!r}", repr([s])):
        assert KEY not in text
        assert "api_key='***'" in text


def test_settings_are_frozen() -> None:
    with pytest.raises(dataclasses.FrozenInstanceError):
        er.Settings().api_key = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"EDGEREPORTS_REPORTING_URL": "reports.example"}, "reporting_url must be an http"),
        ({"EDGEREPORTS_BASE_URL": "ftp://x"}, "base_url must be an http"),
        ({"EDGEREPORTS_TIMEOUT": "soon"}, "EDGEREPORTS_TIMEOUT must be a number"),
        ({"EDGEREPORTS_TIMEOUT": "-1"}, "timeout must be a positive number"),
    ],
)
def test_malformed_settings(env: dict[str, str], message: str) -> None:
    with pytest.raises(er.ConfigError, match=message):
        er.Settings.from_env(env)


def test_require_names_missing_settings() -> None:
    with pytest.raises(er.ConfigError, match=r"api_key \(EDGEREPORTS_API_KEY\)"):
        er.Settings(reporting_url="https://r.example").require("api_key", "reporting_url")


def test_the_quick_starts_missing_settings_error_names_the_sandbox(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in ("EDGEREPORTS_API_KEY", "EDGEREPORTS_REPORTING_URL"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(er.ConfigError) as caught:
        er.ReportingClient.from_settings(er.Settings.from_env())  # the README's quick start
    assert str(caught.value).startswith("missing settings: api_key (EDGEREPORTS_API_KEY)")
    assert "run 'edgereports sandbox' and paste the export lines it prints" in str(caught.value)
