"""The statistics of the rules: their shortcuts find what the plain definitions find."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from edgereports.health.detect import GAP_SCORE, _cusum, class_baseline, gaps, runs

HOURS = 24 * 35  # 28 days of history, then a week judged
I0 = 24 * 28
CLS = np.arange(HOURS, dtype=np.int64) % 24 + 24 * ((np.arange(HOURS) // 24) % 7 >= 5)


def _plain_gaps(offline: np.ndarray, judged: np.ndarray) -> list[tuple[int, int, float]]:
    """Every run reaching into the range scored one by one, kept from GAP_SCORE up."""
    history = judged.copy()
    history[I0:] = False
    base = class_baseline(offline, CLS, history)
    scored = [(a, b, base.score(CLS[a:b])) for a, b in runs(offline & judged) if b > I0]
    return [(a, b, s) for a, b, s in scored if s >= GAP_SCORE]


@settings(max_examples=150, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    rate=st.floats(0.0, 0.6),
    night=st.booleans(),
    planted=st.integers(0, 90),
)
def test_gaps_flags_exactly_the_runs_whose_own_score_reaches_the_threshold(
    seed: int, rate: float, night: bool, planted: int
) -> None:
    rng = np.random.default_rng(seed)
    offline = rng.random(HOURS) < rate
    if night:  # offline most nights: many short runs, some likely
        offline |= (CLS % 24 < 6) & (rng.random(HOURS) < 0.9)
    at = I0 + int(rng.integers(0, HOURS - I0))
    offline[at : at + planted] = True
    judged = rng.random(HOURS) < 0.97
    found, _ = gaps(offline, judged, CLS, I0)
    assert [(r.a, r.b, r.score) for r in found] == _plain_gaps(offline, judged)


def _plain_cusum(z: np.ndarray, sign: int, k: float, h: float) -> list[tuple[int, int]]:
    """The CUSUM step by step: an alarm's range runs from after the sum last left zero to its
    peak, and the sum starts again after the alarm ends."""
    out: list[tuple[int, int]] = []
    s, start, i = 0.0, 0, 0
    while i < len(z):
        s = max(0.0, s + sign * float(z[i]) - k)
        if s == 0.0:
            start = i + 1
        elif s >= h:
            peak, top, j = i, s, i + 1
            while j < len(z):
                s = max(0.0, s + sign * float(z[j]) - k)
                if s >= top:
                    peak, top = j, s
                if s == 0.0:
                    break
                j += 1
            out.append((start, peak + 1))
            s, start, i = 0.0, j + 1, j + 1
            continue
        i += 1
    return out


@settings(max_examples=200, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 600),
    shift=st.floats(-3.0, 3.0),
    sign=st.sampled_from([-1, 1]),
)
def test_the_cusum_alarms_where_the_step_by_step_sum_does(
    seed: int, n: int, shift: float, sign: int
) -> None:
    rng = np.random.default_rng(seed)
    z = rng.standard_normal(n)
    z[n // 2 : n // 2 + 60] += shift  # a shift in some of the cases
    assert _cusum(z, sign, 0.75, 10.0) == _plain_cusum(z, sign, 0.75, 10.0)
