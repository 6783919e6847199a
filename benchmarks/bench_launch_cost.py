"""Where the operator's CPU per launch goes: each step of a herd's launches, in one process.

bench_vs_cronjob.py measures the operator's CPU per launch as a whole, over
two minutes of wall clock. This one takes the operator's own parts (the
``Cluster`` and its ``Cache``, the Jobs' and the CronSchedules' watches on
their threads, ``loop.prepare`` on one thread and ``start_all``/``finish_all``
on a share of the fleet for each of as many threads as the loop has) into this process, against the test API server, and drives them
at chosen instants instead of waiting for them: a fleet of N schedules all
due at one minute is accepted, staged at the minute before and released at
the minute, for a few rounds (one day apart). It prints, per launch, the
process's CPU (every thread, user and system) of each step:

- ``plan ahead``: the plans made a few seconds before the second (``prepare``);
- ``first pass``: what goes out at the second (the staged creates at the
  minute before; the releases at the minute);
- ``second pass``: the rest (status patches; Events queued);
- ``after``: the next 1.5 s, when the queued Events go out and the watches'
  echoes of the writes are read (all steps count them as they come);

and its context switches per launch. ``--no-watches`` leaves the watches
unstarted (the caches still take the writes' answers), which prices their
echoes. A run takes under a minute: a change's effect on a step is seen
before the nine minutes of bench_vs_cronjob.py confirm it against the peer.

Its figures are the operator's work only, not a comparison: no peer runs
here. Rounds after the first plan with more Jobs per schedule (the fleet's
Jobs never run, so each round's stay active), and cost a little more.

    python benchmarks/bench_launch_cost.py [--size 500] [--rounds 3] [--no-watches]
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterable

import kube_bench as kb
from bench_vs_cronjob import herd_schedule
from kube_bench import ROOT

from tests.kube.controlplane import ControlPlane, ensure_binaries  # noqa: E402

NAMESPACE, PREFIX = "launch-cost", "f"
ECHO_SECONDS = 1.5  # after each step's passes: the Events' posters and the watches' echoes
STEPS = ("plan ahead", "first pass", "second pass", "after")


def context_switches() -> int:
    """This process's context switches so far, every thread's (voluntary and not)."""
    total = 0
    for task in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{task}/status") as status:
                total += sum(int(line.split()[1]) for line in status if "ctxt_switches" in line)
        except OSError:
            pass  # a thread that ended meanwhile
    return total


class Looks:
    """What the schedules' watch tells the loop; nobody reconciles here but the steps."""

    def __init__(self) -> None:
        self.known: set[tuple[str, str]] = set()

    def touch(self, key: tuple[str, str]) -> None:
        self.known.add(key)

    def forget(self, key: tuple[str, str]) -> None:
        self.known.discard(key)


