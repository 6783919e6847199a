"""What the operator keeps in memory per 1,000 schedules, and what holds it: offline, in one process.

bench_vs_cronjob.py measures the operator's peak RSS on a cluster (59 MiB per
1,000 schedules at herd 10,000, against CronJob's 35: issue 47). This one
finds where it goes without a cluster, in seconds: it builds N CronSchedules
and their Jobs as the API server returns them (``metadata.managedFields`` of
kubectl and of the operator's status writes, uid, generation, timestamps; a
Job's defaulted spec, its Pod template's labels and its status with
conditions) and feeds them to the operator's own parts as a running operator
does: the CronSchedules' and the Jobs' watches (``kube.schedulewatch``,
``kube.jobwatch``: each event a JSON line parsed by the watch), the ``Cache``,
the loop (``loop.Scheduler``: its sets and heap), the plans made ahead for
the herd's second (``loop.prepare``, all N at once, as at the herd), the
reconciles' writes (``start_all``/``finish_all`` through the real
``Cluster``, answered by an in-memory API server that echoes each write on
the watches), the spec readings the plans remember (``reading``), the
metrics' series and the Events' series.

Each schedule is created, looked at, launched at its minute (one Job), and
its Job ends (the run's end written, as in the lifecycle workload). Then:

- **by holder**: the bytes reachable from each thing the operator keeps
  (each object counted once, for the first holder that reaches it, in the
  order printed);
- **by file**: tracemalloc's live blocks grouped by the file that allocated
  them, at the herd's peak (every plan made ahead held at once).

    python benchmarks/bench_operator_memory.py [--sizes 1000 10000] [--fleet]

Bytes are Python's (``sys.getsizeof`` and tracemalloc), not RSS: the
allocator's overhead and fragmentation come on top. ``sys.getsizeof`` does not
see a bytes object's spare buffer (orjson's answers keep theirs); tracemalloc
does. ``--source DIR`` measures another tree's ``operator/`` (before a change:
``git archive REV operator | tar -x -C DIR``).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import sys
import threading
import tracemalloc
from pathlib import Path
from typing import Any, Iterable, Iterator

import orjson

ROOT = Path(__file__).resolve().parents[1]
# --source DIR: another tree's operator/ to measure (before a change: git archive REV operator | tar -x -C DIR)
SOURCE = Path(sys.argv[sys.argv.index("--source") + 1]) if "--source" in sys.argv else ROOT
sys.path.insert(0, str(SOURCE / "operator"))

from kubernetes import client  # noqa: E402

from cronctl.api import API_VERSION, KIND  # noqa: E402
from cronctl.clock import Clock  # noqa: E402
from cronctl.operator import loop as loops  # noqa: E402
from cronctl.operator import reading  # noqa: E402
from cronctl.operator.apply import Cluster  # noqa: E402
from cronctl.operator.kube.cache import Cache  # noqa: E402
from cronctl.operator.kube.jobwatch import JobWatch  # noqa: E402
from cronctl.operator.kube.rest import Call  # noqa: E402
from cronctl.operator.kube.schedulewatch import ScheduleWatch  # noqa: E402
from cronctl.operator.metrics import Metrics  # noqa: E402
from cronctl.operator.resource import rfc3339  # noqa: E402

NAMESPACE = "fleet"
MINUTE = 29_000_000  # a minute since 1970 (2025-02-20), the herd's
MIB = 1024 * 1024
CHART_LABELS = {"app.kubernetes.io/name": "cronschedule-fleet", "app.kubernetes.io/instance": "fleet",
                "app.kubernetes.io/managed-by": "Helm", "app.kubernetes.io/part-of": "cronctl",
                "helm.sh/chart": "cronschedule-fleet-0.3.0", "cronctl.dev/fleet": "f"}
JOB_TEMPLATE = {"spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [
    {"name": "main", "image": "busybox:1.36", "command": ["sh", "-c", "echo fired at $(date -u)"]}]}}}}


def fields_v1(value: Any) -> Any:
    """The managedFields' set of a value: every key as f:KEY, down to the leaves."""
    if isinstance(value, dict):
        return {f"f:{key}": fields_v1(item) for key, item in value.items()}
    if isinstance(value, list):
        return {"k:{\"name\":\"main\"}": {".": {}, "f:name": {}}} if value and isinstance(value[0], dict) else {}
    return {}


