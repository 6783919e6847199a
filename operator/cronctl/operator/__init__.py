"""The Kubernetes operator: CronSchedule objects in, Jobs, Events and status out.

Pure modules (``resource``, ``observe``, ``plan``, ``manifests``) turn API
objects into the core's data and the core's decisions into API actions;
``apply`` and ``loop`` do the I/O; ``handlers`` holds only kopf decorators.
No scheduling rule lives here: every decision comes from ``cronctl.core``.
"""
