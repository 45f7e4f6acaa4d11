"""Where an export's Iceberg tables are listed: a SQL catalog (a local SQLite file by default).

``pyiceberg``'s SQL catalog keeps each table's current metadata in a database: by default a
SQLite file, ``OUTPUT/_catalog.sqlite`` for a local output (readers skip names starting with
``_``) or ``<job file>.catalog.sqlite`` beside the job file for an object-store output; the
job's ``catalog`` key names another (a SQLAlchemy URL such as ``postgresql://host/db``, whose
password comes from the environment, never the file). The tables' files are written through
``pyiceberg``'s file IO with the job's ``[storage]`` settings and the ``AWS_*`` environment.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ..._dependencies import lazy_import
from ...errors import ConfigError
from ..formats import FORMATS
from ..job import Job

_sql = lazy_import("pyiceberg.catalog.sql", pip="edgereports[iceberg]")
_sql_errors = lazy_import("sqlalchemy.exc", pip="edgereports[iceberg]")

__all__ = ["NAMESPACE", "catalog_of", "file_io_properties", "require_pyiceberg"]

#: The namespace of the export's tables in the catalog.
NAMESPACE = "edgereports"
#: Attempts at making the catalog's tables and namespace (processes may race to make them).
MAKE_ATTEMPTS = 5
#: ``[storage]`` options (``deltalake``'s names) → ``pyiceberg``'s file IO properties.
_OPTIONS = {
    "aws_endpoint_url": "s3.endpoint",
    "aws_endpoint": "s3.endpoint",
    "aws_region": "s3.region",
    "aws_access_key_id": "s3.access-key-id",
    "aws_secret_access_key": "s3.secret-access-key",
    "aws_session_token": "s3.session-token",
}
_ENVIRONMENT = {
    "AWS_ENDPOINT_URL": "s3.endpoint",
    "AWS_REGION": "s3.region",
    "AWS_ACCESS_KEY_ID": "s3.access-key-id",
    "AWS_SECRET_ACCESS_KEY": "s3.secret-access-key",
    "AWS_SESSION_TOKEN": "s3.session-token",
}


def require_pyiceberg() -> Any:
    """Import ``pyiceberg``'s SQL catalog (the ``iceberg`` extra), or say how to install it.

    Raises:
        ConfigError: the package (or SQLAlchemy) is not installed.
    """
    try:
        _sql.SqlCatalog  # noqa: B018 - the first attribute read imports the package
    except ImportError:
        hint = FORMATS["iceberg"].install_hint
        raise ConfigError(f'format = "iceberg" needs the pyiceberg package: {hint}') from None
    return _sql


def file_io_properties(options: Mapping[str, str] | None) -> dict[str, str]:
    """The file IO properties of the job's store: the ``AWS_*`` environment, then
    ``[storage]`` options (a ``deltalake`` name, or a ``pyiceberg`` property)."""
    out = {prop: os.environ[var] for var, prop in _ENVIRONMENT.items() if os.environ.get(var)}
    for name, value in (options or {}).items():
        key = _OPTIONS.get(name.lower(), name if "." in name else None)
        if key is not None:
            out[key] = value
    return out


def catalog_uri(job: Job) -> str:
    """The SQLAlchemy URL of the job's catalog."""
    if job.catalog is not None:
        return job.catalog
    if job.uri is None:
        return f"sqlite:///{job.output / '_catalog.sqlite'}"
    source = job.source if job.source is not None else Path(f"{job.name}.toml")
    return f"sqlite:///{source.resolve().with_suffix('.catalog.sqlite')}"


def catalog_of(job: Job, options: Mapping[str, str] | None) -> Any:
    """The job's catalog (its tables and namespace made when missing).

    Processes that start at once (units) may race to make them; the one that lost finds
    them made when it tries again.
    """
    sql = require_pyiceberg()
    uri = catalog_uri(job)
    if uri.startswith("sqlite:///") and job.uri is None:
        job.output.mkdir(parents=True, exist_ok=True)
    properties = {"uri": uri, "warehouse": job.uri or str(job.output)}
    for attempt in range(MAKE_ATTEMPTS):
        try:
            catalog = sql.SqlCatalog(
                job.uri or str(job.output), **properties, **file_io_properties(options)
            )
            catalog.create_namespace_if_not_exists(NAMESPACE)
            return catalog
        except (_sql_errors.IntegrityError, _sql_errors.OperationalError):
            if attempt == MAKE_ATTEMPTS - 1:
                raise
            time.sleep(random.uniform(0.05, 0.2) * 2**attempt)  # another made them meanwhile
    raise AssertionError("unreachable")  # pragma: no cover
