"""Common mistakes in stage 12, as small mutants of the solution.

The solution's cells are read from solutions/12_attention.ipynb (their code, without the
nbgrader markers); each mutant swaps one piece of text, and the swap asserts that the text is
there, so a change to the solution that a mutant no longer matches fails loudly.
"""
import json
from pathlib import Path

from tests.mutants import Mutant

_SOLUTION = Path(__file__).resolve().parents[2] / "solutions" / "12_attention.ipynb"


def _cells() -> dict:
    cells = {}
    for cell in json.loads(_SOLUTION.read_text(encoding="utf-8"))["cells"]:
        meta = cell["metadata"].get("nbgrader", {})
        if meta.get("solution"):
            source = "".join(cell["source"])
            cells[meta["grade_id"]] = "".join(line for line in source.splitlines(keepends=True)
                                              if line.strip() not in ("### BEGIN SOLUTION", "### END SOLUTION"))
    return cells


CELLS = _cells()


def _swap(part: str, *pairs: str) -> dict:
    source = CELLS[part]
    for old, new in zip(pairs[::2], pairs[1::2]):
        assert old in source, old
        source = source.replace(old, new)
    return {part: source}


GELU_ALL = {"gelu", "gelu_saved", "gpt", "training"}
LN_ALL = {"layer_norm", "layer_norm_saved", "layer_norm_module", "gpt", "training"}
ATTENTION_ALL = {"attention", "attention_saved", "attention_module", "gpt", "training"}
CE_ALL = {"cross_entropy", "cross_entropy_saved", "training"}
SLOPE = ("slope = 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * c * (\n"
         "            1 + 3 * 0.044715 * a * a\n        )")