class Launches:
    """The operator's parts in this process, and each step's CPU per launch."""

    def __init__(self, size: int, watches_on: bool) -> None:
        from cronctl.operator.apply import Cluster
        from cronctl.operator.kube.credentials import load_client
        from cronctl.operator.kube.cache import Cache
        from cronctl.operator.handlers import CONNECTIONS
        from cronctl.operator.kube.jobwatch import watches
        from cronctl.operator.loop import CONCURRENCY
        from cronctl.operator.kube.schedulewatch import schedule_watches
        from cronctl.operator.shard import Shard

        shard, cache, looks = Shard(), Cache(), Looks()
        self.cluster = Cluster(load_client(CONNECTIONS + 2), cache, record_events_later=True, shard=shard)
        self.keys = [(NAMESPACE, f"{PREFIX}-{i}") for i in range(size)]
        self.threads = ThreadPoolExecutor(CONCURRENCY, thread_name_prefix="cronctl-reconcile")
        self.watches = [*watches(self.cluster.rest, cache, [NAMESPACE], shard.job_selector, looks.touch),
                        *schedule_watches(self.cluster.rest, cache, [NAMESPACE], shard.schedule_selector, looks)]
        for watch in self.watches:
            watch.list()
            if watches_on:
                watch.start()
        gc.freeze()  # as the operator does once started

    def on_threads(self, step: Callable[[Any], Any], items: Iterable[Any]) -> list[Any]:
        return list(self.threads.map(step, items))

    def at(self, now: float, ahead: bool = True) -> dict[str, float]:
        """Reconcile every schedule at ``now`` (planned ahead, as the loop does at a second it
        knew of), in the loop's two passes; each step's CPU per launch, and the context switches."""
        from cronctl.operator.loop import CONCURRENCY, Started, finish_all, prepare, shares, start_all

        switches, marks = context_switches(), [time.process_time()]
        # Planned ahead on one thread, as the loop does.
        prepared = [prepare(self.cluster, key, int(now)) if ahead else None for key in self.keys]
        marks.append(time.process_time())
        # Each pass in shares, one a thread, as the loop does.
        started = [each for share in self.on_threads(lambda share: start_all(self.cluster, share, now),
                                                     shares(list(zip(self.keys, prepared)), CONCURRENCY))
                   for each in share]
        marks.append(time.process_time())
        self.on_threads(lambda share: finish_all(self.cluster, share),
                        shares([each for each in started if isinstance(each, Started)], CONCURRENCY))
        marks.append(time.process_time())
        time.sleep(ECHO_SECONDS)  # not a schedule's minute: the real time the echoes take to come
        marks.append(time.process_time())
        size = len(self.keys)
        costs = {name: (after - before) / size * 1000 for name, before, after in zip(STEPS, marks, marks[1:])}
        costs["all"] = (marks[-1] - marks[0]) / size * 1000
        costs["switches"] = (context_switches() - switches) / size
        return costs

    def stop(self) -> None:
        for watch in self.watches:
            watch.stop()
        self.threads.shutdown()


def positive(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of at least 1")
    return int(text)


def row(label: str, costs: dict[str, float]) -> str:
    steps = " | ".join(f"{costs[name]:5.3f}" for name in STEPS)
    return f"| {label:<22} | {costs['all']:5.3f} | {steps} | {costs['switches']:4.1f} |"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=positive, default=500, help="schedules in the fleet (default 500)")
    parser.add_argument("--rounds", type=positive, default=3, help="days staged and released (default 3)")
    parser.add_argument("--no-watches", dest="watches", action="store_false")
    args = parser.parse_args()
    bin_dir = ensure_binaries()
    with ControlPlane(bin_dir=bin_dir) as cp:
        kb.kubectl(cp, "apply", "-f", str(ROOT / "crds" / "cronschedule.yaml"),
                   "-f", str(ROOT / "crds" / "cronschedule-policy.yaml"))
        kb.kubectl(cp, "wait", "--for=condition=Established", "crd/cronschedules.cronctl.dev", "--timeout=60s")
        kb.kubectl(cp, "create", "namespace", NAMESPACE)
        os.environ["KUBECONFIG"] = str(cp.user_kubeconfig("launch-cost", groups=["system:masters"]))
        nominal = (int(time.time()) // 60 + 3) * 60  # the herd's minute, the first day
        kb.Api(cp).create_all(kb.fleet_objects(kb.render_fleet(bin_dir / "helm", NAMESPACE, PREFIX, args.size,
                                                                herd_schedule(nominal // 60))))
        launches = Launches(args.size, args.watches)
        try:
            print(f"{args.size} schedules due at one minute, {args.rounds} rounds a day apart; watches "
                  f"{'on' if args.watches else 'off'}; CPU ms per launch, all threads\n\n"
                  f"| step | all | {' | '.join(STEPS)} | context switches |\n|---|---|---|---|---|---|---|")
            print(row("accepted (first look)", launches.at(nominal - 100, ahead=False)), flush=True)
            for day in range(args.rounds):
                minute = nominal + day * 86400
                print(row(f"day {day}: staged", launches.at(minute - 60)), flush=True)
                print(row(f"day {day}: released", launches.at(minute)), flush=True)
        finally:
            launches.stop()
    return 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except KeyboardInterrupt:  # the control plane is stopped on the way out
        print("interrupted: the rows above are the steps measured so far", file=sys.stderr)
        raise SystemExit(130) from None
