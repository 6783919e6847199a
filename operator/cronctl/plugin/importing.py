"""``kubectl cronctl import``: a namespace's CronJobs become CronSchedules, no minute fired twice or lost.

For each CronJob, in this order (each step safe to run again):

1. its CronSchedule is worked out (``convert.to_cronschedule``, every field
   mapped); what cannot be mapped is refused naming the field, and nothing
   is changed for that CronJob;
2. the CronJob is suspended, so that its controller starts no more Jobs;
3. the CronJob and its Jobs are read again: the CronSchedule's schedule times
   start after the last time the CronJob fired (``status.lastScheduleTime``,
   or its newest Job's scheduled time, which a Job created just before the
   suspension shows before the status does), given to the operator in the
   ``cronctl.dev/anchor`` annotation; a CronJob that never fired, after its
   creation. A time the CronJob was still starting when it was suspended is
   not started twice either: cronctl's Job for it has the same name as the
   CronJob's (``<name>-<minutes since 1970>``), and the API server refuses
   the second;
4. the CronSchedule is created (one that exists already is left as it is);
5. the CronJob's active Jobs are adopted: owned by the CronSchedule, with the
   run number, nominal time and reason the operator reads, so that they are
   the schedule's active runs for Forbid and Replace and their ends land in
   its history. Its finished Jobs stay in the CronJob's own history.

A CronJob suspended before the import gives a suspended CronSchedule.
``undo`` goes back: the CronSchedule is suspended and the CronJob resumed
from the CronSchedule's last schedule time (written into the CronJob's
status, which needs the ``cronjobs/status`` patch right).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

from ..api import (ADOPTING_ANNOTATION, ANCHOR_ANNOTATION, REASON_ANNOTATION, RUN_LABEL, SCHEDULE_LABEL,
                   SCHEDULED_ANNOTATION, STARTED_ANNOTATION)
from ..convert import ConvertError, to_cronschedule
from ..manifest import API_VERSION, GROUP, KIND, PLURAL, VERSION
from .cluster import CONNECT_SECONDS, READ_SECONDS, NamespaceClient, PluginError

IMPORTED_LABEL = "cronctl.dev/imported-from"
CRONJOB_SCHEDULED = "batch.kubernetes.io/cronjob-scheduled-timestamp"
TIMEOUT = (CONNECT_SECONDS, READ_SECONDS)


# -- the rules: pure ------------------------------------------------------------------------------

def _minute(text: Any) -> dt.datetime | None:
    if not isinstance(text, str):
        return None
    try:
        when = dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return when.astimezone(dt.timezone.utc).replace(second=0, microsecond=0)


def rfc3339(when: dt.datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def owned_jobs(cronjob: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    uid = cronjob["metadata"].get("uid")
    return [job for job in jobs if not job["metadata"].get("deletionTimestamp") and any(
        ref.get("controller") and ref.get("uid") == uid for ref in job["metadata"].get("ownerReferences") or [])]


def scheduled_time(job: Mapping[str, Any]) -> dt.datetime | None:
    """The nominal time of a CronJob's Job: its annotation, else its name's minutes since 1970."""
    stamp = _minute((job["metadata"].get("annotations") or {}).get(CRONJOB_SCHEDULED))
    if stamp is not None:
        return stamp
    suffix = str(job["metadata"]["name"]).rsplit("-", 1)[-1]
    return dt.datetime.fromtimestamp(int(suffix) * 60, dt.timezone.utc) if suffix.isdigit() else None


def anchor_of(cronjob: Mapping[str, Any], jobs: Iterable[Mapping[str, Any]]) -> str:
    """After what time the CronSchedule's times start: the last one the CronJob fired, else its creation."""
    times = [t for t in [_minute((cronjob.get("status") or {}).get("lastScheduleTime")),
                         *(scheduled_time(job) for job in owned_jobs(cronjob, jobs))] if t is not None]
    if times:
        return rfc3339(max(times))
    created = _minute(cronjob["metadata"].get("creationTimestamp"))
    return rfc3339(created if created is not None else dt.datetime.now(dt.timezone.utc).replace(second=0,
                                                                                                microsecond=0))


def is_active(job: Mapping[str, Any]) -> bool:
    conditions = (job.get("status") or {}).get("conditions") or []
    return not any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in conditions)


