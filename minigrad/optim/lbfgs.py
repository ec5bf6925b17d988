"""``LBFGS``: a quasi-Newton method that learns the curvature from the last few steps.

Gradient descent steps along ``-g``. Newton's method steps along ``-H⁻¹ g``,
which lands on the minimum of a quadratic in one step, but needs the Hessian
``H``. BFGS builds an approximation of ``H⁻¹`` from what each step shows: the
step taken ``s = x_new - x_old`` and the change of gradient ``y = g_new -
g_old`` (for a quadratic, ``y = H s``). L-BFGS keeps only the last
``history_size`` pairs and applies the approximation with the "two-loop
recursion", never forming a matrix:

    q = -g
    for i from newest to oldest:  a_i = ro_i * s_i·q;  q -= a_i * y_i      # ro_i = 1 / y_i·s_i
    r = H_diag * q                                      # H_diag = y·s / y·y of the newest pair
    for i from oldest to newest:  b = ro_i * y_i·r;   r += (a_i - b) * s_i
    d = r                                               # the direction

One ``step(closure)`` runs up to ``max_iter`` iterations, so it needs a
``closure`` that clears the gradients, recomputes the loss, backpropagates and
returns the loss. Each iteration moves ``t * d``: with ``line_search_fn=None``
``t = lr`` (the first iteration of all scales it down to ``lr / sum|g|``), with
``"strong_wolfe"`` ``t`` is searched for until the loss has dropped enough and
the slope has flattened enough (the strong Wolfe conditions), by bracketing
and cubic interpolation. It stops early when the gradient is below
``tolerance_grad``, or the loss or the step changes less than
``tolerance_change``, or after ``max_eval`` evaluations of the closure.

This is PyTorch's algorithm, port of minFunc, operation for operation: the
arithmetic runs in NumPy on the flattened parameters, in their dtype, with
PyTorch's mix of 0-dim tensors and Python numbers for the scalars, so float64
trajectories agree to rounding. As in PyTorch, the state (kept under the first
parameter) holds ``func_evals``, ``n_iter``, the last direction ``d`` and step
``t``, the history ``old_dirs`` (the ``y``), ``old_stps`` (the ``s``), ``ro``,
``H_diag``, ``prev_flat_grad``, ``prev_loss``, and ``al`` (the ``a_i``).
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np

from minigrad.autograd.grad_mode import enable_grad
from minigrad.optim.optimizer import Optimizer
from minigrad._tensor import Tensor

# A scalar is either a Python number or, where PyTorch has a 0-dim tensor, a NumPy scalar of the parameters'
# dtype; NumPy's promotion rules (NEP 50) then round mixed arithmetic as PyTorch does.
Scalar = Any


class LBFGS(Optimizer):
    """L-BFGS over all parameters at once, flattened into one vector: one parameter group only."""

    def __init__(
        self,
        params: Iterable,
        lr: float = 1,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        """``max_eval`` defaults to ``max_iter * 5 // 4``; ``line_search_fn`` is None or ``"strong_wolfe"``."""
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                        tolerance_change=tolerance_change, history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")

    @property
    def _params(self) -> list[Tensor]:
        return self.param_groups[0]["params"]

    def _gather_flat_grad(self) -> np.ndarray:
        """All gradients in one vector (zeros for a parameter without one)."""
        return np.concatenate([np.zeros(p._data.size, p._data.dtype) if p.grad is None else p.grad._data.reshape(-1)
                               for p in self._params])

    def _add_grad(self, step_size: Scalar, update: np.ndarray) -> None:
        """Move the parameters by ``step_size * update``, in place."""
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += step_size * update[offset:offset + n].reshape(p._data.shape)
            p._version_counter.value += 1
            offset += n

    def _clone_param(self) -> list[np.ndarray]:
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data: list[np.ndarray]) -> None:
        for p, data in zip(self._params, params_data):
            p._data[...] = data
            p._version_counter.value += 1

    def _directional_evaluate(self, closure: Callable[[], Any], x: list[np.ndarray], t: Scalar,
                              d: np.ndarray) -> tuple[float, np.ndarray]:
        """The loss and gradient at ``x + t * d``; the parameters are put back to ``x``."""
        self._add_grad(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    def step(self, closure: Callable[[], Any]) -> Any:  # type: ignore[override]
        """Run up to ``max_iter`` iterations, calling ``closure`` for each loss; return the first loss."""
        if len(self.param_groups) != 1:
            raise AssertionError(f"Expected exactly one param_group, but got {len(self.param_groups)}: LBFGS "
                                 "optimizes all its parameters as one vector, so it takes no add_param_group")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]

        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        with enable_grad():
            orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:  # already optimal
            return orig_loss

        d, t = _array(state.get("d")), _array(state.get("t"))
        old_dirs, old_stps, ro = (_arrays(state.get(key)) for key in ("old_dirs", "old_stps", "ro"))
        H_diag, prev_flat_grad = _array(state.get("H_diag")), _array(state.get("prev_flat_grad"))
        prev_loss = state.get("prev_loss")
        al = _arrays(state.get("al"))

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1

            # the direction
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro = [], [], []
                H_diag = 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = y.dot(s)
                if ys > 1e-10:  # the pair says the function curves up along s: remember it
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / y.dot(y)
                if al is None:
                    al = state["al"] = [None] * history_size
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q += -al[i] * old_dirs[i]
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r += (al[i] - be_i) * old_stps[i]

            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss

            # the step length
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            gtd = flat_grad.dot(d)  # the slope along d
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                if line_search_fn != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x_init = self._clone_param()

                def obj_func(x: list[np.ndarray], t: Scalar, d: np.ndarray) -> tuple[float, np.ndarray]:
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(obj_func, x_init, t, d, loss, flat_grad, gtd,
                                                                  max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:  # the last iteration's loss would only be thrown away
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            # stop?
            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:  # the step no longer moves
                break
            if abs(loss - prev_loss) < tolerance_change:  # the loss no longer moves
                break

        state["d"], state["t"] = _tensor(d), _tensor(t)
        state["old_dirs"], state["old_stps"], state["ro"] = _tensors(old_dirs), _tensors(old_stps), _tensors(ro)
        state["H_diag"], state["prev_flat_grad"] = _tensor(H_diag), _tensor(prev_flat_grad)
        state["prev_loss"] = prev_loss
        if al is not None:
            state["al"] = _tensors(al)
        return orig_loss


def _tensor(value: Any) -> Any:
    """What PyTorch keeps as a tensor (a NumPy array or scalar here) as a Tensor; numbers stay numbers."""
    return Tensor._wrap(np.asarray(value)) if isinstance(value, (np.ndarray, np.generic)) else value


def _tensors(values: list | None) -> list | None:
    return None if values is None else [_tensor(v) for v in values]


def _array(value: Any) -> Any:
    """The inverse of ``_tensor``: a 0-dim Tensor becomes a NumPy scalar, others their array."""
    if isinstance(value, Tensor):
        return value._data[()] if value._data.ndim == 0 else value._data
    return value


def _arrays(values: list | None) -> list | None:
    return None if values is None else [_array(v) for v in values]


@np.errstate(divide="ignore", invalid="ignore")  # x1 == x2 gives inf or nan, silently as in PyTorch
def _cubic_interpolate(x1: Scalar, f1: Scalar, g1: Scalar, x2: Scalar, f2: Scalar, g2: Scalar,
                       bounds: tuple[Scalar, Scalar] | None = None) -> Scalar:
    """The minimiser, within ``bounds``, of the cubic through two points with values ``f`` and slopes ``g``.

    Without a real minimiser (the cubic has no turning point), the middle of the bounds.
    """
    xmin_bound, xmax_bound = bounds if bounds is not None else (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func: Callable, x: list[np.ndarray], t: Scalar, d: np.ndarray, f: float, g: np.ndarray,
                  gtd: Scalar, c1: float = 1e-4, c2: float = 0.9, tolerance_change: float = 1e-9,
                  max_ls: int = 25) -> tuple[float, np.ndarray, Scalar, int]:
    """A step ``t`` along ``d`` meeting the strong Wolfe conditions: ``(f_new, g_new, t, evaluations)``.

    Sufficient decrease, ``f(t) <= f + c1 * t * gtd``, and a flattened slope,
    ``|g(t)·d| <= c2 * |gtd|``. First grow ``t`` until an interval is known to
    hold such a point (the bracket), then shrink the interval by cubic
    interpolation ("zoom") until a point meets both, at most ``max_ls`` evaluations in all.
    """
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = g_new.dot(d)

    # bracket an interval holding a point that meets the conditions
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # extrapolate
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point in it meets the conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:  # the bracket is too small to matter
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        # Too close to an end of the bracket twice in a row (or outside it): move 10% of its width inside.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                t = max(bracket) - eps if abs(t - max(bracket)) < abs(t - min(bracket)) else min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = g_new.dot(d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            # not enough decrease, or not below the low end: t is the new high end
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:  # the old high end becomes the low end
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos], bracket_gtd[high_pos] = bracket_g[low_pos], bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new

    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals
