"""The operator's Kubernetes layer: everything that talks to the API server, and nothing that decides.

- ``rest``: requests as JSON on kept, pipelined connections (``Rest``, ``Calls``);
- ``stream`` and ``watch``: list and watch on a connection of their own;
  ``jobwatch`` and ``schedulewatch`` feed the ``cache`` and tell the loop;
- ``leader``: the Lease, kept as client-go keeps it;
- ``retry``: when a failed request is tried again, and what is transient;
- ``events``: Events posted off the launch path.

It never imports the plan, observe, metrics, the loop or the core
(pyproject.toml's import-linter contract): what to do is decided above it.
"""
