"""A bounded fuzz of ``to_frame``/``read_csv`` over mutated sample payloads.

Every sample answer of ``sample_data/`` (JSON and CSV) is mutated — structurally when parsed,
byte by byte when raw — and read with and without its request, as parsed JSON and as bytes, by
both JSON paths (orjson, and pyarrow forced with ``arrow_min_bytes=0``). The law: a frame that
conforms to its schema, or an edgereports error, nothing else; and the two JSON paths give the
same frame or the same error for every body.

The figures print with ``pytest -s tests/normalize/test_fuzz.py``.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from edgereports.errors import EdgeReportsError
from edgereports.normalize import read_csv, to_frame
from tests.normalize.test_props import conforms

pytestmark = pytest.mark.slow

SAMPLES = Path(__file__).resolve().parents[2] / "sample_data"
#: the v1 answers, then v2's: its flat answers and the reporting service's
JSON_SAMPLES = sorted(SAMPLES.glob("*/response.json")) + sorted(SAMPLES.glob("v2/*/response.json"))
CSV_SAMPLES = sorted(SAMPLES.glob("*/response.csv")) + sorted(SAMPLES.glob("v2/*/response.csv"))
SERVICE_SAMPLES = [p for p in JSON_SAMPLES if "service" in p.parent.name]
FUZZ = settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
FIGURES: Counter[str] = Counter()

# Values an adversary puts in a payload: deep nesting, lone surrogates, numbers beyond
# float64, NaN, huge text, keys named like frame columns, control characters.
NASTY_VALUES: list[Any] = [
    None,
    True,
    0,
    -1,
    2**64,
    10**400,
    1e308,
    float("nan"),
    float("inf"),
    "",
    " ",
    "\ud800",
    "\x00",
    "YES",
    "NaN",
    "1e400",
    "9" * 400,
    "2022-13-45T99:99:99Z",
    "2022-07-07T05:30:00+05:30",
    "x" * 5000,
    [],
    {},
    [[[[[[[[]]]]]]]],
    {"result": []},
]
NASTY_KEYS = ["value", "metric", "time_stamp", "start_time", "date", "account_id", "\ud800", ""]
NASTY_BYTES = [
    b"",
    b"[" * 1000 + b"]" * 1000,
    b'"\\ud800"',
    b"9" * 400,
    b"1e400",
    b"-",
    b"\xff\xfe",
    b"\x00",
    b",",
    b"\n",
    b'"',
    b"}",
    b"]",
    b"null",
    b"NaN",
    b"\r\n",
]


def _request(sample: Path) -> dict[str, Any] | None:
    path = sample.parent / "request.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    items = (
        node.items()
        if isinstance(node, dict)
        else enumerate(node)
        if isinstance(node, list)
        else ()
    )
    for key, child in items:
        yield from _paths(child, (*prefix, key))


def _mutate(payload: Any, path: tuple[Any, ...], action: str, value: Any, key: str) -> Any:
    if not path:
        return value if action == "set" else payload
    parent = payload
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    if action == "delete" and isinstance(parent, dict):
        del parent[last]
    elif action == "delete" and isinstance(parent, list):
        parent.pop(last)
    elif action == "rename" and isinstance(parent, dict):
        parent[key] = parent.pop(last)
    elif action == "duplicate" and isinstance(parent, list):
        parent.insert(last, parent[last])
    else:
        parent[last] = value
    return payload


@st.composite
def mutated_json(
    draw: st.DrawFn, samples: list[Path] = JSON_SAMPLES
) -> tuple[Any, dict[str, Any] | None]:
    """A sample answer, parsed, with one to four structural mutations; and its request."""
    sample = draw(st.sampled_from(samples))
    payload = json.loads(sample.read_text(encoding="utf-8"))
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(list(_paths(payload))[:2000]))
        action = draw(st.sampled_from(["set", "set", "delete", "rename", "duplicate"]))
        value = draw(st.sampled_from(NASTY_VALUES) | st.text(max_size=6) | st.integers())
        key = draw(st.sampled_from(NASTY_KEYS))
        payload = _mutate(payload, path, action, copy.deepcopy(value), key)
    return payload, draw(st.sampled_from([None, _request(sample)]))


@st.composite
def mutated_bytes(draw: st.DrawFn, samples: list[Path]) -> tuple[bytes, dict[str, Any] | None]:
    """A sample answer's bytes with one to four splices of nasty or random bytes."""
    sample = draw(st.sampled_from(samples))
    body = sample.read_bytes()
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(body)))
        cut = draw(st.integers(0, 8))
        new = draw(st.sampled_from(NASTY_BYTES) | st.binary(max_size=4))
        body = body[:at] + new + body[at + cut :]
    return body, draw(st.sampled_from([None, _request(sample)]))


