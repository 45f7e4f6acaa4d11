"""The export job file: TOML read with :mod:`tomllib`, validated into a frozen :class:`Job`.

Every problem is a :class:`~edgereports.errors.ConfigError` that names the file, the report and
the key. A key is never echoed: messages name the variable or the key, not its value.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from ..config import Settings, check_rate_limit
from ..errors import ConfigError, redact
from ..inventory import check_table
from .availability import parse_ledger
from .formats import FORMATS as DESTINATIONS
from .reports import (
    DEFAULT_KEYS,
    ReportJob,
    check_keys,
    hint,
    parse_lookback,
    parse_report,
    positive_int,
)
from .storage import Storage, parse_storage

__all__ = [
    "DEFAULT_API_KEY_ENV",
    "DEFAULT_MAX_WORKERS",
    "FORMATS",
    "Connection",
    "Job",
    "ReportJob",
    "load_job",
    "parse_job",
]

#: The variable that holds the API key unless ``[connection] api_key_env`` names another.
DEFAULT_API_KEY_ENV = "EDGEREPORTS_API_KEY"
#: Windows in flight and fan-out requests at once, unless ``max_workers`` says otherwise.
DEFAULT_MAX_WORKERS = 4
#: The values of the top-level ``format`` key; the first is the default.
FORMATS = tuple(DESTINATIONS)
#: Object-store schemes a Delta ``output`` may use (``deltalake`` reads their settings).
URI_SCHEMES = ("s3", "s3a", "gs", "az", "abfs", "abfss")

_TOP_KEYS = (
    "name",
    "output",
    "format",
    "max_workers",
    "rate_limit",
    "budget_dir",
    "retention",
    "catalog",
    "connection",
    "storage",
    "defaults",
    "reports",
    "inventory",
)
_URI = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/]*)(.*)")
_CONNECTION_KEYS = ("reporting_url", "api_key_env", "api_key", "api_key_in_file", "timeout")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Connection:
    """Where the job connects; unset values come from the environment (``EDGEREPORTS_*``).

    Attributes:
        reporting_url: the reporting API address, or ``None`` for ``EDGEREPORTS_REPORTING_URL``.
        api_key_env: the environment variable that holds the API key.
        api_key: the key itself, only when the job file insists (``api_key_in_file = true``).
        timeout: the read timeout in seconds, or ``None`` for the settings' default.
    """

    reporting_url: str | None = None
    api_key_env: str = DEFAULT_API_KEY_ENV
    api_key: str | None = field(default=None, repr=False)
    timeout: float | None = None

    def __repr__(self) -> str:
        key = "'***'" if self.api_key else "None"
        return (
            f"Connection(reporting_url={redact(repr(self.reporting_url), [self.api_key])}, "
            f"api_key_env={self.api_key_env!r}, "
            f"api_key={key}, timeout={self.timeout!r})"
        )


@dataclass(frozen=True)
class Job:
    """A validated export job.

    Attributes:
        name: the job's name (default: the file name without ``.toml``).
        output: the output root (relative paths in the file are relative to the file).
        connection: where to connect.
        reports: the reports, in file order.
        max_workers: windows fetched at once, and fan-out requests per window.
        source: the job file, when read from one (for messages).
        format: the destination: ``"parquet"`` (Hive-partitioned files, the default) or a
            table format (``"delta"``, ``"iceberg"``: a table each).
        uri: the object-store URI of ``output`` (``s3://bucket/prefix``), else ``None``.
        storage: the object-store settings of a table format (``[storage]``; no credential).
        rate_limit: the job's request budget in requests per second (``rate_limit = "10/s"``
            or ``"600/min"``), shared by its processes on one host; ``None``: the
            environment's (``EDGEREPORTS_RATE_LIMIT``), if any.
        budget_dir: where the budget of the job's API key is shared (``budget_dir =
            "/shared/budgets"``, relative to the job file): a directory every process and
            container using the key sees; ``None``: ``EDGEREPORTS_BUDGET_DIR``, else the
            per-user cache directory.
        retention: how long ``--maintain`` keeps the files a table no longer uses
            (``retention = "7d"`` or ``"36h"``; readers of older snapshots may miss them).
        catalog: the SQLAlchemy URL of an Iceberg job's catalog (``None``: a SQLite file,
            ``OUTPUT/_catalog.sqlite`` or, for object storage, beside the job file).
        inventory: the ``[inventory]`` table (checked; the page's health flags read it with
            :meth:`edgereports.Inventory.from_table`), or None.
    """

    name: str
    output: Path
    connection: Connection
    reports: tuple[ReportJob, ...]
    max_workers: int = DEFAULT_MAX_WORKERS
    source: Path | None = None
    format: str = FORMATS[0]
    uri: str | None = None
    storage: Storage = field(default_factory=Storage)
    rate_limit: float | None = None
    retention: timedelta = timedelta(days=7)
    budget_dir: Path | None = None
    catalog: str | None = None
    inventory: dict[str, Any] | None = None

    def effective_rate_limit(self) -> float | None:
        """The job's ``rate_limit``, else the environment's (requests per second), else None."""
        if self.rate_limit is not None:
            return self.rate_limit

        rate = Settings.from_env().rate_limit
        return float(rate) if isinstance(rate, int | float) else None

    def storage_options(self) -> dict[str, str]:
        """The ``storage_options`` of the job's Delta tables (variables read now).

        Raises:
            ConfigError: a variable that ``[storage] options_from_env`` names is not set.
        """
        return self.storage.resolve(self._where())

    def location(self, report: str) -> str:
        """Where the report's data goes: a local directory or an object-store URI.

        Example:
            >>> job = load_job("nightly.toml")  # output = "exports"
            >>> job.location("usage")
            '.../exports/usage'
        """
        if self.uri is not None:
            return f"{self.uri.rstrip('/')}/{report}"
        return str(self.output / report)

    def report(self, name: str) -> ReportJob:
        """Return the report named ``name``.

        Raises:
            ConfigError: no report has that name.
        """
        for r in self.reports:
            if r.name == name:
                return r
        names = [r.name for r in self.reports]
        raise ConfigError(
            f"{self._where()}: no report named {name!r}{hint(name, names)} "
            f"(reports: {', '.join(names)})"
        )

    def _where(self) -> str:
        return str(self.source) if self.source else f"job {self.name!r}"


def load_job(path: str | Path) -> Job:
    """Read and validate a job file.

    Args:
        path: the TOML job file.

    Returns:
        The job; a relative ``output`` is resolved against the file's directory.

    Raises:
        ConfigError: the file is missing, not TOML, or invalid; the message names the file,
            the report and the key.
    """
    file = Path(path)
    try:
        text = file.read_bytes()
    except OSError as exc:
        raise ConfigError(f"cannot read job file {file}: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(text.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: not a valid TOML file: {exc}") from None
    return parse_job(data, source=file)


def parse_job(data: Mapping[str, Any], *, source: str | Path | None = None) -> Job:
    """Validate a job given as parsed TOML (a dict).

    Args:
        data: the parsed job file.
        source: the file it came from; names the job, anchors a relative ``output`` and appears
            in messages. Without it, ``output`` is relative to the working directory.

    Returns:
        The job.

    Raises:
        ConfigError: the job is invalid; the message names the file, the report and the key.
    """
    src = Path(source) if source is not None else None
    where = str(src) if src else "job"
    check_keys(data, _TOP_KEYS, where)
    name = data.get("name", src.stem if src else "job")
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"{where}: name must be a non-empty string")
    output = data.get("output")
    if not isinstance(output, str) or not output.strip():
        raise ConfigError(
            f'{where}: output must name the output directory, e.g. output = "exports"'
        )
    fmt = data.get("format", FORMATS[0])
    if fmt not in FORMATS:
        raise ConfigError(
            f"{where}: format must be one of {', '.join(map(repr, FORMATS))}, got {fmt!r}"
        )
    uri = _object_store(output.strip(), fmt, where)
    root = Path(output).expanduser()
    if not root.is_absolute() and src is not None and uri is None:
        root = src.resolve().parent / root
    max_workers = positive_int(data.get("max_workers", DEFAULT_MAX_WORKERS), where, "max_workers")
    rate_limit = check_rate_limit(data.get("rate_limit"), f"{where}: rate_limit")
    budget_dir = _budget_dir(data.get("budget_dir"), src, where)
    retention = parse_lookback(data.get("retention", 7), where, "retention")
    catalog = _catalog(data.get("catalog"), fmt, where, src)
    connection = _connection(_table(data, "connection", where), where)
    storage = parse_storage(_table(data, "storage", where), fmt, where)
    inventory = check_table(data["inventory"], where) if "inventory" in data else None
    defaults = _table(data, "defaults", where)
    check_keys(defaults, DEFAULT_KEYS, f"{where} [defaults]")
    items = data.get("reports")
    if not isinstance(items, list) or not items:
        raise ConfigError(
            f"{where}: no reports; add at least one [[reports]] table with a name and a preset"
        )
    reports: list[ReportJob] = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping):
            raise ConfigError(f"{where}: reports[{i}] must be a table ([[reports]])")
        if "availability" in item:  # computed from the inventory, not fetched
            base = src.resolve().parent if src is not None else None
            reports.append(parse_ledger(item, defaults, where, i, inventory, base))
        else:
            reports.append(parse_report(item, defaults, where, i))
    seen: set[str] = set()
    for r in reports:
        if r.name in seen:
            raise ConfigError(f"{where}: two reports are named {r.name!r}; names must differ")
        seen.add(r.name)
    return Job(
        name=name.strip(),
        output=root,
        connection=connection,
        reports=tuple(reports),
        max_workers=max_workers,
        source=src,
        format=fmt,
        uri=uri,
        storage=storage,
        rate_limit=rate_limit,
        retention=retention,
        budget_dir=budget_dir,
        catalog=catalog,
        inventory=inventory,
    )


def _budget_dir(value: object, src: Path | None, where: str) -> Path | None:
    """The job's ``budget_dir``: a directory, relative to the job file's."""
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(
            f'{where}: budget_dir must name a directory, e.g. budget_dir = "/shared/budgets", '
            f"got {value!r}"
        )
    folder = Path(value.strip()).expanduser()
    if not folder.is_absolute() and src is not None:
        folder = src.resolve().parent / folder
    return folder


def _object_store(output: str, fmt: str, where: str) -> str | None:
    """The object-store URI ``output`` names (checked), or None for a local directory."""
    match = _URI.fullmatch(output)
    if match is None:
        return None
    scheme, host = match[1].lower(), match[2]
    if not DESTINATIONS[fmt].object_storage:
        tables = " or ".join(f'"{f.name}"' for f in DESTINATIONS.values() if f.object_storage)
        raise ConfigError(
            f"{where}: output {scheme}://... is object storage; the {DESTINATIONS[fmt].title} "
            f"export writes to a local directory: set format = {tables} to write a table there"
        )
    if scheme not in URI_SCHEMES:
        raise ConfigError(
            f"{where}: output scheme {scheme!r} is not supported; use one of "
            f"{', '.join(URI_SCHEMES)} (or a local directory)"
        )
    if "@" in host or not host:
        raise ConfigError(
            f"{where}: output must be {scheme}://BUCKET/PREFIX with no credentials in it "
            "(they come from the environment, e.g. AWS_ACCESS_KEY_ID)"
        )
    return output


def _catalog(value: object, fmt: str, where: str, source: Path | None) -> str | None:
    """The ``catalog`` key: a SQLAlchemy URL with no password in it, or a SQLite file."""
    if value is None:
        return None
    if not DESTINATIONS[fmt].catalog:
        raise ConfigError(f'{where}: catalog applies to format = "iceberg"; remove it')
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: catalog must be a SQLAlchemy URL or a SQLite file name")
    text = value.strip()
    match = _URI.fullmatch(text)
    if match is None:  # a file: SQLite, relative to the job file
        path = Path(text).expanduser()
        if not path.is_absolute() and source is not None:
            path = source.resolve().parent / path
        return f"sqlite:///{path}"
    if ":" in match[2].partition("@")[0] and "@" in match[2]:
        raise ConfigError(
            f"{where}: catalog holds a password; keep it out of job files (the database "
            "driver reads it from the environment, e.g. PGPASSWORD)"
        )
    return text


def _connection(table: Mapping[str, Any], where: str) -> Connection:
    label = f"{where} [connection]"
    check_keys(table, _CONNECTION_KEYS, label)
    url = table.get("reporting_url")
    if url is not None and not isinstance(url, str):
        raise ConfigError(f"{label}: reporting_url must be a string URL")
    env = table.get("api_key_env", DEFAULT_API_KEY_ENV)
    if not isinstance(env, str) or not _ENV_NAME.fullmatch(env):
        raise ConfigError(
            f"{label}: api_key_env must name an environment variable, e.g. "
            f'api_key_env = "{DEFAULT_API_KEY_ENV}"'
        )
    key = table.get("api_key")
    insist = table.get("api_key_in_file", False)
    if not isinstance(insist, bool):
        raise ConfigError(f"{label}: api_key_in_file must be true or false")
    if key is not None:
        if not insist:
            raise ConfigError(
                f"{label}: the file holds an API key (key api_key); keep keys out of job "
                f'files: remove it and set {env} in the environment, or api_key_env = "NAME" '
                "to name another variable (add api_key_in_file = true only if you insist)"
            )
        if not isinstance(key, str) or len(key.strip()) < 4:
            raise ConfigError(f"{label}: api_key must be a non-empty string")
    timeout = table.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise ConfigError(f"{label}: timeout must be a positive number of seconds")
    return Connection(
        reporting_url=url,
        api_key_env=env,
        api_key=key.strip() if isinstance(key, str) else None,
        timeout=None if timeout is None else float(timeout),
    )


def _table(data: Mapping[str, Any], key: str, where: str) -> Mapping[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where}: {key} must be a table ([{key}])")
    return value
