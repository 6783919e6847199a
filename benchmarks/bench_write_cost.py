"""What the API server and etcd spend on each kind of write a cron controller sends.

bench_vs_cronjob.py gives each controller's whole cost per launch; this one prices the writes
a launch is made of, one kind at a time, so that a change to what cronctl writes can be judged
before a full run: N writes of a kind (16 at a time, as a controller's workers send them) on
the test API server, with a watch open on the resource written (a controller watches what it
writes, and the API server pays for the echo), and the CPU of kube-apiserver and etcd from
/proc over them, less what both spend idle over the same time (measured just before).

Kinds:

- ``create Job``: the fleet's Job, unsuspended (the least a launch costs);
- ``create Event``: a core/v1 Event about a CronSchedule;
- ``CronJob status update``: what the CronJob controller sends after a launch (a PUT of the
  CronJob to /status with lastScheduleTime and the active Job);
- ``CronSchedule status patch, as today``: the merge patch cronctl sends after a launch, its
  whole status (conditions, next times, active run, history);
- ``..., changed fields only``: the same launch, only the fields that changed;
- ``..., small status``: a status without the bulk (no nextScheduleTimes, no history);
- ``CronSchedule status update``: the whole object PUT to /status with its resourceVersion;
- ``CronSchedule status JSON patch``: two fields replaced;
- ``..., fieldValidation=Ignore``: the patch as today, the API server told not to look for
  unknown or duplicate fields.

``--variants`` also prices the status patch (as today) on copies of the CRD under other groups,
each with one thing changed (the CEL rules it had before issue 47 put back, or its status
schema made cheaper to check), to tell what in the CRD makes its writes dear: after the main
rounds, as many rounds again of the CRD as shipped and each variant, one after the other. The CRD is
installed as shipped, with its ValidatingAdmissionPolicy (crds/cronschedule-policy.yaml).

    python benchmarks/bench_write_cost.py [--count 500] [--rounds 2] [--variants]
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable

import kube_bench as kb
from bench_vs_cronjob import as_cronjob, herd_schedule
from kube_bench import ROOT

from tests.kube.controlplane import ControlPlane, ensure_binaries  # noqa: E402

NAMESPACE, PREFIX, WORKERS = "write-cost", "w", 16
CS = f"/apis/cronctl.dev/v1/namespaces/{NAMESPACE}/cronschedules"
CJ = f"/apis/batch/v1/namespaces/{NAMESPACE}/cronjobs"
JOBS = f"/apis/batch/v1/namespaces/{NAMESPACE}/jobs"
EVENTS = f"/api/v1/namespaces/{NAMESPACE}/events"


def stamp(minute: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(minute * 60))


def status_today(name: str, minute: int, run: int) -> dict[str, Any]:
    """A status as cronctl's status_of() leaves it after run ``run`` launched at ``minute``, with
    three succeeded runs and one failed one kept (the CRD's default history limits)."""
    def entry(number: int, state: str, at: int) -> dict[str, Any]:
        return {"name": f"{name}-{at}", "run": number, "state": state, "attempts": 1, "reason": "scheduled",
                "scheduledTime": stamp(at), "startedTime": stamp(at), "finishedTime": stamp(at + 1)}
    condition = {"type": "Ready", "status": "True", "reason": "Scheduled", "message": "the schedule is valid",
                 "lastTransitionTime": stamp(minute - 5000), "observedGeneration": 1}
    missed = {"type": "MissedSchedules", "status": "False", "reason": "OnTime", "message": "no missed schedules",
              "lastTransitionTime": stamp(minute - 5000), "observedGeneration": 1}
    return {
        "version": 1, "observedGeneration": 1, "anchorTime": stamp(minute - 5000),
        "lastScheduleTime": stamp(minute), "nextFireTime": stamp(minute + 1440),
        "nextScheduleTimes": [{"time": stamp(minute + 1440 * k), "localTime": stamp(minute + 1440 * k)}
                              for k in range(1, 6)],
        "launched": run, "skipped": 0, "overflowed": 0, "activeCount": 1, "queue": [],
        "active": [{"name": f"{name}-{minute}", "run": run, "attempt": 1, "state": "running", "reason": "scheduled",
                    "job": f"{name}-{minute}", "scheduledTime": stamp(minute), "startedTime": stamp(minute)}],
        "history": [entry(run - k, "succeeded", minute - 1440 * k) for k in range(1, 4)]
        + [entry(run - 4, "failed", minute - 1440 * 4)],
        "conditions": [condition, missed], "shard": "",
    }


def changed_only(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in after.items() if before.get(key) != value}


def small(status: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in status.items() if key not in ("nextScheduleTimes", "history")}


class Drain:
    """A watch on one collection, read and thrown away (the echo a controller pays for)."""

    def __init__(self, api: kb.Api, path: str) -> None:
        self.api, self.path, self._stop = api, path, threading.Event()
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while not self._stop.is_set():
            connection = self.api.connect(timeout=None)
            try:
                connection.request("GET", self.path + "?watch=1&allowWatchBookmarks=true")
                answer = connection.getresponse()
                while not self._stop.is_set() and answer.read1(65536):
                    pass
            except (OSError, http.client.HTTPException):
                time.sleep(0.2)
            finally:
                connection.close()

    def stop(self) -> None:
        self._stop.set()


class Bench:
    def __init__(self, cp: ControlPlane, count: int) -> None:
        self.cp, self.api, self.count = cp, kb.Api(cp), count
        self.pids = {"kube-apiserver": cp._apiserver.pid, "etcd": cp._etcd.pid}  # type: ignore[union-attr]
        helm = cp.bin_dir / "helm"
        self.schedules = kb.fleet_objects(kb.render_fleet(helm, NAMESPACE, PREFIX, count, herd_schedule(10)))
        self.minute = int(time.time() // 60)

    def cpu(self) -> dict[str, float]:
        return {name: kb.cpu_seconds(pid) for name, pid in self.pids.items()}

    def priced(self, label: str, writes: list[Callable[[], int]], watch: str) -> dict[str, float]:
        drain = Drain(self.api, watch)
        time.sleep(1.0)
        before, t0 = self.cpu(), time.time()
        time.sleep(3.0)
        idle = {name: (value - before[name]) / (time.time() - t0) for name, value in self.cpu().items()}
        before, t0 = self.cpu(), time.time()
        with ThreadPoolExecutor(WORKERS) as pool:
            codes = list(pool.map(lambda write: write(), writes))
        time.sleep(0.5)  # the watch's echoes
        elapsed, after = time.time() - t0, self.cpu()
        drain.stop()
        bad = [code for code in codes if code >= 300]
        assert not bad, f"{label}: {len(bad)} writes refused ({bad[:3]})"
        return {name: (after[name] - before[name] - idle[name] * elapsed) / len(writes) * 1000 for name in after}

    def send(self, method: str, path: str, body: Any, content_type: str = "application/json") -> Callable[[], int]:
        data = json.dumps(body).encode()

        def write() -> int:
            connection = getattr(self.api._local, "raw", None)
            if connection is None:
                connection = self.api._local.raw = self.api.connect()
            connection.request(method, path, body=data, headers={"Content-Type": content_type})
            answer = connection.getresponse()
            answer.read()
            return answer.status
        return write

    def round(self, index: int) -> dict[str, dict[str, float]]:
        out: dict[str, dict[str, float]] = {}
        minute = self.minute + 1440 * index
        names = [obj["metadata"]["name"] for obj in self.schedules]
        job_template = self.schedules[0]["spec"]["jobTemplate"]
        jobs = [{"apiVersion": "batch/v1", "kind": "Job",
                 "metadata": {**copy.deepcopy(job_template.get("metadata", {})), "name": f"{name}-{minute}"},
                 "spec": job_template["spec"]} for name in names]
        out["create Job"] = self.priced("create Job", [self.send("POST", JOBS, job) for job in jobs], JOBS)
        events = [{"apiVersion": "v1", "kind": "Event", "metadata": {"name": f"{name}.{minute:x}{index}"},
                   "involvedObject": {"apiVersion": "cronctl.dev/v1", "kind": "CronSchedule", "name": name,
                                      "namespace": NAMESPACE},
                   "reason": "Launched", "message": f"launched run 7 ({name}-{minute}) for {stamp(minute)}",
                   "type": "Normal", "source": {"component": "cronctl"}, "count": 1,
                   "firstTimestamp": stamp(minute), "lastTimestamp": stamp(minute)} for name in names]
        out["create Event"] = self.priced("create Event", [self.send("POST", EVENTS, event) for event in events],
                                          EVENTS)
        cronjobs = {item["metadata"]["name"]: item for item in self.list(CJ)}
        updates = []
        for name in names:
            body = copy.deepcopy(cronjobs[name])
            body["status"] = {"lastScheduleTime": stamp(minute), "active": [
                {"kind": "Job", "namespace": NAMESPACE, "name": f"{name}-{minute}", "apiVersion": "batch/v1",
                 "uid": "5f0f4a8e-0000-4000-8000-000000000000", "resourceVersion": "1"}]}
            updates.append(self.send("PUT", f"{CJ}/{name}/status", body))
        out["CronJob status update"] = self.priced("CronJob status update", updates, CJ)
        merge = "application/merge-patch+json"
        for label, status_of in (("CronSchedule status patch, as today", lambda n, b, a: a),
                                 ("  changed fields only", changed_only_of),
                                 ("  small status (no next times, no history)", lambda n, b, a: small(a))):
            before = {name: status_today(name, minute - 1440, 6 + index * 3) for name in names}
            after = {name: status_today(name, minute, 7 + index * 3) for name in names}
            patches = [self.send("PATCH", f"{CS}/{name}/status", {"status": status_of(name, before[name], after[name])},
                                 merge) for name in names]
            out[label] = self.priced(label, patches, CS)
            minute += 1
        current = {item["metadata"]["name"]: item for item in self.list(CS)}
        puts = []
        for name in names:
            body = {key: current[name][key] for key in ("apiVersion", "kind", "metadata", "spec")}
            body["status"] = status_today(name, minute, 30 + index)
            puts.append(self.send("PUT", f"{CS}/{name}/status", body))
        out["CronSchedule status update (PUT with its resourceVersion)"] = self.priced("status PUT", puts, CS)
        json_patches = [self.send("PATCH", f"{CS}/{name}/status",
                                  [{"op": "replace", "path": "/status/lastScheduleTime", "value": stamp(minute + 1)},
                                   {"op": "replace", "path": "/status/launched", "value": 40 + index}],
                                  "application/json-patch+json") for name in names]
        out["CronSchedule status JSON patch of two fields"] = self.priced("json patch", json_patches, CS)
        ignored = [self.send("PATCH", f"{CS}/{name}/status?fieldValidation=Ignore",
                             {"status": status_today(name, minute + 2, 50 + index)}, "application/merge-patch+json")
                   for name in names]
        out["CronSchedule status patch, as today, fieldValidation=Ignore"] = self.priced("ignore", ignored, CS)
        return out

    def list(self, path: str) -> list[dict[str, Any]]:
        status, body = self.api.request("GET", path)
        assert status == 200, body
        return body["items"]

    def prepare(self) -> None:
        kb.kubectl(self.cp, "create", "namespace", NAMESPACE)
        self.api.create_all(self.schedules)
        self.api.create_all([{**as_cronjob(obj), "spec": {**as_cronjob(obj)["spec"], "suspend": True}}
                             for obj in self.schedules])
        # Every CronSchedule starts with a status as cronctl leaves it, so that each patch is a change.
        first = [self.send("PATCH", f"{CS}/{obj['metadata']['name']}/status",
                           {"status": status_today(obj["metadata"]["name"], self.minute - 1440, 6)},
                           "application/merge-patch+json") for obj in self.schedules]
        with ThreadPoolExecutor(WORKERS) as pool:
            assert all(code < 300 for code in pool.map(lambda write: write(), first))


def crd_variants() -> dict[str, dict[str, Any]]:
    """The CRD under another group for each variant: the CEL rules it had before issue 47 put
    back, or its status schema made cheaper to check. The CRD as shipped (no rules: they are the
    ValidatingAdmissionPolicy's, which a status write does not match) is the main rounds' own."""
    import yaml
    base = yaml.safe_load((ROOT / "crds" / "cronschedule.yaml").read_text())

    def variant(group: str, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        crd = copy.deepcopy(base)
        crd["metadata"]["name"], crd["spec"]["group"] = f"cronschedules.{group}", group
        change(crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
        return crd

    def with_rules(schema: dict[str, Any]) -> None:
        """The CRD's x-kubernetes-validations as they were before issue 47: the policy's rules
        on the root, spec.timeZone (its list of zones, from the policy) and spec."""
        policy = next(yaml.safe_load_all((ROOT / "crds" / "cronschedule-policy.yaml").read_text()))
        [zones] = [rule["expression"] for rule in policy["spec"]["validations"]
                   if "object.spec.timeZone in [" in rule["expression"]]
        zone_rule = zones.replace("!has(object.spec.timeZone) || ", "").replace("object.spec.timeZone", "self")
        schema["x-kubernetes-validations"] = [{"rule": "self.metadata.name.size() <= 52", "message": "name"}]
        spec = schema["properties"]["spec"]
        spec["properties"]["timeZone"]["x-kubernetes-validations"] = [{"rule": zone_rule, "message": "zone"}]
        spec["x-kubernetes-validations"] = [
            {"rule": "has(self.schedule) != has(self.schedules)", "message": "one"},
            {"rule": "!has(self.timeZone) || !has(self.schedule) || !self.schedule.trim().startsWith('@')",
             "message": "every"},
            {"rule": "!has(self.startTime) || !has(self.endTime) || self.endTime > self.startTime",
             "message": "window"}]

    def open_list_items(schema: dict[str, Any]) -> None:
        """Each status list of objects but conditions (a list-map, whose keys need a schema)
        takes its items unchecked: documented by its description, not field by field."""
        for field in schema["properties"]["status"]["properties"].values():
            if field.get("type") == "array" and field["items"].get("type") == "object" \
                    and "x-kubernetes-list-type" not in field:
                field["items"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

    def no_formats(schema: dict[str, Any]) -> None:
        def strip(node: Any) -> None:
            if isinstance(node, dict):
                if node.get("format") == "date-time":
                    del node["format"]
                for value in node.values():
                    strip(value)
            elif isinstance(node, list):
                for value in node:
                    strip(value)
        strip(schema["properties"]["status"])

    def open_status(schema: dict[str, Any]) -> None:
        schema["properties"]["status"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

    def open_all(schema: dict[str, Any]) -> None:
        open_status(schema)
        schema["properties"]["spec"] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}

    return {"with the CRD's CEL rules (before issue 47)": variant("rules.bench.cronctl.dev", with_rules),
            "status lists' items unchecked": variant("openlists.bench.cronctl.dev", open_list_items),
            "status without date-time formats": variant("noformats.bench.cronctl.dev", no_formats),
            "status schema open": variant("openstatus.bench.cronctl.dev", open_status),
            "spec and status open": variant("openall.bench.cronctl.dev", open_all)}


def price_variants(cp: ControlPlane, bench: "Bench", rounds: int) -> list[dict[str, dict[str, float]]]:
    """The status patch (as today) on the CRD as shipped and on each variant, every round
    pricing them all one after the other, so that a drift of the machine's load falls on all."""
    import yaml
    merge = "application/merge-patch+json"
    targets = [("as shipped (the rules in the policy)", CS, [obj["metadata"]["name"] for obj in bench.schedules])]
    for label, crd in crd_variants().items():
        group, name = crd["spec"]["group"], crd["metadata"]["name"]
        kb.kubectl(cp, "apply", "-f", "-", input=yaml.safe_dump(crd))
        kb.kubectl(cp, "wait", "--for=condition=Established", f"crd/{name}", "--timeout=60s")
        objects = [{**copy.deepcopy(obj), "apiVersion": f"{group}/v1"} for obj in bench.schedules]
        kb.wait_until(f"{group} served", lambda: bench.api.request(
            "GET", f"/apis/{group}/v1/namespaces/{NAMESPACE}/cronschedules")[0] == 200, timeout=60, every=0.5)
        bench.api.create_all(objects)
        path = f"/apis/{group}/v1/namespaces/{NAMESPACE}/cronschedules"
        names = [obj["metadata"]["name"] for obj in objects]
        first = [bench.send("PATCH", f"{path}/{n}/status", {"status": status_today(n, bench.minute - 1440, 6)}, merge)
                 for n in names]
        with ThreadPoolExecutor(WORKERS) as pool:
            assert all(code < 300 for code in pool.map(lambda write: write(), first))
        targets.append((label, path, names))
    out: list[dict[str, dict[str, float]]] = []
    for index in range(rounds):
        minute, priced = bench.minute + 1440 * (10 + index), {}
        for label, path, names in targets:
            patches = [bench.send("PATCH", f"{path}/{n}/status", {"status": status_today(n, minute, 100 + index)},
                                  merge) for n in names]
            priced[f"CronSchedule status patch, {label}"] = bench.priced(label, patches, path)
        out.append(priced)
    return out


def changed_only_of(name: str, before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    return changed_only(before, after)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=500, help="writes of each kind a round (default 500)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--variants", action="store_true", help="also the status patch on CRD variants")
    args = parser.parse_args()
    bin_dir = ensure_binaries()
    print(f"write costs on the test API server; {args.count} writes a kind, {WORKERS} at a time; "
          f"operator tree {kb.describe_operator()}", flush=True)
    with ControlPlane(bin_dir=bin_dir) as cp:
        kb.kubectl(cp, "apply", "-f", str(ROOT / "crds" / "cronschedule.yaml"),
                   "-f", str(ROOT / "crds" / "cronschedule-policy.yaml"))
        kb.kubectl(cp, "wait", "--for=condition=Established", "crd/cronschedules.cronctl.dev", "--timeout=60s")
        bench = Bench(cp, args.count)
        bench.prepare()
        rounds = [bench.round(index) for index in range(args.rounds)]
        if args.variants:
            for result, variants in zip(rounds, price_variants(cp, bench, args.rounds)):
                result.update(variants)
    print("\n| write (ms of CPU a write, net of idle) | API server | etcd | both |\n|---|---|---|---|")
    for label in rounds[0]:
        cells = [" / ".join(f"{r[label][name]:.2f}" for r in rounds) for name in ("kube-apiserver", "etcd")]
        both = " / ".join(f"{r[label]['kube-apiserver'] + r[label]['etcd']:.2f}" for r in rounds)
        print(f"| {label} | {cells[0]} | {cells[1]} | {both} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
