"""``kubectl cronctl COMMAND NAME``: the plugin's command line.

Installed by pip as the console script ``kubectl-cronctl``, which kubectl
runs for ``kubectl cronctl ...``. The flags kubectl users expect (``-n``,
``--context``, ``--kubeconfig``) go before or after the command. A problem is
one ``kubectl-cronctl:`` line on stderr: exit 1 for what the cluster answered
(NotFound, Forbidden, unreachable), 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import signal
import sys
from typing import Any, Callable, NoReturn, Sequence

import yaml

from ..about import SHELLS, completion_script, version_line
from ..api import BACKFILL_ANNOTATION, RESUME_ANNOTATION, TRIGGER_ANNOTATION
from .cluster import NamespaceClient, PluginError, Target, connect
from .launches import in_fleet_mode, with_launches
from .views import both_times, describe_lines, history_lines, next_lines, where

PROG = "kubectl-cronctl"
EXIT_USAGE = 2
EXIT_INTERRUPTED = 128 + signal.SIGINT
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE

USAGE = "kubectl cronctl COMMAND NAME [flags]"
DESCRIPTION = "Work with the cronctl operator's CronSchedules (cronctl.dev/v1) on a cluster."
EXAMPLES = """\
Examples:
  # Ask for one manual run now
  kubectl cronctl trigger nightly-report -n team-a

  # The next fire times, in UTC and the schedule's zone
  kubectl cronctl next nightly-report

  # The finished runs; all of it as JSON
  kubectl cronctl history nightly-report -o json

  # Pause with a reason, and go on again
  kubectl cronctl suspend nightly-report --reason "db migration, ask #ops"
  kubectl cronctl resume nightly-report

  # Run the schedule times of a past range (list them first with --dry-run)
  kubectl cronctl backfill nightly-report --from 2024-02-20T00:00:00Z --to 2024-02-26T23:59:00Z --dry-run

  # Spec, next times, runs, conditions and Events in one view
  kubectl cronctl describe nightly-report --context prod
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise PluginError(f"{message} (see kubectl cronctl --help)", EXIT_USAGE)


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        code = int(args.command(args))
        sys.stdout.flush()  # a reader that went away shows here, not in the interpreter's last flush
        return code
    except PluginError as error:
        print(f"{PROG}: {error.message}", file=sys.stderr)
        return error.exit_code
    except BrokenPipeError:
        devnull = os.open(os.devnull, os.O_WRONLY)  # as cronctl's CLI: the flush at exit cannot fail again
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="kubectl cronctl", usage=USAGE, description=DESCRIPTION, epilog=EXAMPLES,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=version_line("kubectl-cronctl"))
    _target_flags(parser, None)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", required=True, parser_class=_Parser)

    def command(name: str, run: Callable[[argparse.Namespace], int], summary: str,
                output: bool = False) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=summary, description=summary,
                                  usage=f"kubectl cronctl {name} NAME [flags]")
        sub.add_argument("name", metavar="NAME", help="the CronSchedule")
        _target_flags(sub, argparse.SUPPRESS)  # given after the command, they win; else the top's defaults
        if output:
            sub.add_argument("-o", "--output", choices=("json", "yaml"),
                             help="print the underlying status (describe: the object and its Events)")
        sub.set_defaults(command=run)
        return sub

    command("trigger", _trigger, f"Ask the operator for one manual run now ({TRIGGER_ANNOTATION}).")
    command("next", _next, "The next fire times, from status.nextScheduleTimes.", output=True)
    command("history", _history, "The finished runs, from status.history, oldest first.", output=True)
    suspend = command("suspend", _suspend, "Pause the schedule (spec.suspend), saying why.")
    suspend.add_argument("--reason", help="free text, up to 256 characters, shown by kubectl get "
                                          "(without it, an earlier reason is removed)")
    command("resume", _resume, "Fire again (spec.suspend false, spec.suspendReason removed, a pause on "
                               "failures ended).")
    backfill = command("backfill", _backfill, f"Run every schedule time of a past range ({BACKFILL_ANNOTATION}).")
    backfill.add_argument("--from", dest="start", required=True, metavar="T",
                          help="UTC, RFC 3339 (2024-02-20T00:00:00Z) or YYYY-MM-DDTHH:MM; included")
    backfill.add_argument("--to", dest="end", required=True, metavar="T", help="as --from; included")
    backfill.add_argument("--dry-run", action="store_true",
                          help="list the times the operator would run, asking nothing")
    command("describe", _describe, "Spec, next times, active and last runs, conditions and recent Events.",
            output=True)
    imported = commands.add_parser("import", help="Move CronJobs to cronctl: each suspended, its CronSchedule "
                                                   "created from its last schedule time, its active Jobs adopted.",
                                   usage="kubectl cronctl import (cronjob/NAME... | --all) [flags]")
    imported.add_argument("targets", nargs="*", metavar="cronjob/NAME", help="the CronJobs (or their names)")
    imported.add_argument("--all", action="store_true", help="every CronJob of the namespace")
    imported.add_argument("-A", "--all-namespaces", action="store_true",
                          help="every CronJob of every namespace (with -l: those with these labels)")
    imported.add_argument("-l", "--selector", help="with --all or -A: only the CronJobs with these labels")
    imported.add_argument("--dry-run", action="store_true", help="change nothing; say what would be created")
    imported.add_argument("-o", "--output", choices=("yaml",), help="with --dry-run: print the CronSchedules")
    imported.add_argument("--undo", action="store_true",
                          help="go back: suspend the CronSchedules and resume their CronJobs from the "
                               "CronSchedules' last schedule times")
    _target_flags(imported, argparse.SUPPRESS)
    imported.set_defaults(command=_import)
    completion = commands.add_parser("completion", help="Print the shell completion script of kubectl-cronctl.",
                                     usage="kubectl cronctl completion SHELL")
    completion.add_argument("shell", choices=SHELLS)
    completion.set_defaults(command=_completion)
    return parser


