"""Common mistakes in stage 10, as small mutants of the solution."""
from tests.mutants import Mutant

LINEAR = '''
class Linear(nn.Module):
    def __init__(self, in_features, out_features, bias=True):
        super().__init__()
        # Register weight (out_features, in_features) and bias (out_features,) as Parameters,
        # uniform in ±1/sqrt(in_features); without a bias, self.bias = None.
        self.in_features, self.out_features = in_features, out_features
        bound = 1 / math.sqrt(in_features)
        self.weight = nn.Parameter((minigrad.rand(out_features, in_features) * 2 - 1) * bound)
        if bias:
            self.bias = nn.Parameter((minigrad.rand(out_features) * 2 - 1) * bound)
        else:
            self.bias = None

    def forward(self, x):
        # Return x @ weight.T + bias, over the last dimension of x.
        y = x @ self.weight.T
        return y if self.bias is None else y + self.bias
'''

MLP = '''
class MLP(nn.Module):
    def __init__(self, sizes):
        super().__init__()
        # One Linear(sizes[i], sizes[i + 1]) per consecutive pair, registered in order.
        self.layers = nn.ModuleList([Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])

    def forward(self, x):
        # The layers in order, with a ReLU between two layers (none after the last).
        for i, layer in enumerate(self.layers):
            x = layer(x)
            if i < len(self.layers) - 1:
                x = x.relu()
        return x
'''

SGD = '''
class SGD:
    def __init__(self, params, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False):
        # Keep the parameters (as a list), the hyperparameters, and room for a momentum buffer per parameter.
        self.params = list(params)
        self.lr, self.momentum, self.dampening = lr, momentum, dampening
        self.weight_decay, self.nesterov = weight_decay, nesterov
        self.buffers = {}  # parameter -> its momentum buffer

    def zero_grad(self):
        # Forget every parameter's gradient.
        for p in self.params:
            p.grad = None

    def step(self):
        # Update, in place, every parameter that has a gradient.
        with minigrad.no_grad():
            for p in self.params:
                if p.grad is None:
                    continue
                d = p.grad
                if self.weight_decay != 0:
                    d = d + self.weight_decay * p
                if self.momentum != 0:
                    buf = self.buffers.get(p)
                    if buf is None:
                        buf = d.clone()
                    else:
                        buf = self.momentum * buf + (1 - self.dampening) * d
                    self.buffers[p] = buf
                    d = d + self.momentum * buf if self.nesterov else buf
                p -= self.lr * d
'''

ADAM = '''
class Adam:
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0):
        # Keep the parameters, the hyperparameters, and room for each parameter's step count, m and v.
        self.params = list(params)
        self.lr, self.betas, self.eps, self.weight_decay = lr, betas, eps, weight_decay
        self.state = {}  # parameter -> (t, m, v)

    def zero_grad(self):
        # Forget every parameter's gradient.
        for p in self.params:
            p.grad = None

    def step(self):
        # Update, in place, every parameter that has a gradient.
        beta1, beta2 = self.betas
        with minigrad.no_grad():
            for p in self.params:
                if p.grad is None:
                    continue
                g = p.grad
                if self.weight_decay != 0:
                    g = g + self.weight_decay * p
                t, m, v = self.state.get(p, (0, minigrad.zeros_like(p), minigrad.zeros_like(p)))
                t += 1
                m = beta1 * m + (1 - beta1) * g
                v = beta2 * v + (1 - beta2) * g * g
                m_hat = m / (1 - beta1**t)
                v_hat = v / (1 - beta2**t)
                p -= self.lr * m_hat / (v_hat.sqrt() + self.eps)
                self.state[p] = (t, m, v)
'''

TRAIN = '''
def train_epoch(model, optimizer, loader):
    # One pass over the batches (x, y) of loader: zero_grad, cross-entropy loss, backward, step.
    # Return the mean of the batch losses, as a float.
    total, batches = 0.0, 0
    for x, y in loader:
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        total += loss.item()
        batches += 1
    return total / batches
'''


