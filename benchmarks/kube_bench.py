"""What the benchmarks against the test API server (tests/kube/controlplane.py) share.

kubectl and a fast creator of many objects; fleets rendered by
charts/cronschedule-fleet; the controllers under test as processes (cronctl's
operator, and kube-controller-manager running only its CronJob controller),
each with its own client user so that the audit log tells their requests
apart; a process's CPU seconds and peak memory from /proc; the audit log read
back by user; and a watch of Jobs that stamps every event with the moment it
arrived, since a Job's creationTimestamp has one-second resolution and says
nothing of when ``spec.suspend`` turned false.

Importing this module puts the repository root and the operator's source
root on sys.path. The operator processes run the tree CRONCTL_OPERATOR_DIR
names (e.g. an exported older commit), else the repository's operator/.
"""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence
from urllib.parse import urlsplit

import yaml

ROOT = Path(__file__).resolve().parents[1]
OPERATOR_DIR = Path(os.environ.get("CRONCTL_OPERATOR_DIR") or ROOT / "operator")
sys.path[:0] = [str(ROOT), str(OPERATOR_DIR)]

from tests.kube.controlplane import ControlPlane, _free_port, _set_pdeathsig  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def audit_policy(users: Iterable[str]) -> str:
    """Metadata (verb, resource, user, timestamps) for the named users' requests, nothing else."""
    listed = ", ".join(json.dumps(user) for user in users)
    return ("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [\"RequestReceived\"]\nrules:\n"
            f"  - level: Metadata\n    users: [{listed}]\n  - level: None\n")


def kubectl(cp: ControlPlane, *args: str, input: str | None = None) -> str:
    result = subprocess.run(["kubectl", *args], env=cp.env(), input=input, capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"kubectl {' '.join(args)}: {result.stderr.strip()}")
    return result.stdout


FLEET_CHART_MOST = 5000  # CronSchedules one release of charts/cronschedule-fleet may hold


def render_fleet(helm: Path, namespace: str, prefix: str, count: int, schedule: str,
                 policy: str = "Allow") -> str:
    """The fleet chart's manifests; more than one release holds is rendered as several, the
    later ones' prefixes ``<prefix>2``, ``<prefix>3``..."""
    if count > FLEET_CHART_MOST:
        parts = [(prefix if index == 0 else f"{prefix}{index + 1}", min(FLEET_CHART_MOST, count - start))
                 for index, start in enumerate(range(0, count, FLEET_CHART_MOST))]
        return "---\n".join(_render_fleet(helm, namespace, part, size, schedule, policy) for part, size in parts)
    return _render_fleet(helm, namespace, prefix, count, schedule, policy)


def _render_fleet(helm: Path, namespace: str, prefix: str, count: int, schedule: str, policy: str) -> str:
    values = {"prefix": prefix, "count": count, "schedules": [schedule], "concurrencyPolicy": policy}
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(values, handle)
    try:
        return subprocess.run([str(helm), "template", "fleet", str(ROOT / "charts" / "cronschedule-fleet"),
                               "--namespace", namespace, "-f", handle.name], check=True, capture_output=True,
                              text=True).stdout
    finally:
        os.unlink(handle.name)


def fleet_objects(manifests: str) -> list[dict[str, Any]]:
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return [doc for doc in yaml.load_all(manifests, Loader=loader) if doc]


def wait_until(what: str, probe: Callable[[], Any], timeout: float, every: float = 1.0) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"gave up waiting for {what} after {timeout:.0f} s")
        time.sleep(every)


def list_items(cp: ControlPlane, resource: str, namespace: str) -> list[dict]:
    return json.loads(kubectl(cp, "get", resource, "-n", namespace, "-o", "json", "--chunk-size=1000"))["items"]


# -- the API, directly ----------------------------------------------------------------------


