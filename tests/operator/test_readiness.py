"""/readyz: 503 until every watch has listed its objects, then 200; it says whether the replica
leads and fails for neither answer (a follower is ready: it stands by)."""

from __future__ import annotations

import json

from cronctl.operator import health
from cronctl.operator.metrics import Metrics, readiness_app

LISTED, HEARD = 100.0, 101.0


def test_ready_once_every_watch_listed_leading_or_not() -> None:
    jobs = health.WatchSeen("Jobs of team-a", LISTED, HEARD)
    schedules = health.WatchSeen("CronSchedules of team-a", None, None)
    assert health.readiness([jobs, schedules], leading=True) == (False, {
        "ready": False, "synced": False, "leading": True, "waitingFor": ["CronSchedules of team-a"]})
    listed = health.WatchSeen("CronSchedules of team-a", LISTED, None)
    assert health.readiness([jobs, listed], leading=False) == (True, {
        "ready": True, "synced": True, "leading": False, "waitingFor": []})


def call(app: object, path: str) -> tuple[str, dict[str, object] | bytes]:
    """One WSGI request: (its status line, its JSON answer, or the fallback's body)."""
    said: list[str] = []
    body = b"".join(app({"PATH_INFO": path}, lambda status, headers: said.append(status)))  # type: ignore[operator]
    return said[0], json.loads(body) if path == "/readyz" else body


def test_readyz_answers_503_until_told_then_as_the_operator_says_and_passes_other_paths_on() -> None:
    """serve() puts this app in front of /metrics (not called here: it turns _created series off
    for the whole process)."""
    metrics = Metrics()

    def fallback(environ: object, start_response: object) -> list[bytes]:
        start_response("200 OK", [])  # type: ignore[operator]
        return [b"the metrics"]

    app = readiness_app(metrics, fallback)
    status, body = call(app, "/readyz")
    assert (status, body["ready"]) == ("503 Service Unavailable", False)  # type: ignore[index]
    state = {"listed": False}
    metrics.use_readiness(lambda: health.readiness(
        [health.WatchSeen("Jobs", LISTED if state["listed"] else None, None)], leading=False))
    assert call(app, "/readyz")[0] == "503 Service Unavailable"
    state["listed"] = True
    assert call(app, "/readyz") == ("200 OK", {"ready": True, "synced": True, "leading": False, "waitingFor": []})
    assert call(app, "/metrics") == ("200 OK", b"the metrics")
