"""One interrupted generation that pushes twice: its cleanup, then its tool outputs.

livekit-agents' `_realtime_generation_task` (1.8.9 `voice/agent_activity.py`) ends
an interrupted generation with up to two pushes from one task: the cleanup of its
never-played messages (:4758, under the activity lock) and then, once its running
tools have finished, their outputs (:4808). The tool executor does not cancel a
running tool when the generation is interrupted (`voice/generation.py`,
`_execute_tools_task`: it waits for the shielded tools), so the output push starts
when the later of two things has happened: the cleanup's push has returned, and the
tool has returned. A cleanup whose acks time out returns with its delete still in
flight (the `RealtimeError` is caught and logged, :4759-4763), and the tool push
then runs beside that delete.

The catalog's `cleanup-during-tool-push` is read two ways by the release's model
(`check.set_ups`): as two generations one after the other (the catalog's own
records: each call interrupts a generation of its own) and, here, as one
(`one_generation`): the tool-output call's record waits for the speech turn and
interrupts nothing of its own (`SpeechTurn.WAITS`), so it is called once the
cleanup has given the turn up, with or without the cleanup's ops in flight, and
its call is the tool's return.

The adapters (`one_generation_adapters`) script a response with the function
call first and then the message that never plays, so the output's create names
the mirror's last item, the message, as the model's create does (the model holds
no function-call item: its create follows the snapshot's last item). With the
message first the real create names the function call and the model is wrong
(docs/livekit.md, "One generation's two pushes"). Over the plugin the function
call's `output_item.done` and the message's "added" events reach the session in
one write (`GatedConnection.deliver_together`), as a network may coalesce them:
the session reads the message before the tool has started, so the activity's
placeholder handler does not add it locally, and the scenario's start (the
message on the server, not in the local context) is the real one.
"""

from __future__ import annotations

from attrs import evolve

from model import Config
from model.sites import SpeechTurn

__all__ = ["FOLLOWS_CLEANUP", "is_one_generation", "one_generation", "roles"]

#: The speech turn of the tool push that follows its own generation's cleanup.
FOLLOWS_CLEANUP = SpeechTurn.WAITS


def roles(config: Config) -> tuple[int, int] | None:
    """The cleanup and the interrupted tool-output call of a scenario that can be one
    generation's two pushes, or None: exactly those two calls, the cleanup's message
    on the server at the start and not in the local context."""
    calls = config.scenario.calls
    if len(calls) != 2:
        return None
    sites = [call.site for call in calls]
    if sorted(sites) != ["cleanup", "interrupted-tool-outputs"]:
        return None
    cleanup = sites.index("cleanup")
    tool = 1 - cleanup
    drops = calls[cleanup].drops
    if calls[cleanup].made_at_call or not drops or len(calls[tool].adds) != 1:
        return None
    scenario = config.scenario
    if any(item in scenario.initial_local or item not in scenario.server for item in drops):
        return None
    return cleanup, tool


def one_generation(config: Config) -> Config | None:
    """`config` read as one generation's cleanup and tool push (the module's
    docstring), or None where its scenario is not that or its model has no speech
    turn (the catalog's records: the turn is what orders the two pushes)."""
    found = roles(config)
    if found is None:
        return None
    cleanup, tool = found
    if not config.site(tool).speech.from_start or not config.site(cleanup).speech.across_push:
        return None
    sites = tuple(
        evolve(site, speech=FOLLOWS_CLEANUP) if site.name == "interrupted-tool-outputs" else site
        for site in config.extra_sites
    )
    calls = tuple(evolve(call, behind_earlier_push=False) for call in config.scenario.calls)
    scenario = evolve(config.scenario, calls=calls)
    return evolve(config, scenario=scenario, extra_sites=sites)


def is_one_generation(config: Config) -> bool:
    """Whether `config` is a `one_generation` reading."""
    found = roles(config)
    return found is not None and config.site(found[1]).speech is FOLLOWS_CLEANUP
