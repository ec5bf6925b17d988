"""Samplers, iterable datasets and the DataLoader's options against ``torch.utils.data``.

Where the order is deterministic (sequential samplers, given index lists, streams) the batches
must be torch's exactly; where it is random, the properties each sampler promises are checked
(a permutation, the subset, weights of zero never drawn, proportions), not torch's stream.
"""
from __future__ import annotations

import collections

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import minigrad
import minigrad.utils.data as mdata

torch = pytest.importorskip("torch")
tdata = pytest.importorskip("torch.utils.data")


def as_lists(batch):
    """A batch as plain Python values (tensors to lists), to compare minigrad's with torch's."""
    if hasattr(batch, "tolist"):
        return batch.tolist()
    if isinstance(batch, dict):
        return {k: as_lists(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return [as_lists(b) for b in batch]
    return batch


def outcome(make):
    """What ``make()`` gives: ("ok", value) or (exception type name, message)."""
    try:
        return "ok", make()
    except Exception as e:  # noqa: BLE001 (the comparison is the point)
        return type(e).__name__, str(e)


class Stream:
    """The same iterable dataset for both libraries: samples i, i*i for i < n."""

    @staticmethod
    def make(data, lib, n: int, with_len: bool):
        class S(data.IterableDataset):
            def __iter__(self):
                for i in range(n):
                    yield lib.tensor([float(i)]), i * i

        if with_len:
            S.__len__ = lambda self: n
        return S()


loader_kwargs = st.fixed_dictionaries({}, optional={
    "batch_size": st.sampled_from([None, 1, 2, 3, 0, -1]),
    "shuffle": st.sampled_from([None, False, True]),
    "drop_last": st.booleans(),
    "num_workers": st.sampled_from([0, -1]),
    "timeout": st.sampled_from([0, -1.0]),
    "prefetch_factor": st.sampled_from([None, 2]),
    "persistent_workers": st.booleans(),
})


@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 7), kwargs=loader_kwargs, sampler=st.sampled_from([None, "sequential", "list"]),
       batch_sampler=st.sampled_from([None, "batches"]), kind=st.sampled_from(["tensor", "stack", "dict", "stream",
                                                                                "stream_len"]))
def test_loader_matches_torch(n, kwargs, sampler, batch_sampler, kind):
    results = []
    for lib, data in ((minigrad, mdata), (torch, tdata)):
        def make(lib=lib, data=data):
            x, y = lib.arange(n * 2).reshape(n, 2).double(), lib.arange(n)
            if kind == "tensor":
                dataset = data.TensorDataset(x, y)
            elif kind == "stack":
                dataset = data.StackDataset(data.TensorDataset(x), data.TensorDataset(y))
            elif kind == "dict":
                dataset = data.StackDataset(x=data.TensorDataset(x), y=data.TensorDataset(y))
            else:
                dataset = Stream.make(data, lib, n, kind == "stream_len")
            extra = dict(kwargs)
            if sampler == "sequential":
                extra["sampler"] = data.SequentialSampler(range(n))
            elif sampler == "list":
                extra["sampler"] = list(reversed(range(n)))
            if batch_sampler == "batches":
                extra["batch_sampler"] = [[i, (i + 1) % max(n, 1)] for i in range(n)][::-1]
            loader = data.DataLoader(dataset, **extra)
            random = kwargs.get("shuffle") is True
            batches = [as_lists(b) for b in loader]
            try:
                length = len(loader)
            except TypeError:
                length = "no len"
            if random:  # the order is random: compare what was drawn, not in which order
                batches = sorted(str(b) for b in batches)
            return batches, length
        results.append(outcome(make))
    (got_kind, got), (want_kind, want) = results
    assert got_kind == want_kind, (got, want)
    if got_kind == "ok":
        assert got == want
    else:
        assert got.split("\n")[0][:60] == want.split("\n")[0][:60]


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 9), num_samples=st.one_of(st.none(), st.integers(1, 25)), replacement=st.booleans(),
       seed=st.integers(0, 2**16))
def test_random_sampler_properties(n, num_samples, replacement, seed):
    sampler = mdata.RandomSampler(range(n), replacement=replacement, num_samples=num_samples,
                                  generator=np.random.default_rng(seed))
    drawn = list(sampler)
    assert len(drawn) == len(sampler) == (n if num_samples is None else num_samples)
    assert all(0 <= i < n for i in drawn)
    if not replacement:  # whole permutations, then part of one: counts differ by at most one
        counts = collections.Counter(drawn)
        assert max(counts.values()) - min(counts.get(i, 0) for i in range(n)) <= 1
    torch_sampler = tdata.RandomSampler(range(n), replacement=replacement, num_samples=num_samples)
    assert len(torch_sampler) == len(sampler)


