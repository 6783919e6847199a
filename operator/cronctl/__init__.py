"""cronctl: a Kubernetes-native cron controller.

``from cronctl import run`` is the offline harness over the scheduling core;
it needs the standard library only.

The packages and modules, in their layers (import-linter checks them, the
lowest last; no driver imports another):

- :mod:`.cli` (with ``__main__``): the ``cronctl`` command.
- The drivers: :mod:`.operator` (the Kubernetes operator), :mod:`.runner`
  (``cronctl local DIR``, the single-node runner), :mod:`.harness` (the
  offline harness, ``run``), :mod:`.fleet` (``cronctl fleet preview``),
  :mod:`.dispatch` (seed 001's dispatcher), :mod:`.plugin` (``kubectl
  cronctl``).
- :mod:`.convert`: CronJob manifests into CronSchedules and back.
- What the drivers share: :mod:`.manifest` (a CronSchedule manifest, judged
  by the CRD's schema and read into the core's spec) and :mod:`.clock`
  (where the operator's "now" comes from).
- :mod:`.core`: the scheduling core, pure.
- :mod:`.api`: the names cronctl's API has on a cluster (group, version,
  kinds, labels), a leaf every layer may read.

:mod:`.about` says what cronctl says of itself: its version and the shells'
completion scripts.
"""

from .harness import run

__all__ = ["run"]
