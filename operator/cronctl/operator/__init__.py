"""The Kubernetes operator: CronSchedule objects in, Jobs, Events and status out.

Pure modules (``resource``, ``observe``, ``plan``, ``manifests``) turn API
objects into the core's data and the core's decisions into API actions;
``apply`` and ``loop`` do the I/O. ``handlers`` is kopf's part: kopf runs
the process (signals, start-up and clean-up, which start and stop the loop
and the watches), serves the probe (the loop's last pass and the watches'
freshness, judged by ``health``) and ends the process when the loop's task
dies. The watches and the loop are cronctl's own, not kopf's per-object
handlers, whose processing of each watch event was a fifth to a quarter of
the operator's CPU per launch (benchmarks/README.md).
No scheduling rule lives here: every decision comes from ``cronctl.core``.
"""
