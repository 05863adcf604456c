"""Calls on one engine from several threads: a prompt-agnostic call generating its task description does not
hold up a prompt-aware one. Tiny random models."""

from __future__ import annotations

DOCS = ["Alice went to Paris. Bob stayed home.", "Carol flew to Rome. Rome is in Italy."]


def test_a_slow_agnostic_call_does_not_block_aware_calls(tiny):
    """The CTD is held mid-generation; an aware call on the same engine must still finish."""
    import threading

    descriptor = tiny._ctd.get()
    release, started = threading.Event(), threading.Event()
    original = descriptor.describe

    def held(prompts, **kwargs):
        started.set()
        release.wait(120)
        return original(prompts, **kwargs)

    descriptor.describe = held
    try:
        agnostic = threading.Thread(target=tiny.compress, args=(DOCS[0] + " Zed is here.",),
                                     kwargs={"rate": 0.5, "describe_bare": True})
        agnostic.start()
        assert started.wait(120)
        outcome: list = []
        aware = threading.Thread(target=lambda: outcome.append(tiny.compress(DOCS, question="Who?", rate=0.5)))
        aware.start()
        aware.join(120)
        finished_while_held = not aware.is_alive()
    finally:
        release.set()
        agnostic.join(120)
        del descriptor.describe
    assert finished_while_held and outcome[0].task_source == "question"
