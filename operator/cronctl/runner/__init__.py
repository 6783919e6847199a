"""The single-node runner (``cronctl local DIR``): intake -> step -> effects.

The scheduling decisions come from :mod:`cronctl.core`. A turn of the runner:

- :mod:`.intake` reads the folder (manifests, pause records, triggers,
  backfill requests, the node switch) and the executors' reports into
  ``Inputs``, with the time read once;
- :mod:`.step` decides, with no I/O, by the rules of :mod:`.lifecycle`
  (manifests), :mod:`.holds` (suspensions, the node switch),
  :mod:`.failure_pauses` (``pauseOnFailures``), :mod:`.requests` (triggers,
  backfills), :mod:`.ends`, :mod:`.launches` (the tick's decisions),
  :mod:`.stops`, :mod:`.starts`, :mod:`.retention` (run folders),
  :mod:`.journal` (history rows) and :mod:`.orphans` (runs the book lost), on
  the state of :mod:`.memory`, and returns
  :mod:`.effects`; the values it decides with (a run's key and request, an
  end, a pause, a suspension, a backfill request) are :mod:`.values`'s, which
  does no I/O, so the step's import contract holds through every import;
- :mod:`.engine` is the shell that carries them out; :mod:`.adoption` takes
  over the runs a runner before it left.

What the shell uses:

- :mod:`.book`: the state file ``cronctl.json``, rewritten whole and atomically;
  :mod:`.firing`: a firing and the rest of what the book keeps beside the core's state.
- :mod:`.lock`: the lock file ``cronctl.lock`` that decides which runner fires.
- :mod:`.executor`, :mod:`.homes` and :mod:`.wrapper`: one firing as one local
  process that outlives a crash of the runner and never starts twice.
- :mod:`.slots`: the pool of worker slots and the order due firings wait in.
- :mod:`.definitions`: CronSchedule and CronPool manifests read from a folder
  (:mod:`.expansion`: ``$(VAR)`` as Kubernetes expands it); :mod:`.folder`:
  which files of the folder changed; :mod:`.judge`: which schedules fire.
- :mod:`.pauses`: the pause records of ``cronctl suspend`` (the manifests are never rewritten).
- :mod:`.backfills`: the requests of ``cronctl backfill``, and how a backfill reads in ``status``.
- :mod:`.files`: crash-safe writes and removals.
- :mod:`.echo`: ``--echo``, the runs' output on the runner's stream.
- :mod:`.metrics`: ``--metrics-port``, the runner's Prometheus metrics.

What the commands read and ask, without the lock: :mod:`.folder_view`,
:mod:`.status_view`, :mod:`.history_view`, :mod:`.asking` (``trigger``,
``backfill``, ``suspend``, ``resume``) and :mod:`.output` (``cronctl logs``),
their names gathered in :mod:`.views`; :mod:`.lint` is ``cronctl lint``.
"""