class Api:
    """HTTPS requests as the control plane's admin, one connection per thread (loopback only)."""

    def __init__(self, cp: ControlPlane) -> None:
        url = urlsplit(cp.url)
        assert url.hostname in ("127.0.0.1", "localhost"), cp.url
        self.host, self.port = url.hostname, url.port
        self.context = cp.ssl_context()
        self._local = threading.local()

    def connect(self, timeout: float | None = 60) -> http.client.HTTPSConnection:
        return http.client.HTTPSConnection(self.host, self.port, context=self.context, timeout=timeout)

    def request(self, method: str, path: str, body: Any = None) -> tuple[int, dict[str, Any]]:
        connection = getattr(self._local, "connection", None)
        for attempt in range(2):
            if connection is None:
                connection = self._local.connection = self.connect()
            try:
                connection.request(method, path, body=None if body is None else json.dumps(body),
                                   headers={"Content-Type": "application/json", "Accept": "application/json"})
                response = connection.getresponse()
                data = response.read()
                return response.status, (json.loads(data) if data else {})
            except (http.client.HTTPException, OSError):
                connection.close()
                connection = self._local.connection = None
                if attempt:
                    raise
        raise AssertionError("unreachable")

    def create_all(self, objects: Sequence[dict[str, Any]], workers: int = 8) -> None:
        """POST every object (namespaced, ``apiVersion``/``kind`` as in the manifest); retries 429 and 5xx."""

        def create(obj: dict[str, Any]) -> None:
            for attempt in range(20):
                status, body = self.request("POST", collection_path(obj), obj)
                if status in (200, 201):
                    return
                if status != 429 and status < 500:
                    raise RuntimeError(f"creating {obj['kind']} {obj['metadata']['name']}: {status} "
                                       f"{body.get('message', body)}")
                time.sleep(0.2 * (attempt + 1))
            raise RuntimeError(f"creating {obj['kind']} {obj['metadata']['name']}: still {status}")

        with ThreadPoolExecutor(workers) as pool:
            for _ in pool.map(create, objects):
                pass


def collection_path(obj: dict[str, Any]) -> str:
    group_version = obj["apiVersion"]
    prefix = f"/api/{group_version}" if "/" not in group_version else f"/apis/{group_version}"
    plural = {"CronJob": "cronjobs", "CronSchedule": "cronschedules", "Job": "jobs"}[obj["kind"]]
    return f"{prefix}/namespaces/{obj['metadata']['namespace']}/{plural}"


