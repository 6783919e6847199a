"""cronctl: a Kubernetes-native cron controller.

``from cronctl import run`` is the offline harness over the scheduling core;
it needs the standard library only.
"""

from .harness import run

__all__ = ["run"]
