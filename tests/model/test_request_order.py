"""A push that inserts its items into its copy of the mirror by creation time.

livekit-agents 1.8.9's `say()` stamps its message with the moment playout
started and pushes it with `rt_chat_ctx.insert(spoken_msg)` on a copy of the
session's context (`voice/agent_activity.py:3455-3459`), so the message goes
before an item the mirror acknowledged that was made after playout started.
The local-order record says so (`LocalOrder.request`, in `model.sites.COPY_INSERTS`,
which the livekit release records take through `Config.local_orders`), and the
snapshot places the request by `State.born`; every other snapshot site, and the
catalog's own record, appends (`items.extend`).
"""

from __future__ import annotations

from model import Config, Move, MoveKind, State, initial_state, step
from model.local_order import plan
from model.scenarios import SCENARIOS_BY_NAME, Call, Scenario
from model.sites import COPY_INSERTS, LOCAL_ORDER, LocalPosition
from model.variants import VARIANTS_BY_NAME

#: A replacement beside `say()`, as the audited pair `pair-812-3459` starts.
SAY = Scenario(
    name="replacement + spoken-message",
    summary="the application adds note1 while say() plays",
    calls=(Call("replacement", adds=("note1",)), Call("spoken-message", adds=("spoken2",))),
)
#: The playout starts, then the replacement makes note1 and it is acknowledged.
RUN = "before-call T1; call T0; server-apply T0 note1; client-apply T0 note1; call T1"


def _run(config: Config, text: str = RUN) -> State:
    state = initial_state(config)
    for label in text.split("; "):
        kind, task, *item = label.split()
        state = step(state, config, Move(MoveKind(kind), int(task[1:]), *item))
    return state


def _inserting(scenario: Scenario = SAY, **kwargs: bool) -> Config:
    return Config(
        VARIANTS_BY_NAME["lock5"],
        scenario,
        scenario.environment,
        local_orders=COPY_INSERTS,
        **kwargs,
    )


def test_the_spoken_message_goes_before_an_item_made_after_its_playout_started() -> None:
    state = _run(_inserting())
    assert state.mirror == ("msg0", "note1")
    assert state.tasks[1].request == ("msg0", "spoken2", "note1")
    # the replacement returns, the say's push diffs: its create names msg0
    state = _run(_inserting(), f"{RUN}; resume T0; wake T1")
    assert [(op.item, op.after) for op in state.to_server] == [("spoken2", "msg0")]


def test_the_catalogs_record_appends_as_before() -> None:
    """The same run on the catalog's own record (`request = tail`) appends, as the model
    did before: the record, not the site's name, decides; and the model of appends
    (`appends_locally`, z3's) appends whatever the records say."""
    assert LOCAL_ORDER["spoken-message"].request is LocalPosition.TAIL
    config = Config(VARIANTS_BY_NAME["lock5"], SAY, SAY.environment)
    assert _run(config).tasks[1].request == ("msg0", "note1", "spoken2")
    assert not any(p.places_request() for p in plan(_inserting(appends_locally=True)))
    assert config.behaviour() != _inserting().behaviour()


def test_a_message_made_at_the_snapshot_goes_to_the_tail() -> None:
    """Made in the step that takes the snapshot, the message is the youngest item: the
    insert by creation time is the append."""
    state = _run(_inserting(), "call T0; server-apply T0 note1; client-apply T0 note1; call T1")
    assert state.tasks[1].request == ("msg0", "note1", "spoken2")


def test_only_the_spoken_message_places_its_request() -> None:
    config = _inserting(SCENARIOS_BY_NAME["spoken-during-tool-push"])
    sites = [config.site(t).name for t in range(len(config.scenario.calls))]
    placing = [p.places_request() for p in plan(config)]
    assert dict(zip(sites, placing, strict=True)) == {
        "tool-outputs": False,
        "spoken-message": True,
    }
