"""cronctl: cron schedules on this machine (cronctl local) and on Kubernetes (cronctl operator).

The ``cronctl`` command is the imperative edge over the core and its drivers: it may read files, the wall clock and the
environment, and it turns the core's refusals into messages and exit codes
(2 for input that cannot be used, 1 for a valid question with no answer).
People never see a traceback: a refusal is one ``cronctl:`` line on stderr;
Ctrl-C is ``cronctl: interrupted`` and exit 130; a reader that goes away
(``cronctl history x | head -1``) ends the command quietly with 141, the
code the shell gives a writer whose pipe closed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import signal
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence, TextIO

from .about import SHELLS, completion_script, version_line
from .core.dst import DaylightSaving
from .core.errors import CronctlError, FieldError
from .core.exclusions import parse_exclusions
from .core.merged import merged_expression
from .core.schedule import IntervalExpression, parse_expression
from .core.times import MINUTES_PER_DAY, format_time, parse_time, to_minute
from .core.zones import UTC, AnyZone, IanaZone, parse_zone

EXIT_USAGE = 2
EXIT_NO_ANSWER = 1
EXIT_INTERRUPTED = 128 + signal.SIGINT  # 130, as a shell reports a command Ctrl-C stopped
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE  # 141, as for `yes | head -1`
# Each busy worker slot is two processes (the wrapper and its command) with a lock and two logs open:
# 4096 is past what one machine runs at once, and bounds the memory the slots take up front.
MAX_WORKERS = 4096
_WEEKDAYS = ("Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        code = _main(argv)
        sys.stdout.flush()  # a reader that went away shows here, not in the interpreter's last flush
        return code
    except BrokenPipeError:
        # What the Python docs advise (library/signal, "Note on SIGPIPE"): SIGPIPE stays ignored, as
        # Python sets it, and stdout points at devnull so that the flush at exit cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print("cronctl: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _main(argv: Sequence[str] | None) -> int:
    from .clock import ClockFileError

    args = _parser().parse_args(argv)
    try:
        return int(args.command(args))
    except CronctlError as error:
        print(f"cronctl: {error.code.value}: {error.message}", file=sys.stderr)
        return EXIT_USAGE
    except ClockFileError as error:  # CRONCTL_CLOCK_FILE unreadable when the command starts
        print(f"cronctl: {error}", file=sys.stderr)
        return EXIT_USAGE


class OneLineParser(argparse.ArgumentParser):
    """argparse, whose usage errors are one ``cronctl:`` line (exit 2) as every other error of the
    command is: which command, what was wrong, and where the help is."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"cronctl: {self.prog.removeprefix('cronctl ')}: {message} "
                              f"(see {self.prog} --help)\n" if self.prog != "cronctl" else
                  f"cronctl: {message} (see cronctl --help)\n")


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="cronctl", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=version_line("cronctl"))
    commands = parser.add_subparsers(required=True, metavar="COMMAND")
    for add in (_add_runner, _add_manifest_tools, _add_next, _add_operator, _add_fleet, _add_harness):
        add(commands)
    completion = commands.add_parser("completion", help="print the shell completion script (bash: "
                                                         "source <(cronctl completion bash))")
    completion.add_argument("shell", choices=SHELLS)
    completion.set_defaults(command=lambda args: _print(completion_script(_parser(), "cronctl", args.shell)))
    return parser


def _print(text: str) -> int:
    print(text)
    return 0


def _add_harness(commands: Any) -> None:
    """The offline harnesses of the contracts: run, dispatch."""
    run = commands.add_parser("run", help="run harness operations (a JSON array) and print the results")
    run.add_argument("file", nargs="?", default="-", help="a JSON file, or - for standard input")
    run.set_defaults(command=_run)

    dispatch = commands.add_parser("dispatch", help="run dispatcher calls (a JSON array) and print the results")
    dispatch.add_argument("file", nargs="?", default="-", help="a JSON file, or - for standard input")
    dispatch.set_defaults(command=_dispatch)