def outcome(call: Callable[[], pd.DataFrame]) -> pd.DataFrame | EdgeReportsError:
    """The conforming frame, or the edgereports error; anything else fails the test."""
    try:
        df = call()
    except EdgeReportsError as exc:
        str(exc), repr(exc)  # a message that can be written
        FIGURES["errors"] += 1
        return exc
    conforms(df)
    FIGURES["frames"] += 1
    return df


def same(a: pd.DataFrame | EdgeReportsError, b: pd.DataFrame | EdgeReportsError) -> None:
    """The same frame, or the same error (type and message)."""
    if isinstance(a, pd.DataFrame) and isinstance(b, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    else:
        assert (type(a), str(a)) == (type(b), str(b)), f"{a!s:.600}\n--- vs ---\n{b!s:.600}"


def both_json_paths(body: bytes, request: dict[str, Any] | None) -> pd.DataFrame | Exception:
    """Read ``body`` by orjson and by pyarrow: they must agree."""
    small = outcome(lambda: to_frame(body, request, arrow_min_bytes=None))
    large = outcome(lambda: to_frame(body, request, arrow_min_bytes=0))
    same(small, large)
    FIGURES["inputs"] += 1
    return small


@pytest.fixture(scope="module", autouse=True)
def figures() -> Iterator[None]:
    FIGURES.clear()
    yield
    print(
        f"\nfuzz of to_frame/read_csv: {FIGURES['inputs']} inputs fuzzed, "
        f"{FIGURES['frames']} conforming frames, {FIGURES['errors']} edgereports errors, "
        "0 other outcomes"
    )


def test_samples_are_found() -> None:
    assert len(JSON_SAMPLES) >= 13 and len(CSV_SAMPLES) >= 12 and SERVICE_SAMPLES


@FUZZ
@given(mutated_json(SERVICE_SAMPLES))
def test_mutated_reporting_service_answers(case: tuple[Any, dict[str, Any] | None]) -> None:
    """The flat answer of the reporting service: mutated (an echoed member renamed to
    ``time_stamp`` or ``value`` included), read by ``service_frame`` and ``to_frame``."""
    from edgereports.normalize.reporting_service import service_frame

    payload, request = case
    by_service = outcome(lambda: service_frame(copy.deepcopy(payload), request))
    by_frame = outcome(lambda: to_frame(copy.deepcopy(payload), request))
    FIGURES["inputs"] += 2
    if isinstance(by_service, pd.DataFrame) and isinstance(by_frame, pd.DataFrame):
        pd.testing.assert_frame_equal(by_service, by_frame)


@FUZZ
@given(mutated_json())
def test_mutated_parsed_json_and_its_bytes(case: tuple[Any, dict[str, Any] | None]) -> None:
    payload, request = case
    parsed = outcome(lambda: to_frame(payload, request))
    FIGURES["inputs"] += 1
    try:
        body = json.dumps(payload, allow_nan=True).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError, RecursionError):
        return
    from_bytes = both_json_paths(body, request)
    if isinstance(parsed, pd.DataFrame) and isinstance(from_bytes, pd.DataFrame):
        pd.testing.assert_frame_equal(parsed, from_bytes)
    try:  # what a caller who parsed the body with orjson would pass
        reparsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return
    again = outcome(lambda: to_frame(reparsed, request))
    FIGURES["inputs"] += 1
    if isinstance(again, pd.DataFrame) and isinstance(from_bytes, pd.DataFrame):
        pd.testing.assert_frame_equal(again, from_bytes)


@FUZZ
@given(mutated_bytes(JSON_SAMPLES))
def test_mutated_json_bytes_on_both_paths(case: tuple[bytes, dict[str, Any] | None]) -> None:
    body, request = case
    both_json_paths(body, request)
    outcome(lambda: to_frame(body.decode("utf-8", "replace"), request))
    FIGURES["inputs"] += 1


@FUZZ
@given(mutated_bytes(CSV_SAMPLES))
def test_mutated_csv(case: tuple[bytes, dict[str, Any] | None]) -> None:
    body, request = case
    outcome(lambda: read_csv(body, request))
    outcome(lambda: to_frame(body, request))
    FIGURES["inputs"] += 2
