"""The report's inline style and script: the file must read offline, so nothing is fetched."""

from __future__ import annotations

__all__ = ["CSS", "JS"]

CSS = """
:root { --fg:#1d2328; --muted:#5d6b76; --bg:#ffffff; --panel:#f4f6f8; --line:#d8dee4; --accent:#2f6fdf;
  --ok:#2e9b5f; --bad:#d0453a; --warn:#c98a12; --run:#3b82c4; --call:#1c3f66; }
@media (prefers-color-scheme: dark) { :root { --fg:#e3e7ea; --muted:#98a4ad; --bg:#15191d; --panel:#1e252b;
  --line:#333d45; --accent:#6ea3ff; --call:#d6e6ff; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 1180px; padding: 1.5rem; font: 14px/1.45 system-ui, -apple-system, "Segoe UI",
  sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 1.5rem; margin: 0 0 .3rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid var(--line); }
code, pre { font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre { white-space: pre-wrap; word-break: break-word; margin: .2rem 0; }
nav a { margin-right: 1rem; color: var(--accent); } a { color: var(--accent); }
.task { font-size: 1.05rem; white-space: pre-wrap; }
dl.facts { display: grid; grid-template-columns: max-content 1fr max-content 1fr; gap: .2rem 1rem; }
dl.facts dt { color: var(--muted); } dl.facts dd { margin: 0; }
table { border-collapse: collapse; margin: .6rem 0 1rem; width: 100%; }
th, td { text-align: left; padding: .25rem .5rem; border-bottom: 1px solid var(--line); vertical-align: top; }
th { color: var(--muted); font-weight: 600; }
table.num td:not(:first-child) { font-variant-numeric: tabular-nums; }
td pre { max-height: 12rem; overflow: auto; }
.badge { padding: 0 .45rem; border-radius: .7rem; font-size: .85em; background: var(--panel); }
.badge.done, .badge.clean, .badge.resolved { color: var(--ok); } .badge.running { color: var(--run); }
.badge.failed, .badge.conflict, .badge.dropped { color: var(--bad); } .badge.interrupted { color: var(--warn); }
svg.timeline { background: var(--panel); border-radius: 6px; }
svg .lane-bg:nth-of-type(odd) { fill: transparent; } svg .lane-bg { fill: transparent; stroke: var(--line); }
svg .lane { fill: var(--fg); font-size: 12px; } svg .tick { fill: var(--muted); font-size: 10px; text-anchor: middle; }
svg .grid { stroke: var(--line); stroke-dasharray: 2 3; }
svg .span { fill: var(--run); opacity: .35; } svg .span.done { fill: var(--ok); }
svg .span.failed, svg .span.dropped { fill: var(--bad); }
svg .span.interrupted, svg .span.superseded { fill: var(--warn); }
svg .call { fill: var(--call); opacity: .55; } svg .tool { fill: var(--accent); stroke: var(--bg); stroke-width: 1; }
svg .retry { fill: var(--bad); } svg .merge { fill: var(--ok); }
svg .merge.conflict, svg .merge.failed { fill: var(--bad); }
svg .merge.resolved { fill: var(--warn); } svg .gate.pass { fill: var(--ok); } svg .gate.fail { fill: var(--bad); }
svg .integrated { stroke: var(--ok); stroke-width: 1.5; } svg .integrated.ejected { stroke: var(--bad); }
.legend span { margin-right: 1rem; color: var(--muted); } .legend i { display: inline-block; width: .8rem;
  height: .8rem; border-radius: 2px; margin-right: .3rem; vertical-align: -1px; }
details.agent { margin: .8rem 0; border: 1px solid var(--line); border-radius: 6px; padding: .3rem .8rem; }
details.agent > summary { cursor: pointer; font-weight: 600; }
.step { margin: .25rem 0 .25rem 1rem; } .step.tool .what { color: var(--accent); }
.step.result pre { background: var(--panel); padding: .3rem .5rem; border-radius: 4px; max-height: 24rem;
  overflow: auto; }
.step.result.error pre { border-left: 3px solid var(--bad); }
.step.model .meta { color: var(--muted); font-size: .9em; }
.step.model p { margin: .1rem 0; font-style: italic; white-space: pre-wrap; } .step.prompt { white-space: pre-wrap; }
.step.warn { color: var(--warn); } .step.bad { color: var(--bad); } .step.mark { font-weight: 600; }
.step.note { color: var(--muted); } #filter { width: 100%; padding: .4rem; font-size: 1rem; }
:target { outline: 2px solid var(--accent); }
details.diff { margin: .5rem 0; border: 1px solid var(--line); border-radius: 6px; padding: .2rem .8rem; }
details.diff > summary { cursor: pointer; }
pre.diff { white-space: pre; overflow: auto; max-height: 40rem; background: var(--panel); padding: .4rem .6rem;
  border-radius: 4px; } pre.diff span { display: block; min-height: 1.4em; }
.d-file { font-weight: 600; color: var(--fg); } .d-hunk { color: var(--accent); } .d-ctx { color: var(--muted); }
.d-add { color: var(--ok); background: rgba(46,155,95,.12); }
.d-del { color: var(--bad); background: rgba(208,69,58,.1); }
.d-meta { color: var(--muted); font-style: italic; }
.d-cut { color: var(--warn); font-style: italic; white-space: normal; }
svg .wait { fill: url(#tl-hatch); stroke: var(--muted); stroke-width: .6; } svg .hatch-bg { fill: var(--panel); }
svg .hatch-line { stroke: var(--muted); stroke-width: 2; }
.legend i.wait { background: repeating-linear-gradient(45deg, var(--muted) 0 2px, var(--panel) 2px 5px); }
svg.plan, svg.costs { background: var(--panel); border-radius: 6px; }
svg .node rect { fill: var(--bg); stroke: var(--muted); stroke-width: 1.5; }
svg .node text { fill: var(--fg); font-size: 12px; }
svg .node .title { fill: var(--muted); font-size: 10.5px; }
svg .node.done rect { stroke: var(--ok); fill: rgba(46,155,95,.15); }
svg .node.failed rect, svg .node.dropped rect { stroke: var(--bad); fill: rgba(208,69,58,.15); }
svg .node.interrupted rect { stroke: var(--warn); } svg .node.running rect { stroke: var(--run); }
svg .dep { stroke: var(--muted); stroke-width: 1.4; fill: none; } svg .arrowhead { fill: var(--muted); }
svg .cost-line { fill: none; stroke-width: 2; } svg .cost-line.total { stroke: var(--fg); stroke-width: 2.5; }
svg .cost-line.planning { stroke: var(--accent); } svg .cost-line.work { stroke: var(--ok); }
svg .cost-line.experts { stroke: var(--warn); } svg .cost-line.reconciliation { stroke: var(--bad); }
svg .cost-line.run { stroke: var(--muted); } svg .axis { stroke: var(--muted); }
.legend i.cost-key { height: .25rem; } .legend i.cost-key.total { background: var(--fg); }
.legend i.cost-key.planning { background: var(--accent); } .legend i.cost-key.work { background: var(--ok); }
.legend i.cost-key.experts { background: var(--warn); } .legend i.cost-key.reconciliation { background: var(--bad); }
.legend i.cost-key.run { background: var(--muted); }
"""

JS = """
(function () {
  var filter = document.getElementById('filter');
  var steps = Array.prototype.slice.call(document.querySelectorAll('.step'));
  if (filter) {
    filter.addEventListener('input', function () {
      var q = filter.value.toLowerCase();
      steps.forEach(function (s) { s.hidden = q !== '' && s.textContent.toLowerCase().indexOf(q) < 0; });
    });
  }
  function reveal() {
    var el = location.hash ? document.getElementById(location.hash.slice(1)) : null;
    var d = el ? el.closest('details') : null;
    if (d) { d.open = true; }
  }
  window.addEventListener('hashchange', reveal);
  reveal();
  document.body.setAttribute('data-rendered', 'ok');
})();
"""
