"""The ``edgereports content ...`` commands (area A: onboard, list, URLs, sign, play, whitelist).

The only command whose output can hold the API key is ``content play --reveal`` (the playback
URL necessarily contains it); without ``--reveal`` the key is shown as ``***``.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ._content_campaigns import (
    add_group,
    content_client,
    emit,
    emit_value,
    records,
)

if TYPE_CHECKING:
    from ..content import ContentClient

__all__ = ["add_parser"]


#: The columns ``content list`` shows as a table (``--json``/``--csv`` give all).
TABLE_COLUMNS = (
    "content_id",
    "publish_access",
    "content_upload_status",
    "createdAt",
    "partner_content_file_name",
    "content_url",
)


def _edge_url(client: ContentClient, target: str) -> str:
    """An edge URL as given, or the URL of a content_id."""
    if target.startswith(("http://", "https://")):
        return target
    return client.get_url(target)


def _cmd_content_add(args: argparse.Namespace) -> int:
    client = content_client(args)
    items = client.add(args.urls, publish_access="public" if args.public else "private")
    if not args.wait:
        return records(items, args)
    synced = client.wait_until_synced(items, timeout=args.timeout, poll=args.poll)
    return emit(synced, args, TABLE_COLUMNS)


def _cmd_content_list(args: argparse.Namespace) -> int:
    return emit(content_client(args).list(), args, TABLE_COLUMNS)


def _cmd_content_wait(args: argparse.Namespace) -> int:
    synced = content_client(args).wait_until_synced(
        args.content_ids, timeout=args.timeout, poll=args.poll
    )
    return emit(synced, args, TABLE_COLUMNS)


def _cmd_content_url(args: argparse.Namespace) -> int:
    return emit_value("url", content_client(args).get_url(args.content_id), args)


def _cmd_content_sign(args: argparse.Namespace) -> int:
    client = content_client(args)
    signed = client.signed_url(
        _edge_url(client, args.target),
        expires_in=args.expires_in,
        allow_signed_cookie=args.allow_signed_cookie,
    )
    return emit_value("url", signed, args)


def _cmd_content_play(args: argparse.Namespace) -> int:
    client = content_client(args)
    url = _edge_url(client, args.target)
    if args.sign:
        url = client.signed_url(url, expires_in=args.expires_in)
    playback = client.playback_url(url)
    shown = str(playback) if args.reveal else playback.redacted
    if not args.check:
        return emit_value("url", shown, args)
    response = client.fetch_playback(playback, origin=args.origin)
    row = {
        "url": shown,
        "status": response.status_code,
        "content_type": response.headers.get("Content-Type", ""),
        "bytes": len(response.content),
    }
    return records([row], args)


def _cmd_whitelist(args: argparse.Namespace) -> int:
    client = content_client(args)
    if args.action == "list":
        return records([{"cors_whitelist_domain": d} for d in client.domains()], args)
    if not args.origin:
        raise InputError(f"whitelist {args.action} needs an ORIGIN such as https://player.example")
    change = (client.allow_domain if args.action == "add" else client.remove_domain)(args.origin)
    return records([change], args)


def add_parser(subparsers: Any) -> None:
    """Add the ``content`` command group to the ``edgereports`` parser."""
    leaf = add_group(
        subparsers,
        "content",
        "video content: onboard, list, URLs, signing, playback, whitelist",
        "The video-content endpoints.",
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