def _completion(args: argparse.Namespace) -> int:
    print(completion_script(_parser(), "kubectl-cronctl", args.shell))
    return 0


def _target_flags(parser: argparse.ArgumentParser, default: Any) -> None:
    parser.add_argument("-n", "--namespace", default=default,
                        help="the namespace (default: the kubeconfig context's)")
    parser.add_argument("--context", default=default, help="the kubeconfig context to use")
    parser.add_argument("--kubeconfig", default=default, help="the kubeconfig file (default: $KUBECONFIG)")


def _cluster(args: argparse.Namespace) -> NamespaceClient:
    return connect(Target(args.kubeconfig, args.context, args.namespace))


# -- the commands ------------------------------------------------------------------------------


def _trigger(args: argparse.Namespace) -> int:
    value = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # new each time: one run each
    body = _cluster(args).patch(args.name, {"metadata": {"annotations": {TRIGGER_ANNOTATION: value}}})
    print(f"cronschedule {where(body)} triggered ({TRIGGER_ANNOTATION}={value}): the operator launches one "
          "manual run for it (reason: manual), even while the schedule is suspended")
    return 0


def _seen(cluster: NamespaceClient, name: str) -> dict[str, Any]:
    """The schedule, its status completed from its Jobs where fleet mode leaves launches off it
    (``launches``)."""
    body = cluster.get(name)
    if not in_fleet_mode(body):
        return body
    now_minute = int(dt.datetime.now(dt.timezone.utc).timestamp()) // 60
    return with_launches(body, cluster.jobs(name), now_minute)


def _next(args: argparse.Namespace) -> int:
    body = _seen(_cluster(args), args.name)
    if args.output:
        return _dump((body.get("status") or {}).get("nextScheduleTimes") or [], args.output)
    print("\n".join(next_lines(body)))
    return 0


def _history(args: argparse.Namespace) -> int:
    body = _seen(_cluster(args), args.name)
    if args.output:
        return _dump((body.get("status") or {}).get("history") or [], args.output)
    print("\n".join(history_lines(body)))
    return 0


def _suspend(args: argparse.Namespace) -> int:
    body = _cluster(args).patch(args.name, {"spec": {"suspend": True, "suspendReason": args.reason or None}})
    print(f"cronschedule {where(body)} suspended" + (f" ({args.reason})" if args.reason else "")
          + ": no scheduled firing until kubectl cronctl resume")
    return 0


def _resume(args: argparse.Namespace) -> int:
    """Ends a suspension (the spec's) and a pause on failures (the status's, through the annotation
    the operator answers): one patch does both."""
    value = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    body = _cluster(args).patch(args.name, {"metadata": {"annotations": {RESUME_ANNOTATION: value}},
                                            "spec": {"suspend": False, "suspendReason": None}})
    print(f"cronschedule {where(body)} resumed: the next fire times count from now "
          "(missed ones are not caught up)")
    return 0


def _import(args: argparse.Namespace) -> int:
    from .importing import Importer

    names = [target.split("/", 1)[1] if target.lower().startswith(("cronjob/", "cronjobs/", "cronjob.batch/"))
             else target for target in args.targets]
    if [bool(names), bool(args.all), bool(args.all_namespaces)].count(True) != 1:
        raise PluginError("name the CronJobs (cronjob/NAME ...), or give --all or -A: one of them",
                          exit_code=EXIT_USAGE)
    if args.selector and names:
        raise PluginError("--selector goes with --all or -A", exit_code=EXIT_USAGE)
    cluster = _cluster(args)
    if args.all_namespaces:
        found = Importer(cluster).namespaces_with_cronjobs(args.selector)
        work = [(Importer(cluster, namespace), listed) for namespace, listed in sorted(found.items())]
    else:
        work = [(Importer(cluster), names)]
    problems = 0
    for importer, listed in work:
        problems += _import_in(importer, listed, args)
    return 1 if problems else 0


