"""The one retry rule for every server zotrec asks (OpenReview, PMLR, the Zotero Web API): bounded tries,
the server's Retry-After/Backoff obeyed up to a limit, our own growing backoff otherwise, and a deadline
on the time spent without an answer. Callers say what a failed try means and word the final error.
"""

from __future__ import annotations

import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TypeVar

T = TypeVar("T")

RETRY_STATUS = frozenset({408, 425, 429, 500, 502, 503, 504})
DEADLINE_S = 60.0  # the most one call may take, retries included, while the server does not answer
DEADLINE_ENV = "ZOTREC_DEADLINE_S"


def default_deadline() -> float:
    """DEADLINE_S, or $ZOTREC_DEADLINE_S when it is a positive number of seconds (every server zotrec asks);
    any other value is one warning naming it."""
    from recommender.environment import positive_number

    return positive_number(DEADLINE_ENV, DEADLINE_S)


def retry_after(value: str | None) -> float | None:
    """Seconds to wait from a Retry-After or Backoff header: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    from email.utils import parsedate_to_datetime  # here: a run that asks no server never loads email

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


@dataclass
class RetryPolicy:
    """How often zotrec tries and how long it waits; `sleep` and `clock` are injectable for tests."""

    attempts: int = 5  # tries in all
    max_wait_s: float = 120.0  # a longer wait asked by the server stops the call instead
    first_wait_s: float = 2.0  # our backoff: first_wait_s, then doubled each try (capped at max_wait_s)
    sleep: Callable[[float], None] = time.sleep
    deadline_s: float = field(default_factory=default_deadline)  # tries and waits of one call, in all
    clock: Callable[[], float] = time.monotonic
    jitter: float = 0.0  # our backoff × (1 + up to jitter), so parallel clients do not retry in step
    min_wait_s: float = 0.0  # a service's terms (arXiv: 3 s): a Retry-After may lengthen a wait, never shorten it

    def backoff(self, tries: int) -> float:
        """Our wait after the `tries`-th failed try, when the server did not say how long."""
        wait = self.first_wait_s * 2 ** (tries - 1) * (1 + random.random() * self.jitter)
        return min(wait, self.max_wait_s)


def unresolved_host(error: BaseException) -> bool:
    """True when `error` comes from a host name that does not resolve (socket.gaierror in its causes):
    trying again will not help, so the caller fails at once instead of spending the deadline on retries."""
    import socket

    seen: set[int] = set()
    cause: BaseException | None = error
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, socket.gaierror):
            return True
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return False


class Retry(Exception):
    """One try failed in a way worth trying again (after `wait` seconds, when the server said)."""

    def __init__(self, reason: str, wait: float | None = None) -> None:
        super().__init__(reason)
        self.reason, self.wait = reason, wait


class GaveUp(Exception):
    """No more tries: `why` is 'tries' (all used), 'deadline' (no time left) or 'wait' (asked to wait too long)."""

    def __init__(self, why: str, reason: str, tries: int, spent: float, wait: float | None = None) -> None:
        super().__init__(reason)
        self.why, self.reason, self.tries, self.spent, self.wait = why, reason, tries, spent, wait


def with_retries(attempt: Callable[[], T], policy: RetryPolicy,
                 on_retry: Callable[[str, float, int], None] | None = None) -> T:
    """Run `attempt` until it returns; each `Retry` it raises is tried again after a wait, else `GaveUp`.

    A wait the server asked for is obeyed up to max_wait_s; our own backoff must fit in what is left of
    deadline_s (try time and waits so far). `on_retry(reason, wait, tries)` runs before each wait.
    """
    spent = 0.0  # seconds of tries and waits; an injected sleep counts as it claims
    attempts = max(1, policy.attempts)
    for tries in range(1, attempts + 1):
        started = policy.clock()
        try:
            return attempt()
        except Retry as problem:
            reason, wait = problem.reason, problem.wait
        spent += policy.clock() - started
        if wait is not None and wait > policy.max_wait_s:
            raise GaveUp("wait", reason, tries, spent, wait)
        if tries == attempts:
            raise GaveUp("tries", reason, tries, spent)
        if wait is None:
            wait = policy.backoff(tries)
            if spent + wait > policy.deadline_s:
                raise GaveUp("deadline", reason, tries, spent)
        wait = max(wait, policy.min_wait_s)
        if on_retry is not None:
            on_retry(reason, wait, tries)
        policy.sleep(wait)
        spent += wait
    raise AssertionError("unreachable")
