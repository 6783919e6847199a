"""The scheduling core of cronctl: pure functions over plain data.

Nothing in this package does I/O or reads the wall clock; every time is an
argument, counted in whole minutes since 1970-01-01T00:00 UTC (an
import-linter contract keeps out ``time``, ``datetime``, ``os`` and the I/O
frameworks). The drivers (the operator, the single-node runner, the offline
harness, the fleet replay) ask it every scheduling question.

- Times and schedules: :mod:`.times` (the minute, the wire format),
  :mod:`.zones` (offsets, IANA zones), :mod:`.dst` (the daylight-saving
  search), :mod:`.cron` (five-field expressions) with :mod:`.cycle` (sparse
  day sets over the 400-year cycle), :mod:`.interval` (``@every``),
  :mod:`.every` (``every(N).unit``), :mod:`.exclusions`, :mod:`.window` (a
  job's active window), :mod:`.merged` (several expressions, exclusions and a
  window as one), :mod:`.schedule` (``Timeline``: one parser, one interface).
- What a job is and has: :mod:`.spec` (what a user asks), :mod:`.state`
  (plain data, exact JSON), :mod:`.errors` (what can go wrong, as values).
- Decisions: :mod:`.tick` (a job's decisions at a minute), :mod:`.transitions`
  (what a decision does to a job's state), :mod:`.passed_over` (times a
  launch passed over), :mod:`.backfill` (a past range, one run at a time),
  :mod:`.failures` (``pauseOnFailures``), :mod:`.endings` (how active runs
  seen from outside end), :mod:`.retention` (the history kept), :mod:`.pool`
  (seed 001's order and what a pool of workers admits), :mod:`.staging`
  (which time a driver stages ahead of its minute).
- Composed: :mod:`.reconcile` (the one composition of a turn, ``ends`` and
  ``turn``, which every driver calls; and one reconcile of one job, for a
  driver that rebuilds its state from what it sees) and :mod:`.controller`
  (the in-memory index of many jobs: heaps and replays, for the harness, the
  runner and the fleet, giving each due job its turn).
"""