def _add_operator(commands: Any) -> None:
    """The operator and what reads its Leases: operator, shards."""
    operator = commands.add_parser("operator", help="run the Kubernetes operator (kopf) against the cluster")
    operator.add_argument("--namespace", "-n", action="append", default=[],
                          help="watch only this namespace (repeatable; default: all namespaces)")
    operator.add_argument("--liveness", metavar="URL", help="serve kopf's health probe, e.g. http://0.0.0.0:8080/healthz")
    operator.add_argument("--verbose", action="store_true")
    operator.add_argument("--metrics-address", metavar="HOST:PORT",
                          help="serve Prometheus metrics at http://HOST:PORT/metrics, e.g. 0.0.0.0:9090 "
                               "(default: not served)")
    operator.add_argument("--log-format", choices=("text", "json"), default="text",
                          help="log lines as text, or as one JSON object per line (default: text)")
    operator.add_argument("--leader-election", action=argparse.BooleanOptionalAction, default=True,
                          help="act only while holding a Lease, so replicas never act twice (default: on)")
    operator.add_argument("--leader-election-namespace", metavar="NS",
                          help="the Lease's namespace (default: $POD_NAMESPACE, else the first --namespace, "
                               "else default)")
    operator.add_argument("--leader-election-id", metavar="NAME", default=None,
                          help="the Lease's name (default: cronctl-operator, or cronctl-operator-SHARD)")
    operator.add_argument("--shard", metavar="NAME", default=None,
                          help="own the CronSchedules labelled cronctl.dev/shard=NAME, and only them, with a Lease "
                               "of its own (default: the default shard, the CronSchedules without that label)")
    operator.add_argument("--identity", help="this replica's name in the Lease (default: $POD_NAME, else the host name)")
    operator.add_argument("--staging", action=argparse.BooleanOptionalAction, default=None,
                          help="create scheduled firings' Jobs during the minute before, suspended, and release them "
                               "at it, so each next Job can be seen ahead (default: off, unless "
                               "CRONCTL_STAGING=on; it costs the API server a second write per launch); "
                               "not where something else owns Jobs' spec.suspend (Kueue)")
    operator.add_argument("--fleet", action=argparse.BooleanOptionalAction, default=None,
                          help="fleet mode: write no per-launch status field (LAST SCHEDULE, NEXT FIRE, ACTIVE are "
                               "empty; kubectl cronctl reads launches off the Jobs), only what a person acts on "
                               "(default: off, unless CRONCTL_FLEET_MODE=on; docs/fleet-mode.md)")
    operator.add_argument("--lease-seconds", type=int, default=15,
                          help="how long a silent holder keeps the Lease (default: 15)")
    operator.add_argument("--clock", choices=("node", "api-server"), default="node",
                          help="fire by this node's clock, or by the API server's (the node's set right by the "
                               "offset the Date of the API's answers shows; default: node)")
    operator.add_argument("--clock-skew-threshold", type=float, default=2.0, metavar="SECONDS",
                          help="say (log, Warning Event on the Lease) when the node's clock is surely more than "
                               "this off the API server's (default: 2)")
    operator.set_defaults(command=_operator)

    shards = commands.add_parser("shards", help="show which operator shard holds which CronSchedules, and the "
                                                 "ones no shard holds (exit 1 if any)")
    shards.add_argument("--namespace", "-n", help="the CronSchedules of this namespace (default: all namespaces)")
    shards.add_argument("--lease-namespace", metavar="NS", default=None,
                        help="where the operator's Leases are (its release namespace; default: the kubeconfig "
                             "context's namespace, else default)")
    shards.add_argument("--leader-election-id", metavar="NAME", default="cronctl-operator",
                        help="the operator's Lease name, without a shard's suffix (default: cronctl-operator)")
    shards.add_argument("--json", action="store_true", help="print one JSON object")
    shards.set_defaults(command=_shards)


def _add_runner(commands: Any) -> None:
    """The single-node runner, its views and its requests: local, status, history, trigger, logs,
    backfill, suspend, resume."""
    local = commands.add_parser("local", help="run the CronSchedule manifests of a folder on this machine")
    local.add_argument("folder", type=Path, help="the folder of manifests; the book, lock and run logs go there too")
    local.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                       help="worker slots: runs at once (default: the number of CPUs)")
    local.add_argument("--log-format", choices=("text", "json"), default="text",
                       help="text lines, or one JSON object per line (default: text)")
    local.add_argument("--max-log-bytes", type=int, default=None, metavar="N",
                       help="the bytes of each run's stdout and stderr kept, the last ones (default: 10 MiB)")
    local.add_argument("--echo", action="store_true",
                       help="copy each run's output to this stream, each line prefixed with its run")
    local.add_argument("--wait-runs", nargs="?", const="", default=None, metavar="LIMIT",
                       help="on SIGTERM or Ctrl-C, start nothing more and wait for the runs under way to end, "
                            "at most LIMIT (seconds, or with s, m or h: 90s, 5m; none: as long as they run), "
                            "then stop them (SIGTERM, SIGKILL 10 s later); without it they go on")
    local.add_argument("--metrics-port", type=int, default=None, metavar="PORT",
                       help="serve Prometheus metrics on http://0.0.0.0:PORT/metrics (runs by outcome, start "
                            "delays, the queue)")
    local.add_argument("--poll", type=float, default=1.0, help=argparse.SUPPRESS)
    local.set_defaults(command=_local)

    for name, helptext in (("status", "show the schedules of a runner's folder"),
                           ("history", "show the last runs of a schedule"),
                           ("trigger", "ask the runner for a manual firing of a schedule")):
        sub = commands.add_parser(name, help=helptext)
        if name != "status":
            sub.add_argument("name", help="the schedule's name")
        sub.add_argument("--dir", type=Path, default=Path("."), help="the runner's folder (default: here)")
        if name != "trigger":
            sub.add_argument("--json", action="store_true", help="print one JSON object (times RFC 3339 UTC)")
        sub.set_defaults(command=_runner_view, view=name)

    _add_logs(commands)
    backfill = commands.add_parser("backfill", help="run every schedule time of a past range, oldest first, one "
                                                     "at a time (the runner of --dir takes it at its next poll)")
    backfill.add_argument("name", help="the schedule's name")
    backfill.add_argument("--from", dest="start", required=True, metavar="T",
                          help="UTC time YYYY-MM-DDTHH:MM: the first minute of the range (included)")
    backfill.add_argument("--to", dest="end", required=True, metavar="T",
                          help="UTC time YYYY-MM-DDTHH:MM: the last minute of the range (included; not after now)")
    backfill.add_argument("--dry-run", action="store_true", help="list the times it would run, and ask nothing")
    backfill.add_argument("--dir", type=Path, default=Path("."), help="the runner's folder (default: here)")
    backfill.add_argument("--file", "-f", metavar="FILE", default=None,
                          help="with --dry-run: preview a cluster's CronSchedule from its manifest (YAML or JSON, "
                               "a List too, - for standard input, as `kubectl get cronschedule NAME -o yaml` "
                               "prints it) instead of a runner's folder")
    backfill.set_defaults(command=_backfill)

    suspend = commands.add_parser("suspend", help="suspend a schedule of a runner's folder with a reason (a pause "
                                                   "record: its manifest is left as it is)")
    suspend.add_argument("name", help="the schedule's name")
    suspend.add_argument("--reason", help="why, shown by status and the runner's log (free text, at most 256 "
                                          "characters; default: none)")
    resume = commands.add_parser("resume", help="resume a schedule that cronctl suspend suspended")
    resume.add_argument("name", help="the schedule's name")
    for name, sub in (("suspend", suspend), ("resume", resume)):
        sub.add_argument("--dir", type=Path, default=Path("."), help="the runner's folder (default: here)")
        sub.set_defaults(command=_runner_view, view=name)