def test_samplers_are_reproducible_under_manual_seed():
    orders = []
    for _ in range(2):
        minigrad.manual_seed(3)
        orders.append((list(mdata.RandomSampler(range(20))), list(mdata.SubsetRandomSampler([5, 6, 7, 8])),
                       list(mdata.WeightedRandomSampler([0.1, 0.0, 5.0], 10))))
    assert orders[0] == orders[1]
    assert sorted(orders[0][0]) == list(range(20)) and sorted(orders[0][1]) == [5, 6, 7, 8]


@settings(max_examples=40, deadline=None)
@given(weights=st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=1, max_size=6), num_samples=st.integers(1, 8),
       replacement=st.booleans(), seed=st.integers(0, 2**16))
def test_weighted_sampler_properties(weights, num_samples, replacement, seed):
    made = []
    for data in (mdata, tdata):
        sampler = data.WeightedRandomSampler(weights, num_samples, replacement=replacement,
                                             generator=np.random.default_rng(seed) if data is mdata else None)
        made.append(outcome(lambda sampler=sampler: list(sampler)))
    (kind, drawn), (torch_kind, _) = made
    assert kind == torch_kind  # both refuse all-zero weights, or too few nonzero ones without replacement
    if kind == "ok":
        positive = sum(w > 0 for w in weights)
        assert len(drawn) == num_samples
        assert all(weights[i] > 0 for i in drawn[:positive if not replacement else num_samples])
        if not replacement:  # each index once: first those of positive weight, then the others in order
            assert len(set(drawn)) == len(drawn)
            assert drawn[positive:] == [i for i, w in enumerate(weights) if w == 0][:num_samples - positive]


def test_weighted_sampler_follows_the_weights():
    drawn = list(mdata.WeightedRandomSampler([1.0, 3.0, 0.0], 40000, generator=np.random.default_rng(0)))
    counts = collections.Counter(drawn)
    assert counts[2] == 0
    assert abs(counts[1] / 40000 - 0.75) < 0.01  # 0.75 +- 4.6 standard deviations


@pytest.mark.parametrize("make", [
    lambda d: d.RandomSampler(range(3), replacement=1),
    lambda d: d.RandomSampler(range(3), num_samples=0),
    lambda d: d.RandomSampler(range(0)),
    lambda d: d.WeightedRandomSampler([1.0], 0),
    lambda d: d.WeightedRandomSampler([1.0], 2, replacement="yes"),
    lambda d: d.WeightedRandomSampler([[1.0, 2.0]], 2),
    lambda d: d.BatchSampler(range(3), 0, False),
    lambda d: d.BatchSampler(range(3), 2, 1),
    lambda d: d.StackDataset(),
    lambda d: d.StackDataset(d.TensorDataset(minigrad.ones(2) if d is mdata else torch.ones(2)),
                             x=d.TensorDataset(minigrad.ones(2) if d is mdata else torch.ones(2))),
])
def test_refusals_match_torch(make):
    got, want = outcome(lambda: make(mdata)), outcome(lambda: make(tdata))
    assert got[0] == want[0]
    if got[0] != "ok":
        assert got[1] == want[1]


def test_batch_sampler_and_chain_dataset_match_torch():
    for drop_last in (False, True):
        assert list(mdata.BatchSampler(range(7), 3, drop_last)) == list(tdata.BatchSampler(range(7), 3, drop_last))
        assert len(mdata.BatchSampler(range(7), 3, drop_last)) == len(tdata.BatchSampler(range(7), 3, drop_last))
    chains = []
    for lib, data in ((minigrad, mdata), (torch, tdata)):
        chained = Stream.make(data, lib, 2, True) + Stream.make(data, lib, 3, True)
        assert isinstance(chained, data.ChainDataset)
        chains.append(([as_lists(s) for s in chained], len(chained)))
    assert chains[0] == chains[1]
    assert mdata.get_worker_info() is None


def test_default_convert_matches_torch():
    sample = {"a": np.arange(3), "b": (np.float32(2.5), [np.ones(2), "text"]), "c": 4}
    got, want = mdata.default_convert(sample), tdata.default_convert(sample)
    assert as_lists(got) == as_lists(want)
    assert type(got["a"]).__name__ == "Tensor" and isinstance(got["c"], int)
