"""When a failed reconcile is tried again: client-go's backoff, the API server's Retry-After,
and which failures are transient (said in one line) rather than bugs (said with a traceback)."""

from __future__ import annotations

import http.client
import ssl

import pytest
from kubernetes.client.exceptions import ApiException

from cronctl.operator.kube.rest import Closed, Unreachable
from cronctl.operator.kube.retry import MAX_RETRY_AFTER_SECONDS, delay, retry_after, said, transient

TOO_MANY = ApiException(status=429, reason="Too Many Requests")
TOO_MANY.body = b'{"kind":"Status","code":429,"details":{"retryAfterSeconds":3}}'


@pytest.mark.parametrize("failures, seconds", [(1, 0.1), (2, 0.2), (3, 0.4), (6, 3.2), (7, 5.0), (100, 5.0)])
def test_failures_in_a_row_wait_twice_as_long_each_up_to_five_seconds(failures: int, seconds: float) -> None:
    assert delay(ConnectionResetError(), failures) == pytest.approx(seconds)


def test_a_429_waits_as_long_as_the_api_server_asked_in_its_status() -> None:
    assert retry_after(TOO_MANY) == 3.0
    assert delay(TOO_MANY, 1) == 3.0
    assert delay(TOO_MANY, 7) == 5.0  # the backoff, when it is longer


def test_a_retry_after_header_counts_and_a_huge_one_is_bounded() -> None:
    error = ApiException(status=503, reason="Service Unavailable")
    error.headers = {"Retry-After": "3600"}
    assert delay(error, 1) == MAX_RETRY_AFTER_SECONDS


def test_a_refusal_that_names_no_wait_takes_the_backoff() -> None:
    assert retry_after(ApiException(status=429, reason="Too Many Requests")) is None
    assert retry_after(ApiException(status=404, reason="Not Found")) is None


@pytest.mark.parametrize("error, is_transient", [
    (ConnectionRefusedError(111, "Connection refused"), True),
    (ConnectionResetError(104, "Connection reset by peer"), True),
    (Unreachable("cannot connect"), True),
    (Closed("closed"), True),
    (TimeoutError("timed out"), True),
    (ssl.SSLEOFError(8, "EOF occurred in violation of protocol"), True),
    (http.client.IncompleteRead(b"{"), True),
    (TOO_MANY, True),
    (ApiException(status=500, reason="Internal Server Error"), True),
    (ApiException(status=504, reason="Gateway Timeout"), True),
    (ApiException(status=403, reason="Forbidden"), False),
    (ApiException(status=422, reason="Unprocessable Entity"), False),
    (KeyError("spec"), False),
], ids=lambda value: type(value).__name__ if not isinstance(value, bool) else str(value))
def test_what_is_transient(error: BaseException, is_transient: bool) -> None:
    assert transient(error) is is_transient


def test_a_failure_is_said_in_a_few_words() -> None:
    assert said(TOO_MANY) == "the API server answered 429 Too Many Requests"
    assert said(http.client.IncompleteRead(b"{")) == "the API server closed the connection before the answer's end"
    assert said(ConnectionRefusedError(111, "Connection refused")) == "ConnectionRefusedError: Connection refused"