def schedule_of(cronjob: Mapping[str, Any], anchor: str) -> dict[str, Any]:
    """The CronSchedule of a CronJob, its times after ``anchor``; raises ConvertError."""
    body = to_cronschedule(cronjob)
    metadata = body["metadata"]
    metadata.setdefault("annotations", {})[ANCHOR_ANNOTATION] = anchor
    metadata.setdefault("labels", {})[IMPORTED_LABEL] = "cronjob"
    return body


def adoption(job: Mapping[str, Any], schedule: Mapping[str, Any], number: int) -> dict[str, Any] | None:
    """The merge patch that makes a CronJob's active Job run ``number`` of the CronSchedule."""
    nominal = scheduled_time(job)
    if nominal is None:
        return None
    started = _minute(job["metadata"].get("creationTimestamp")) or nominal
    metadata = schedule["metadata"]
    return {"metadata": {
        "ownerReferences": [{"apiVersion": API_VERSION, "kind": KIND, "name": metadata["name"],
                             "uid": metadata["uid"], "controller": True, "blockOwnerDeletion": True}],
        "labels": {SCHEDULE_LABEL: metadata["name"], RUN_LABEL: str(number)},
        "annotations": {SCHEDULED_ANNOTATION: rfc3339(nominal), STARTED_ANNOTATION: rfc3339(started),
                        REASON_ANNOTATION: "scheduled"}}}


# -- the calls ------------------------------------------------------------------------------------

@dataclass
class Outcome:
    lines: list[str]
    problems: int = 0
    manifests: list[dict[str, Any]] | None = None  # --dry-run: what would be created


