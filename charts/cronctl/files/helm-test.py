"""`helm test`: the operator answers its health endpoint and the API server accepts a CronSchedule.

Runs in the operator's own image (Python and the kubernetes client are there). The CronSchedule is
created with dryRun=All: judged by the CRD's schema and rules, stored nowhere.
"""

import json
import os
import sys
import urllib.request

from kubernetes import client, config


def main() -> int:
    health, namespace = os.environ["CRONCTL_HEALTH_URL"], os.environ["CRONCTL_NAMESPACE"]
    try:
        with urllib.request.urlopen(health, timeout=10) as answer:
            print(f"{health}: {answer.status} {json.loads(answer.read()).get('status', '')}".rstrip())
    except OSError as error:
        print(f"FAIL: the operator's health endpoint {health} does not answer: {error}")
        return 1
    try:
        config.load_incluster_config()
    except config.ConfigException:
        config.load_kube_config()
    schedule = {
        "apiVersion": "cronctl.dev/v1", "kind": "CronSchedule",
        "metadata": {"name": "helm-test-accepted", "namespace": namespace},
        "spec": {"schedule": "*/5 * * * *", "timeZone": "Europe/Berlin", "concurrencyPolicy": "Forbid",
                 "jobTemplate": {"spec": {"template": {"spec": {
                     "restartPolicy": "Never",
                     "containers": [{"name": "main", "image": "busybox", "command": ["true"]}]}}}}},
    }
    try:
        client.CustomObjectsApi().create_namespaced_custom_object(
            "cronctl.dev", "v1", namespace, "cronschedules", schedule, dry_run="All")
    except client.ApiException as error:
        print(f"FAIL: a CronSchedule was not accepted in {namespace}: {error.status} {error.reason}: {error.body}")
        return 1
    print(f"a CronSchedule is accepted in {namespace} (dry run, nothing stored)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