def _add_manifest_tools(commands: Any) -> None:
    """What works on manifest files alone, no runner and no cluster: lint and convert."""
    lint = commands.add_parser("lint", help="check CronSchedule and CronPool manifests as the API server and the "
                                             "operator take them, every problem at once (exit 1 on any problem; "
                                             "for CI and pre-commit)")
    lint.add_argument("files", nargs="+", metavar="FILE", help="YAML files (several documents each, a List's items), "
                                                              "or folders (their .yaml and .yml files, as cronctl "
                                                              "local reads them); - for standard input; other kinds "
                                                              "of objects are skipped, and templates and lists with "
                                                              "a note")
    lint.add_argument("--runner", action="store_true",
                      help="judge as cronctl local reads a folder: the runner's stricter rules on the container (a "
                           "command, as it has no image entrypoint; literal env values, no valueFrom) in place of "
                           "the Job template's (an image, restartPolicy)")
    lint.add_argument("-o", "--output", choices=("text", "json"), default="text",
                      help="a line per problem, or one JSON object {valid, problems, warnings, notes, skipped} "
                           "(default: text)")
    lint.set_defaults(command=_lint)
    convert = commands.add_parser("convert", help="CronJob manifests in, CronSchedule manifests out (every field "
                                                   "mapped; --to CronJob goes back)")
    convert.add_argument("-f", "--filename", dest="files", action="append", required=True, metavar="FILE",
                         help="a YAML file (several documents, or a List); - for standard input; may repeat")
    convert.add_argument("--to", choices=("CronSchedule", "CronJob"), default="CronSchedule",
                         help="what to turn the manifests into (default: CronSchedule)")
    convert.set_defaults(command=_convert)


def _add_next(commands: Any) -> None:
    """next: the fire times of an expression or a schedule."""
    nxt = commands.add_parser("next", help="show the next fire times of an expression, or of a runner's schedule")
    nxt.add_argument("expression", help='a cron expression ("*/15 9-17 * * MON-FRI"), "@every 90m", '
                                        "or the name of a schedule in --dir")
    nxt.add_argument("--dir", type=Path, help="the runner's folder, to ask about a schedule by name")
    nxt.add_argument("--after", help="UTC time YYYY-MM-DDTHH:MM to start after (default: now)")
    nxt.add_argument("--count", type=int, default=5, help="how many fire times (1-1000, default 5)")
    nxt.add_argument("--tz", help="the zone the expression is read in: a UTC offset like +05:30 or an IANA "
                     "zone like Europe/Berlin (daylight saving as --daylight-saving says)")
    nxt.add_argument("--exclude", action="append", default=[], metavar="ENTRY",
                     help="leave out the times of a date (2026-12-25), a date range (2026-12-24/2026-12-31) or "
                          "a cron expression (* * 1 1 *), read in --tz, as spec.exclude does (repeatable)")
    nxt.add_argument("--daylight-saving", metavar="RULE",
                     help="what a wall-clock expression does when --tz's clocks change: Vixie (the default), "
                          "Literal or Skip, as spec.daylightSaving")
    nxt.add_argument("--json", action="store_true", help="print the JSON list of UTC times only")
    nxt.set_defaults(command=_next)


