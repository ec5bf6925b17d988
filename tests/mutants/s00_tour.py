"""Common mistakes in stage 00."""
from tests.mutants import Mutant

STEP = '''
def sgd_step(params, lr):
    with minigrad.no_grad():
        for p in params:
            p -= lr * p.grad
            p.grad = None
'''

MUTANTS = [
    Mutant("hand_derived_partial", {"value_and_grad": '''
def value_and_grad(x):
    return (x ** 2 + 3 * x).sum().item(), 2 * x
'''}, lost={"gradient"}, feedback={"gradient": "gradient of x**2 alone"}),
    Mutant("modifies_callers_tensor", {"value_and_grad": '''
def value_and_grad(x):
    x.requires_grad_()
    value = (x ** 2 + 3 * x).sum()
    value.backward()
    return value.item(), x.grad
'''}, lost={"gradient"}, feedback={"gradient": "now requires grad"}),
    Mutant("value_as_a_tensor", {"value_and_grad": '''
def value_and_grad(x):
    x = x.detach().requires_grad_()
    value = (x ** 2 + 3 * x).sum()
    value.backward()
    return value, x.grad
'''}, lost={"gradient"}, feedback={"gradient": "return it as a Python float"}),
    Mutant("gradient_by_hand", {"value_and_grad": '''
def value_and_grad(x):
    return (x ** 2 + 3 * x).sum().item(), 2 * x + 3
'''}, lost={"gradient"}, feedback={"gradient": "backward() was never called"}),
    Mutant("step_uphill", {"sgd_step": STEP.replace("p -= lr", "p += lr")},
           lost={"sgd_step", "training"}, feedback={"sgd_step": "subtract lr * grad"}),
    Mutant("never_clears", {"sgd_step": STEP.replace("            p.grad = None\n", "")},
           lost={"sgd_step", "training"}, feedback={"sgd_step": "gradients are still there"}),
    Mutant("rebinds_instead_of_updating", {"sgd_step": '''
def sgd_step(params, lr):
    for i, p in enumerate(params):
        params[i] = p - lr * p.grad
        p.grad = None
'''}, lost={"sgd_step", "training"}, feedback={"sgd_step": "grad_fn"}),
]
