"""``kubectl cronctl``: day-to-day work on a cluster's CronSchedules, as a kubectl plugin.

A driver beside the operator and the runner: it never imports either. It asks
what the operator already offers through the API (the ``cronctl.dev/trigger``
and ``cronctl.dev/backfill`` annotations, ``spec.suspend`` and
``spec.suspendReason``) and reads what it writes (``status.nextScheduleTimes``,
``status.history``, the conditions, the Events), so the plugin needs no
operator of its own version and grants nothing kubectl would not.

- ``cli``: the command line (krew-style usage), one line per problem.
- ``cluster``: the API calls, each failure turned into one line that says what
  was asked (NotFound names the schedule and namespace, Forbidden the verb and
  the resource, an unreachable API server its address).
- ``views``: pure builders from the objects to the text printed.
"""