def managed(manager: str, operation: str, seconds: int, owned: dict[str, Any],
            subresource: str | None = None, api_version: str = API_VERSION) -> dict[str, Any]:
    entry = {"manager": manager, "operation": operation, "apiVersion": api_version, "time": rfc3339(seconds // 60),
             "fieldsType": "FieldsV1", "fieldsV1": fields_v1(owned)}
    if subresource is not None:
        entry["subresource"] = subresource
    return entry


class Api:
    """The API server, in memory: the objects, their resourceVersions, each write's answer (a fresh
    parse, as the operator's transport makes) and the watch events the writes cause."""

    def __init__(self) -> None:
        self.version = 1000
        self.schedules: dict[str, dict[str, Any]] = {}
        self.jobs: dict[str, dict[str, Any]] = {}
        self.events: list[tuple[str, bytes]] = []  # ("schedules" or "jobs", one watch line)
        self.lock = threading.Lock()

    def _stamp(self, body: dict[str, Any], resource: str, kind: str = "MODIFIED") -> bytes:
        self.version += 1
        body["metadata"]["resourceVersion"] = str(self.version)
        line = orjson.dumps({"type": kind, "object": body})
        self.events.append((resource, line))
        return line

    def create_schedule(self, index: int, seconds: int) -> None:
        name = f"f-{index}"
        spec = {"schedule": f"{(MINUTE + 1) % 60} {(MINUTE + 1) // 60 % 24} * * *", "concurrencyPolicy": "Allow",
                "jobTemplate": JOB_TEMPLATE}
        body = {"apiVersion": API_VERSION, "kind": KIND, "metadata": {
            "name": name, "namespace": NAMESPACE, "uid": f"9b1c{index:08x}-5e1f-4c6b-9a57-3d2e4f6a7b8c",
            "generation": 1, "creationTimestamp": rfc3339(seconds // 60), "labels": dict(CHART_LABELS),
            "annotations": {"meta.helm.sh/release-name": "fleet", "meta.helm.sh/release-namespace": NAMESPACE},
            "managedFields": [managed("helm", "Update", seconds, {"metadata": {"labels": CHART_LABELS}, "spec": spec})]},
            "spec": spec}
        self.schedules[name] = body
        self._stamp(body, "schedules", "ADDED")

    def answer(self, call: Call, seconds: int) -> Any:
        parts = call.target.strip("/").split("/")
        with self.lock:
            if call.method == "POST" and parts[-1] == "jobs":
                return self._created(orjson.loads(call.body) if isinstance(call.body, bytes) else call.body, seconds)
            if call.method == "PATCH" and parts[-1] == "status":
                return self._status_patched(parts[-2], call.body, seconds)
            if call.method == "DELETE" and "jobs" in parts:
                job = self.jobs.pop(parts[-1], None)
                if job is not None:
                    self._stamp(job, "jobs", "DELETED")
                return {}
            return {}  # Events: nobody reads their answer

    def _created(self, manifest: dict[str, Any], seconds: int) -> Any:
        job = orjson.loads(orjson.dumps(manifest))
        metadata = job["metadata"]
        uid = f"5d2e{len(self.jobs):08x}-7a1b-4c3d-8e9f-0a1b2c3d4e5f"
        metadata.update(uid=uid, generation=1, creationTimestamp=rfc3339(seconds // 60),
                        managedFields=[managed("cronctl", "Update", seconds, {"metadata": {
                            "labels": metadata["labels"], "annotations": metadata["annotations"],
                            "ownerReferences": {}}, "spec": manifest["spec"]}, api_version="batch/v1")])
        spec = job["spec"]
        spec.setdefault("backoffLimit", 6)
        spec.update(parallelism=1, completions=1, completionMode="NonIndexed", suspend=spec.get("suspend", False),
                    podReplacementPolicy="TerminatingOrFailed", manualSelector=False,
                    selector={"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
        template = spec["template"].setdefault("metadata", {})
        template["labels"] = {**template.get("labels", {}), "batch.kubernetes.io/controller-uid": uid,
                              "batch.kubernetes.io/job-name": metadata["name"], "controller-uid": uid,
                              "job-name": metadata["name"]}
        for container in spec["template"]["spec"]["containers"]:
            container.update(resources={}, terminationMessagePath="/dev/termination-log",
                             terminationMessagePolicy="File", imagePullPolicy="IfNotPresent")
        spec["template"]["spec"].update(dnsPolicy="ClusterFirst", schedulerName="default-scheduler",
                                        securityContext={}, terminationGracePeriodSeconds=30)
        job["status"] = {"active": 1, "ready": 0, "terminating": 0, "startTime": rfc3339(seconds // 60),
                         "uncountedTerminatedPods": {}}
        self.jobs[metadata["name"]] = job
        return orjson.loads(self._stamp(job, "jobs", "ADDED"))["object"]

    def _status_patched(self, name: str, patch: dict[str, Any], seconds: int) -> Any:
        body = self.schedules[name]
        status = body.setdefault("status", {})
        for key, value in patch["status"].items():
            if value is None:
                status.pop(key, None)
            else:
                status[key] = value
        if len(body["metadata"]["managedFields"]) == 1:
            body["metadata"]["managedFields"].append(
                managed("cronctl", "Update", seconds, {"status": status}, subresource="status"))
        else:
            body["metadata"]["managedFields"][1]["fieldsV1"] = fields_v1({"status": status})
        return orjson.loads(self._stamp(body, "schedules"))["object"]

    def end_jobs(self, seconds: int) -> None:
        """Every running Job succeeds, as the job controller writes it."""
        for job in list(self.jobs.values()):
            if job["status"].get("completionTime"):
                continue
            at = rfc3339(seconds // 60)
            job["status"] = {"ready": 0, "terminating": 0, "succeeded": 1, "startTime": job["status"]["startTime"],
                             "completionTime": at, "uncountedTerminatedPods": {}, "conditions": [
                                 {"type": "SuccessCriteriaMet", "status": "True", "lastProbeTime": at,
                                  "lastTransitionTime": at, "reason": "CompletionsReached",
                                  "message": "Reached expected number of succeeded pods"},
                                 {"type": "Complete", "status": "True", "lastProbeTime": at, "lastTransitionTime": at,
                                  "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"}]}
            job["metadata"]["managedFields"].append(managed("kube-controller-manager", "Update", seconds, {
                "status": job["status"]}, subresource="status", api_version="batch/v1"))
            self._stamp(job, "jobs")

    def take_events(self, resource: str) -> list[bytes]:
        with self.lock:
            taken = [line for kind, line in self.events if kind == resource]
            self.events = [(kind, line) for kind, line in self.events if kind != resource]
        return taken


class Lines:
    """A watch's answer: the lines, then its end."""

    def __init__(self, lines: Iterable[bytes]) -> None:
        self.lines = list(lines)

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.lines)

    def release_conn(self) -> None:
        pass


class FixedClock(Clock):
    def __init__(self) -> None:
        self.now = 0.0

    def seconds(self) -> float:
        return self.now

    def seconds_until(self, second: float) -> float:
        return max(0.0, second - self.now)


class Operator:
    """The operator's parts that keep something per schedule, wired as ``handlers`` wires them."""

    def __init__(self, api: Api, fleet: bool) -> None:
        self.api, self.fleet, self.clock = api, fleet, FixedClock()
        self.cache = Cache()
        self.metrics = Metrics(clock=lambda: self.clock.now)
        self.cluster = Cluster(client.ApiClient(client.Configuration(host="https://127.0.0.1:6443")), self.cache, record_events_later=True)
        self.cluster.rest.send = self._send  # type: ignore[method-assign]
        self.cluster.events.use_clock(lambda: self.clock.now)  # type: ignore[union-attr]
        asyncio.set_event_loop(asyncio.new_event_loop())
        self.scheduler = loops.Scheduler(self.cluster, self.clock, fleet=fleet)
        self.schedules = ScheduleWatch(self.cluster.rest, self.cache, NAMESPACE, "", self.scheduler)
        self.jobs = JobWatch(self.cluster.rest, self.cache, NAMESPACE, "", self.scheduler.touch)
        self.prepared: dict[tuple[str, str], loops.Prepared] = {}
        self.between_passes = 0  # the operator's traced bytes between the herd's two passes

    def _send(self, calls: list[Call], *args: Any, **kwargs: Any) -> list[Any]:
        return [self.api.answer(call, int(self.clock.now)) for call in calls]

    def hear(self) -> None:
        """The watches read what the writes caused, a JSON line at a time."""
        self.schedules._watch = lambda **_: Lines(self.api.take_events("schedules"))  # type: ignore[method-assign]
        self.jobs._watch = lambda **_: Lines(self.api.take_events("jobs"))  # type: ignore[method-assign]
        self.schedules.watch_once()
        self.jobs.watch_once()

    def reconcile_due(self, second: int, ahead: bool | None = False) -> None:
        """The loop's batch at ``second``: every schedule it knows, planned ahead first if asked
        (None: the herd's plans were made ahead already, and the operator's bytes between the
        passes are kept in ``between_passes``)."""
        self.clock.now = float(second)
        keys = sorted(self.scheduler.known)
        if ahead is True:
            self.prepared = {key: made for key in keys
                             if (made := loops.prepare(self.cluster, key, second, fleet=self.fleet)) is not None}
        # As the loop's batch: a share a reconcile thread, every share's first pass (the launches)
        # before any second pass, so every reconcile of the batch is held between them at once.
        started = [loops.start_all(self.cluster, [(key, self.prepared.pop(key, None)) for key in share],
                                   float(second), metrics=self.metrics, fleet=self.fleet)
                   for share in loops.shares(keys, loops.CONCURRENCY)]
        self.between_passes = ours_now() if ahead is None else self.between_passes
        for share in started:
            loops.finish_all(self.cluster, [each for each in share if isinstance(each, loops.Started)])
        self.cluster.events.write_due(everything=True)  # type: ignore[union-attr]

    def holders(self) -> list[tuple[str, Any]]:
        """What keeps something per schedule, in the order bytes are counted (shared objects go to the first)."""
        return [("cache: schedules", self.cache._schedules), ("cache: jobs", self.cache._jobs),
                ("plans made ahead (loop.Prepared)", self.prepared),
                ("spec readings remembered (reading._readings)", reading._readings._values),
                ("upcoming times remembered (reading._upcoming)", reading._upcoming._values),
                ("metrics registry", self.metrics.registry._collector_to_names),
                ("metrics: known schedules", self.metrics._known),
                ("event series (kube.events)", self.cluster.events._series),  # type: ignore[union-attr]
                ("loop: known, wakes, heap", (self.scheduler.known, self.scheduler._wake, self.scheduler._heap))]


def deep_size(root: Any, seen: set[int]) -> int:
    """Bytes reachable from ``root`` not in ``seen`` (which it fills): containers, dataclasses,
    slots and the objects' own dicts; not classes, functions or modules."""
    total, stack = 0, [root]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, (type, type(sys), type(deep_size))) or item is None:
            continue
        seen.add(id(item))
        total += sys.getsizeof(item)
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            stack.extend(item)
        elif not isinstance(item, (str, bytes, int, float, bool)):
            if hasattr(item, "__dict__"):
                stack.append(vars(item))
            for cls in type(item).__mro__:
                for slot in getattr(cls, "__slots__", ()):
                    if isinstance(slot, str) and hasattr(item, slot):
                        stack.append(getattr(item, slot))
    return total


def run(size: int, fleet: bool) -> dict[str, Any]:
    reading._readings._values.clear()
    reading._upcoming._values.clear()
    gc.collect()
    tracemalloc.start(1)
    base = tracemalloc.take_snapshot()
    api = Api()
    operator = Operator(api, fleet)
    created = MINUTE * 60 - 120
    for index in range(size):
        api.create_schedule(index, created)
    operator.hear()  # the fleet comes as watch events
    operator.reconcile_due(created + 1)  # the first look: status written
    operator.hear()
    herd = (MINUTE + 1) * 60
    operator.clock.now = herd - 4
    operator.prepared = {key: made for key in sorted(operator.scheduler.known)
                         if (made := loops.prepare(operator.cluster, key, herd, fleet=fleet)) is not None}
    gc.collect()
    peak = tracemalloc.take_snapshot()  # every plan made ahead, held at once, as 4 s before a herd
    peak_holders = holder_bytes(operator)
    before_pass, api_before = ours_now(), the_api_servers()
    tracemalloc.reset_peak()
    operator.reconcile_due(herd, ahead=None)  # the launches
    # The in-memory API server's bytes only grow in the passes (the Jobs it keeps, its watch lines):
    # the peak less their growth is at most the operator's own peak, and near it.
    pass_peak = tracemalloc.get_traced_memory()[1] - (the_api_servers() - api_before)
    operator.hear()
    api.end_jobs(herd + 5)
    operator.hear()  # the Jobs' ends: their schedules looked at
    operator.reconcile_due(herd + 6)  # the runs' ends written
    operator.hear()
    gc.collect()
    steady = holder_bytes(operator)
    files = [(stat.traceback[0].filename, stat.size) for stat in peak.compare_to(base, "filename") if stat.size_diff > 0]
    tracemalloc.stop()
    assert len(api.jobs) == size and all(len(jobs) == 1 for jobs in operator.cache._jobs.values()), "one Job each"
    return {"size": size, "before_pass": before_pass, "between_passes": operator.between_passes,
            "pass_peak": pass_peak, "peak": peak_holders, "steady": steady, "files": files,
            "example": operator.cache.schedule(NAMESPACE, "f-0"), "job": operator.cache.jobs(NAMESPACE, "f-0")[0]}


def ours_now() -> int:
    """The traced bytes allocated by the operator's code and the libraries', not by this file (the
    in-memory API server, its watch lines and answers)."""
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(False, __file__)])
    return sum(stat.size for stat in snapshot.statistics("filename"))


def the_api_servers() -> int:
    """The traced bytes this file allocated: the in-memory API server's objects and watch lines."""
    snapshot = tracemalloc.take_snapshot().filter_traces([tracemalloc.Filter(True, __file__)])
    return sum(stat.size for stat in snapshot.statistics("filename"))


def holder_bytes(operator: Operator) -> list[tuple[str, int]]:
    seen: set[int] = set()
    return [(name, deep_size(held, seen)) for name, held in operator.holders()]


def report(result: dict[str, Any]) -> None:
    size = result["size"]
    per = 1000 / size
    print(f"\n== {size} schedules, one Job each (a run launched and ended) ==")
    for moment in ("peak", "steady"):
        rows = result[moment]
        title = ("4 s before the herd's second, every plan made ahead" if moment == "peak"
                 else "after the runs' ends written")
        print(f"  by holder, {title}: KiB per 1,000 schedules")
        for name, size_bytes in rows:
            print(f"    {name:<48} {size_bytes * per / 1024:>9.0f}")
        print(f"    {'total':<48} {sum(b for _, b in rows) * per / 1024:>9.0f}")
    print(f"  the herd's second: the operator's bytes (tracemalloc, the in-memory API server's left out) "
          f"4 s before it {result['before_pass'] * per / 1024:.0f} KiB per 1,000, between its passes "
          f"{result['between_passes'] * per / 1024:.0f}, at the passes' peak "
          f"{result['pass_peak'] * per / 1024:.0f}")
    ours = [(filename, size_bytes) for filename, size_bytes in result["files"] if filename != __file__]
    print(f"  by file that allocated it (tracemalloc, at the peak; {sum(b for _, b in ours) * per / MIB:.1f} MiB per "
          "1,000 in all, the in-memory API server's left out):")
    for filename, size_bytes in ours[:12]:
        short = filename.replace(str(SOURCE) + "/", "").replace(str(ROOT) + "/", "").replace(sys.prefix, "<python>")
        print(f"    {short:<70} {size_bytes * per / 1024:>9.0f} KiB")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--fleet", action="store_true", help="the operator in fleet mode")
    parser.add_argument("--show", action="store_true", help="print one cached schedule and Job as kept")
    parser.add_argument("--source", type=Path, default=ROOT, help="the tree whose operator/ is measured (default: "
                        "this one's)")
    args = parser.parse_args(argv)
    for size in args.sizes:
        result = run(size, args.fleet)
        report(result)
        if args.show:
            print(orjson.dumps({"schedule": result["example"], "job": result["job"]},
                               option=orjson.OPT_INDENT_2).decode())


if __name__ == "__main__":
    main()
