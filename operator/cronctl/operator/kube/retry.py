"""When a failed reconcile is tried again: client-go's work queue backoff, and what is transient.

A reconcile whose reads or writes failed is planned again from the cache and
carried out again, which is safe at any point (``effects.ordered``: every prefix
of a plan's writes leaves a world the next plan finishes; a create met by
AlreadyExists is adopted, the other writes are merge patches). It is tried
again soon, as client-go's rate-limited work queue requeues a key: 100 ms
after the first failure, doubling to at most MAX_SECONDS, or later where the
API server says when (API Priority and Fairness answers 429 with
``Retry-After``, which its Status body carries as ``retryAfterSeconds``).
So a minute whose writes failed is carried out late within that minute, not
dropped; whether a late run may still start is the core's rule (a starting
deadline, a newer schedule time), decided by the plan at each try.

A transient failure (the connection, a timeout, 429, 5xx) is said in one
line; any other error with its traceback, since it is a bug or a refusal a
person must look at.
"""

from __future__ import annotations

import http.client
import ssl

import orjson
from kubernetes.client.exceptions import ApiException

FIRST_SECONDS = 0.1
MAX_SECONDS = 5.0  # writes resume within this of a fault's end
MAX_RETRY_AFTER_SECONDS = 30.0  # a Retry-After past this is taken as this


def delay(error: BaseException, failures: int) -> float:
    """Seconds until the ``failures``-th failed try (1 for the first) is tried again."""
    backoff = min(FIRST_SECONDS * 2 ** min(failures - 1, 16), MAX_SECONDS)
    asked = retry_after(error)
    return backoff if asked is None else max(backoff, min(asked, MAX_RETRY_AFTER_SECONDS))


def retry_after(error: BaseException) -> float | None:
    """The seconds the API server asked to wait (429 or 503 with a Status naming them)."""
    if not isinstance(error, ApiException) or error.status not in (429, 503):
        return None
    headers = error.headers or {}
    named = headers.get("Retry-After") or headers.get("retry-after")
    if named is not None:
        try:
            return float(named)
        except ValueError:
            pass
    try:
        seconds = orjson.loads(error.body or b"{}").get("details", {}).get("retryAfterSeconds")
    except (orjson.JSONDecodeError, AttributeError):
        return None
    return float(seconds) if isinstance(seconds, (int, float)) else None


def transient(error: BaseException) -> bool:
    """Whether the failure is the connection's or the API server's passing state, not a bug."""
    if isinstance(error, ApiException):
        return error.status in (408, 409, 429) or (error.status or 0) >= 500 or error.status == 0
    return isinstance(error, (OSError, ssl.SSLError, http.client.HTTPException, TimeoutError))


def said(error: BaseException) -> str:
    """A failure in a few words, for a log line."""
    if isinstance(error, ApiException):
        return f"the API server answered {error.status} {error.reason}"
    if isinstance(error, http.client.IncompleteRead):
        return "the API server closed the connection before the answer's end"
    text = getattr(error, "strerror", None) or str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__