def _add_fleet(commands: Any) -> None:
    """fleet preview: a fleet replayed offline."""
    fleet = commands.add_parser("fleet", help="replay a fleet of CronSchedules (the cronschedule-fleet chart's "
                                "values) through the core, offline")
    preview = fleet.add_subparsers(required=True, metavar="ACTION").add_parser(
        "preview", help="what the fleet would launch between two times: counts per policy, the busiest minutes")
    preview.add_argument("values", type=Path, help="the chart's values file (YAML, as for helm -f)")
    preview.add_argument("--from", dest="start", required=True, help="UTC time YYYY-MM-DDTHH:MM: the fleet is "
                         "created then (schedule times come after it)")
    preview.add_argument("--to", dest="end", required=True, help="UTC time YYYY-MM-DDTHH:MM: the last minute replayed")
    preview.add_argument("--run-minutes", type=int, default=1, metavar="M", help="how long every run takes "
                         "(default 1): it succeeds M minutes after its launch, unless timeoutMinutes ends it first")
    preview.add_argument("--json", action="store_true", help="print one JSON object")
    preview.add_argument("--no-progress", action="store_true", help="no progress bar (there is none when "
                         "standard error is not a terminal)")
    preview.set_defaults(command=_fleet)


def _read_json(path: str) -> object:
    if path == "-":
        return json.load(sys.stdin)
    with open(path, encoding="utf-8") as stream:
        return json.load(stream)


def _load_or_complain(path: str) -> tuple[object, bool]:
    try:
        return _read_json(path), True
    except (OSError, ValueError) as error:
        print(f"cronctl: cannot read a JSON array from {path}: {error}", file=sys.stderr)
        return None, False


def _run(args: argparse.Namespace) -> int:
    from .harness import run

    operations, ok = _load_or_complain(args.file)
    if not ok:
        return EXIT_USAGE
    _print_json(run(operations))
    return 0


def _dispatch(args: argparse.Namespace) -> int:
    from .dispatch import run_calls

    calls, ok = _load_or_complain(args.file)
    if not ok:
        return EXIT_USAGE
    _print_json(run_calls(calls))
    return 0


def _operator(args: argparse.Namespace) -> int:
    from .operator import logs, metrics
    from .operator import handlers  # registers the handlers

    try:
        options = operator_options(args)
    except ValueError as error:
        print(f"cronctl operator: {error}", file=sys.stderr)
        return EXIT_USAGE
    if args.metrics_address:  # the arguments first: a bad address is said whatever the credentials
        try:
            metrics.serve(args.metrics_address)
        except (ValueError, OSError) as error:
            print(f"cronctl operator: --metrics-address: {error}", file=sys.stderr)
            return EXIT_USAGE
    problem = _credentials_problem()
    if problem is not None:
        print(f"cronctl: no Kubernetes credentials: {problem}", file=sys.stderr)
        return EXIT_USAGE
    problem = _transport_problem()
    if problem is not None:
        print(f"cronctl operator: {problem}", file=sys.stderr)
        return EXIT_USAGE
    logs.configure(args.log_format, verbose=args.verbose)  # kopf's records too: one handler, one format
    return handlers.run(options, args.liveness)  # 1 if the scheduler's task died


def operator_options(args: argparse.Namespace) -> Any:
    """``cronctl operator``'s flags as the process's ``handlers.Options``; a bad one raises ValueError."""
    from .operator.handlers import Options
    from .operator.kube.leader import DEFAULT_LEASE_NAME, election_from
    from .operator.shard import Shard, parse_shard_name

    shard = Shard(None if args.shard is None else parse_shard_name(args.shard))
    election = election_from(args.leader_election, args.leader_election_namespace, args.namespace,
                             args.leader_election_id or shard.lease_name(DEFAULT_LEASE_NAME), args.identity,
                             args.lease_seconds)
    if not args.clock_skew_threshold > 0:
        raise ValueError(f"--clock-skew-threshold: {args.clock_skew_threshold} must be a positive number of seconds")
    return Options(tuple(args.namespace), args.staging, shard, election, args.clock, args.clock_skew_threshold,
                   fleet=args.fleet)


def _shards(args: argparse.Namespace) -> int:
    import time

    from kubernetes import config
    from kubernetes.client.exceptions import ApiException

    from .operator.assignment import assignment, render, unassigned

    problem = _credentials_problem()
    if problem is not None:
        print(f"cronctl: no Kubernetes credentials: {problem}", file=sys.stderr)
        return EXIT_USAGE
    lease_namespace = args.lease_namespace
    if lease_namespace is None:
        try:
            lease_namespace = config.list_kube_config_contexts()[1]["context"].get("namespace") or "default"
        except (config.ConfigException, OSError, KeyError, TypeError):
            lease_namespace = "default"
    try:
        schedules, leases = _read_assignment(args.namespace, lease_namespace, args.leader_election_id)
    except ApiException as error:
        print(f"cronctl shards: the API server refused: {error.status} {error.reason}", file=sys.stderr)
        return EXIT_USAGE
    rows = assignment(schedules, leases, time.time(), args.leader_election_id)
    if args.json:
        _print_json({"leaseNamespace": lease_namespace, "shards": [row.as_json() for row in rows]})
    else:
        print(render(rows) if rows else f"no CronSchedules and no operator Lease in {lease_namespace}")
    return EXIT_NO_ANSWER if unassigned(rows) else 0


