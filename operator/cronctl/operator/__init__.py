"""The Kubernetes operator: CronSchedule objects in, Jobs, Events and status out.

What decides, pure (an import-linter contract keeps ``kube``, the
Kubernetes client, kopf and the wall clock out of it): ``observe`` (status
and Jobs to the core's state), ``reading`` (the spec as the core reads it,
remembered), ``context`` (what one reconcile works with), ``plan`` (the
core's one answer per reconcile turned into effects), ``effects`` (the
effects and their crash-safe order), ``status`` (the status a reconcile
writes), ``messages`` (what each Event says), ``manifests`` (Jobs,
conditions, Events), ``staged`` (staged Jobs and their digests), ``backfill``
(the backfill annotation), ``pause`` (``pauseOnFailures``' pause and
resume), ``refusals`` (what the API server's refusals say, and where),
``pool_decisions`` (one look at a CronPool), ``resource`` (labels,
annotations, times), ``shard`` and ``assignment`` (which shard holds which
schedules).

What does the I/O: ``apply`` (the applier: a plan carried out through
``kube``'s facade), ``loop`` (the one scheduling loop: which schedules and
pools need a look, and when), ``pool_looks`` (the looks at CronPools,
carried out), ``skew`` (the node's clock against the API server's),
``metrics`` and ``logs``; ``kube/`` is the Kubernetes layer, which decides
nothing (its own map is its docstring). ``handlers`` is kopf's part: kopf runs
the process (signals, start-up and clean-up, which start and stop the loop
and the watches), serves the probe (the loop's last pass and the watches'
freshness, judged by ``health``) and ends the process when the loop's task
dies. The watches and the loop are cronctl's own, not kopf's per-object
handlers, whose processing of each watch event was a fifth to a quarter of
the operator's CPU per launch (benchmarks/README.md).
No scheduling rule lives here: every decision comes from ``cronctl.core``.
"""
