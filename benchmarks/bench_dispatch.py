"""Benchmark of cronctl.dispatch at seed 001's constraint sizes.

Two scenarios, each timed per phase (inputs are generated before the clock
starts):

* ``max``: every size at its maximum at once: 1,000 workers, 100,000 jobs
  (50,000 one-time, 50,000 recurring with three due occurrences each, times
  up to 10**12 s, intervals up to 10**9 s), then a single ``dispatch_jobs``
  at 10**12 that creates all 200,000 due occurrences and assigns 1,000, then
  1,000 completions (a tenth failing), a second dispatch and 10,000 status
  look-ups. This is more calls than the seed's 100,000: a superset.
* ``calls``: the seed's 100,000-call budget as a realistic mix within every
  constraint: the constructor, 1,000 workers, 20,000 jobs (200,000 due
  occurrences by 10**12), then rounds of one dispatch, the completions of
  what it assigned (a tenth failing, so retries happen) and a few status
  look-ups, until 100,000 calls. Run live, then replayed the way
  ``python -m cronctl dispatch`` runs it (JSON text in, ``run_calls``, JSON
  text out) and checked equal.

Per phase: elapsed wall time, process CPU time (the honest figure on a
shared machine) and peak RSS so far (``ru_maxrss``). With
``--tracemalloc`` it also reports the traced Python heap in use and its peak
per phase (timings then run a few times slower).

    python benchmarks/bench_dispatch.py [--tracemalloc] [--seed N]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import sys
import time
import tracemalloc
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "operator"))

from cronctl.dispatch import CronJobScheduler, run_calls  # noqa: E402

MAX_TIME = 10**12
MAX_INTERVAL = 10**9
WORKERS = 1_000
JOBS = 100_000
DUE = 200_000
CALLS = 100_000

TRACE = False
TOTAL = 0.0
TOTAL_CPU = 0.0


@contextmanager
def phase(name: str) -> Iterator[dict[str, Any]]:
    global TOTAL, TOTAL_CPU
    info: dict[str, Any] = {}
    if TRACE:
        tracemalloc.reset_peak()
    start, cpu_start = time.perf_counter(), time.process_time()
    yield info
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu_start
    TOTAL += elapsed
    TOTAL_CPU += cpu
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    line = f"  {name:<48} {elapsed * 1000:7.0f} ms (cpu {cpu * 1000:5.0f} ms)   peak RSS {rss_mib:7.1f} MiB"
    if TRACE:
        current, peak = tracemalloc.get_traced_memory()
        line += f"   heap {current / 2**20:6.1f} MiB (phase peak {peak / 2**20:6.1f} MiB)"
    if info:
        line += "   " + ", ".join(f"{k}={v:,}" if isinstance(v, int) else f"{k}={v}" for k, v in info.items())
    print(line, flush=True)


def make_id(rng: random.Random, prefix: str, i: int) -> str:
    # Mostly ASCII, some astral and BMP-high characters, so the UTF-16 key matters.
    tail = rng.choice(["", "-\U0001F600", "-\uffff", "-é", "-Z"])
    return f"{prefix}{rng.randrange(10**6):06d}-{i}{tail}"


def job_specs(rng: random.Random, one_time: int, recurring: int, occurrences: int) -> list[tuple[str, int, int, int]]:
    """Jobs whose due occurrences by MAX_TIME total one_time + recurring * occurrences."""
    specs = []
    for i in range(one_time):
        specs.append((make_id(rng, "once-", i), rng.randrange(MAX_TIME + 1), 0, rng.randrange(11)))
    for i in range(recurring):
        interval = rng.randrange(MAX_INTERVAL // 10, MAX_INTERVAL + 1)
        first = MAX_TIME - (occurrences - 1) * interval - rng.randrange(interval)
        specs.append((make_id(rng, "every-", i), first, interval, rng.randrange(11)))
    rng.shuffle(specs)
    return specs


def scenario_max(rng: random.Random) -> None:
    print("scenario max: 1,000 workers, 100,000 jobs, 200,000 occurrences due at once")
    workers = [make_id(rng, "worker-", i) for i in range(WORKERS)]
    specs = job_specs(rng, JOBS // 2, JOBS // 2, 3)
    s = CronJobScheduler()
    with phase("register 1,000 workers"):
        for w in workers:
            s.register_worker(w)
    with phase("schedule 100,000 jobs") as info:
        info["accepted"] = sum(s.schedule_job(j, f, i, r, 0) for j, f, i, r in specs)
    with phase("dispatch at 10^12: create 200,000, assign 1,000") as info:
        assigned = s.dispatch_jobs(MAX_TIME)
        info["assigned"] = len(assigned)
    completions = []
    for line in assigned:
        job, t, attempt, _ = line.split(",")
        completions.append((job, int(t), int(attempt), rng.random() >= 0.1))
    with phase("complete 1,000 attempts (10% fail)") as info:
        info["accepted"] = sum(s.complete_job(j, t, a, ok, MAX_TIME) for j, t, a, ok in completions)
    with phase("dispatch again: assign 1,000 of 199,000 pending") as info:
        info["assigned"] = len(s.dispatch_jobs(MAX_TIME))
    queries = [(j, f + rng.choice([0, 0, 1, i]) if i else f) for j, f, i, _ in rng.sample(specs, 10_000)]
    with phase("10,000 status look-ups") as info:
        statuses: dict[str, int] = {}
        for j, t in queries:
            st = s.get_job_status(j, t, MAX_TIME) or '""'
            statuses[st] = statuses.get(st, 0) + 1
        info["statuses"] = json.dumps(statuses, sort_keys=True)


def scenario_calls(rng: random.Random) -> None:
    print("scenario calls: 100,000 calls, 1,000 workers, 20,000 jobs, 200,000 due, replayed through JSON")
    workers = [make_id(rng, "worker-", i) for i in range(WORKERS)]
    specs = job_specs(rng, 10_000, 10_000, 19)  # 10,000 + 190,000 due by 10^12
    calls: list[list[Any]] = [["CronJobScheduler"]]
    results: list[Any] = [None]
    s = CronJobScheduler()
    with phase("register 1,000 + schedule 20,000 (live)"):
        for w in workers:
            calls.append(["registerWorker", w])
            results.append(s.register_worker(w))
        for j, f, i, r in specs:
            calls.append(["scheduleJob", j, f, i, r, 0])
            results.append(s.schedule_job(j, f, i, r, 0))
    rounds = assigned_total = 0
    with phase("dispatch/complete/status rounds (live)") as info:
        budget = CALLS - len(calls)
        step = MAX_TIME // 60
        now = 0
        while budget > 0:
            now = min(MAX_TIME, now + step)
            calls.append(["dispatchJobs", now])
            assigned = s.dispatch_jobs(now)
            results.append(assigned)
            budget -= 1
            rounds += 1
            assigned_total += len(assigned)
            for line in assigned:
                if budget <= 5:
                    break
                job, t, attempt, _ = line.split(",")
                call = ["completeJob", job, int(t), int(attempt), rng.random() >= 0.1, now]
                calls.append(call)
                results.append(s.complete_job(*call[1:]))
                budget -= 1
            for _ in range(min(5, budget)):
                j, f, i, _ = rng.choice(specs)
                call = ["getJobStatus", j, f + i * rng.randrange(19), now]
                calls.append(call)
                results.append(s.get_job_status(*call[1:]))
                budget -= 1
        info["calls"] = len(calls)
        info["rounds"] = rounds
        info["assigned"] = assigned_total
        info["last time"] = now
    text = json.dumps(calls)
    with phase("replay: json.loads of the calls") as info:
        parsed = json.loads(text)
        info["bytes"] = len(text)
    with phase("replay: run_calls (fresh scheduler)"):
        replayed = run_calls(parsed)
    with phase("replay: json.dumps of the results") as info:
        out = json.dumps(replayed)
        info["bytes"] = len(out)
    assert out == json.dumps(results), "replay differs from the live run"


def main() -> None:
    global TRACE
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracemalloc", action="store_true", help="also trace Python heap use per phase")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    TRACE = args.tracemalloc
    if TRACE:
        tracemalloc.start()
    print(f"python {sys.version.split()[0]}, seed {args.seed}, tracemalloc {'on' if TRACE else 'off'}")
    scenario_max(random.Random(args.seed))
    scenario_calls(random.Random(args.seed + 1))
    print(f"total timed: {TOTAL:.2f} s wall, {TOTAL_CPU:.2f} s cpu")


if __name__ == "__main__":
    main()