def snapshot_operator(into: Path) -> tuple[Path, str]:
    """Copy the operator's source tree (OPERATOR_DIR) into ``into``, so that every phase of a
    long run runs the same code while the working tree changes; returns the copy and a short
    hash of its Python files."""
    import hashlib
    import shutil

    copy = into / "operator"
    shutil.copytree(OPERATOR_DIR, copy, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    for link in [path for path in copy.rglob("*") if path.is_symlink()]:  # e.g. the CRD, from ../../crds
        target = (OPERATOR_DIR / link.relative_to(copy)).resolve()
        link.unlink()
        if target.is_file():
            shutil.copy2(target, link)
    digest = hashlib.sha256()
    for path in sorted(copy.rglob("*.py")):
        digest.update(str(path.relative_to(copy)).encode() + b"\0" + path.read_bytes())
    return copy, digest.hexdigest()[:12]


def describe_operator() -> str:
    """OPERATOR_DIR with its git commit (-dirty when it has uncommitted changes), when known."""
    described = subprocess.run(["git", "-C", str(OPERATOR_DIR), "describe", "--always", "--dirty"],
                               capture_output=True, text=True).stdout.strip()
    return f"{OPERATOR_DIR}" + (f" (git {described})" if described else " (not a git checkout)")


# -- processes -------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads), from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def machine_busy_seconds() -> float:
    """CPU seconds all cores spent not idle since boot (/proc/stat), to see whether the machine was full."""
    values = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = values[3] + values[4]  # idle + iowait
    return (sum(values[:8]) - idle) / CLK_TCK


def prioritize(pid: int, nice: int) -> None:
    """Give a process (all its threads) and its autogroup the scheduling priority ``nice``.

    On a kernel with autogroups, every session gets an equal share of the CPU whatever its
    processes' nice values, so a machine shared with many busy sessions slows the benchmark's
    processes down however they are niced; the autogroup's own nice value is what counts.
    Lowering it below 0 needs root (CAP_SYS_NICE)."""
    autogroup = Path(f"/proc/{pid}/autogroup")
    if autogroup.exists():
        autogroup.write_text(str(nice))
    for task in Path(f"/proc/{pid}/task").iterdir():
        os.setpriority(os.PRIO_PROCESS, int(task.name), nice)


class Controller:
    """A controller under test: a process with its own client user and log."""

    name: str
    user: str
    process: subprocess.Popen
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def peak_rss_mib(self) -> float:
        return peak_rss_mib(self.pid)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self._log.close()

    def log_text(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _open_log(self, path: Path):
        self.log_path = path
        self._log = path.open("wb")
        return self._log


class OperatorProcess(Controller):
    """``python -m cronctl operator -n NAMESPACE`` as its own user; the wall clock unless
    ``clock_start`` is given (then CRONCTL_CLOCK_FILE, moved with ``set_clock``). It runs in a
    session of its own, as kube-controller-manager does (see ``prioritize``)."""

    def __init__(self, cp: ControlPlane, kubeconfig: Path, user: str, namespace: str, workdir: Path,
                 clock_start: str | None = None, args: Sequence[str] = (),
                 operator_dir: Path = OPERATOR_DIR, log_suffix: str = "") -> None:
        self.name, self.user = "cronctl", user
        extra = {"KUBECONFIG": str(kubeconfig), "PYTHONPATH": str(operator_dir)}
        self.clock: Path | None = None
        if clock_start is not None:
            self.clock = workdir / f"clock-{namespace}"
            self.set_clock(clock_start)
            extra["CRONCTL_CLOCK_FILE"] = str(self.clock)
        env = cp.env(**extra)
        if clock_start is None:
            env.pop("CRONCTL_CLOCK_FILE", None)
        log = self._open_log(workdir / f"operator-{namespace}{log_suffix}.log")
        self.metrics_port = _free_port()
        self.process = subprocess.Popen([sys.executable, "-m", "cronctl", "operator", "-n", namespace,
                                         "--metrics-address", f"127.0.0.1:{self.metrics_port}", *args],
                                        env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=_set_pdeathsig)

    def counter(self, family: str) -> dict[tuple[tuple[str, str], ...], float]:
        """A counter's samples from the operator's /metrics, by their labels; {} if it cannot say."""
        from prometheus_client.parser import text_string_to_metric_families
        try:
            connection = http.client.HTTPConnection("127.0.0.1", self.metrics_port, timeout=10)
            connection.request("GET", "/metrics")
            text = connection.getresponse().read().decode()
        except OSError:
            return {}
        return {tuple(sorted(sample.labels.items())): sample.value
                for metric in text_string_to_metric_families(text) if metric.name == family
                for sample in metric.samples if sample.name == family + "_total"}

    def set_clock(self, text: str) -> None:
        assert self.clock is not None, "this operator runs on the wall clock"
        tmp = self.clock.with_suffix(".tmp")
        tmp.write_text(text)
        tmp.replace(self.clock)


class CronJobControllerProcess(Controller):
    """kube-controller-manager running only its CronJob controller, as its own user.

    No job controller, so Jobs never run (as for cronctl, whose benchmark runs no
    Pods either). Leader election is on, with a Lease in the fleet's namespace,
    as cronctl's; no serving port (``--secure-port=0``); TZ=UTC, the zone
    cronctl's schedules use when they name none."""

    READY_LINE = "Caches are synced"

    def __init__(self, cp: ControlPlane, kubeconfig: Path, user: str, namespace: str, workdir: Path,
                 qps: float, burst: int, name: str, args: Sequence[str] = ()) -> None:
        self.name, self.user = name, user
        argv = [str(cp.bin_dir / "kube-controller-manager"), f"--kubeconfig={kubeconfig}",
                "--controllers=cronjob-controller", "--use-service-account-credentials=false",
                "--leader-elect=true", f"--leader-elect-resource-namespace={namespace}",
                f"--leader-elect-resource-name={name}", "--secure-port=0", "--profiling=false",
                f"--kube-api-qps={qps:g}", f"--kube-api-burst={burst}", *args]
        log = self._open_log(workdir / f"{name}-{namespace}.log")
        log.write(("$ " + " ".join(argv) + "\n").encode())
        log.flush()
        self.process = subprocess.Popen(argv, env={**os.environ, "TZ": "UTC"}, stdin=subprocess.DEVNULL,
                                        stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=_set_pdeathsig)

    def ready(self) -> bool:
        if not self.alive():
            raise RuntimeError(f"{self.name} exited:\n" + "\n".join(self.log_text().splitlines()[-20:]))
        return "cronjob" in self.log_text().lower() and self.READY_LINE in self.log_text()


class FloorProcess(Controller):
    """benchmarks/floor_controller.py as its own user: one Job create per launch at its nominal
    second and nothing else, the least any controller asks of the control plane. It waits for
    its plan (``send``) once the benchmark knows the minutes."""

    def __init__(self, cp: ControlPlane, kubeconfig: Path, user: str, namespace: str, workdir: Path) -> None:
        self.name, self.user, self.namespace = "floor", user, namespace
        log = self._open_log(workdir / f"floor-{namespace}.log")
        self.process = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "floor_controller.py"),
                                         str(kubeconfig)], stdin=subprocess.PIPE, stdout=log,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=_set_pdeathsig)

    def send(self, launches: list[tuple[float, list[dict[str, Any]]]]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((json.dumps({"namespace": self.namespace, "launches": launches}) + "\n").encode())
        self.process.stdin.close()


# -- what the control plane itself counts -----------------------------------------------------


def prometheus_samples(text: str) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """name -> labels -> value, for every sample of a /metrics page."""
    from prometheus_client.parser import text_string_to_metric_families
    out: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return out


PLANE_COUNTERS = {
    # etcd: what reaches its disk (every write's record in the write-ahead log) and its key-value puts
    "etcd WAL bytes": ("etcd", "etcd_disk_wal_write_bytes_total"),
    "etcd puts": ("etcd", "etcd_mvcc_put_total"),
    # the API server's watch fan-out: events sent to watchers and their bytes, all kinds
    "watch events sent": ("kube-apiserver", "apiserver_watch_events_total"),
    "watch bytes sent": ("kube-apiserver", "apiserver_watch_events_sizes_sum"),
}


class PlaneCounters:
    """Snapshots of the counters above, from etcd's and the API server's /metrics."""

    def __init__(self, cp: ControlPlane, api: "Api") -> None:
        self.cp, self.api = cp, api

    def _page(self, source: str) -> str:
        if source == "etcd":
            with urllib.request.urlopen(self.cp.etcd_url + "/metrics", timeout=30) as answer:
                return answer.read().decode()
        connection = self.api.connect(timeout=30)
        try:
            connection.request("GET", "/metrics")
            return connection.getresponse().read().decode()
        finally:
            connection.close()

    def snapshot(self) -> dict[str, float]:
        pages = {source: prometheus_samples(self._page(source)) for source in ("etcd", "kube-apiserver")}
        return {label: sum(pages[source].get(name, {}).values()) for label, (source, name) in PLANE_COUNTERS.items()}


# -- the audit log ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    user: str
    verb: str
    resource: str  # "jobs", "cronjobs/status", "leases", ...
    name: str
    received: float  # seconds since 1970
    completed: float
    code: int


def parse_k8s_time(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class AuditTail:
    """The completed requests of some users, read from the audit log as it grows, from byte
    ``offset`` on (long-running watches are logged when they end)."""

    def __init__(self, audit_log: Path, offset: int, users: set[str]) -> None:
        self.audit_log, self.offset, self.users = audit_log, offset, users
        self.requests: list[Request] = []

    def read(self) -> list[Request]:
        """The requests logged since the last read (all of them are also kept in ``requests``)."""
        with self.audit_log.open("rb") as handle:
            handle.seek(self.offset)
            data = handle.read()
        complete = data.rfind(b"\n") + 1  # a last line still being written waits for the next read
        self.offset += complete
        new = [request for line in data[:complete].splitlines() if (request := self._parse(line))]
        self.requests.extend(new)
        return new

    def _parse(self, line: bytes) -> Request | None:
        event = json.loads(line)
        user = event.get("user", {}).get("username")
        if user not in self.users or event.get("stage") not in ("ResponseComplete", "Panic"):
            return None
        ref = event.get("objectRef") or {}
        resource = ref.get("resource", event.get("requestURI", "?"))
        if ref.get("subresource"):
            resource += "/" + ref["subresource"]
        return Request(user, event["verb"], resource, ref.get("name", ""),
                       parse_k8s_time(event["requestReceivedTimestamp"]), parse_k8s_time(event["stageTimestamp"]),
                       int((event.get("responseStatus") or {}).get("code", 0)))


def audit_requests(audit_log: Path, offset: int, users: set[str]) -> list[Request]:
    """The completed requests of ``users`` logged after byte ``offset``."""
    return AuditTail(audit_log, offset, users).read()


# -- a watch of Jobs, stamped on arrival -----------------------------------------------------


@dataclass
class JobSeen:
    name: str
    created: float  # creationTimestamp (whole seconds)
    first_seen: float  # when the first event of it arrived
    suspended_at_first: bool
    runnable: float | None = None  # when an event showed it not suspended
    ended: float | None = None  # when an event showed it Complete or Failed, or deleted (its run over)


@dataclass
class JobWatch:
    """Watches the Jobs of one namespace from a resourceVersion on, in a thread, and records
    when each Job was first seen and when it was first seen able to run (created without
    ``spec.suspend``, or an update that set it false): an upper bound on the moment a job
    controller, which watches too, could start it."""

    api: Api
    namespace: str
    jobs: dict[str, JobSeen] = field(default_factory=dict)
    events: int = 0
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stop = threading.Event()
        self._connection: http.client.HTTPSConnection | None = None
        self._lock = threading.Lock()
        status, listing = self.api.request("GET", f"/apis/batch/v1/namespaces/{self.namespace}/jobs?limit=1")
        if status != 200:
            raise RuntimeError(f"listing jobs: {status}")
        self._version = listing["metadata"]["resourceVersion"]
        self._thread = threading.Thread(target=self._run, name=f"watch-{self.namespace}", daemon=True)
        self._thread.start()

    def runnable_count(self) -> int:
        with self._lock:
            return sum(1 for job in self.jobs.values() if job.runnable is not None)

    def ended_count(self) -> int:
        with self._lock:
            return sum(1 for job in self.jobs.values() if job.ended is not None)

    def snapshot(self) -> list[JobSeen]:
        with self._lock:
            return [JobSeen(**vars(job)) for job in self.jobs.values()]

    def stop(self) -> None:
        self._stop.set()
        connection = self._connection
        if connection is not None and connection.sock is not None:
            try:
                connection.sock.shutdown(2)
            except OSError:
                pass
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._watch_once()
            except (http.client.HTTPException, OSError, ValueError) as error:
                if not self._stop.is_set():
                    self.errors.append(repr(error))
                    time.sleep(0.5)

    def _watch_once(self) -> None:
        self._connection = connection = self.api.connect(timeout=None)
        try:
            connection.request("GET", f"/apis/batch/v1/namespaces/{self.namespace}/jobs?watch=1"
                                      f"&resourceVersion={self._version}&timeoutSeconds=3600"
                                      "&allowWatchBookmarks=true", headers={"Accept": "application/json"})
            response = connection.getresponse()
            if response.status != 200:
                raise http.client.HTTPException(f"watch: HTTP {response.status}")
            for line in _lines(response):
                arrived = time.time()
                event = json.loads(line)
                kind, obj = event.get("type"), event.get("object") or {}
                metadata = obj.get("metadata") or {}
                if kind == "ERROR" and obj.get("code") == 410:  # too old: list afresh, then watch from there
                    self._relist(arrived)
                    return
                if kind == "ERROR":
                    raise ValueError(f"watch error: {obj.get('message')}")
                self._version = metadata.get("resourceVersion", self._version)
                if kind not in ("ADDED", "MODIFIED", "DELETED"):
                    continue
                name = metadata["name"]
                if kind == "DELETED" or _finished(obj):
                    with self._lock:
                        seen = self.jobs.get(name)
                        if seen is not None and seen.ended is None:
                            seen.ended = arrived
                    if kind == "DELETED":
                        continue
                suspended = bool((obj.get("spec") or {}).get("suspend"))
                with self._lock:
                    self.events += 1
                    job = self.jobs.get(name)
                    if job is None:
                        job = self.jobs[name] = JobSeen(name, parse_k8s_time(metadata["creationTimestamp"]),
                                                        arrived, suspended)
                    if not suspended and job.runnable is None:
                        job.runnable = arrived
        finally:
            connection.close()


    def _relist(self, arrived: float) -> None:
        """The namespace's Jobs listed anew (after a 410 Gone): each not seen yet is stamped with
        this moment, an upper bound on when it could run."""
        status, listing = self.api.request("GET", f"/apis/batch/v1/namespaces/{self.namespace}/jobs")
        if status != 200:
            raise http.client.HTTPException(f"list: HTTP {status}")
        with self._lock:
            for obj in listing.get("items", []):
                metadata = obj["metadata"]
                suspended = bool((obj.get("spec") or {}).get("suspend"))
                job = self.jobs.get(metadata["name"])
                if job is None:
                    job = self.jobs[metadata["name"]] = JobSeen(
                        metadata["name"], parse_k8s_time(metadata["creationTimestamp"]), arrived, suspended)
                if not suspended and job.runnable is None:
                    job.runnable = arrived
        self._version = listing["metadata"]["resourceVersion"]


def _finished(job: dict[str, Any]) -> bool:
    """Whether a Job's status says it ended (Complete or Failed)."""
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])


