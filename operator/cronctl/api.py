"""The names cronctl's API has on a cluster: its resources' group, version, kinds and plurals, the
labels and annotations the operator writes and reads, and the default name of its Lease.

A leaf: it imports nothing, so the operator's Kubernetes layer (``operator.kube``) can name
what it asks for without reaching the scheduling core (pyproject.toml's import-linter
contract). ``cronctl.manifest`` says what the resources hold; ``operator.resource`` how
their times are written.
"""

GROUP = "cronctl.dev"
VERSION = "v1"
PLURAL = "cronschedules"
KIND = "CronSchedule"
API_VERSION = f"{GROUP}/{VERSION}"
POOL_KIND, POOL_PLURAL = "CronPool", "cronpools"

SCHEDULE_LABEL = "cronctl.dev/schedule"
# On a CronSchedule: the operator shard it belongs to (none: the default shard); a Job carries its
# schedule's, so that each shard's watch of Jobs is filtered by the API server (``shard``).
SHARD_LABEL = "cronctl.dev/shard"
RUN_LABEL = "cronctl.dev/run"
ATTEMPT_LABEL = "cronctl.dev/attempt"
# On a Job of a pooled schedule (spec.pool): the CronPool whose worker it waits for, suspended,
# or runs on. The pool's look resumes it.
POOL_LABEL = "cronctl.dev/pool"
SCHEDULED_ANNOTATION = "cronctl.dev/scheduled-time"
STARTED_ANNOTATION = "cronctl.dev/started-time"
TRIGGER_ANNOTATION = "cronctl.dev/trigger"  # on a CronSchedule: any new value asks for one manual run
# On a CronSchedule at first sight: the time its schedule times start after, instead of the
# moment the operator first sees it (kubectl cronctl import: the CronJob's last schedule time).
ANCHOR_ANNOTATION = "cronctl.dev/anchor"
# On a CronSchedule an import creates beside a CronJob's active Jobs: the time (RFC 3339, the
# import's clock) it began adopting them. The operator decides nothing for the schedule until the
# import removes it, or ADOPTING_SECONDS after that time (an import that stopped half-way).
ADOPTING_ANNOTATION = "cronctl.dev/adopting"
ADOPTING_SECONDS = 60
RESUME_ANNOTATION = "cronctl.dev/resume"  # on a CronSchedule: any new value ends a pause on failures
# On a CronSchedule: "<from>/<to>" (UTC times) asks once for a backfill of that range (core.backfill).
BACKFILL_ANNOTATION = "cronctl.dev/backfill"
REASON_ANNOTATION = "cronctl.dev/reason"  # on a Job: scheduled, catch-up, manual or backfill
REASON_LABEL = "cronctl.dev/reason"  # on a Job run by hand (manual or backfill): its reason, to select by
# On a Job created suspended: the second its jitter lets it start (the operator then resumes it).
START_AT_ANNOTATION = "cronctl.dev/start-at"
# On a Job: the runs (their names, comma-separated) it was launched to replace (Replace).
REPLACES_ANNOTATION = "cronctl.dev/replaces"
# On a Job: the overflow it was launched past, as JSON {"missed": M, "limit": L, "dropped": D}.
OVERFLOW_ANNOTATION = "cronctl.dev/overflow"
# On a manual run's Job, TRIGGER_ANNOTATION holds the trigger value it answers.
# On a Job created ahead of its minute, suspended (staged): "true" until its release, which
# removes it and sets RUN_LABEL; a staged Job is not a run yet.
STAGED_LABEL = "cronctl.dev/staged"
# On a staged Job: a digest of what it was staged with (template, deadline, retries, start),
# so that an edit of the schedule before the minute is seen, and the Job staged again.
STAGED_DIGEST_ANNOTATION = "cronctl.dev/staged-digest"

DEFAULT_LEASE_NAME = "cronctl-operator"  # the operator's Lease; a shard's is named after it (``Shard.lease_name``)
