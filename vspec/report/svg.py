"""The one look and the one rendering of vspec's pygal charts (report and timeline plots).

pygal writes SVG itself, so a chart is plain markup that a page can hold inline. Its
tooltip script is never referenced (charts pass ``js=[]``), and the comments and config
script it adds are dropped: the page then fetches nothing, and the same data always gives
the same text.

Imports pygal only.
"""

from __future__ import annotations

import re

import pygal
from pygal.style import Style

STYLE = Style(
    background="white",
    plot_background="white",
    font_family="sans-serif",
    label_font_size=10,
    legend_font_size=11,
    title_font_size=13,
)
_JUNK = re.compile(r"<!--.*?-->|<script.*?</script>", re.DOTALL)


def render(chart: pygal.graph.graph.Graph) -> str:
    """``chart`` as standalone, deterministic SVG text."""
    text: str = chart.render(is_unicode=True)
    return _JUNK.sub("", text)
