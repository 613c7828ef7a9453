"""The HTML report (``vspec run --html``, pytest's ``--vspec-html``): one page, no
network, with the outcome of every spec and pictures of what the engine did.

:mod:`~vspec.report.capture` records a spec's run, :mod:`~vspec.report.charts` draws
it (pygal, SVG inline), :mod:`~vspec.report.page` writes the page.

Also the report of ``vspec compare`` (:mod:`~vspec.report.compare`, its plots in
:mod:`~vspec.report.timeline_plots`) and the one chart look (:mod:`~vspec.report.svg`).
May import explain, the harness, the timeline and what is below them.
"""
