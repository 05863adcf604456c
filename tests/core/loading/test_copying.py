"""A compressor with loaded models can be deep-copied and pickled (Ray actors, multiprocessing workers)."""

from __future__ import annotations

import copy
import pickle
import threading

import pytest

from tpc_core import TPCCompressor
from tpc_core.engine.tokens import resolve_token_counter
from tpc_core.loading.copying import picklable_state, restore_state

TEXT = ("The harbour froze in January. Ships waited outside for weeks. The mayor ordered icebreakers from the north. "
        "Fishermen sold their catch in the next town. By March the ice was gone and trade resumed.")
QUESTION = "What did the mayor order?"


def _same_result(first, second) -> None:
    assert second.compressed_prompt == first.compressed_prompt
    assert [s.score for s in second.sentences] == pytest.approx([s.score for s in first.sentences])
    assert second.task_description == first.task_description


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda c: pickle.loads(pickle.dumps(c))], ids=["deepcopy", "pickle"])
def test_loaded_tpc_mini_survives_deepcopy_and_pickle(tpc_mini, clone):
    before = tpc_mini.compress(TEXT, question=QUESTION, target_tokens=25)  # fills the splitter cache too
    copied = clone(tpc_mini)

    assert isinstance(copied, TPCCompressor) and copied is not tpc_mini
    assert copied._ctd.lock is not tpc_mini._ctd.lock
    assert copied.encoder.model is not tpc_mini.encoder.model  # an independent set of weights
    assert copied.engine.scorer.encoder is copied.encoder
    _same_result(before, copied.compress(TEXT, question=QUESTION, target_tokens=25))
    _same_result(before, tpc_mini.compress(TEXT, question=QUESTION, target_tokens=25))  # the original still works


def test_copy_with_a_loaded_task_descriptor_and_a_held_lock(tiny_checkpoint):
    compressor = TPCCompressor.from_pretrained(tiny_checkpoint, device="cpu", load_ctd=True)
    before = compressor.compress(TEXT, target_tokens=20)  # prompt-agnostic: uses the CTD
    with compressor._ctd.lock:  # copying while the CTD is in use must not copy the held lock
        copied = pickle.loads(pickle.dumps(compressor))
    assert copied._ctd.loaded
    # the copy's finder asks the copy's CTD, not the original's
    assert copied.engine.task_finder.describe.__self__ is copied._ctd
    assert copied._ctd.lock.acquire(blocking=False)  # a fresh, unheld lock
    copied._ctd.lock.release()
    _same_result(before, copied.compress(TEXT, target_tokens=20))


def test_token_counters_pickle_and_count_the_same(tpc_mini):
    counter = resolve_token_counter(None, tpc_mini.encoder.tokenizer)
    restored = pickle.loads(pickle.dumps(counter))
    assert restored(TEXT) == counter(TEXT) > 0
    assert restored.count_many([TEXT, QUESTION]) == counter.count_many([TEXT, QUESTION])


def test_state_helpers_rebuild_locks_and_caches():
    class Holder:
        pass

    holder = Holder()
    holder.lock, holder.rlock, holder.cache, holder.value = threading.Lock(), threading.RLock(), {"a": 1}, [1, 2]
    state = picklable_state(vars(holder), {"cache": dict})
    assert "cache" not in state and "lock" not in state and state["value"] == [1, 2]
    restored = Holder()
    restore_state(restored, pickle.loads(pickle.dumps(state)), {"cache": dict})
    assert isinstance(restored.lock, type(threading.Lock())) and isinstance(restored.rlock, type(threading.RLock()))
    assert restored.cache == {} and restored.value == [1, 2]