def _lines(response: http.client.HTTPResponse) -> Iterator[bytes]:
    while True:
        line = response.readline()
        if not line:
            return
        if line.strip():
            yield line


def nominal_minute(job_name: str) -> tuple[str, int] | None:
    """(schedule, minute since 1970) of a Job named <schedule>-<minutes since 1970>, as both
    CronJob and cronctl name a scheduled run's (first) Job; None for any other name."""
    owner, _, suffix = job_name.rpartition("-")
    return (owner, int(suffix)) if owner and suffix.isdigit() else None


class Sampler:
    """CPU seconds of some processes (and of the whole machine) every ``every`` seconds, in a
    thread, so that the share of a core each used over any interval can be read afterwards."""

    def __init__(self, pids: dict[str, int], every: float = 0.5) -> None:
        self.pids = pids
        self.samples: list[tuple[float, dict[str, float]]] = []
        self._stop = threading.Event()
        self._every = every
        self._thread = threading.Thread(target=self._run, name="sampler", daemon=True)
        self._thread.start()

    def _take(self) -> None:
        values: dict[str, float] = {"machine": machine_busy_seconds()}
        for name, pid in self.pids.items():
            try:
                values[name] = cpu_seconds(pid)
            except OSError:
                pass
        self.samples.append((time.time(), values))

    def _run(self) -> None:
        while not self._stop.is_set():
            self._take()
            self._stop.wait(self._every)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._take()

    def at(self, when: float, name: str) -> float:
        """The CPU seconds of ``name`` in the sample nearest ``when`` that has it."""
        return min(((abs(t - when), values[name]) for t, values in self.samples if name in values),
                   default=(0.0, float("nan")))[1]

    def used(self, start: float, end: float) -> dict[str, float]:
        """CPU seconds each process used between the samples nearest ``start`` and ``end``."""
        return {name: self.at(end, name) - self.at(start, name) for name in ("machine", *self.pids)}
