"""The ``edgereports content ...`` and ``edgereports campaigns ...`` commands (areas A and B).

:func:`add_parsers` adds both command groups to the ``edgereports`` parser. Every leaf sets
``handler`` (returning the exit status) and reads its connection from
:meth:`Settings.from_env() <edgereports.config.Settings.from_env>`, with ``--base-url`` and
``--partner-name`` overriding; the API key only ever comes from ``EDGEREPORTS_API_KEY`` (no flag
that would echo it into shell history). Results print as a table, or ``--json`` / ``--csv``.

The only command whose output can hold the API key is ``content play --reveal`` (the playback
URL necessarily contains it, SPEC 4.1 rule 4); without ``--reveal`` the key is shown as ``***``.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import json
import os
import sys
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from .config import Settings
from .errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from .campaigns import Campaign, CampaignClient
    from .content import ContentClient

__all__ = ["add_parsers"]

_Handler = Callable[[argparse.Namespace], int]
#: Adds one action (name, help text, handler) to a command group; returns its parser.
_Leaf = Callable[[str, str, _Handler], argparse.ArgumentParser]

#: The columns ``content list`` shows as a table (``--json``/``--csv`` give all).
TABLE_COLUMNS = (
    "content_id",
    "publish_access",
    "content_upload_status",
    "createdAt",
    "partner_content_file_name",
    "content_url",
)


# -- output and connection ------------------------------------------------------------------


def _output_flags(parser: argparse.ArgumentParser) -> None:
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print JSON records")
    fmt.add_argument("--csv", action="store_true", help="print CSV")


def _connection() -> argparse.ArgumentParser:
    parent = argparse.ArgumentParser(add_help=False)
    g = parent.add_argument_group("connection (the key comes from EDGEREPORTS_API_KEY only)")
    g.add_argument("--base-url", help="address of the APIs (default: EDGEREPORTS_BASE_URL)")
    g.add_argument(
        "--partner-name", help="subscription Service ID (default: EDGEREPORTS_PARTNER_NAME)"
    )
    return parent


def _settings(args: argparse.Namespace) -> Settings:
    settings = Settings.from_env()
    changes = {
        name: getattr(args, name)
        for name in ("base_url", "partner_name")
        if getattr(args, name, None)
    }
    return dataclasses.replace(settings, **changes) if changes else settings


def _content(args: argparse.Namespace) -> ContentClient:
    from .content import ContentClient

    return ContentClient.from_settings(_settings(args))


def _campaigns(args: argparse.Namespace) -> CampaignClient:
    from .campaigns import CampaignClient

    return CampaignClient.from_settings(_settings(args))


def _emit(df: pd.DataFrame, args: argparse.Namespace, columns: tuple[str, ...] = ()) -> int:
    """Print a frame as a table (``columns`` only, when given), JSON records or CSV."""
    if getattr(args, "json", False):
        print(df.to_json(orient="records", date_format="iso", indent=2))
    elif getattr(args, "csv", False):
        sys.stdout.write(df.to_csv(index=False))
    elif df.empty:
        print("(no rows)")
    else:
        shown = df[[c for c in columns if c in df.columns]] if columns else df
        print(shown.to_string(index=False))
    return 0


def _records(items: list[Any], args: argparse.Namespace) -> int:
    """Print a few small records (dataclasses or dicts) as a table, JSON or CSV, without pandas."""
    rows: list[dict[str, Any]] = [
        dataclasses.asdict(item)
        if dataclasses.is_dataclass(item) and not isinstance(item, type)
        else dict(item)
        for item in items
    ]
    names = list(rows[0]) if rows else []
    if getattr(args, "json", False):
        print(json.dumps(rows, indent=2, default=str))
    elif getattr(args, "csv", False):
        writer = csv.DictWriter(sys.stdout, fieldnames=names, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    elif not rows:
        print("(no rows)")
    else:
        cells = [names, *([str(row[n]) for n in names] for row in rows)]
        widths = [max(len(line[i]) for line in cells) for i in range(len(names))]
        for line in cells:
            print("  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip())
    return 0


def _value(name: str, value: str, args: argparse.Namespace) -> int:
    if getattr(args, "json", False):
        print(json.dumps({name: value}))
    elif getattr(args, "csv", False):
        print(f"{name}\n{value}")
    else:
        print(value)
    return 0


def _group(
    sub: Any, conn: argparse.ArgumentParser, name: str, helptext: str, description: str
) -> _Leaf:
    """Add the command group ``name``; return the function that adds one action to it.

    Each action gets the connection flags, the output flags and its ``handler``.
    """
    group = sub.add_parser(name, help=helptext, description=description)
    leaves = group.add_subparsers(dest=f"{name}_command", metavar="ACTION", required=True)

    def leaf(action: str, text: str, handler: _Handler) -> argparse.ArgumentParser:
        p: argparse.ArgumentParser = leaves.add_parser(
            action, help=text, description=text, parents=[conn]
        )
        _output_flags(p)
        p.set_defaults(handler=handler)
        return p

    return leaf


# -- content --------------------------------------------------------------------------------


def _edge_url(client: ContentClient, target: str) -> str:
    """An edge URL as given, or the URL of a content_id."""
    if target.startswith(("http://", "https://")):
        return target
    return client.get_url(target)


def _cmd_content_add(args: argparse.Namespace) -> int:
    client = _content(args)
    items = client.add(args.urls, publish_access="public" if args.public else "private")
    if not args.wait:
        return _records(items, args)
    synced = client.wait_until_synced(items, timeout=args.timeout, poll=args.poll)
    return _emit(synced, args, TABLE_COLUMNS)


def _cmd_content_list(args: argparse.Namespace) -> int:
    return _emit(_content(args).list(), args, TABLE_COLUMNS)


def _cmd_content_wait(args: argparse.Namespace) -> int:
    synced = _content(args).wait_until_synced(
        args.content_ids, timeout=args.timeout, poll=args.poll
    )
    return _emit(synced, args, TABLE_COLUMNS)


def _cmd_content_url(args: argparse.Namespace) -> int:
    return _value("url", _content(args).get_url(args.content_id), args)


def _cmd_content_sign(args: argparse.Namespace) -> int:
    client = _content(args)
    signed = client.signed_url(
        _edge_url(client, args.target),
        expires_in=args.expires_in,
        allow_signed_cookie=args.allow_signed_cookie,
    )
    return _value("url", signed, args)


def _cmd_content_play(args: argparse.Namespace) -> int:
    client = _content(args)
    url = _edge_url(client, args.target)
    if args.sign:
        url = client.signed_url(url, expires_in=args.expires_in)
    playback = client.playback_url(url)
    shown = str(playback) if args.reveal else playback.redacted
    if not args.check:
        return _value("url", shown, args)
    response = client.fetch_playback(playback, origin=args.origin)
    row = {
        "url": shown,
        "status": response.status_code,
        "content_type": response.headers.get("Content-Type", ""),
        "bytes": len(response.content),
    }
    return _records([row], args)


def _cmd_whitelist(args: argparse.Namespace) -> int:
    client = _content(args)
    if args.action == "list":
        return _records([{"cors_whitelist_domain": d} for d in client.domains()], args)
    if not args.origin:
        raise InputError(f"whitelist {args.action} needs an ORIGIN such as https://player.example")
    change = (client.allow_domain if args.action == "add" else client.remove_domain)(args.origin)
    return _records([change], args)


def _add_content(sub: Any, conn: argparse.ArgumentParser) -> None:
    leaf = _group(
        sub,
        conn,
        "content",
        "video content: onboard, list, URLs, signing, playback, whitelist",
        "The video-content endpoints (SPEC 4.1).",
    )

    def wait_flags(p: argparse.ArgumentParser) -> None:
        p.add_argument("--timeout", type=float, default=600.0, help="seconds (default 600)")
        p.add_argument("--poll", type=float, default=5.0, help="seconds between polls")

    p = leaf("add", "onboard content from one or more http(s) URLs", _cmd_content_add)
    p.add_argument("urls", nargs="+", metavar="URL")
    access = p.add_mutually_exclusive_group()
    access.add_argument("--public", action="store_true", help="plays with the API key")
    access.add_argument("--private", action="store_true", help="plays signed (the default)")
    p.add_argument("--wait", action="store_true", help="wait until synced to the edge")
    wait_flags(p)

    leaf("list", "list every content record of the subscription", _cmd_content_list)

    p = leaf("wait", "wait until content is synced to the edge", _cmd_content_wait)
    p.add_argument("content_ids", nargs="+", metavar="CONTENT_ID")
    wait_flags(p)

    p = leaf("url", "print the edge URL of a content_id", _cmd_content_url)
    p.add_argument("content_id", metavar="CONTENT_ID", help="the content_id (not the row id)")

    p = leaf("sign", "print a signed URL for private content", _cmd_content_sign)
    p.add_argument("target", metavar="CONTENT_ID|URL", help="a content_id or an edge URL")
    p.add_argument("--expires-in", type=int, default=3600, help="seconds (default 3600)")
    p.add_argument("--allow-signed-cookie", action="store_true")

    p = leaf(
        "play",
        "build the playback URL (key shown as *** unless --reveal) and optionally fetch it",
        _cmd_content_play,
    )
    p.add_argument("target", metavar="CONTENT_ID|URL", help="a content_id or an edge URL")
    p.add_argument("--sign", action="store_true", help="sign it first (private content)")
    p.add_argument("--expires-in", type=int, default=3600, help="signature validity, seconds")
    p.add_argument("--check", action="store_true", help="fetch it and report the answer")
    p.add_argument("--origin", help="Origin header for --check, as a browser player sends it")
    p.add_argument("--reveal", action="store_true", help="print the URL with the API key in it")

    p = leaf("whitelist", "list, add or remove CORS whitelist origins", _cmd_whitelist)
    p.add_argument("action", choices=("list", "add", "remove"))
    p.add_argument("origin", nargs="?", metavar="ORIGIN", help="scheme://host[:port]")


# -- campaigns ------------------------------------------------------------------------------

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
    from .campaigns import Campaign

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
    return _value("message", _campaigns(args).onboard(campaign), args)


def _cmd_campaign_list(args: argparse.Namespace) -> int:
    return _emit(_campaigns(args).list(), args)


def _cmd_campaign_status(args: argparse.Namespace) -> int:
    return _records([_campaigns(args).status(args.campaign_name)], args)


def _cmd_campaign_chart(args: argparse.Namespace) -> int:
    return _emit(_campaigns(args).chart(), args)


def _add_campaigns(sub: Any, conn: argparse.ArgumentParser) -> None:
    leaf = _group(
        sub,
        conn,
        "campaigns",
        "notification campaigns: onboard, list, status, chart",
        "The notification-campaign endpoints (SPEC 4.2).",
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


def add_parsers(subparsers: Any) -> None:
    """Add the ``content`` and ``campaigns`` command groups to the ``edgereports`` parser.

    Args:
        subparsers: the object ``ArgumentParser.add_subparsers()`` returned.
    """
    conn = _connection()
    _add_content(subparsers, conn)
    _add_campaigns(subparsers, conn)
