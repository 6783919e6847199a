"""The imperative shell of the single-node runner (``cronctl local DIR``).

The scheduling decisions come from :mod:`cronctl.core`; the modules here own
what the core cannot: files, locks, processes and the wall clock.

- :mod:`.book`: the state file ``cronctl.json``, rewritten whole and atomically.
- :mod:`.lock`: the lock file ``cronctl.lock`` that decides which runner fires.
- :mod:`.executor` and :mod:`.wrapper`: one firing as one local process that
  outlives a crash of the runner and never starts twice.
- :mod:`.slots`: the pool of worker slots and the order due firings wait in.
- :mod:`.definitions`: CronSchedule manifests read from a folder.
- :mod:`.pauses`: the pause records of ``cronctl suspend`` (the manifests are never rewritten).
- :mod:`.backfills`: the requests of ``cronctl backfill``, and how a backfill reads in ``status``.
"""
