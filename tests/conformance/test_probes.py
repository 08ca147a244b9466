"""The generic probes see lock holders, waiters and the enclosing site call."""

from __future__ import annotations

import asyncio

from proofs.engines.conformance.probes import HolderLock, site_frame


def test_a_holder_lock_records_its_holder_and_waiters_first_first() -> None:
    async def main() -> None:
        lock = HolderLock()
        seen: list[tuple[str | None, list[str]]] = []

        def names() -> tuple[str | None, list[str]]:
            holder = None if lock.holder is None else lock.holder.get_name()
            return holder, [task.get_name() for task in lock.waiting if task is not None]

        async def hold(release: asyncio.Event) -> None:
            async with lock:
                await release.wait()

        first, second = asyncio.Event(), asyncio.Event()
        tasks = [
            asyncio.create_task(hold(first), name="T0"),
            asyncio.create_task(hold(second), name="T1"),
        ]
        await asyncio.sleep(0)
        seen.append(names())
        first.set()
        await asyncio.sleep(0)
        seen.append(names())  # handed over, the waiter has not run yet
        await asyncio.sleep(0)
        seen.append(names())
        second.set()
        await asyncio.gather(*tasks)
        seen.append(names())
        assert seen == [("T0", ["T1"]), (None, ["T1"]), ("T1", []), (None, [])]

    asyncio.run(main())


class Site:
    def push(self) -> str | None:
        return hook()


def hook() -> str | None:
    return record()


def record() -> str | None:
    frame = site_frame({"push"}, lambda owner: isinstance(owner, Site))
    return None if frame is None else frame.f_code.co_name


def test_site_frame_finds_the_enclosing_site_call_and_only_on_its_owner() -> None:
    assert Site().push() == "push"
    assert hook() is None