def _import_in(importer: Any, names: list[str], args: argparse.Namespace) -> int:
    """One namespace's import (or undo); the count of CronJobs refused."""
    if args.undo:
        for name in names or importer.imported(args.selector):
            print(importer.undo(name))
        return 0
    outcome = importer.run(names, args.selector, args.dry_run or args.output is not None)
    for line in outcome.lines:
        print(line, file=sys.stderr if "not imported" in line else sys.stdout)
    if outcome.manifests is not None:
        if args.output == "yaml":
            print(yaml.safe_dump_all(outcome.manifests, sort_keys=False, explicit_start=True), end="")
        else:
            for body in outcome.manifests:
                print(f"cronschedule {body['metadata'].get('namespace', importer.namespace)}/"
                      f"{body['metadata']['name']} would be created, firing the times after "
                      f"{body['metadata']['annotations']['cronctl.dev/anchor']} (dry run: nothing changed)")
    return outcome.problems


def _backfill(args: argparse.Namespace) -> int:
    start, end = _utc_minute("--from", args.start), _utc_minute("--to", args.end)
    cluster = _cluster(args)
    if args.dry_run:
        return _backfill_preview(cluster.get(args.name), start, end)
    value = f"{_rfc3339(start)}/{_rfc3339(end)}"
    body = cluster.patch(args.name, {"metadata": {"annotations": {BACKFILL_ANNOTATION: value}}})
    print(f"cronschedule {where(body)}: backfill asked ({BACKFILL_ANNOTATION}={value}); the operator runs its "
          f"schedule times oldest first, one at a time, and says how far it got in status.backfill "
          f"(kubectl cronctl describe {args.name})")
    return 0


def _backfill_preview(body: dict[str, Any], start: int, end: int) -> int:
    """The times the operator would run, decided by the core it uses, from the anchor it recorded."""
    from ..clock import clock_from_environment
    from ..core.errors import CronctlError
    from ..manifest import backfill_preview

    name = body["metadata"]["name"]
    try:
        spec, times = backfill_preview(body, start, end, clock_from_environment().minute())
    except CronctlError as error:
        raise PluginError(f"cronschedule {where(body)}: {error.message}") from None
    zone = spec.options.tz
    for minute in times:
        print(both_times(minute, zone))
    print(f"{len(times)} schedule time{'' if len(times) == 1 else 's'} of {where(body)} from "
          f"{both_times(start, zone)} to {both_times(end, zone)}; the operator runs them oldest first, one at a "
          f"time, once asked with kubectl cronctl backfill {name} --from {_rfc3339(start)} --to {_rfc3339(end)} "
          "(a dry run: nothing was asked)")
    return 0


def _describe(args: argparse.Namespace) -> int:
    cluster = _cluster(args)
    body = _seen(cluster, args.name)
    try:
        events: list[dict[str, Any]] | None = cluster.events(args.name)
        unlisted = None
    except PluginError as error:  # as kubectl describe: the object is still worth showing
        events, unlisted = None, error.message
    if args.output:
        return _dump({"cronSchedule": body, "events": events}, args.output)
    print("\n".join(describe_lines(body, events or [], unlisted)))
    return 0


# -- helpers ----------------------------------------------------------------------------------


def _dump(value: object, output: str) -> int:
    if output == "json":
        print(json.dumps(value, indent=2, ensure_ascii=False))
    else:
        import yaml

        sys.stdout.write(yaml.safe_dump(value, sort_keys=False, allow_unicode=True))
    return 0


def _utc_minute(flag: str, text: str) -> int:
    """An RFC 3339 time (any offset, read as UTC) or YYYY-MM-DDTHH:MM (UTC), on a whole minute."""
    from ..core.times import parse_time

    minute = parse_time(text)
    if minute is not None:
        return minute
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        parsed = None
    if parsed is None or parsed.tzinfo is None or "T" not in text.upper():
        raise PluginError(f"{flag}: {text!r} is not a UTC time such as 2024-02-20T00:00:00Z or "
                          "2024-02-20T00:00", EXIT_USAGE)
    utc = parsed.astimezone(dt.timezone.utc)
    minute = parse_time(utc.strftime("%Y-%m-%dT%H:%M"))
    if utc.second or utc.microsecond or minute is None:
        raise PluginError(f"{flag}: {text!r} is not a whole minute of 2000-2199", EXIT_USAGE)
    return minute


def _rfc3339(minute: int) -> str:
    from ..core.times import format_time

    return f"{format_time(minute)}:00Z"
