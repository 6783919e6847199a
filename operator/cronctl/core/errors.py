"""What can go wrong, as values.

``Code`` lists the error codes of the harness contract; every driver maps
them to its own surface (``error: <code>`` strings, Ready=False conditions,
exit statuses). ``ExpressionError`` and ``OptionError`` carry the field and
the reason, which people see; the harness collapses them to their code.
"""

from __future__ import annotations

import enum


class Code(str, enum.Enum):
    UNKNOWN_OPERATION = "unknown operation"
    INVALID_ARGUMENTS = "invalid arguments"
    INVALID_TIME = "invalid time"
    CLOCK_WENT_BACKWARDS = "clock went backwards"
    INVALID_EXPRESSION = "invalid expression"
    INVALID_COUNT = "invalid count"
    INVALID_TIMEZONE = "invalid timezone"
    NEVER_FIRES = "never fires"
    INVALID_NAME = "invalid name"
    INVALID_POLICY = "invalid policy"
    INVALID_OPTIONS = "invalid options"
    JOB_EXISTS = "job exists"
    JOB_NOT_FOUND = "job not found"
    RUN_NOT_FOUND = "run not found"
    RUN_NOT_ACTIVE = "run not active"
    INVALID_OUTCOME = "invalid outcome"


class CronctlError(Exception):
    """A refusal with a contract code and a message for people."""

    code: Code = Code.INVALID_ARGUMENTS

    def __init__(self, message: str, code: Code | None = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code

    @property
    def message(self) -> str:
        return str(self.args[0])


class FieldError(CronctlError):
    """A refusal that names the field at fault: ``<field>: <reason>``."""

    def __init__(self, field: str, reason: str, code: Code) -> None:
        super().__init__(f"{field}: {reason}", code)
        self.field = field
        self.reason = reason


class ExpressionError(FieldError):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(field, reason, Code.INVALID_EXPRESSION)


class OptionError(FieldError):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(field, reason, Code.INVALID_OPTIONS)


class ZoneError(FieldError):
    def __init__(self, field: str, reason: str) -> None:
        super().__init__(field, reason, Code.INVALID_TIMEZONE)