def _read_assignment(namespace: str | None, lease_namespace: str, base: str) -> tuple[list[Any], list[Any]]:
    """The CronSchedules (of one namespace, or all) and the operator's Leases, for ``cronctl shards``."""
    from kubernetes import client

    from .manifest import GROUP, PLURAL, VERSION
    from .operator.kube.credentials import load_client
    from .operator.assignment import lease_view
    from .operator.shard import shard_of_lease

    api = load_client()
    custom = client.CustomObjectsApi(api)
    listed = (custom.list_cluster_custom_object(GROUP, VERSION, PLURAL) if namespace is None
              else custom.list_namespaced_custom_object(GROUP, VERSION, namespace, PLURAL))
    leases = [lease_view(lease.metadata.name, lease.spec.holder_identity,
                         lease.spec.renew_time or lease.spec.acquire_time, lease.spec.lease_duration_seconds)
              for lease in client.CoordinationV1Api(api).list_namespaced_lease(lease_namespace).items
              if shard_of_lease(lease.metadata.name, base) is not None]
    return listed.get("items") or [], leases


def _credentials_problem() -> str | None:
    """Why the operator's client (``apply.load_client``: in-cluster, else the kubeconfig) cannot be
    configured, in one line; None when it can. Without this kopf's start-up would retry every
    60 seconds, printing a traceback each time."""
    import yaml
    from kubernetes.config import ConfigException

    from .operator.kube.credentials import load_configuration

    try:
        load_configuration()
    except (ConfigException, OSError, ValueError, yaml.YAMLError) as error:
        reason = " ".join(str(error).split())  # one line: kubernetes' messages may span several
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            return reason  # in a Pod: its service account's files
        where = os.environ.get("KUBECONFIG") or "~/.kube/config"
        return f"not in a cluster, and no usable kubeconfig ({where}): {reason}"
    return None


def _transport_problem() -> str | None:
    """Why the operator's own connections cannot reach the API server as its client is configured
    (an unsupported proxy, an address that is no http(s) URL), in one line; None when they can."""
    from .operator.kube.credentials import load_configuration
    from .operator.kube.rest import Connections

    try:
        Connections.for_configuration(load_configuration())
    except ValueError as error:
        return str(error)
    return None


def _print_json(value: object, out: TextIO = sys.stdout) -> None:
    out.write(json.dumps(value, ensure_ascii=False, separators=(", ", ": ")) + "\n")


def _now_minute() -> int:
    now = dt.datetime.now(dt.timezone.utc)
    return to_minute(now.year, now.month, now.day, now.hour, now.minute)


