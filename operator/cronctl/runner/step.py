"""One turn of the runner, decided: ``step(inputs, state) -> Stepped(state, effects, changed)``.

The intake (:mod:`.intake`) reads what changed in the folder and what the
executors reported into ``Inputs``, with the time read once; this step owns
every runner rule and calls the core for every scheduling decision; the shell
(:mod:`.engine`) carries out the effects (starts, stops, lines, files) and
saves the book when ``changed``. No I/O and no clock here: the step is a
function of its inputs and the state it is handed. It changes that state in
place and hands it back (a copy per turn would cost more than the rest of the
turn for thousands of schedules); the shell does not keep another reference.

The order of a turn is ``core.reconcile.turn``'s, which the step does not
compose itself: it takes in what the folder says (manifests, suspensions and
holds, orphans, backfill requests), lets the core's clock move (timeouts), and
hands the ends the wrappers reported, the schedules it holds and the manual
runs the trigger files ask for to ``Controller.step``, which applies the ends
first (so a run over by now frees a Forbid schedule's time, and an end
reported at the very expiry is too late; a failure that pauses its schedule
holds it in that step), then gives each due schedule its turn (the hold, the
tick, the backfill's next runs, then the manual runs). The ends are translated
(``ends.record_ends``: slots, retries, history rows, lines), then the turn's
decisions (``launches.carry_out_turn``: firings, history rows and lines); then
stops and starts. An end its wrapper timed within the timeout the clock would
pass is recorded at the core's last time, before the intake moves the clock. The step's modules call the Controller
only through :mod:`.composition`, the runner's one door to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import composition
from .effects import Effect, Out
from .ends import Report, record_ends, record_ends_in_time, worker_ends
from .failure_pauses import pause_on_failures
from .holds import hold, sync_suspensions, take_pauses
from .launches import carry_out_turn
from .lifecycle import Scan, sync_manifests
from .memory import RunnerState
from .orphans import take_orphans
from .requests import RequestFile, TriggerFile, asked_triggers, say_backfills, take_backfills, take_triggers
from .starts import start_waiting
from .stops import drop_expired, stop_expired
from .values import Pause


@dataclass(frozen=True)
class Inputs:
    """What the folder and the executors say at this turn, and the time, read once."""

    minute: int  # the clock's minute (minutes since 1970 UTC)
    second: float  # the clock's time in seconds, for start times with jitter
    manifests: Scan | None = None  # None: the folder could not be read
    pauses: dict[str, Pause] | None = None  # None: the records could not be read
    switched_off: bool = False
    triggers: list[TriggerFile] = field(default_factory=list)
    backfills: list[RequestFile] = field(default_factory=list)
    ends: list[Report] = field(default_factory=list)


@dataclass(frozen=True)
class Stepped:
    state: RunnerState
    effects: list[Effect]
    changed: bool  # the book must be saved


def step(inputs: Inputs, state: RunnerState) -> Stepped:
    out = Out(state)
    controller = state.controller
    now = inputs.minute
    if controller.state.clock is not None and now < controller.state.clock:
        now = controller.state.clock  # a clock that went back fires nothing again
    ends = record_ends_in_time(state, inputs.ends, now, out)  # before any call moves the core's clock
    take_pauses(state, inputs.pauses)
    changed = len(ends) < len(inputs.ends)
    changed |= sync_manifests(state, inputs.manifests, now, out)  # a retired schedule's record goes with it
    changed |= take_orphans(state, inputs.manifests is not None, now, out)  # before Forbid's tick sees them
    changed |= sync_suspensions(state, now, out)
    hold(state, inputs.switched_off, now, out)
    changed |= take_backfills(state, inputs.backfills, now, out)
    expired = composition.move_clock(state, now)
    state.timed_out = {run_id for run_id in (*state.timed_out, *expired) if run_id in state.firings}
    taken, handed = worker_ends(state, ends)
    asked = asked_triggers(state, inputs.triggers)
    # The one composition (core.reconcile): the runs' ends first, then the turns: holds (and the
    # schedules the ends' failures paused), the tick, the backfills' next runs (not while held),
    # then the manual runs asked for.
    applied = composition.take_turn(state, now, handed, state.holding,
                                    {name: len(ids) for name, ids in asked.items()})
    changed |= record_ends(state, taken, controller.ended, now, out)
    if pause_on_failures(state, now, out):  # the core held it from this very step on; the runner from now on
        changed |= sync_suspensions(state, now, out)
        hold(state, inputs.switched_off, now, out)
    ran = carry_out_turn(state, applied, asked, now, out)
    changed |= bool(controller.held) or any(item.news for item in applied)
    changed |= take_triggers(state, inputs.triggers, ran, now, out)
    changed |= stop_expired(state, out)
    changed |= drop_expired(state, now)
    changed |= start_waiting(state, inputs.second, out)
    say_backfills(state, out)
    return Stepped(state, out.effects, changed)
