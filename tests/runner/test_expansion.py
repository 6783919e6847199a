"""$(VAR) expanded as the kubelet expands it: the cases of Kubernetes' own expansion tests."""

from __future__ import annotations

import pytest

from cronctl.runner.expansion import expand, expand_each, run_facts, run_variables

VARIABLES = {"VAR_A": "A", "VAR_B": "B", "VAR_C": "C", "VAR_REF": "$(VAR_A)", "VAR_EMPTY": ""}


@pytest.mark.parametrize("text, expanded", [
    ("$(VAR_A)", "A"),  # a variable
    ("___$(VAR_B)___", "___B___"),  # inside text
    ("$(VAR_A)-$(VAR_A)", "A-A"),  # twice
    ("$(VAR_A)$(VAR_B)$(VAR_C)", "ABC"),  # back to back
    ("$(VAR_EMPTY)", ""),  # defined as empty
    ("$(VAR_REF)", "$(VAR_A)"),  # a value is not expanded again
    ("$(VAR_DOES_NOT_EXIST)", "$(VAR_DOES_NOT_EXIST)"),  # undefined: as written
    ("$$(VAR_A)", "$(VAR_A)"),  # escaped
    ("$$$(VAR_A)", "$A"),  # an escaped $ then a variable
    ("$$$$(VAR_A)", "$$(VAR_A)"),
    ("$$", "$"),
    ("$", "$"),  # a lone $ at the end
    ("$VAR_A", "$VAR_A"),  # shell syntax is not Kubernetes'
    ("${VAR_A}", "${VAR_A}"),
    ("$(VAR_A", "$(VAR_A"),  # never closed
    ("$()", "$()"),  # an empty name: not defined
    ("f000-$(VAR_A)-$(VAR_B", "f000-A-$(VAR_B"),
    ("no variables", "no variables"),
])
def test_expansion_follows_the_kubelets_rules(text: str, expanded: str) -> None:
    assert expand(text, VARIABLES) == expanded


def test_a_runs_args_see_its_cronctl_facts_and_an_env_entry_of_the_same_name_wins() -> None:
    """As on a cluster, where the operator adds to the Job's env only the facts the template does
    not set: the container's own value wins."""
    facts = run_facts("report", "2024-03-01T00:10:00Z", "manual", 2)
    variables = run_variables({"CRONCTL_REASON": "mine", "DAY": "friday"}, facts)
    assert expand_each(["$(CRONCTL_SCHEDULE)@$(CRONCTL_NOMINAL_TIME)", "$(CRONCTL_REASON)", "$(CRONCTL_ATTEMPT)",
                        "$(DAY)", "$$(DAY)"], variables) == [
        "report@2024-03-01T00:10:00Z", "mine", "2", "friday", "$(DAY)"]
