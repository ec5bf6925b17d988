"""``minigrad.viz``: pictures of what autograd does, for the course notebooks.

    from minigrad.viz import draw_graph, BackwardStepper
    draw_graph(loss)          # the recorded graph, inputs on the left
    BackwardStepper(loss)     # step through backward, one node at a time
    function_explorer(lambda x, a: (a * x).tanh(), params={"a": (0.1, 3.0, 1.0)})
    dash = TrainingDashboard(total_steps=1000); dash.log(step, loss=loss)
    grids.sliders(draw, n=(1, 5, 3))   # integer sliders above the HTML draw(n) returns

Not imported by ``import minigrad``: the library works without matplotlib or
Jupyter. matplotlib is imported when a figure is drawn, ipywidgets when a
widget is made.
"""
from minigrad.viz.dashboard import Throttle, TrainingDashboard
from minigrad.viz.explorer import FunctionExplorer, explore, function_explorer
from minigrad.viz.graph import draw_graph, graph_of, label, layers
from minigrad.viz.stepper import BackwardStepper, StepState, backward_states

__all__ = [
    "draw_graph", "graph_of", "label", "layers",
    "BackwardStepper", "StepState", "backward_states",
    "function_explorer", "explore", "FunctionExplorer",
    "TrainingDashboard", "Throttle",
]
