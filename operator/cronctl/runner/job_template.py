"""A CronSchedule's Job template judged as the API server judges the Job the operator makes of it.

The CRD keeps ``spec.jobTemplate.spec`` as written (its schema preserves unknown fields), so an
API server admits a CronSchedule whose Jobs it will refuse at every firing. ``cronctl lint``
checks here, before that, the few rules of batch/v1 Job and core/v1 Pod validation that a
template written by hand breaks: the Pod's ``restartPolicy`` (a Job's is ``OnFailure`` or
``Never``; none given defaults to ``Always``, which a Job refuses), and each container's
``name`` (a DNS label, unique), ``image``, ``command`` and ``args`` (lists of strings) and
``env`` (a name, and a ``value`` or a ``valueFrom``, not both). What a cluster takes and the
single-node runner does not (no ``command``: the image's entrypoint; ``valueFrom`` secrets) is
not refused here: that is :mod:`.definitions`' rule, for ``cronctl lint --runner``.

Every problem is returned, not the first: ``(field, reason)``, the field as its path in the object.
"""

from __future__ import annotations

import re
from typing import Any

TEMPLATE = "spec.jobTemplate.spec.template"
RESTART_POLICIES = ("OnFailure", "Never")
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")

Problems = list[tuple[str, str]]


def template_problems(spec: Any) -> Problems:
    """What the API server refuses in the Jobs made of ``spec`` (a CronSchedule's spec); none
    where the CRD's schema already refuses the way to the template (the schema says so)."""
    try:
        template = spec["jobTemplate"]["spec"]["template"]
    except (KeyError, TypeError):
        return []
    if not isinstance(template, dict):
        return []
    pod = template.get("spec")
    if not isinstance(pod, dict):
        return [(f"{TEMPLATE}.spec", "is required" if pod is None else "must be a mapping")]
    problems = _restart_policy(pod.get("restartPolicy"))
    containers = pod.get("containers")
    where = f"{TEMPLATE}.spec.containers"
    if not isinstance(containers, list) or not containers:
        return problems + [(where, "is required: a list of at least one container" if containers is None
                            else "must be a list of at least one container")]
    names: set[str] = set()
    for index, container in enumerate(containers):
        problems += _container(container, f"{where}[{index}]", names)
    return problems


def _restart_policy(policy: Any) -> Problems:
    if policy in RESTART_POLICIES:
        return []
    given = "none given (a Pod's default, Always)" if policy is None else repr(policy)
    return [(f"{TEMPLATE}.spec.restartPolicy", f"{given}: a Job's Pods restart OnFailure or Never")]


def _container(container: Any, where: str, names: set[str]) -> Problems:
    if not isinstance(container, dict):
        return [(where, "must be a mapping")]
    problems: Problems = []
    name = container.get("name")
    if not isinstance(name, str) or not name:
        problems.append((f"{where}.name", "is required"))
    elif len(name) > 63 or not _DNS_LABEL.fullmatch(name):
        problems.append((f"{where}.name", f"{name!r} is not a DNS label (at most 63 lowercase letters, digits and "
                                          "'-', beginning and ending with a letter or digit)"))
    elif name in names:
        problems.append((f"{where}.name", f"{name!r}: another container has this name"))
    else:
        names.add(name)
    image = container.get("image")
    if not isinstance(image, str) or not image.strip():
        problems.append((f"{where}.image", "is required" if image is None else f"{image!r} is not an image name"))
    for key in ("command", "args"):
        problems += _strings(container.get(key), f"{where}.{key}")
    return problems + _env(container.get("env"), f"{where}.env")


def _strings(value: Any, where: str) -> Problems:
    if value is None:
        return []
    if not isinstance(value, list):
        return [(where, "must be a list of strings")]
    return [(f"{where}[{index}]", f"{item!r} is not a string (quote it)")
            for index, item in enumerate(value) if not isinstance(item, str)]


def _env(value: Any, where: str) -> Problems:
    if value is None:
        return []
    if not isinstance(value, list):
        return [(where, "must be a list")]
    problems: Problems = []
    for index, entry in enumerate(value):
        here = f"{where}[{index}]"
        if not isinstance(entry, dict):
            problems.append((here, "must be a mapping"))
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name or "=" in name:
            problems.append((f"{here}.name", "is required" if name is None else f"{name!r} is not a variable name"))
        if "value" in entry and not isinstance(entry["value"], str):
            problems.append((f"{here}.value", f"{entry['value']!r} is not a string (quote it)"))
        if "valueFrom" in entry and not isinstance(entry["valueFrom"], dict):
            problems.append((f"{here}.valueFrom", "must be a mapping (secretKeyRef, configMapKeyRef, fieldRef...)"))
        elif entry.get("value") and "valueFrom" in entry:
            problems.append((f"{here}.valueFrom", "may not be given with a value"))
    return problems
