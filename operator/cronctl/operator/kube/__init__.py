"""The operator's Kubernetes layer: everything that talks to the API server, and nothing that decides.

- ``facade``: the operator's one facade of the cluster (``KubeFacade``): the
  reads a plan needs, through the ``cache``; the pools' I/O; Events, queued
  or posted. ``operator.apply`` carries a plan out through it;
- ``credentials``: in-cluster, else the kubeconfig;
- ``rest``: requests as JSON on kept, pipelined connections (``Rest``, ``Calls``),
  through a CONNECT tunnel when a ``proxy`` is configured; each one's end told
  by verb, resource and code (``request_kinds``) to the operator's metrics;
- ``stream`` and ``watch``: list and watch on a connection of their own;
  ``jobwatch``, ``schedulewatch`` and ``poolwatch`` feed the ``cache`` and tell the loop;
- ``leader``: the Lease, kept as client-go keeps it;
- ``retry``: when a failed request is tried again, and what is transient;
- ``events`` and ``event_series``: Events posted off the launch path, isomorphic ones as a series.

It never imports the plan, observe, metrics, the loop or the applier, and never
reaches the core, even through another module: the API's names are
``cronctl.api``'s, a leaf (pyproject.toml's import-linter contracts). What to
do is decided above it.
"""
