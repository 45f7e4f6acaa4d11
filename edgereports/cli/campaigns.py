"""The ``edgereports campaigns ...`` commands (area B: onboard, list, status, chart)."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
from datetime import datetime
from typing import Any

from ..campaigns import Campaign
from ..errors import InputError
from ._content_campaigns import (
    add_group,
    campaigns_client,
    emit,
    emit_value,
    records,
)

__all__ = ["add_parser", "campaign_from_args"]


#: ``campaigns onboard`` flags → Campaign attribute (flags use the attribute names).
_TEXT = (
    "name",
    "title",
    "description",
    "sms_text",
    "brand_url",
    "chat_url",
    "call_to_action_url",
    "call_to_action_button_text",
    "call_to_action_duration",
    "content_type",
    "channel_type",
    "is_campaign_approve",
    "preference_data",
    "default_tab_preference",
    "video_duration",
)
_FLAGS = ("is_360", "is_auto_redirect", "is_last_slot")


def _datetime(text: str, what: str) -> datetime:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        raise InputError(f"{what} {text!r} is not a date-time like 2030-03-01T09:00:00") from None


def campaign_from_args(args: argparse.Namespace) -> Campaign:
    """Build the :class:`~edgereports.campaigns.Campaign` that ``campaigns onboard`` describes.

    Fields come from ``--from-json FILE`` (an object keyed by Campaign attribute names), then
    from the flags, which win.

    Raises:
        InputError: an unreadable file, an unknown key, a bad date-time or a field the
            Campaign refuses.
    """
    values: dict[str, Any] = {}
    if args.from_json:
        try:
            with open(args.from_json, encoding="utf-8") as fh:
                loaded = json.load(fh)
        except (OSError, ValueError) as exc:
            raise InputError(f"--from-json {args.from_json!r}: {exc}") from None
        if not isinstance(loaded, dict):
            raise InputError(f"--from-json {args.from_json!r} must hold a JSON object")
        known = {f.name for f in dataclasses.fields(Campaign)} - {"token"}
        unknown = sorted(set(loaded) - known)
        if unknown:
            raise InputError(f"--from-json has unknown keys {unknown}; allowed: {sorted(known)}")
        values.update(loaded)
    options = ("video", "thumbnail", "start", "end", "time_zone")
    for name in (*_TEXT, *options, "number_of_sms", "call_to_action_frequency"):
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    for name in _FLAGS:
        if getattr(args, name):
            values[name] = True
    for name in ("start", "end"):
        if isinstance(values.get(name), str):
            values[name] = _datetime(values[name], name)
    if args.token_env:
        values["token"] = os.environ.get(args.token_env, "")
    required = [f.name for f in dataclasses.fields(Campaign) if f.default is dataclasses.MISSING]
    missing = [name for name in required if name not in values]
    if missing:
        flags = ", ".join("--" + name.replace("_", "-") for name in missing)
        raise InputError(f"campaigns onboard needs {flags}")
    try:
        return Campaign(**values)
    except TypeError as exc:
        raise InputError(f"campaign: {exc}") from None


def _cmd_onboard(args: argparse.Namespace) -> int:
    campaign = campaign_from_args(args)
    return emit_value("message", campaigns_client(args).onboard(campaign), args)


def _cmd_campaign_list(args: argparse.Namespace) -> int:
    return emit(campaigns_client(args).list(), args)


def _cmd_campaign_status(args: argparse.Namespace) -> int:
    return records([campaigns_client(args).status(args.campaign_name)], args)


def _cmd_campaign_chart(args: argparse.Namespace) -> int:
    return emit(campaigns_client(args).chart(), args)


def add_parser(subparsers: Any) -> None:
    """Add the ``campaigns`` command group to the ``edgereports`` parser."""
    leaf = add_group(
        subparsers,
        "campaigns",
        "notification campaigns: onboard, list, status, chart",
        "The notification-campaign endpoints.",
    )

    p = leaf("onboard", "onboard a campaign with its video and thumbnail", _cmd_onboard)
    p.add_argument("--from-json", metavar="FILE", help="campaign fields as a JSON object")
    for name in _TEXT:
        p.add_argument("--" + name.replace("_", "-"), dest=name)
    p.add_argument("--start", help="local start, YYYY-MM-DDTHH:MM:SS (in --time-zone)")
    p.add_argument("--end", help="local end, YYYY-MM-DDTHH:MM:SS (in --time-zone)")
    p.add_argument("--time-zone", type=float, help="hours from UTC, e.g. 5.5")
    p.add_argument("--video", help="the video file (content)")
    p.add_argument("--thumbnail", help="the thumbnail image file")
    p.add_argument("--number-of-sms", type=int)
    p.add_argument("--call-to-action-frequency", type=int)
    for name in _FLAGS:
        p.add_argument("--" + name.replace("_", "-"), dest=name, action="store_true")
    p.add_argument("--token-env", metavar="VAR", help="environment variable holding the token")

    leaf("list", "list the campaigns", _cmd_campaign_list)
    p = leaf("status", "show the status of one campaign", _cmd_campaign_status)
    p.add_argument("campaign_name", metavar="NAME")
    leaf("chart", "show the campaign chart", _cmd_campaign_chart)
