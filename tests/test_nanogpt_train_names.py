"""What nanoGPT's ``train.py`` needs beyond its ``model.py``, run on minigrad and on torch and compared.

nanoGPT's own source is not in this repository (nor downloaded by tests), so this test is a
program written here that makes the same calls as ``train.py`` in the same order on a tiny
model with shared weights: the CUDA switches set at the top, the dtype table that names
bfloat16, the memmap batches, the GradScaler (disabled on the CPU), gradient accumulation and
clipping, ``zero_grad(set_to_none=True)``, the ``@no_grad()`` loss estimate filling
``zeros(eval_iters)`` with ``.item()``, f-string formatting of 0-d tensors, the comparison with a
Python float, and the checkpoint saved and loaded. (With nanoGPT checked out, ``train.py`` itself ran
with its imports changed to minigrad, for 10 steps plus a resume: see issue 27's note.)
"""
from __future__ import annotations

import math
import os
import warnings
from contextlib import nullcontext

import numpy as np
import pytest

from tests.test_parity_regressions import same

torch = pytest.importorskip("torch")

import minigrad  # noqa: E402


def test_the_imports_of_train_py():
    from minigrad.distributed import destroy_process_group, init_process_group  # noqa: F401
    from minigrad.nn.parallel import DistributedDataParallel as DDP  # noqa: F401
    same(lambda lib: (lib.cuda.is_available(), lib.cuda.is_available() and lib.cuda.is_bf16_supported()))


@pytest.mark.parametrize("use", [lambda lib, m: lib.nn.parallel.DistributedDataParallel(m),
                                 lambda lib, m: lib.distributed.get_rank(),
                                 lambda lib, m: lib.distributed.destroy_process_group(),
                                 lambda lib, m: (lib.distributed.is_initialized(),),
                                 lambda lib, m: (lambda dp: (dp.module is m, dp(lib.ones(1, 2)),
                                                             list(dp.state_dict())))(lib.nn.DataParallel(m))])
def test_parallel_wrappers_without_devices_or_process_groups(use):
    def prog(lib):
        m = lib.nn.Linear(2, 2)
        with lib.no_grad():
            m.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
            m.bias.zero_()
        return use(lib, m)
    same(prog)


def _train(lib, data_dir: str, dtype: str = "float32"):
    """train.py's loop, call for call, on a bigram model with the weights both libraries share."""
    lib.backends.cuda.matmul.allow_tf32 = True
    lib.backends.cudnn.allow_tf32 = True
    ptdtype = {"float32": lib.float32, "bfloat16": lib.bfloat16, "float16": lib.float16}[dtype]
    assert ptdtype is not None
    ctx = nullcontext()
    block_size, batch_size, eval_iters, accumulation = 4, 3, 2, 2
    starts = iter([[0, 5, 9], [2, 7, 1], [3, 3, 8], [6, 0, 4], [1, 2, 3], [9, 8, 7], [4, 4, 4], [0, 1, 2],
                   [5, 6, 7], [2, 2, 2], [3, 1, 0], [8, 8, 8]])

    def get_batch(split):
        data = np.memmap(os.path.join(data_dir, f"{split}.bin"), dtype=np.uint16, mode="r")
        ix = lib.tensor(next(starts))  # (train.py draws lib.randint(len(data) - block_size, (batch_size,)))
        assert lib.randint(len(data) - block_size, (batch_size,)).shape == (batch_size,)
        x = lib.stack([lib.from_numpy((data[i:i + block_size]).astype(np.int64)) for i in ix])
        y = lib.stack([lib.from_numpy((data[i + 1:i + 1 + block_size]).astype(np.int64)) for i in ix])
        return x.to("cpu"), y.to("cpu")

    class Bigram(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = lib.nn.Embedding(11, 11)
            with lib.no_grad():
                self.emb.weight.copy_(lib.tensor(np.linspace(-1, 1, 121).reshape(11, 11).astype(np.float32)))

        def forward(self, idx, targets):
            logits = self.emb(idx)
            return logits, lib.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                                           ignore_index=-1)

    model = Bigram()
    model.to("cpu")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        scaler = lib.cuda.amp.GradScaler(enabled=(dtype == "float16"))
    optimizer = lib.optim.AdamW(model.parameters(), lr=0.1, betas=(0.9, 0.95), weight_decay=0.1)

    @lib.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ["train", "val"]:
            losses = lib.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                with ctx:
                    logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    printed, best_val_loss = [], 1e9
    X, Y = get_batch("train")
    for iter_num in range(3):
        lr = 0.1 * 0.5 * (1.0 + math.cos(math.pi * iter_num / 3))
        for param_group in optimizer.param_groups:
            param_group["lr"] = lr
        if iter_num % 2 == 0:
            losses = estimate_loss()
            printed.append(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
            if losses["val"] < best_val_loss:
                best_val_loss = losses["val"]
                checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                              "model_args": {"n_layer": 1}, "iter_num": iter_num, "best_val_loss": best_val_loss,
                              "config": {"dtype": dtype, "lr": 0.1}}
                lib.save(checkpoint, os.path.join(data_dir, f"ckpt_{lib.__name__}.pt"))
        for micro_step in range(accumulation):
            with ctx:
                logits, loss = model(X, Y)
                loss = loss / accumulation
            X, Y = get_batch("train")
            scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        lib.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        printed.append(f"iter {iter_num}: loss {loss.item() * accumulation:.4f}")
    resumed = lib.load(os.path.join(data_dir, f"ckpt_{lib.__name__}.pt"), map_location="cpu")
    model.load_state_dict(resumed["model"])
    optimizer.load_state_dict(resumed["optimizer"])
    return printed, resumed["iter_num"], float(resumed["best_val_loss"]), model.emb.weight, scaler.is_enabled()


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_train_py_calls_give_torchs_numbers(tmp_path, dtype):
    tokens = (np.arange(64) * 7 % 11).astype(np.uint16)
    tokens[:48].tofile(tmp_path / "train.bin")
    tokens[40:].tofile(tmp_path / "val.bin")
    try:
        same(lambda lib: _train(lib, str(tmp_path), dtype))
    finally:
        for lib in (minigrad, torch):
            lib.set_float32_matmul_precision("highest")
