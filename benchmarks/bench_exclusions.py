#!/usr/bin/env python3
"""Next fires with a holiday calendar excluded: cronctl's exclusions against croniter and cronsim.

Run from anywhere:  python benchmarks/bench_exclusions.py [--fires N] [--repeat R]

The workload (issue 14): a weekday schedule ("0 9 * * MON-FRI", Europe/Berlin)
with a holiday calendar excluded, N next fires from 2026-01-01 (default 1000,
about four years of weekdays). The calendar has every year's holidays for
the years the fires span: ten fixed-date public holidays, Easter's four
(Good Friday to Easter Monday, by the Gauss algorithm) and the Christmas
week as a date range.

Sides, each best of R (taking turns within each repetition):

* cronctl: ``Timeline(merged_expression((expr,), exclusions), ...).upcoming``;
* cronctl without the calendar, the same schedule: what exclusions cost;
* croniter and cronsim with the holiday filter a user writes around them (a
  set of dates; each next fire whose local date is in it is dropped), the
  only way either library has to leave days out.

All sides must agree on the times (checked first). Neither library has a
notion of exclusions, so what limits them here is their own next-fire
speed times the dropped fires; what limits cronctl is its search plus one
lookup per candidate.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from source_tree import source_label  # noqa: E402  (puts the measured cronctl on sys.path)

from cronctl.core.merged import merged_expression  # noqa: E402
from cronctl.core.schedule import Timeline  # noqa: E402
from cronctl.core.times import format_time, parse_time  # noqa: E402
from cronctl.core.zones import parse_zone  # noqa: E402

try:
    from croniter import croniter
except ImportError:  # pragma: no cover
    croniter = None
try:
    from cronsim import CronSim
except ImportError:  # pragma: no cover
    CronSim = None

EXPRESSION, ZONE, START = "0 9 * * MON-FRI", "Europe/Berlin", "2026-01-01T00:00"
FIXED_HOLIDAYS = ["01-01", "01-06", "05-01", "08-15", "10-03", "10-31", "11-01", "11-11", "12-08", "12-31"]


def easter(year: int) -> date:
    a, b, c = year % 19, year // 100, year % 100
    d, e = b // 4, b % 4
    g = (8 * b + 13) // 25
    h = (19 * a + b - d - g + 15) % 30
    i, k = c // 4, c % 4
    m = (32 + 2 * e + 2 * i - h - k) % 7
    n = (a + 11 * h + 22 * m) // 451
    month, day = divmod(h + m - 7 * n + 114, 31)
    return date(year, month, day + 1)


def calendar(years: range) -> tuple[list[str], set[date]]:
    """The exclusions as cronctl takes them, and the same days as a set of dates."""
    entries: list[str] = []
    days: set[date] = set()
    for year in years:
        for fixed in FIXED_HOLIDAYS:
            entries.append(f"{year}-{fixed}")
            days.add(date.fromisoformat(f"{year}-{fixed}"))
        good_friday = easter(year) - timedelta(days=2)
        entries.append(f"{good_friday.isoformat()}/{(good_friday + timedelta(days=3)).isoformat()}")
        days.update(good_friday + timedelta(days=i) for i in range(4))
        entries.append(f"{year}-12-24/{year}-12-30")
        days.update(date(year, 12, 24) + timedelta(days=i) for i in range(7))
    return entries, days


def cronctl_times(exclude: tuple[str, ...], count: int) -> list[int]:
    start = parse_time(START)
    assert start is not None
    timeline = Timeline(merged_expression((EXPRESSION,), exclude), start, parse_zone(ZONE))
    return timeline.upcoming(start, count)


def _as_minute(moment: datetime) -> int:
    return int(moment.timestamp()) // 60


def croniter_times(holidays: set[date], count: int) -> list[int]:
    it = croniter(EXPRESSION, datetime(2026, 1, 1, tzinfo=ZoneInfo(ZONE)))
    times: list[int] = []
    while len(times) < count:
        moment = it.get_next(datetime)
        if moment.date() not in holidays:
            times.append(_as_minute(moment))
    return times


def cronsim_times(holidays: set[date], count: int) -> list[int]:
    it = CronSim(EXPRESSION, datetime(2026, 1, 1, tzinfo=ZoneInfo(ZONE)))
    times: list[int] = []
    while len(times) < count:
        moment = next(it)
        if moment.date() not in holidays:
            times.append(_as_minute(moment))
    return times


def best_of(repeat: int, sides: dict[str, object]) -> dict[str, float]:
    best = {name: float("inf") for name in sides}
    for _ in range(repeat):
        for name, run in sides.items():
            began = time.perf_counter()
            run()  # type: ignore[operator]
            best[name] = min(best[name], time.perf_counter() - began)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fires", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    print(f"cronctl {source_label()}; {EXPRESSION!r} in {ZONE}, {args.fires} next fires from {START}")

    plain = cronctl_times((), args.fires)
    last_year = int(format_time(plain[-1])[:4])
    entries, holidays = calendar(range(2026, last_year + 2))
    exclude = tuple(entries)
    merged_expression.cache_clear()
    ours = cronctl_times(exclude, args.fires)
    print(f"calendar: {len(entries)} entries ({len(holidays)} days) for 2026-{last_year + 1}; "
          f"the {args.fires} fires run to {format_time(ours[-1])} UTC")
    sides: dict[str, object] = {
        "cronctl, holidays excluded": lambda: cronctl_times(exclude, args.fires),
        "cronctl, no exclusions": lambda: cronctl_times((), args.fires),
    }
    for name, library, times_of in (("croniter", croniter, croniter_times), ("cronsim", CronSim, cronsim_times)):
        if library is None:
            print(f"{name}: not installed (pip install -e '.[bench]'), left out")
            continue
        theirs = times_of(holidays, args.fires)
        if theirs != ours:
            first = next(i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b)
            print(f"DISAGREEMENT with {name} at fire {first}: cronctl {format_time(ours[first])}, "
                  f"{name} {format_time(theirs[first])}")
            return 1
        sides[f"{name} + a holiday filter"] = (lambda f=times_of: f(holidays, args.fires))
    print("all sides agree on every time\n")
    best = best_of(args.repeat, sides)
    ours_time = best["cronctl, holidays excluded"]
    print(f"| side | {args.fires} fires, ms | per fire, us | vs cronctl with exclusions |")
    print("|---|---|---|---|")
    for name, seconds in best.items():
        print(f"| {name} | {seconds * 1e3:.2f} | {seconds * 1e6 / args.fires:.1f} | {seconds / ours_time:.2f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
