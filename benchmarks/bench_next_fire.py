#!/usr/bin/env python3
"""Next-fire throughput of cronctl's cron core against croniter, cronsim and croniter-rs.

Run from anywhere:  python benchmarks/bench_next_fire.py [--fires N] [--repeat R] [--quick]

This is a benchmark script, not a test: it prints figures and always exits 0
unless a library is missing or cronctl disagrees with the seed's rules.

1. Agreement check. For every expression and a few start times, the first
   20 fire times of cronctl, croniter and cronsim are compared with each
   other and with a small brute-force referee written here from the seed's
   rules (day by day, day fields restricted iff their text does not begin
   with '*', OR only when both are restricted, 8-year horizon). Expressions
   on which a library's semantics differ from the seed's are flagged; they
   are still timed (every library produces the same number of fire times),
   but the totals are also given without them.
2. Throughput. For each expression and library: N successive next fires from
   the same start (construction included, once per N fires), best of R
   repetitions (the libraries take turns within each repetition, so load
   from other processes affects them alike), time.perf_counter. croniter: croniter(expr, dt).get_next(datetime);
   cronsim: next(CronSim(expr, dt)); two Rust evaluators, each paying one
   call from Python per N fires, as cronctl does: croniter-rs (PyPI's,
   built with pyo3): croniter(expr, dt).get_next_n(N, float), its batch call
   and its cheapest return type; croner-rs: the croner crate through our own
   pyo3 binding (benchmarks/rust_croner/, built here with cargo into
   ~/.cache/cronctl/bench-rust once per change of its source; skipped with a
   line saying why when cargo is missing or the build fails), whose
   next_runs(expr, minute, N) parses and returns minutes as integers; cronctl:
   next_runs(parse_expression(expr), start, N) (parse is cached, as it is in
   the controller) and, for reference, a Timeline(expr, start).next_after(t)
   loop.
3. Compile cost: one uncached compile per library (croniter(...) / CronSim(...)
   construction, cronctl's parse_cron without its lru_cache and with every
   table it shares with other expressions cleared too).

Goal (issue 32): cronctl at most 2 us per fire over the whole mix (summed
time / fires) and ahead of every other library in the same run.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import time
from datetime import date, datetime, timedelta
from pathlib import Path
from types import ModuleType

from source_tree import source_label  # noqa: E402  (puts the measured cronctl on sys.path)

from cronctl.core.cron import parse_cron  # noqa: E402
from cronctl.core.schedule import Timeline, next_runs, parse_expression  # noqa: E402
from cronctl.core.times import format_time, parse_time  # noqa: E402

try:
    from croniter import croniter
except ImportError:  # pragma: no cover
    croniter = None
try:
    from cronsim import CronSim
except ImportError:  # pragma: no cover
    CronSim = None
try:
    from croniter_rs import croniter as croniter_rs
except ImportError:  # pragma: no cover
    croniter_rs = None

croner_rs: ModuleType | None = None  # built and loaded by main() (load_croner_rs)

GOAL_US_PER_FIRE = 2.0
PEERS = ("cronsim", "croniter", "croniter-rs", "croner-rs")
RUST_BINDING = Path(__file__).resolve().parent / "rust_croner"
EPOCH = datetime(1970, 1, 1)

# (expression, what it is). Standard 5-field syntax that all three libraries accept.
EXPRESSIONS: list[tuple[str, str]] = [
    ("* * * * *", "every minute"),
    ("*/15 * * * *", "every 15 minutes"),
    ("30 * * * *", "hourly at :30"),
    ("*/20 9-17 * * MON-FRI", "business hours, weekdays"),
    ("0 2 * * *", "nightly 02:00"),
    ("0 22 * * 1-5", "weeknights 22:00"),
    ("0 0 1 * *", "monthly, 1st"),
    ("15 14 1 */3 *", "quarterly, 1st"),
    ("0 0 1 1 *", "yearly"),
    ("30 23 31 12 *", "new year's eve"),
    ("0 0 29 2 *", "leap day"),
    ("0 12 13 * FRI", "13th OR Friday (Vixie OR)"),
    ("0 9 1-7 * MON", "days 1-7 OR Monday (Vixie OR)"),
    ("0 12 */2 * FRI", "odd days AND Friday (*/2 unrestricted)"),
    ("0 0 1-31 * MON", "1-31 restricted: OR = every day"),
    ("0 18 30,31 3,6,9,12 *", "quarter ends (30th/31st)"),
    ("0 0 28-31 * *", "'L'-style: 28th-31st"),
    ("0 10 * * 7", "Sunday via 7"),
    ("0 0 * JAN,JUL SUN", "Sundays in Jan and Jul"),
    ("5-55/10 */3 * * *", "range with step, hour step"),
    ("0,15,45 8,12,18 * * 1,3,5", "lists"),
    ("*/5 0-6 1,15 * *", "1st and 15th, small hours"),
    ("0 0 */1 * 1-5", "*/1 day-of-month: AND"),
    ("0 4 8-14 * 2", "days 8-14 OR Tuesday"),
]

# Start times of the agreement check (UTC). 2099-12-31: the next leap day is 2104.
CHECK_STARTS = ["2024-03-01T10:15", "2023-12-31T23:59", "2025-02-28T23:30",
                "2000-01-01T00:00", "2099-12-31T12:00"]
CHECK_COUNT = 20
BENCH_START = "2024-03-01T10:15"

_MONTHS = ("JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC")
_DAYS = ("SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT")


# -- conversions -------------------------------------------------------------------

def to_dt(minute: int) -> datetime:
    return EPOCH + timedelta(minutes=minute)


def from_dt(dt: datetime) -> int:
    return int((dt - EPOCH).total_seconds()) // 60


# -- an independent referee: the seed's rules, day by day -------------------------------

def _ref_field(text: str, low: int, high: int, star_high: int, names: tuple[str, ...],
               name_base: int) -> set[int]:
    def num(s: str) -> int:
        return int(s) if s.isdigit() else names.index(s.upper()) + name_base
    values: set[int] = set()
    for item in text.split(","):
        base, _, step = item.partition("/")
        if base == "*":
            lo, hi = low, star_high
        elif "-" in base:
            a, b = base.split("-")
            lo, hi = num(a), num(b)
        else:
            lo = hi = num(base)
        values.update(range(lo, hi + 1, int(step) if step else 1))
    return values


class Referee:
    """next fire per the seed: smallest match strictly after, year <= year(after) + 8."""

    def __init__(self, expr: str) -> None:
        m, h, dom, mon, dow = expr.split()
        self.minutes = sorted(_ref_field(m, 0, 59, 59, (), 0))
        self.hours = sorted(_ref_field(h, 0, 23, 23, (), 0))
        self.dom = _ref_field(dom, 1, 31, 31, (), 0)
        self.months = _ref_field(mon, 1, 12, 12, _MONTHS, 1)
        self.dow = {d % 7 for d in _ref_field(dow, 0, 7, 6, _DAYS, 0)}
        self.dom_restricted = not dom.startswith("*")
        self.dow_restricted = not dow.startswith("*")

    def day_matches(self, d: date) -> bool:
        if d.month not in self.months:
            return False
        in_dom = d.day in self.dom
        in_dow = d.isoweekday() % 7 in self.dow
        if self.dom_restricted and self.dow_restricted:
            return in_dom or in_dow
        return in_dom and in_dow

    def next_fire(self, after: datetime) -> datetime | None:
        d = after.date()
        last_year = after.year + 8
        one = timedelta(days=1)
        while d.year <= last_year:
            if self.day_matches(d):
                for hour in self.hours:
                    for minute in self.minutes:
                        t = datetime(d.year, d.month, d.day, hour, minute)
                        if t > after:
                            return t
            d += one
        return None

    def chain(self, after: datetime, count: int) -> list[datetime]:
        out: list[datetime] = []
        t: datetime | None = after
        while len(out) < count:
            t = self.next_fire(t)
            if t is None:
                break
            out.append(t)
        return out


# -- the libraries -------------------------------------------------------------------

def load_croner_rs() -> tuple[ModuleType | None, str]:
    """Our pyo3 binding of the croner crate, built with cargo on first use of its source:
    (the module, "") or (None, why it is not there)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        return None, "cargo not found: croner-rs (the croner crate, benchmarks/rust_croner) is skipped"
    cache = Path(os.environ.get("CRONCTL_CACHE", Path.home() / ".cache" / "cronctl")) / "bench-rust"
    sources = [RUST_BINDING / "Cargo.toml", RUST_BINDING / "Cargo.lock", RUST_BINDING / "src" / "lib.rs"]
    digest = hashlib.sha256(b"".join(p.read_bytes() for p in sources) + sys.version.encode()).hexdigest()[:16]
    built = cache / digest / "cronctl_bench_croner.so"
    if not built.exists():
        print("building croner-rs (benchmarks/rust_croner) with cargo, once ...", flush=True)
        env = {**os.environ, "CARGO_TARGET_DIR": str(cache / "target"), "PYO3_PYTHON": sys.executable}
        done = subprocess.run([cargo, "build", "--release", "--quiet", "--manifest-path",
                               str(RUST_BINDING / "Cargo.toml")], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            why = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return None, f"cargo build of benchmarks/rust_croner failed ({why}): croner-rs is skipped"
        built.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(cache / "target" / "release" / "libcronctl_bench_croner.so", built)
    spec = importlib.util.spec_from_file_location("cronctl_bench_croner", built)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module, ""


def chain_cronctl(expr: str, start: datetime, count: int) -> list[datetime]:
    return [to_dt(t) for t in next_runs(parse_expression(expr), from_dt(start), count)]


def chain_croniter(expr: str, start: datetime, count: int) -> list[datetime]:
    it = croniter(expr, start)
    return [it.get_next(datetime) for _ in range(count)]


def chain_cronsim(expr: str, start: datetime, count: int) -> list[datetime]:
    it = CronSim(expr, start)
    return [next(it) for _ in range(count)]


def chain_croniter_rs(expr: str, start: datetime, count: int) -> list[datetime]:
    return list(croniter_rs(expr, start).get_next_n(count, datetime))


def chain_croner_rs(expr: str, start: datetime, count: int) -> list[datetime]:
    return [to_dt(t) for t in croner_rs.next_runs(expr, from_dt(start), count)]  # type: ignore[union-attr]


def libraries() -> dict[str, object]:
    libs: dict[str, object] = {"cronctl": chain_cronctl}
    if CronSim is not None:
        libs["cronsim"] = chain_cronsim
    if croniter is not None:
        libs["croniter"] = chain_croniter
    if croniter_rs is not None:
        libs["croniter-rs"] = chain_croniter_rs
    if croner_rs is not None:
        libs["croner-rs"] = chain_croner_rs
    return libs


# -- 1. agreement ----------------------------------------------------------------------

def check_agreement(count: int) -> tuple[dict[str, set[str]], bool]:
    """Returns {expr: libraries that disagree with the referee} and whether cronctl is clean."""
    libs = libraries()
    differs: dict[str, set[str]] = {}
    cronctl_ok = True
    print(f"== Agreement: first {count} fire times from {len(CHECK_STARTS)} starts, "
          "against a brute-force referee of the seed's rules ==")
    for expr, _what in EXPRESSIONS:
        referee = Referee(expr)
        bad: set[str] = set()
        notes: list[str] = []
        for start_text in CHECK_STARTS:
            start = to_dt(parse_time(start_text))
            expected = referee.chain(start, count)
            for name, chain in libs.items():
                try:
                    got = chain(expr, start, count)  # type: ignore[operator]
                except Exception as error:  # noqa: BLE001
                    bad.add(name)
                    notes.append(f"{name} from {start_text}: raised {error!r}")
                    continue
                # The referee (and cronctl) may end a chain early at the 8-year horizon;
                # the other libraries search 50 years, so compare the referee's length.
                got_cmp = got[:len(expected)]
                if got_cmp != expected:
                    bad.add(name)
                    i = next((k for k, (a, b) in enumerate(zip(got_cmp, expected)) if a != b),
                             min(len(got_cmp), len(expected)))
                    g = got_cmp[i].strftime("%Y-%m-%dT%H:%M %a") if i < len(got_cmp) else "(end)"
                    e = expected[i].strftime("%Y-%m-%dT%H:%M %a") if i < len(expected) else "(end)"
                    notes.append(f"{name} from {start_text}: fire #{i + 1} is {g}, seed says {e}")
        differs[expr] = bad
        status = "all agree" if not bad else "DIFFERS: " + ", ".join(sorted(bad))
        print(f"  {expr:<28} {status}")
        seen: set[str] = set()
        for note in notes:
            lib = note.split()[0]
            if lib not in seen:  # one example per library is enough
                seen.add(lib)
                print(f"      {note}")
        if "cronctl" in bad:
            cronctl_ok = False
    flagged = [e for e, b in differs.items() if b]
    print(f"  -> {len(EXPRESSIONS) - len(flagged)}/{len(EXPRESSIONS)} expressions: all libraries "
          f"agree with the seed; flagged (semantics differ): {len(flagged)}")
    for expr in flagged:
        print(f"     flagged {expr!r}: {', '.join(sorted(differs[expr]))}")
    print()
    return differs, cronctl_ok


# -- 2. throughput ------------------------------------------------------------------------

def _calibrate(fn, min_time: float) -> tuple[int, float]:
    """Loops of fn() that take at least min_time, and the seconds per call seen."""
    loops = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(loops):
            fn()
        elapsed = time.perf_counter() - t0
        if elapsed >= min_time or loops >= 1 << 20:
            return loops, elapsed / loops
        loops = max(loops * 2, int(loops * min_time / max(elapsed, 1e-9)) + 1)


def _best_interleaved(fns: dict[str, object], repeat: int, min_time: float) -> dict[str, float]:
    """Best seconds per call of each fn over `repeat` rounds of >= min_time each.

    The functions take turns within each round, so a burst of load from other
    processes hits every library alike rather than one of them.
    """
    loops: dict[str, int] = {}
    best: dict[str, float] = {}
    for name, fn in fns.items():
        loops[name], best[name] = _calibrate(fn, min_time)
    for _ in range(repeat - 1):
        for name, fn in fns.items():
            t0 = time.perf_counter()
            for _ in range(loops[name]):
                fn()  # type: ignore[operator]
            best[name] = min(best[name], (time.perf_counter() - t0) / loops[name])
    return best


def _best(fn, repeat: int, min_time: float) -> float:
    return _best_interleaved({"fn": fn}, repeat, min_time)["fn"]


def throughput_makers(fires: int, start_minute: int) -> dict[str, object]:
    """For each library, expr -> a function that makes ``fires`` successive next fires."""
    start_dt = to_dt(start_minute)

    def cronctl_next_runs(expr: str):
        return lambda: next_runs(parse_expression(expr), start_minute, fires)

    def cronctl_timeline(expr: str):
        def go() -> None:
            timeline = Timeline(parse_expression(expr), start_minute)
            t = start_minute
            for _ in range(fires):
                t = timeline.next_after(t)
        return go

    def cronsim_fn(expr: str):
        def go() -> None:
            it = CronSim(expr, start_dt)
            for _ in range(fires):
                next(it)
        return go

    def croniter_fn(expr: str):
        def go() -> None:
            it = croniter(expr, start_dt)
            for _ in range(fires):
                it.get_next(datetime)
        return go

    def croniter_rs_fn(expr: str):
        return lambda: croniter_rs(expr, start_dt).get_next_n(fires, float)

    def croner_rs_fn(expr: str):
        return lambda: croner_rs.next_runs(expr, start_minute, fires)  # type: ignore[union-attr]

    makers: dict[str, object] = {"cronctl": cronctl_next_runs, "timeline": cronctl_timeline}
    for name, module, maker in (("cronsim", CronSim, cronsim_fn), ("croniter", croniter, croniter_fn),
                                ("croniter-rs", croniter_rs, croniter_rs_fn), ("croner-rs", croner_rs, croner_rs_fn)):
        if module is not None:
            makers[name] = maker
    return makers


COLUMNS = ("cronctl", "timeline", *PEERS)


def _row(label: str, fires: int, seconds: dict[str, float]) -> str:
    """One table line: fire times per second of each library, then cronctl's lead on each peer."""
    line = f"  {label:<29}"
    for name in COLUMNS:
        line += f"{fires / seconds[name] / 1000:11.1f}k" if name in seconds else f"{'-':>12}"
    for name in PEERS:
        line += f"{seconds[name] / seconds['cronctl']:13.2f}x" if name in seconds else f"{'-':>14}"
    return line


def bench_throughput(fires: int, repeat: int, min_time: float,
                     differs: dict[str, set[str]]) -> None:
    start_minute = parse_time(BENCH_START)
    makers = throughput_makers(fires, start_minute)
    print(f"== Throughput: {fires} successive next fires from {BENCH_START}, construction "
          f"included, best of {repeat} (>= {min_time * 1000:.0f} ms each) ==")
    print("   fire times per second (k = thousand); x = other's time / cronctl's (above 1: cronctl "
          "ahead); '!' = flagged above (semantics differ)")
    header = (f"  {'expression':<29}" + "".join(f"{name:>12}" for name in COLUMNS)
              + "".join(f"{'x ' + name:>14}" for name in PEERS))
    print(header)
    print("  " + "-" * (len(header) - 2))
    totals: dict[str, float] = {name: 0.0 for name in makers}
    totals_agree: dict[str, float] = {name: 0.0 for name in makers}
    counted = counted_agree = 0
    for expr, _what in EXPRESSIONS:
        produced = len(next_runs(parse_expression(expr), start_minute, fires))
        if produced != fires:
            print(f"  {expr:<29}skipped: cronctl's chain ends after {produced} fire times")
            continue
        seconds = _best_interleaved({name: make(expr) for name, make in makers.items()},  # type: ignore[operator]
                                    repeat, min_time)
        flagged = bool(differs.get(expr))
        counted += 1
        counted_agree += not flagged
        for name, s in seconds.items():
            totals[name] += s
            if not flagged:
                totals_agree[name] += s
        print(_row(f"{expr}{' !' if flagged else ''}", fires, seconds))
    print("  " + "-" * (len(header) - 2))
    for label, tot, count in (("TOTAL (all)", totals, counted), ("TOTAL (all agree)", totals_agree, counted_agree)):
        if count:
            print(_row(label, fires * count, tot))
    print(f"  (totals: {fires} fire times per expression, summed time per library)")
    print()
    if counted:
        print_goal(totals, fires * counted)


def print_goal(totals: dict[str, float], fires: int) -> None:
    """Issue 32's goal, on the summed time of every expression."""
    print(f"== Goal: cronctl at most {GOAL_US_PER_FIRE:.0f} us per fire and ahead of every peer ==")
    print("  us per fire over the whole mix: " + ", ".join(
        f"{name} {totals[name] / fires * 1e6:.3f}" for name in COLUMNS if name in totals))
    per_fire = totals["cronctl"] / fires * 1e6
    peers = [name for name in PEERS if name in totals]
    behind = [name for name in peers if totals[name] <= totals["cronctl"]]
    met = per_fire <= GOAL_US_PER_FIRE and not behind and len(peers) == len(PEERS)
    missing = [name for name in PEERS if name not in totals]
    print(f"  cronctl {per_fire:.3f} us per fire; ahead of "
          + (", ".join(f"{name} {totals[name] / totals['cronctl']:.2f}x" for name in peers) or "no peer")
          + (f"; not ahead of {', '.join(behind)}" if behind else "")
          + (f"; not measured: {', '.join(missing)}" if missing else "")
          + f"  -> {'MET' if met else 'NOT MET'}")
    print()


# -- 3. compile cost ------------------------------------------------------------------------

def core_caches() -> list:
    """Every functools cache of the core's modules: compiled expressions and shared tables."""
    caches = []
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith("cronctl.core"):
            caches.extend(value for value in vars(module).values()
                          if callable(getattr(value, "cache_clear", None)))
    return caches


def bench_compile(repeat: int, min_time: float) -> None:
    start_dt = to_dt(parse_time(BENCH_START))
    uncached = parse_cron.__wrapped__  # the compile itself, without parse_cron's lru_cache
    caches = core_caches()

    def cold(expr: str) -> object:
        for cache in caches:  # nor any table it shares with other expressions
            cache.cache_clear()
        return uncached(expr)

    fns = {"cronctl (uncached)": cold,
           "cronctl (cached)": lambda e: parse_expression(e)}
    if CronSim is not None:
        fns["cronsim"] = lambda e: CronSim(e, start_dt)
    if croniter is not None:
        fns["croniter"] = lambda e: croniter(e, start_dt)
    if croniter_rs is not None:
        fns["croniter-rs"] = lambda e: croniter_rs(e, start_dt)
    if croner_rs is not None:
        fns["croner-rs (+1 fire)"] = lambda e: croner_rs.next_runs(e, 0, 1)  # type: ignore[union-attr]
    print("== Compile / construct cost, mean over the expressions ==")
    for name, fn in fns.items():
        total = sum(_best(lambda e=expr: fn(e), repeat, min_time / 5) for expr, _ in EXPRESSIONS)
        print(f"  {name:<20} {total / len(EXPRESSIONS) * 1e6:8.1f} us per expression")
    try:
        from cronctl.core import cycle  # the cycle tables of sparse day sets (absent from older cores)
    except ImportError:
        print()
        return
    sparse = [expr for expr, _ in EXPRESSIONS if cycle.build(parse_cron(expr).days) is not None]
    total = sum(_best(lambda e=expr: cycle.build(parse_cron(e).days), repeat, min_time / 5) for expr in sparse)
    print(f"  {'+ cronctl cycle table':<20} {total / len(sparse) * 1e6:8.1f} us per expression that has one "
          f"({len(sparse)} of {len(EXPRESSIONS)}; once per day set, on its 32nd month walk or first chain of 16)")
    print()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fires", type=int, default=200, help="next fires per measurement")
    parser.add_argument("--repeat", type=int, default=7, help="repetitions (best is kept)")
    parser.add_argument("--min-time", type=float, default=0.02,
                        help="seconds per repetition, at least")
    parser.add_argument("--quick", action="store_true", help="repeat 3, min-time 0.005")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.min_time = 3, 0.005
    global croner_rs
    croner_rs, why = load_croner_rs()
    if why:
        print(f"note: {why}\n")
    missing = [n for n, m in (("croniter", croniter), ("cronsim", CronSim), ("croniter-rs", croniter_rs))
               if m is None]
    if missing:
        print(f"note: {', '.join(missing)} not installed (pip install -e '.[bench]'); "
              "comparing with what is available\n")
    print(f"python {sys.version.split()[0]}; cronctl from {source_label()}")
    print(f"start {BENCH_START} = {format_time(parse_time(BENCH_START))} UTC, "
          f"{len(EXPRESSIONS)} expressions\n")
    t0 = time.perf_counter()
    differs, cronctl_ok = check_agreement(CHECK_COUNT)
    bench_throughput(args.fires, args.repeat, args.min_time, differs)
    bench_compile(args.repeat, args.min_time)
    print(f"(benchmark wall time {time.perf_counter() - t0:.1f} s)")
    if not cronctl_ok:
        print("cronctl DISAGREES with the seed's rules on a flagged expression above")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