class Importer:
    """The CronJobs of ``cluster``'s namespace, imported one by one (see the module docstring)."""

    def __init__(self, cluster: NamespaceClient, namespace: str | None = None) -> None:
        from kubernetes import client

        self.namespace = namespace or cluster.namespace
        # -A: the CronSchedules' requests (create's fallback, the adopting mark, undo) in this namespace too
        self.cluster = (cluster if self.namespace == cluster.namespace
                        else NamespaceClient(cluster.api, self.namespace, cluster.host))
        self.batch = client.BatchV1Api(cluster.api)

    def namespaces_with_cronjobs(self, selector: str | None) -> dict[str, list[str]]:
        """``-A``: the CronJobs of every namespace, by namespace."""
        listed = self.cluster._call("list", "cronjobs.batch", None, lambda: self.batch.list_cron_job_for_all_namespaces(
            label_selector=selector or "", _request_timeout=TIMEOUT))
        found: dict[str, list[str]] = {}
        for item in listed.items:
            found.setdefault(item.metadata.namespace, []).append(item.metadata.name)
        return found

    def cronjobs(self, names: list[str], selector: str | None) -> list[dict[str, Any]]:
        if names:
            return [self._get(name) for name in names]
        listed = self.cluster._call("list", "cronjobs.batch", None, lambda: self.batch.list_namespaced_cron_job(
            self.namespace, label_selector=selector or "", _request_timeout=TIMEOUT))
        return [self._plain(item) for item in listed.items]

    def run(self, names: list[str], selector: str | None, dry_run: bool) -> Outcome:
        outcome = Outcome([], manifests=[] if dry_run else None)
        for cronjob in self.cronjobs(names, selector):
            name = cronjob["metadata"]["name"]
            try:
                planned = schedule_of(cronjob, anchor_of(cronjob, self._jobs()))
            except ConvertError as error:
                outcome.problems += 1
                outcome.lines.append(f"cronjob {self.namespace}/{name}: not imported, nothing changed: {error}")
                continue
            if outcome.manifests is not None:
                outcome.manifests.append(planned)
                continue
            outcome.lines.append(self._import(cronjob, planned))
        return outcome

    def _import(self, cronjob: dict[str, Any], planned: dict[str, Any]) -> str:
        name = cronjob["metadata"]["name"]
        if not (cronjob.get("spec") or {}).get("suspend"):
            self._patch_cronjob(name, {"spec": {"suspend": True}})
        cronjob = self._get(name)  # after the suspension: what it fired, and its Jobs, can no longer grow
        jobs = self._jobs()
        body = schedule_of(cronjob, anchor_of(cronjob, jobs))
        body["spec"]["suspend"] = bool((planned.get("spec") or {}).get("suspend"))  # as it was before the import
        active = sorted((job for job in owned_jobs(cronjob, jobs) if is_active(job) and scheduled_time(job)),
                        key=lambda job: scheduled_time(job) or dt.datetime.min.replace(tzinfo=dt.timezone.utc))
        if active:  # the operator decides nothing for it until they are its own (``operator.adopting``)
            body["metadata"]["annotations"][ADOPTING_ANNOTATION] = rfc3339(dt.datetime.now(dt.timezone.utc))
        schedule, made = self._create_schedule(body)
        for number, job in enumerate(active, start=1):
            self._patch_job(job["metadata"]["name"], adoption(job, schedule, number))  # type: ignore[arg-type]
        if ADOPTING_ANNOTATION in (schedule["metadata"].get("annotations") or {}):  # also one a stopped import left
            self.cluster.patch(name, {"metadata": {"annotations": {ADOPTING_ANNOTATION: None}}})
        adopted = len(active)
        anchor = body["metadata"]["annotations"][ANCHOR_ANNOTATION]
        return (f"cronjob {self.namespace}/{name} suspended; cronschedule {name} "
                f"{'created' if made else 'was there already'}, firing the times after {anchor}"
                + (f"; {adopted} active Job{'' if adopted == 1 else 's'} adopted" if adopted else ""))

    def imported(self, selector: str | None) -> list[str]:
        """The CronSchedules an import made here (``--undo --all``), with ``selector`` besides."""
        labels = f"{IMPORTED_LABEL}=cronjob" + (f",{selector}" if selector else "")
        custom = self.cluster.custom
        listed = self.cluster._call("list", f"{PLURAL}.{GROUP}", None, lambda: custom.list_namespaced_custom_object(
            GROUP, VERSION, self.namespace, PLURAL, label_selector=labels, _request_timeout=TIMEOUT))
        return sorted(item["metadata"]["name"] for item in listed.get("items") or [])

    def undo(self, name: str) -> str:
        """The CronSchedule suspended, the CronJob resumed from its last schedule time."""
        schedule = self.cluster.patch(name, {"spec": {"suspend": True, "suspendReason": f"exported back to "
                                                                                         f"CronJob {name}"}})
        last = (schedule.get("status") or {}).get("lastScheduleTime")
        if last is not None:
            self.cluster._call("patch", "cronjobs/status", name, lambda: self.batch.patch_namespaced_cron_job_status(
                name, self.namespace, {"status": {"lastScheduleTime": last}},
                _content_type="application/merge-patch+json", _request_timeout=TIMEOUT))
        self._patch_cronjob(name, {"spec": {"suspend": False}})
        since = last or "its own last schedule time"
        return (f"cronschedule {self.namespace}/{name} suspended; cronjob {name} resumed from {since}: delete the "
                "CronSchedule once its runs have ended (deleting it deletes its Jobs)")

    # -- requests --

    def _get(self, name: str) -> dict[str, Any]:
        read = self.batch.read_namespaced_cron_job
        return self._plain(self.cluster._call("get", "cronjobs.batch", name, lambda: read(
            name, self.namespace, _request_timeout=TIMEOUT)))

    def _jobs(self) -> list[dict[str, Any]]:
        listed = self.cluster._call("list", "jobs.batch", None, lambda: self.batch.list_namespaced_job(
            self.namespace, _request_timeout=TIMEOUT))
        return [self._plain(item) for item in listed.items]

    def _patch_cronjob(self, name: str, patch: dict[str, Any]) -> None:
        self.cluster._call("patch", "cronjobs.batch", name, lambda: self.batch.patch_namespaced_cron_job(
            name, self.namespace, patch, _content_type="application/merge-patch+json", _request_timeout=TIMEOUT))

    def _patch_job(self, name: str, patch: dict[str, Any]) -> None:
        self.cluster._call("patch", "jobs.batch", name, lambda: self.batch.patch_namespaced_job(
            name, self.namespace, patch, _content_type="application/merge-patch+json",  # owners replaced, not added
            _request_timeout=TIMEOUT))

    def _create_schedule(self, body: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        from kubernetes.client.exceptions import ApiException

        try:
            made = self.cluster.custom.create_namespaced_custom_object(GROUP, VERSION, self.namespace, PLURAL, body,
                                                                       _request_timeout=TIMEOUT)
            return made, True
        except ApiException as error:
            if error.status != 409:
                raise PluginError(self.cluster._refusal(error, "create", f"{PLURAL}.{GROUP}",
                                                        body["metadata"]["name"])) from None
        return self.cluster.get(body["metadata"]["name"]), False

    def _plain(self, item: Any) -> dict[str, Any]:
        plain: dict[str, Any] = self.cluster.api.sanitize_for_serialization(item)
        return plain


__all__ = ["Importer", "Outcome", "adoption", "anchor_of", "schedule_of"]