def _local(args: argparse.Namespace) -> int:
    from .clock import runner_clock_from_environment
    from .runner.engine import Runner, run_forever
    from .runner.executor import DEFAULT_MAX_LOG_BYTES
    from .runner.files import utc_iso
    from .runner.lock import LockRefused
    from .runner.views import ViewError

    refused = _local_usage(args)
    if refused is not None:
        print(f"cronctl: {refused}", file=sys.stderr)
        return EXIT_USAGE
    wait_runs = wait_limit(args.wait_runs)
    assert not isinstance(wait_runs, str)  # refused above
    clock = runner_clock_from_environment(lambda text: print(f"cronctl: {text}", file=sys.stderr, flush=True))

    def say(text: str) -> None:
        print(f"{utc_iso(clock.seconds())} {text}" if args.log_format == "text" else text, flush=True)

    runner = Runner(args.folder, clock.minute, args.workers, say=say, seconds=clock.seconds,
                    log_format=args.log_format, max_log_bytes=args.max_log_bytes or DEFAULT_MAX_LOG_BYTES,
                    echo=args.echo, one_read=True)
    if args.metrics_port is not None:
        from .runner.metrics import RunnerMetrics

        runner.metrics = RunnerMetrics()
        try:
            runner.metrics.serve(args.metrics_port)
        except OSError as error:  # the port taken, say
            print(f"cronctl: --metrics-port {args.metrics_port}: {error.strerror or error}", file=sys.stderr)
            return EXIT_USAGE
    if args.log_format == "text":
        then = ("the runs under way go on, and the next start adopts them" if wait_runs is None else
                "after the runs under way end" + ("" if wait_runs == math.inf else f", at most {wait_runs:g} s"))
        say(f"cronctl: running the schedules of {args.folder} with {args.workers} worker slot(s); "
            f"Ctrl-C or SIGTERM stops ({then})")
    stopped_by = stop_on_signals((signal.SIGINT, signal.SIGTERM, signal.SIGHUP))
    try:
        run_forever(runner, poll_seconds=args.poll, wait_runs=wait_runs)
    except ViewError as error:  # a waiting runner could not show the holder's book
        print(f"cronctl: {error.message}", file=sys.stderr)
        return error.exit_code
    except LockRefused as error:  # another user's lock file (root's leftover): which file, and what to do
        print(f"cronctl: {error.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as error:  # the folder turned unwritable, or the lock could not be made
        print(f"cronctl: {args.folder}: {error.strerror or error}", file=sys.stderr)
        return EXIT_USAGE
    return 0 if stopped_by[0] is None else 128 + stopped_by[0]


def _local_usage(args: argparse.Namespace) -> str | None:
    """Why ``cronctl local``'s arguments are refused (one line, without ``cronctl:``), or None."""
    if args.workers < 1:
        return "--workers must be at least 1"
    if args.workers > MAX_WORKERS:
        return (f"--workers {args.workers}: at most {MAX_WORKERS} (each busy worker is a wrapper and its "
                "command, with their open files)")
    if args.max_log_bytes is not None and args.max_log_bytes < 1:
        return "--max-log-bytes must be at least 1"
    wait_runs = wait_limit(args.wait_runs)
    if isinstance(wait_runs, str):
        return f"--wait-runs: {wait_runs}"
    if args.metrics_port is not None and not 0 < args.metrics_port < 65536:
        return f"--metrics-port {args.metrics_port}: a TCP port is from 1 to 65535"
    if not args.folder.is_dir():
        return f"{args.folder} is not a folder"
    if not os.access(args.folder, os.W_OK | os.X_OK):  # a read-only mount says so here too, even to root
        return f"{args.folder} is not writable: the runner keeps its book, lock and runs there"
    return None


def wait_limit(text: str | None) -> float | str | None:
    """``--wait-runs``' limit in seconds: None without the flag, ``math.inf`` with no LIMIT, else
    LIMIT (``90``, ``90s``, ``5m``, ``1h``); a string saying why when it is none of these."""
    if text is None:
        return None
    if text == "":
        return math.inf
    units = {"s": 1, "m": 60, "h": 3600}
    number, unit = (text[:-1], units[text[-1]]) if text[-1:] in units else (text, 1)
    try:
        seconds = float(number) * unit
    except ValueError:
        return f"{text!r} is not a time (seconds, or with s, m or h: 90s, 5m, 1h)"
    if not 0 <= seconds < math.inf:
        return f"{text!r}: a time from 0 on"
    return seconds


def stop_on_signals(signals: tuple[signal.Signals, ...]) -> list[int | None]:
    """Each of ``signals`` stops the runner as Ctrl-C does (systemd, Docker and Kubernetes stop a
    process with SIGTERM; a closed terminal sends SIGHUP); the list holds the one that came, for
    the exit status (128 + its number, as a shell reports a process it ended)."""
    came: list[int | None] = [None]

    def stop(signum: int, _frame: object) -> None:
        came[0] = signum
        raise KeyboardInterrupt

    for each in signals:
        signal.signal(each, stop)
    return came


def _runner_view(args: argparse.Namespace) -> int:
    from .clock import clock_from_environment
    from .runner import views
    from .runner.lock import runner_home

    clock = clock_from_environment()
    now = clock.minute()
    args.dir = runner_home(args.dir)  # a deploy's switched name: the runner's files stay in its home
    try:
        if args.view == "status":
            if args.json:
                _print_json(views.status(args.dir, now))
                return 0
            lines = views.status_lines(args.dir, now)
        elif args.view == "history":
            if args.json:
                _print_json(views.history(args.dir, args.name))
                return 0
            lines = views.history_lines(args.dir, args.name)
        elif args.view == "suspend":
            lines = [views.suspend(args.dir, args.name, args.reason, clock.seconds()).message]
        elif args.view == "resume":
            lines = [views.resume(args.dir, args.name, now).message]
        else:
            lines = [f"triggered {args.name}: {views.trigger(args.dir, args.name, now).message}"]
    except views.ViewError as error:
        print(f"cronctl: {error.message}", file=sys.stderr)
        return error.exit_code
    print("\n".join(lines))
    return 0


def _add_logs(commands: Any) -> None:
    logs = commands.add_parser("logs", help="print a run's output (by default the run started last)")
    logs.add_argument("name", help="the schedule's name, or a run's as history names it (e.g. nightly-12)")
    logs.add_argument("run", nargs="?", help="the run, as history names it (e.g. nightly-12)")
    logs.add_argument("--dir", type=Path, default=Path("."), help="the runner's folder (default: here)")
    logs.add_argument("--follow", "-f", action="store_true", help="go on printing until the run has ended")
    logs.add_argument("--stderr", action="store_true", help="its standard error rather than its output")
    logs.set_defaults(command=_logs)


def _logs(args: argparse.Namespace) -> int:
    from .runner import output
    from .runner.lock import runner_home
    from .runner.views import ViewError

    try:
        found = output.run_output(runner_home(args.dir), args.name, args.run)
    except ViewError as error:
        print(f"cronctl: {error.message}", file=sys.stderr)
        return error.exit_code

    def write(chunk: bytes) -> None:
        sys.stdout.buffer.write(chunk)
        sys.stdout.flush()

    output.show(found, "stderr" if args.stderr else "stdout", write, follow=args.follow)
    return 0


def _next(args: argparse.Namespace) -> int:
    if not 1 <= args.count <= 1000:
        print("cronctl: --count must be from 1 to 1000", file=sys.stderr)
        return EXIT_USAGE
    after = None if args.after is None else parse_time(args.after)
    if args.after is not None and after is None:
        print(f"cronctl: --after: {args.after!r} is not a UTC time YYYY-MM-DDTHH:MM (2000-2199)",
              file=sys.stderr)
        return EXIT_USAGE
    if args.dir is not None or _names_a_schedule(args.expression):
        return _next_of_schedule(args, after)
    expression = parse_expression(args.expression)
    after = _now_minute() if after is None else after
    zone = UTC if args.tz is None else parse_zone(args.tz, "--tz")
    if args.tz is not None and isinstance(expression, IntervalExpression):
        print("cronctl: --tz: an @every interval counts real time and takes no time zone", file=sys.stderr)
        return EXIT_USAGE
    rule = {each.value: each for each in DaylightSaving}.get(args.daylight_saving or DaylightSaving.VIXIE.value)
    if rule is None:
        print(f"cronctl: --daylight-saving: {args.daylight_saving!r} is not Vixie, Literal or Skip", file=sys.stderr)
        return EXIT_USAGE
    for entry in args.exclude:
        try:
            parse_exclusions([entry], "--exclude")
        except FieldError as error:
            print(f"cronctl: --exclude: {error.reason}", file=sys.stderr)
            return EXIT_USAGE
    # Without exclusions and with the default rule, its times are the expression's own.
    merged = merged_expression((args.expression,), tuple(args.exclude), rule)
    times = merged.times(after, zone).next_runs(after, args.count)
    if args.json:
        _print_json([format_time(t) for t in times])
    else:
        _print_table(times, zone)
    if not times:
        print(f"cronctl: {expression.text!r} never fires within 8 years after {format_time(after)}",
              file=sys.stderr)
        return EXIT_NO_ANSWER
    return 0


def _next_of_schedule(args: argparse.Namespace, after: int | None) -> int:
    """``cronctl next NAME --dir D``: from the runner's book, or from the manifest before it ran."""
    from .clock import clock_from_environment
    from .runner import views
    from .runner.firing import both_times

    for flag, value, what, where in (("--tz", args.tz, "zone", "spec.timeZone"),
                                     ("--exclude", args.exclude, "exclusions", "spec.exclude"),
                                     ("--daylight-saving", args.daylight_saving, "daylight-saving rule",
                                      "spec.daylightSaving")):
        if value:
            print(f"cronctl: {flag}: a schedule takes its {what} from its manifest ({where})", file=sys.stderr)
            return EXIT_USAGE
    now = clock_from_environment().minute() if after is None else after
    try:
        found = views.next_times(args.dir or Path("."), args.expression, args.count, now)
    except views.ViewError as error:
        print(f"cronctl: {error.message}", file=sys.stderr)
        return error.exit_code
    notice = found.notice()  # a suspended schedule: the times it fires at if resumed by then
    if args.json:
        _print_json([format_time(t) for t in found.times])
        if notice is not None:
            print(f"cronctl: {notice}", file=sys.stderr)
    else:
        header = found.header()  # several expressions, exclusions, a daylight-saving rule: said first
        if header is not None:
            print(header)
        if notice is not None:
            print(f"{notice}:")
        for t in found.times:
            print(both_times(t, found.spec.options.tz))
    if not found.times:
        print(f"cronctl: {args.expression!r} never fires again", file=sys.stderr)
        return EXIT_NO_ANSWER
    return 0


def _backfill(args: argparse.Namespace) -> int:
    """``cronctl backfill NAME --from T --to T [--dry-run]``: the times listed, or asked of the runner."""
    from .clock import clock_from_environment
    from .runner import views
    from .runner.lock import runner_home

    ends = []
    for flag, text in (("--from", args.start), ("--to", args.end)):
        minute = parse_time(text)
        if minute is None:
            print(f"cronctl: {flag}: {text!r} is not a UTC time YYYY-MM-DDTHH:MM (2000-2199)", file=sys.stderr)
            return EXIT_USAGE
        ends.append(minute)
    now = clock_from_environment().minute()
    if args.file is not None:
        if not args.dry_run:
            print("cronctl: --file previews only (with --dry-run); on a cluster a backfill is asked with "
                  f"kubectl annotate cronschedule {args.name} cronctl.dev/backfill=<from>/<to>", file=sys.stderr)
            return EXIT_USAGE
        return _backfill_preview_of_manifest(args.file, args.name, ends[0], ends[1], now)
    args.dir = runner_home(args.dir)  # a deploy's switched name: the runner reads requests in its home
    try:
        if args.dry_run:
            lines = views.backfill_preview_lines(args.dir, args.name, ends[0], ends[1], now)
        else:
            lines = [views.ask_backfill(args.dir, args.name, ends[0], ends[1], now).message]
    except views.ViewError as error:
        print(f"cronctl: {error.message}", file=sys.stderr)
        return error.exit_code
    print("\n".join(lines))
    return 0


def _backfill_preview_of_manifest(file: str, name: str, start: int, end: int, now: int) -> int:
    """The times an operator would run for ``cronctl.dev/backfill: <start>/<end>`` on the
    CronSchedule ``name`` of a manifest (its anchorTime as the operator has it, if any)."""
    import yaml

    from .manifest import backfill_preview
    from .runner.firing import both_times

    try:
        text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        documents = [doc for doc in yaml.safe_load_all(text) if isinstance(doc, dict)]
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as error:
        print(f"cronctl: {file}: cannot be read: {getattr(error, 'strerror', None) or error}", file=sys.stderr)
        return EXIT_USAGE
    objects = [item for doc in documents  # a List's items (kubectl get -o yaml of several), or the object
               for item in (doc.get("items") or [] if str(doc.get("kind", "")).endswith("List") else [doc])]
    body = next((o for o in objects if (o.get("metadata") or {}).get("name") == name), None)
    if body is None:
        print(f"cronctl: {file}: no CronSchedule named {name!r} in it", file=sys.stderr)
        return EXIT_USAGE
    try:
        spec, times = backfill_preview(body, start, end, now, admitted=False)
    except CronctlError as error:
        print(f"cronctl: {file}: {error.message}", file=sys.stderr)
        return EXIT_USAGE
    zone = spec.options.tz
    for minute in times:
        print(both_times(minute, zone))
    print(f"{len(times)} schedule time{'' if len(times) == 1 else 's'} of {name} from {both_times(start, zone)} "
          f"to {both_times(end, zone)}; the operator runs them oldest first, one at a time, once asked with "
          f"kubectl annotate cronschedule {name} cronctl.dev/backfill={format_time(start)}:00Z/"
          f"{format_time(end)}:00Z (a dry run: nothing was asked)")
    return 0


def _names_a_schedule(text: str) -> bool:
    """A lone word that is not an expression, with a runner's book here: a schedule's name."""
    return len(text.split()) == 1 and not text.startswith("@") and Path("cronctl.json").exists()


def _print_table(times: list[int], zone: AnyZone) -> None:
    for t in times:
        offset = zone.utc_offset(t)
        local = t + offset
        weekday = _WEEKDAYS[(local // MINUTES_PER_DAY + 4) % 7]
        line = f"{format_time(t).replace('T', ' ')} UTC"
        if isinstance(zone, IanaZone):  # the abbreviation and offset of that instant: CET +01:00, CEST +02:00
            sign = "-" if offset < 0 else "+"
            hours, mins = divmod(abs(offset), 60)
            line += (f"   {weekday} {format_time(local).replace('T', ' ')} {zone.abbreviation(t)}"
                     f" ({sign}{hours:02d}:{mins:02d}, {zone.name})")
        elif zone != UTC:
            line += f"   {weekday} {format_time(local).replace('T', ' ')} {zone.name}"
        else:
            line += f"   {weekday}"
        print(line)


def _lint(args: argparse.Namespace) -> int:
    from .clock import clock_from_environment
    from .runner.lint import STDIN, lint

    paths = [Path(file) for file in args.files]
    linted = lint(paths, clock_from_environment().minute(), sys.stdin.read() if STDIN in paths else None,
                  runner=args.runner)
    if args.output == "json":
        print(json.dumps(linted.to_json()))
    else:
        for problem in linted.problems:
            print(problem)
        for warning in linted.warnings:
            print(f"warning: {warning}")
        for note in linted.notes:
            print(f"note: {note}", file=sys.stderr)
        count, warned = len(linted.schedules), len(linted.warnings)
        warnings = f", {warned} warning{'' if warned == 1 else 's'}" if warned else ""
        print(f"{len(linted.problems)} problem{'' if len(linted.problems) == 1 else 's'}{warnings}; {count} "
              f"CronSchedule{'' if count == 1 else 's'} valid", file=sys.stderr)
    return 1 if linted.problems else 0


def _convert(args: argparse.Namespace) -> int:
    """All or nothing: with any problem nothing is printed, so that a redirect never keeps half."""
    from .convert import convert_text, dump

    documents, problems, count = [], [], 0
    for file in args.files:
        try:
            text = sys.stdin.read() if file == "-" else Path(file).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as error:
            problems.append(f"{file}: cannot read it: {getattr(error, 'strerror', None) or error}")
            continue
        converted = convert_text(text, "(standard input)" if file == "-" else file, args.to)
        documents += converted.documents
        problems += converted.problems
        count += converted.count
    if problems:
        for problem in problems:
            print(problem, file=sys.stderr)
        print(f"nothing converted: {len(problems)} problem{'' if len(problems) == 1 else 's'}", file=sys.stderr)
        return 1
    sys.stdout.write(dump(documents))
    source = "CronJob" if args.to == "CronSchedule" else "CronSchedule"
    print(f"{count} {source}{'' if count == 1 else 's'} converted to {args.to}", file=sys.stderr)
    return 0


def _fleet(args: argparse.Namespace) -> int:
    from .fleet import preview_command

    return preview_command(args)