def _swap(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


MUTANTS = [
    Mutant(
        "momentum_buffer_not_kept",
        {"sgd": _swap(SGD, "                    self.buffers[p] = buf\n", "")},
        lost={"sgd"},
        feedback={"sgd": "momentum buffer starts afresh at every step"},
    ),
    Mutant(
        "weight_decay_after_momentum",
        {"sgd": _swap(_swap(SGD, "                if self.weight_decay != 0:\n                    d = d + self.weight_decay * p\n", ""),
                      "                p -= self.lr * d",
                      "                if self.weight_decay != 0:\n                    d = d + self.weight_decay * p\n                p -= self.lr * d")},
        lost={"sgd"},
        feedback={"sgd": "weight decay is added after momentum"},
    ),
    Mutant(
        "update_not_in_place",
        {"sgd": _swap(SGD, "                p -= self.lr * d", "                p = p - self.lr * d")},
        lost={"sgd", "zero_grad", "training"},
        feedback={"sgd": "never changed the parameters"},
    ),
    Mutant(
        "step_does_not_skip_missing_grads",
        {"sgd": _swap(SGD, "                if p.grad is None:\n                    continue\n                d = p.grad",
                      "                d = p.grad")},
        lost={"zero_grad", "training"},
        feedback={"zero_grad": "skip parameters whose grad is None"},
    ),
    Mutant(
        "adam_without_bias_correction",
        {"adam": _swap(_swap(ADAM, "m_hat = m / (1 - beta1**t)", "m_hat = m"), "v_hat = v / (1 - beta2**t)", "v_hat = v")},
        lost={"adam", "training"},
        feedback={"adam": "without bias correction"},
    ),
    Mutant(
        "adam_eps_inside_sqrt",
        {"adam": _swap(ADAM, "(v_hat.sqrt() + self.eps)", "(v_hat + self.eps).sqrt()")},
        lost={"adam", "training"},
        feedback={"adam": "eps goes inside the square root"},
    ),
    Mutant(
        "zero_grad_not_called",
        {"train": _swap(TRAIN, "        optimizer.zero_grad()\n", "")},
        lost={"train_epoch", "training"},
        feedback={"train_epoch": "Call optimizer.zero_grad() before each backward"},
    ),
    Mutant(
        "linear_weight_transposed",
        {"linear": _swap(_swap(LINEAR, "minigrad.rand(out_features, in_features)", "minigrad.rand(in_features, out_features)"),
                         "y = x @ self.weight.T", "y = x @ self.weight")},
        lost={"linear_parameters", "linear_forward", "linear_init", "mlp", "training"},
        feedback={"linear_parameters": "(out_features, in_features)"},
    ),
    Mutant(
        "linear_init_with_the_wrong_fan",
        {"linear": _swap(LINEAR, "bound = 1 / math.sqrt(in_features)", "bound = 1 / math.sqrt(out_features)")},
        lost={"linear_init", "training"},
        feedback={"linear_init": "you used out_features"},
    ),
    Mutant(
        "linear_bias_zeros",
        {"linear": _swap(LINEAR, "nn.Parameter((minigrad.rand(out_features) * 2 - 1) * bound)", "nn.Parameter(minigrad.zeros(out_features))")},
        lost={"linear_init", "training"},
        feedback={"linear_init": "bias is all zeros"},
    ),
    Mutant(
        "mlp_layers_in_a_plain_list",
        {"mlp": _swap(MLP, "nn.ModuleList([Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])",
                      "[Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])]")},
        lost={"mlp", "training"},
        feedback={"mlp": "plain Python list"},
    ),
    Mutant(
        "relu_after_the_last_layer",
        {"mlp": _swap(MLP, "            if i < len(self.layers) - 1:\n                x = x.relu()", "            x = x.relu()")},
        lost={"mlp", "training"},
        feedback={"mlp": "ReLU after the last layer"},
    ),
    # -- what the worksheet says, checked (issue 28) ----------------------------------------------
    Mutant(
        "linear_adds_a_none_bias",
        {"linear": _swap(LINEAR, "        return y if self.bias is None else y + self.bias", "        return y + self.bias")},
        lost={"linear_forward", "mlp", "training"},
        feedback={"linear_forward": "Linear(5, 3, bias=False)(x) raised TypeError"},
    ),
    Mutant(
        "mlp_first_weight_is_not_a_parameter",
        {"mlp": _swap(MLP, "        self.layers = nn.ModuleList([Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])",
                      "        self.layers = nn.ModuleList([Linear(a, b) for a, b in zip(sizes[:-1], sizes[1:])])\n"
                      "        first = self.layers[0]\n"
                      "        weight = first.weight.detach()\n"
                      "        del first.weight\n"
                      "        first.weight = weight")},
        lost={"mlp", "training"},
        feedback={"mlp": "lacks the weight of layer 1 (shape [5, 6])"},
    ),
    Mutant(
        "zero_grad_zeroes_in_place",
        {"sgd": _swap(SGD, "        for p in self.params:\n            p.grad = None\n",
                      "        for p in self.params:\n            p.grad.zero_()\n")},
        lost={"zero_grad", "training"},
        feedback={"zero_grad": "zero_grad() before any backward raised AttributeError"},
    ),
    Mutant(
        "train_epoch_returns_the_loss_tensor",
        {"train": _swap(TRAIN, "total += loss.item()", "total = total + loss")},
        lost={"train_epoch", "training"},
        feedback={"train_epoch": "returned a tensor that requires grad"},
    ),
    Mutant(
        "zero_grad_between_backward_and_step",
        {"train": _swap(TRAIN, "        optimizer.zero_grad()\n        loss = F.cross_entropy(model(x), y)\n"
                               "        loss.backward()\n",
                        "        loss = F.cross_entropy(model(x), y)\n        loss.backward()\n"
                        "        optimizer.zero_grad()\n")},
        lost={"train_epoch", "training"},
        feedback={"train_epoch": "optimizer.zero_grad() ran after loss.backward() and erased"},
    ),
    Mutant(
        "adam_bias_correction_one_step_ahead",
        {"adam": _swap(_swap(ADAM, "m_hat = m / (1 - beta1**t)", "m_hat = m / (1 - beta1**(t + 1))"),
                       "v_hat = v / (1 - beta2**t)", "v_hat = v / (1 - beta2**(t + 1))")},
        lost={"adam", "training"},
        feedback={"adam": "your Adam's bias correction uses step t+1"},
    ),
]
