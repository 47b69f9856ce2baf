"""The report's plan as a dependency graph in inline SVG: one box per task, coloured by the task's final state and
linking to its transcript, one arrow per `depends_on`, the tasks laid out in layers by their longest chain."""

from __future__ import annotations

from dataclasses import dataclass, field
from html import escape

from plait.events.types import Event, PlanMade
from plait.ui import _fmt
from plait.ui.runview import RunView

__all__ = ["Node", "layers", "plan_graph_svg", "plan_nodes"]

_W, _H, _GAP_X, _GAP_Y, _PAD = 190, 46, 70, 18, 16


@dataclass
class Node:
    """One planned task: its id, title and the tasks it depends on."""

    id: str
    title: str = ""
    depends_on: list[str] = field(default_factory=list)


def plan_nodes(events: list[Event]) -> list[Node]:
    """The tasks of the run's latest plan; a dependency on a task not in the plan is left out."""
    plan = next((e.plan for e in reversed(events) if isinstance(e, PlanMade)), None)
    tasks = plan.tasks if plan else []
    ids = {t.id for t in tasks}
    nodes: dict[str, Node] = {}
    for t in tasks:
        on = [d for d in t.depends_on if d in ids]
        nodes.setdefault(t.id, Node(t.id, t.title, list(dict.fromkeys(on))))
    return list(nodes.values())


def layers(nodes: list[Node]) -> dict[str, int]:
    """Each task's layer: 0 without dependencies, else one more than its deepest dependency (a cycle is cut)."""
    by_id = {n.id: n for n in nodes}
    layer: dict[str, int] = {}
    busy: set[str] = set()

    def depth(ident: str) -> int:
        if ident not in layer:
            busy.add(ident)
            deps = [depth(d) for d in by_id[ident].depends_on if d not in busy]
            busy.discard(ident)
            layer[ident] = 1 + max(deps) if deps else 0
        return layer[ident]

    for node in nodes:
        depth(node.id)
    return layer


def _box(node: Node, x: float, y: float, state: str) -> str:
    tip = f"{node.id}: {state}" + (f" — {node.title}" if node.title else "")
    if node.depends_on:
        tip += f" (after {', '.join(node.depends_on)})"
    return (
        f'<a href="#agent-{escape(node.id)}"><g class="node {escape(state)}" data-task="{escape(node.id)}">'
        f"<title>{escape(tip)}</title>"
        f'<rect x="{x}" y="{y}" width="{_W}" height="{_H}" rx="6"/>'
        f'<text x="{x + 10}" y="{y + 18}"><tspan font-weight="600">{escape(_fmt.one_line(node.id, 24))}</tspan>'
        f' <tspan class="title">{escape(state)}</tspan></text>'
        f'<text class="title" x="{x + 10}" y="{y + 35}">{escape(_fmt.one_line(node.title, 30))}</text></g></a>'
    )


def plan_graph_svg(view: RunView, events: list[Event]) -> str:
    """The plan's tasks in columns by layer, left to right, an arrow from each dependency to its dependent."""
    nodes = plan_nodes(events)
    if not nodes:
        return "<p>No plan in this run.</p>"
    layer = layers(nodes)
    columns: dict[int, list[Node]] = {}
    for node in nodes:
        columns.setdefault(layer[node.id], []).append(node)
    at: dict[str, tuple[float, float]] = {}
    for col, members in columns.items():
        for row, node in enumerate(members):
            at[node.id] = (_PAD + col * (_W + _GAP_X), _PAD + row * (_H + _GAP_Y))
    arrows = []
    for node in nodes:
        x2, y2 = at[node.id]
        for dep in node.depends_on:
            x1, y1 = at[dep]
            a, b, mid = (x1 + _W, y1 + _H / 2), (x2 - 2, y2 + _H / 2), (x1 + _W + x2) / 2
            arrows.append(
                f'<path class="dep" data-from="{escape(dep)}" data-to="{escape(node.id)}" '
                f'd="M{a[0]},{a[1]} C{mid},{a[1]} {mid},{b[1]} {b[0]},{b[1]}" marker-end="url(#plan-arrow)">'
                f"<title>{escape(f'{node.id} depends on {dep}')}</title></path>"
            )
    state = {n.id: view.agents[n.id].state if n.id in view.agents else "waiting" for n in nodes}
    boxes = [_box(n, *at[n.id], state[n.id]) for n in nodes]
    width = _PAD * 2 + len(columns) * _W + (len(columns) - 1) * _GAP_X
    height = _PAD * 2 + max(len(c) for c in columns.values()) * (_H + _GAP_Y) - _GAP_Y
    defs = (
        '<defs><marker id="plan-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto-start-reverse"><path class="arrowhead" d="M0,0 L10,5 L0,10 Z"/></marker></defs>'
    )
    return (
        f'<svg class="plan" viewBox="0 0 {width} {height}" width="{min(width, 1130)}" role="img" '
        f'aria-label="the plan as a dependency graph" xmlns="http://www.w3.org/2000/svg">'
        + defs
        + "".join(arrows)
        + "".join(boxes)
        + "</svg>"
    )