MUTANTS = [
    # -- GELU
    Mutant("gelu_exact_erf_instead_of_tanh",
           _swap("gelu", "return minigrad.from_numpy(0.5 * a * (1 + t))",
                 "return minigrad.from_numpy(0.5 * a * (1 + np.vectorize(math.erf)(a / math.sqrt(2))))"),
           lost=GELU_ALL, feedback={"gelu": "the exact GELU"}),
    Mutant("gelu_slope_without_the_inner_derivative",
           _swap("gelu", SLOPE, "slope = 0.5 * (1 + t) + 0.5 * a * (1 - t * t) * c"),
           lost=GELU_ALL, feedback={"gelu": "leaves out the inner derivative"}),
    Mutant("gelu_slope_with_half_the_product_rule",
           _swap("gelu", SLOPE, "slope = 0.5 * a * (1 - t * t) * c * (1 + 3 * 0.044715 * a * a)"),
           lost=GELU_ALL, feedback={"gelu": "half of the product rule"}),
    Mutant("gelu_keeps_tanh_as_well",
           _swap("gelu", "        ctx.save_for_backward(x)\n        a = x.detach().numpy()\n"
                         "        t = np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a * a * a))\n",
                 "        a = x.detach().numpy()\n"
                 "        t = np.tanh(math.sqrt(2 / math.pi) * (a + 0.044715 * a * a * a))\n"
                 "        ctx.save_for_backward(x, minigrad.from_numpy(t))\n",
                 "        (x,) = ctx.saved_tensors", "        x, _ = ctx.saved_tensors"),
           lost={"gelu_saved"}, feedback={"gelu_saved": "tanh(u) is cheap to compute again"}),
    Mutant("gelu_keeps_the_input_array_on_ctx",
           _swap("gelu", "        ctx.save_for_backward(x)\n", "        ctx.x = x.detach().numpy()\n",
                 "        (x,) = ctx.saved_tensors\n        a = x.detach().numpy()\n", "        a = ctx.x\n"),
           lost={"gelu_saved"}, feedback={"gelu_saved": "escaped the version check"}),
    # -- LayerNorm
    Mutant("layer_norm_unbiased_variance",
           _swap("layer_norm", "rstd = 1 / np.sqrt((centred * centred).mean(-1, keepdims=True) + eps)",
                 "rstd = 1 / np.sqrt((centred * centred).sum(-1, keepdims=True) / (a.shape[-1] - 1) + eps)"),
           lost=LN_ALL, feedback={"layer_norm": "the unbiased variance"}),
    Mutant("layer_norm_eps_outside_the_square_root",
           _swap("layer_norm", "rstd = 1 / np.sqrt((centred * centred).mean(-1, keepdims=True) + eps)",
                 "rstd = 1 / (np.sqrt((centred * centred).mean(-1, keepdims=True)) + eps)"),
           lost=LN_ALL, feedback={"layer_norm": "eps outside the square root"}),
    Mutant("layer_norm_dx_without_the_mean_terms",
           _swap("layer_norm", "dx = rstd * (\n            dxhat\n            - dxhat.mean(-1, keepdims=True)\n"
                               "            - xhat * (dxhat * xhat).mean(-1, keepdims=True)\n        )",
                 "dx = rstd * dxhat"),
           lost={"layer_norm", "layer_norm_saved", "layer_norm_module", "gpt", "training"},
           feedback={"layer_norm": "Leaving out either mean term"}),
    Mutant("layer_norm_keeps_x_and_xhat",
           _swap("layer_norm", "minigrad.from_numpy(xhat), minigrad.from_numpy(rstd), weight\n",
                 "minigrad.from_numpy(xhat), minigrad.from_numpy(rstd), weight, x\n",
                 "xhat, rstd, weight = (t.detach().numpy() for t in ctx.saved_tensors)",
                 "xhat, rstd, weight, _ = (t.detach().numpy() for t in ctx.saved_tensors)"),
           lost={"layer_norm_saved"}, feedback={"layer_norm_saved": "keeping both x and x̂"}),
    Mutant("layer_norm_weight_not_ones",
           _swap("layer_norm", "self.weight = nn.Parameter(minigrad.ones(n_embd))",
                 "self.weight = nn.Parameter(minigrad.rand(n_embd))"),
           lost={"layer_norm_module", "gpt", "training"}, feedback={"layer_norm_module": "weight all ones"}),
    # -- attention
    Mutant("attention_without_the_mask",
           _swap("attention", "        s = np.where(np.tri(t, dtype=bool), s, -np.inf)\n", ""),
           lost=ATTENTION_ALL, feedback={"attention": "no mask"}),
    Mutant("attention_mask_hides_the_diagonal",
           _swap("attention", "np.tri(t, dtype=bool)", "np.tri(t, k=-1, dtype=bool)"),
           lost=ATTENTION_ALL, feedback={"attention": "itself included"}),
    Mutant("attention_without_the_scale",
           _swap("attention", "s = qa @ np.swapaxes(ka, -1, -2) / math.sqrt(d)", "s = qa @ np.swapaxes(ka, -1, -2)",
                 " / math.sqrt(qa.shape[-1])", ""),
           lost=ATTENTION_ALL, feedback={"attention": "no scale"}),
    Mutant("attention_softmax_without_the_row_maximum",
           _swap("attention", "p = np.exp(s - s.max(-1, keepdims=True))", "p = np.exp(s)"),
           lost=ATTENTION_ALL, feedback={"attention": "Subtract each row's maximum"}),
    Mutant("attention_backward_without_the_row_sum",
           _swap("attention", "ds = p * (dp - (dp * p).sum(-1, keepdims=True)) / math.sqrt(qa.shape[-1])",
                 "ds = p * dp / math.sqrt(qa.shape[-1])"),
           lost=ATTENTION_ALL, feedback={"attention": "rowsum(dP ⊙ P)"}),
    Mutant("attention_dk_without_the_transpose",
           _swap("attention", "minigrad.from_numpy(np.swapaxes(ds, -1, -2) @ qa)", "minigrad.from_numpy(ds @ qa)"),
           lost=ATTENTION_ALL, feedback={"attention": "the gradient of k"}),
    Mutant("attention_keeps_the_scores_too",
           _swap("attention", "ctx.save_for_backward(q, k, v, minigrad.from_numpy(p))",
                 "ctx.save_for_backward(q, k, v, minigrad.from_numpy(p), minigrad.from_numpy(s))",
                 "qa, ka, va, p = (t.detach().numpy() for t in ctx.saved_tensors)",
                 "qa, ka, va, p, _ = (t.detach().numpy() for t in ctx.saved_tensors)"),
           lost={"attention_saved"}, feedback={"attention_saved": "the scores S are not needed"}),
    Mutant("attention_heads_merged_without_the_transpose",
           _swap("attention", "return self.proj(y.transpose(1, 2).reshape(b, t, c))", "return self.proj(y.reshape(b, t, c))"),
           lost={"attention_module", "gpt", "training"}, feedback={"attention_module": "transpose(1, 2)"}),
    # -- cross-entropy
    Mutant("cross_entropy_sum_instead_of_mean",
           _swap("cross_entropy", "loss = -log_p[np.arange(z.shape[0]), y].mean()",
                 "loss = -log_p[np.arange(z.shape[0]), y].sum()",
                 "d * (grad.detach().numpy() / p.shape[0])", "d * grad.detach().numpy()"),
           lost=CE_ALL, feedback={"cross_entropy": "return their mean"}),
    Mutant("cross_entropy_gradient_without_one_over_n",
           _swap("cross_entropy", "d * (grad.detach().numpy() / p.shape[0])", "d * grad.detach().numpy()"),
           lost=CE_ALL, feedback={"cross_entropy": "without the 1/N"}),
    Mutant("cross_entropy_without_the_row_maximum",
           _swap("cross_entropy", "shifted = z - z.max(-1, keepdims=True)", "shifted = z"),
           lost=CE_ALL, feedback={"cross_entropy": "overflows"}),
    Mutant("cross_entropy_gradient_ignores_grad_output",
           _swap("cross_entropy", "d * (grad.detach().numpy() / p.shape[0])", "d / p.shape[0]"),
           lost=CE_ALL, feedback={"cross_entropy": "ignores grad_output"}),
    Mutant("cross_entropy_keeps_the_logits_too",
           _swap("cross_entropy", "ctx.save_for_backward(minigrad.from_numpy(np.exp(log_p)), targets)",
                 "ctx.save_for_backward(minigrad.from_numpy(np.exp(log_p)), targets, minigrad.from_numpy(log_p))",
                 "p, targets = (t.detach().numpy() for t in ctx.saved_tensors)",
                 "p, targets, _ = (t.detach().numpy() for t in ctx.saved_tensors)"),
           lost={"cross_entropy_saved"}, feedback={"cross_entropy_saved": "(N, V) array kept"}),
    # -- the GPT
    Mutant("block_post_norm",
           _swap("gpt", "x = x + self.attn(self.ln1(x))", "x = self.ln1(x + self.attn(x))"),
           lost={"gpt", "training"}, feedback={"gpt": "pre-norm with residuals"}),
    Mutant("gpt_without_the_position_embedding",
           _swap("gpt", "x = self.tok(idx) + self.pos(minigrad.arange(idx.shape[1]))", "x = self.tok(idx)"),
           lost={"gpt", "training"}, feedback={"gpt": "tok(idx) + pos(arange(T))"}),
    Mutant("gpt_with_minigrads_layer_norm",
           _swap("gpt", "self.ln_f = LayerNorm(n_embd)", "self.ln_f = nn.LayerNorm(n_embd)"),
           lost={"gpt", "training"}, feedback={"gpt": "5 with 2 blocks"}),
    Mutant("block_with_minigrads_gelu",
           _swap("gpt", "GELUFunction.apply(self.fc(self.ln2(x)))", "F.gelu(self.fc(self.ln2(x)), approximate='tanh')"),
           lost={"gpt", "training"}, feedback={"gpt": "your GELUFunction"}),
]
