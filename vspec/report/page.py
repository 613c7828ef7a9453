"""The report page: one self-contained HTML file (styles, script and SVG inline).

A spec is a section: its verdict and failure text, then pictures of the cluster after
each cycle, the queues' shares against what they deserve, the ``vspec explain`` text of
the tasks its expectations name, and its captured log with a filter by verbosity and by
text. Sections are built where the spec ran (an xdist worker, for pytest) and joined
into the page at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape
from pathlib import Path

from vspec import __version__
from vspec.errors import VspecError
from vspec.explain.text import job_lines, task_lines
from vspec.harness.report import headline
from vspec.harness.runner import SpecOutcome
from vspec.model.result import LogLine
from vspec.model.spec import Spec
from vspec.report.capture import Capture, RecordingEngine
from vspec.report.charts import nodes_chart, queues_chart

MAX_LOG_LINES = 5000  # a longer log is cut (the tail is what precedes the end)


def spec_section(outcome: SpecOutcome, capture: Capture | None) -> str:
    status = outcome.status.value
    parts = [
        f'<section class="spec {status}">',
        f'<h2><span class="badge {status}">{escape(outcome.status.name)}</span> '
        f"{escape(headline(outcome).split(' ', 1)[1])}</h2>",
    ]
    text = [*outcome.messages, *outcome.hints]
    if text and outcome.status.value != "passed":
        parts.append(f'<pre class="failure">{escape(chr(10).join(text))}</pre>')
    if capture is not None:
        parts.append(_pictures(capture, open_=outcome.failing))
        if capture.explained or capture.jobs:
            parts.append(_explained(capture, outcome.messages, open_=outcome.failing))
        parts.append(_log(capture.logs))
    parts.append("</section>")
    return "\n".join(parts)


def _details(summary: str, body: str, *, open_: bool, css: str = "") -> str:
    opened = " open" if open_ else ""
    return (
        f'<details class="{css}"{opened}><summary>{escape(summary)}</summary>\n{body}\n</details>'
    )


def _pictures(capture: Capture, *, open_: bool) -> str:
    body = []
    for state in capture.clusters:
        body.append('<div class="cycle">')
        nodes = nodes_chart(state)
        if nodes is None:  # not pygal's "No data" over an empty frame
            body.append(f'<p class="empty">After cycle {state.cycle}: no pod on any node.</p>')
        else:
            body.append(f'<div class="chart">{nodes}</div>')
        queues = queues_chart(state)
        if queues is not None:
            body.append(f'<div class="chart">{queues}</div>')
        if state.pending:
            items = "".join(
                f"<li><b>{escape(job)}</b>: {len(tasks)} pending: "
                f"{escape(', '.join(tasks[:8]))}{' ...' if len(tasks) > 8 else ''}</li>"
                for job, tasks in state.pending.items()
            )
            body.append(
                f'<p>Pending after cycle {state.cycle}, by job:</p><ul class="pending">{items}</ul>'
            )
        else:
            body.append(f"<p>No pending pods after cycle {state.cycle}.</p>")
        if state.podless:
            items = "".join(
                f"<li><b>{escape(job)}</b>: pod group {escape(phase or '(no phase)')}</li>"
                for job, phase in state.podless.items()
            )
            body.append(
                f"<p>Pod groups without pods after cycle {state.cycle} (a Volcano Job's pods "
                "are created once its PodGroup leaves Pending):</p>"
                f'<ul class="pending">{items}</ul>'
            )
        body.append("</div>")
    n = len(capture.clusters)
    return _details(f"Cluster after each cycle ({n})", "\n".join(body), open_=open_)


def _explained(capture: Capture, messages: list[str], *, open_: bool) -> str:
    """The tasks a mismatch mentions first."""
    text = "\n".join(messages) + "\n"
    ordered = sorted(capture.explained, key=lambda te: f" {te.task} " not in f" {text} ")
    jobs = [je for je in capture.jobs if not je.pods] + [je for je in capture.jobs if je.pods]
    blocks = [
        *(f'<pre class="explain">{escape(chr(10).join(job_lines(je)))}</pre>' for je in jobs),
        *(f'<pre class="explain">{escape(chr(10).join(task_lines(te)))}</pre>' for te in ordered),
    ]
    title = (
        f"Why: vspec explain, the jobs without pods and what the expectations name ({len(blocks)})"
    )
    return _details(title, "\n".join(blocks), open_=open_)


def _log(lines: Sequence[LogLine]) -> str:
    shown = lines[-MAX_LOG_LINES:]
    cut = len(lines) - len(shown)
    items = "\n".join(
        f'<li data-v="{line.verbosity}"><span class="meta">c{line.cycle} '
        f"{line.severity.value}{line.verbosity}</span> {escape(line.text)}</li>"
        for line in shown
    )
    levels = "".join(
        f'<option value="{v}"{" selected" if v == 10 else ""}>V &le; {v}</option>'
        for v in range(11)
    )
    note = f"<p>The first {cut} lines are left out.</p>" if cut else ""
    controls = (
        '<div class="log-controls"><label>verbosity <select class="level">'
        f'{levels}</select></label> <input class="text" type="search" '
        'placeholder="filter lines containing..."> <span class="count"></span></div>'
    )
    body = f'{controls}{note}<ol class="log">{items}</ol>'
    return _details(f"Captured log ({len(lines)} lines)", body, open_=False, css="logbox")


def page(sections: list[str], summary: str) -> str:
    toc = "".join(
        f'<li><a href="#spec-{i}">{_title(section)}</a></li>' for i, section in enumerate(sections)
    )
    body = "\n".join(
        section.replace('<section class="spec', f'<section id="spec-{i}" class="spec', 1)
        for i, section in enumerate(sections)
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>vspec report: {escape(summary)}</title><style>{_CSS}</style></head><body>"
        f'<h1>vspec report</h1><p class="summary">{escape(summary)} &middot; vspec '
        f'{escape(__version__)}</p><p class="all">{_ALL_BUTTONS}</p>'
        f'<ul class="toc">{toc}</ul>{body}'
        f"<script>{_SCRIPT}</script></body></html>\n"
    )


def _title(section: str) -> str:
    start = section.index("<h2>") + 4
    return section[start : section.index("</h2>", start)]


def failing_first(sections: list[str], failing: list[bool]) -> list[str]:
    """What a reader looks for first; the others in the order they ran."""
    pairs = list(zip(sections, failing, strict=True))
    return [s for s, f in pairs if f] + [s for s, f in pairs if not f]


def write_page(path: Path, sections: list[str], summary: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page(sections, summary), encoding="utf-8")


# Expand or collapse every section's details at once (the script below wires them).
_ALL_BUTTONS = (
    '<button type="button" data-open="1">expand all</button> '
    '<button type="button" data-open="0">collapse all</button>'
)

_CSS = """
body{font-family:sans-serif;margin:1.5em;color:#222;max-width:1100px}
h1{margin:0 0 .2em}.summary{color:#555}
h2{font-size:1.05em;margin:.2em 0 .5em}
.spec{border:1px solid #ccc;border-radius:6px;padding:.6em 1em;margin:1em 0}
.spec.failed,.spec.error{border-color:#c62828;background:#fff8f8}
.badge{display:inline-block;padding:0 .5em;border-radius:4px;color:white;font-size:.85em}
.badge.passed,.badge.xfailed{background:#2e7d32}.badge.failed,.badge.error{background:#c62828}
.badge.skipped,.badge.xpassed{background:#757575}
pre{background:#f6f6f6;padding:.5em;overflow-x:auto;font-size:12px}
pre.failure{background:#fdecea;color:#7f1d1d;white-space:pre-wrap}
details{margin:.4em 0}summary{cursor:pointer;font-weight:bold}
.chart svg{max-width:760px;display:block}
ol.log{font-family:monospace;font-size:12px;max-height:30em;overflow:auto;padding-left:3.5em}
ol.log li.hidden{display:none}.meta{color:#888}
.toc{columns:2;font-size:.9em}
.all button{font-size:.85em;margin-right:.3em}.empty{color:#555;font-style:italic}
"""

# The log filter: verbosity and text, per log; "#v=N&q=TEXT" sets every log's filter
# when the page opens (a link can point at what matters).
_SCRIPT = """
(function(){
  function apply(box){
    var max=+box.querySelector('.level').value;
    var q=box.querySelector('.text').value.toLowerCase();
    var shown=0, items=box.querySelectorAll('ol.log li');
    items.forEach(function(li){
      var ok=(+li.dataset.v)<=max && li.textContent.toLowerCase().indexOf(q)>=0;
      li.classList.toggle('hidden',!ok); if(ok){shown++;}
    });
    box.querySelector('.count').textContent=shown+' of '+items.length+' lines';
  }
  var params=new URLSearchParams(location.hash.slice(1));
  document.querySelectorAll('details.logbox').forEach(function(box){
    if(params.has('v')){box.querySelector('.level').value=params.get('v');}
    if(params.has('q')){box.querySelector('.text').value=params.get('q');box.open=true;}
    box.querySelector('.level').addEventListener('change',function(){apply(box);});
    box.querySelector('.text').addEventListener('input',function(){apply(box);});
    apply(box);
  });
  document.querySelectorAll('.all button').forEach(function(button){
    button.addEventListener('click',function(){
      var open=button.dataset.open==='1';
      document.querySelectorAll('details').forEach(function(d){d.open=open;});
    });
  });
})();
"""


class HtmlReport:
    """Collects a section per spec as the specs end, and writes the page at the end.
    ``engine`` is what the specs run on (it records each spec's own run)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.engine = RecordingEngine()
        self.sections: list[str] = []
        self.failing: list[bool] = []

    def before(self, spec: Spec) -> None:
        self.engine.arm(spec)

    def add(self, outcome: SpecOutcome) -> None:
        self.sections.append(spec_section(outcome, self.engine.take()))
        self.failing.append(outcome.failing)

    def write(self, summary: str) -> None:
        """Raises :class:`VspecError` when the file cannot be written."""
        try:
            write_page(self.path, failing_first(self.sections, self.failing), summary)
        except OSError as exc:
            raise VspecError(f"cannot write the HTML report {self.path}: {exc}") from exc
