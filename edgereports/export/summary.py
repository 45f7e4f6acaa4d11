"""The result of an export run: per report windows, rows, bytes, failures; one screen of text."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import redact
from .estimate import format_duration
from .plan import ExportWindow, ReportPlan, stamp

__all__ = ["ExportSummary", "Maintenance", "ReportResult", "WindowFailure", "Written"]

_MAX_FAILURE_LINES = 8


@dataclass(frozen=True)
class WindowFailure:
    """One window that was not written.

    Attributes:
        report: the report's name.
        window: the window.
        kind: the error's class name (``Skipped`` when it was not attempted).
        message: the error's message (redacted).
        error: the exception itself (``None`` when skipped).
    """

    report: str
    window: ExportWindow
    kind: str
    message: str
    error: BaseException | None = field(default=None, repr=False, compare=False)

    @classmethod
    def of(
        cls, report: str, window: ExportWindow, error: BaseException, secrets: Sequence[str] = ()
    ) -> WindowFailure:
        """The failure of ``window`` with ``error``, its message redacted (and ``secrets``)."""
        return cls(report, window, type(error).__name__, redact(str(error), secrets), error)

    def __str__(self) -> str:
        first = self.message.splitlines()[0] if self.message else ""
        return f"{self.report} {self.window}: {self.kind}: {first}"

    def to_dict(self) -> dict[str, Any]:
        """The failure as JSON-ready values (the message is redacted)."""
        return {"window": _window(self.window), "kind": self.kind, "message": self.message}


@dataclass(frozen=True)
class Written:
    """What writing one window did.

    Attributes:
        rows: rows written.
        files: day partitions written.
        removed: day partitions removed because their day came back empty.
        bytes: bytes of the files that now hold those days.
        dimensions: the dimension columns of the frame (Parquet).
    """

    rows: int
    files: int
    removed: int
    bytes: int
    dimensions: tuple[str, ...] = ()


@dataclass(frozen=True)
class Maintenance:
    """What maintaining one report did.

    Attributes:
        report: the report's name.
        files_before: data files of the report before (a table format: in its snapshot).
        files_after: data files after.
        removed: files deleted (table formats: no longer used, past the retention; Parquet:
            temporaries left by killed runs).
        rows: rows of the report (unchanged by maintenance).
        seconds: wall time.
    """

    report: str
    files_before: int
    files_after: int
    removed: int
    rows: int
    seconds: float

    def __str__(self) -> str:
        return (
            f"{self.report}: {self.files_before} → {self.files_after} data file(s), "
            f"{self.removed} removed, {self.rows:,} rows, {self.seconds:.1f} s"
        )


@dataclass
class ReportResult:
    """What a run did for one report.

    Attributes:
        name: the report's name.
        plan: the windows planned.
        windows_written: windows fetched and written.
        rows: rows written; ``files``: partitions written; ``removed``: partitions deleted.
        bytes_written: bytes of the partitions written.
        failures: the windows not written.
        watermark_after: the watermark saved at the end (the old one when it did not move).
        fetch_seconds: the summed fetch time of its windows (they overlap in time).
        write_seconds: the time spent writing Parquet.
        largest_frame_bytes: the in-memory size of its largest window frame.
    """

    name: str
    plan: ReportPlan
    windows_written: int = 0
    rows: int = 0
    files: int = 0
    removed: int = 0
    bytes_written: int = 0
    failures: list[WindowFailure] = field(default_factory=list)
    watermark_after: datetime | None = None
    fetch_seconds: float = 0.0
    write_seconds: float = 0.0
    largest_frame_bytes: int = 0

    @property
    def ok(self) -> bool:
        """True when every planned window was written."""
        return not self.failures

    def to_dict(self) -> dict[str, Any]:
        """The result as JSON-ready values (instants as ISO-8601 text in UTC)."""
        plan = self.plan
        return {
            "name": self.name,
            "ok": self.ok,
            "plan": {
                "reason": plan.reason,
                "watermark": _iso(plan.watermark),
                "begin": _iso(plan.begin),
                "end": _iso(plan.end),
                "windows": [_window(w) for w in plan.windows],
                "backfill": [_window(w) for w in plan.backfill],
                "added_values": plan.added,
                "repaired_days": [d.isoformat() for d in plan.repair],
                "requests": plan.requests,
                "rows_at_most": plan.rows,
            },
            "windows_written": self.windows_written,
            "rows": self.rows,
            "files": self.files,
            "removed": self.removed,
            "bytes_written": self.bytes_written,
            "watermark_after": _iso(self.watermark_after),
            "failures": [f.to_dict() for f in self.failures],
            "fetch_seconds": round(self.fetch_seconds, 3),
            "write_seconds": round(self.write_seconds, 3),
        }

    def add(self, wrote: Written) -> None:
        """Count in one window written."""
        self.windows_written += 1
        self.rows += wrote.rows
        self.files += wrote.files
        self.removed += wrote.removed
        self.bytes_written += wrote.bytes


@dataclass
class ExportSummary:
    """What :func:`run_export` did; ``str()`` is the one-screen summary.

    Attributes:
        job: the job's name.
        output: the output root (a directory, or an object-store URI for Delta).
        dry_run: True when nothing was fetched or written.
        reports: one result per report run.
        seconds: the run's wall time.
        rate_limit: the request budget the run fetched at (requests per second), if any.
    """

    job: str
    output: Path | str
    dry_run: bool = False
    reports: list[ReportResult] = field(default_factory=list)
    seconds: float = 0.0
    rate_limit: float | None = None

    @property
    def ok(self) -> bool:
        """True when no window failed."""
        return all(r.ok for r in self.reports)

    @property
    def exit_code(self) -> int:
        """The CLI's exit status for this run: 0 when ok, 1 when some windows failed."""
        return 0 if self.ok else 1

    @property
    def failures(self) -> list[WindowFailure]:
        """Every window not written, report by report."""
        return [f for r in self.reports for f in r.failures]

    @property
    def rows(self) -> int:
        """Rows written in all."""
        return sum(r.rows for r in self.reports)

    @property
    def bytes_written(self) -> int:
        """Bytes written in all."""
        return sum(r.bytes_written for r in self.reports)

    @property
    def windows(self) -> int:
        """Windows planned in all."""
        return sum(r.plan.count for r in self.reports)

    def to_dict(self) -> dict[str, Any]:
        """The summary as JSON-ready values (what ``edgereports export --json`` prints).

        Bytes are those each write added to the destination (every shard's own files, not
        the days' files written by other shards); instants are ISO-8601 text in UTC; no
        secret is in it.

        Example:
            >>> from edgereports.export import run_export
            >>> summary = run_export("nightly.toml")
            >>> facts = summary.to_dict()
            >>> facts["ok"], facts["reports"][0]["name"], facts["rows"] == summary.rows
            (True, 'usage', True)
        """
        return {
            "job": self.job,
            "output": str(self.output),
            "dry_run": self.dry_run,
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "rate_limit": self.rate_limit,
            "windows": self.windows,
            "windows_written": sum(r.windows_written for r in self.reports),
            "requests": sum(r.plan.requests for r in self.reports),
            "rows": self.rows,
            "files": sum(r.files for r in self.reports),
            "bytes_written": self.bytes_written,
            "failures": len(self.failures),
            "reports": [r.to_dict() for r in self.reports],
        }

    def plan_text(self) -> str:
        """The plan, one line per window, and what it costs (what ``--dry-run`` prints)."""
        lines = [f"export {self.job!r} → {self.output}"]
        for r in self.reports:
            lines += r.plan.lines()
        requests = sum(r.plan.requests for r in self.reports)
        rows = sum(r.plan.rows for r in self.reports)
        total = (
            f"in all: {self.windows:,} window(s) (report x shard x range), {requests:,} "
            f"request(s), at most {rows:,} rows"
        )
        if self.rate_limit:
            total += (
                f"; at rate_limit {self.rate_limit:g}/s: "
                f"{format_duration(requests / self.rate_limit)} of requests"
            )
        else:
            total += "; no rate_limit set (the job's rate_limit or EDGEREPORTS_RATE_LIMIT)"
        return "\n".join([*lines, total])

    def __str__(self) -> str:
        if self.dry_run:
            return self.plan_text()
        status = "ok" if self.ok else f"FAILED ({len(self.failures)} window(s) not written)"
        lines = [f"export {self.job!r} → {self.output}: {status} in {self.seconds:.1f} s"]
        width = max([len(r.name) for r in self.reports] + [6])
        lines.append(
            f"{'report':<{width}}  {'windows':>9}  {'rows':>10}  {'files':>6}  "
            f"{'bytes':>9}  watermark"
        )
        for r in self.reports:
            windows = f"{r.windows_written}/{r.plan.count}"
            mark = "none" if r.watermark_after is None else stamp(r.watermark_after)
            lines.append(
                f"{r.name:<{width}}  {windows:>9}  {r.rows:>10,}  {r.files:>6}  "
                f"{_size(r.bytes_written):>9}  {mark}"
            )
        lines.append(
            f"{'total':<{width}}  {self._written():>9}  {self.rows:>10,}  "
            f"{sum(r.files for r in self.reports):>6}  {_size(self.bytes_written):>9}"
        )
        failures = self.failures
        if failures:
            lines.append("failures (the next run retries them):")
            lines += [f"  - {f}" for f in failures[:_MAX_FAILURE_LINES]]
            if len(failures) > _MAX_FAILURE_LINES:
                lines.append(f"  ... and {len(failures) - _MAX_FAILURE_LINES} more")
        return "\n".join(lines)

    def _written(self) -> str:
        return f"{sum(r.windows_written for r in self.reports)}/{self.windows}"


def _iso(when: datetime | None) -> str | None:
    return None if when is None else when.astimezone(UTC).isoformat()


def _window(window: ExportWindow) -> dict[str, Any]:
    out: dict[str, Any] = {"start": _iso(window.start), "end": _iso(window.end)}
    if window.shards > 1:
        out.update(shard=window.shard + 1, shards=window.shards)
    return out


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} B"  # pragma: no cover
