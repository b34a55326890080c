"""The model-slot gate's order: the call with the most dependent calls still ahead goes first, then the
oldest task (what keeps a long chain from being left to start at the end of a run)."""

from __future__ import annotations

import threading

from rageval_core.llm.base import ProviderError
from rageval_core.run.execute import PriorityGate, TaskTag, slot_priority


def _tag(priority: int, chain: int) -> TaskTag:
    return TaskTag("run", f"row{priority}", "faithfulness", "decomposed", priority, chain=chain)


def test_slot_priority_counts_down_the_chain_then_stays_at_one() -> None:
    tag = _tag(7, chain=3)
    assert [slot_priority(tag) for _ in range(4)] == [(-3, 7), (-2, 7), (-1, 7), (-1, 7)]
    assert tag.steps == 4


def test_a_call_outside_a_task_has_the_neutral_priority() -> None:
    assert slot_priority(None) == (0, 0)


def test_longer_remaining_chains_beat_older_tasks_and_age_breaks_ties() -> None:
    old_single, young_long, old_long = _tag(1, chain=1), _tag(9, chain=3), _tag(2, chain=3)
    keys = sorted([slot_priority(old_single), slot_priority(young_long), slot_priority(old_long)])
    assert keys == [(-3, 2), (-3, 9), (-1, 1)]


def test_a_freed_slot_goes_to_the_best_waiter_not_the_first_to_arrive() -> None:
    gate = PriorityGate(1, threading.Event())
    gate.acquire((0, 0))  # the only slot is taken
    order: list[str] = []

    def waiter(name: str, key: tuple[int, int]) -> None:
        gate.acquire(key)
        order.append(name)
        gate.release()

    threads = []
    for name, key in [("single-old", (-1, 1)), ("long-young", (-3, 9)), ("long-old", (-3, 2))]:
        t = threading.Thread(target=waiter, args=(name, key))
        t.start()
        threads.append(t)
        # each queues before the next starts, so arrival order is single-old, long-young, long-old
        while len(gate._heap) < len(threads):
            threading.Event().wait(0.001)
    gate.release()
    for t in threads:
        t.join(5)
    assert order == ["long-old", "long-young", "single-old"]


def test_a_waiter_leaves_with_cancelled_when_the_run_is_cancelled() -> None:
    cancel = threading.Event()
    gate = PriorityGate(1, cancel)
    gate.acquire((0, 0))
    outcome: list[str] = []

    def waiter() -> None:
        try:
            gate.acquire((-2, 3))
            outcome.append("granted")
        except ProviderError as exc:
            outcome.append(exc.kind)

    t = threading.Thread(target=waiter)
    t.start()
    while not gate._heap:
        threading.Event().wait(0.001)
    cancel.set()
    gate.wake()
    t.join(5)
    assert outcome == ["cancelled"]
    assert gate._heap == []
