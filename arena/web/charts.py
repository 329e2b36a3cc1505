"""Inline SVG charts drawn on the server (no script, no build step).

A chart is a ``role="img"`` SVG with a title and a description that states
what a reader would look for (each line's last value), so it also reads
without being seen. Colours come from the stylesheet (``.s0`` ... ``.s7``),
which follows the light or dark scheme.
"""

from __future__ import annotations

import html
import math
from dataclasses import dataclass, field

PALETTE = 8  # colour classes s0..s7 in style.css; more lines reuse them


@dataclass(frozen=True)
class Series:
    """One line: ``points`` (x, y); optionally a band (x, low, high) drawn
    behind it and marks (x, y, tooltip) drawn as dots."""

    name: str
    points: list[tuple[float, float]]
    band: list[tuple[float, float, float]] = field(default_factory=list)
    marks: list[tuple[float, float, str]] = field(default_factory=list)
    summary: str = ""  # one sentence for the description, e.g. the last value


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _ticks(lo: float, hi: float, count: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    span = hi - lo
    raw = span / max(count - 1, 1)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.floor(lo / step) * step
    ticks = []
    v = first
    while v <= hi + step * 1e-9:
        if v >= lo - step * 1e-9:
            ticks.append(round(v, 10))
        v += step
    return ticks


def line_chart(title: str, series: list[Series], *, x_label: str, y_label: str,
               ident: str = "chart", width: int = 640, height: int = 260,
               y_range: tuple[float, float] | None = None) -> str:
    """Lines (with optional bands and dots) over a shared x axis."""
    drawn = [s for s in series if s.points]
    if not drawn:
        return '<p class="empty">No data yet.</p>'
    pad_l, pad_r, pad_t, pad_b = 48, 14, 12, 34
    xs = [x for s in drawn for x, _ in s.points]
    ys = [y for s in drawn for _, y in s.points]
    ys += [v for s in drawn for _, lo, hi in s.band for v in (lo, hi)]
    ys += [y for s in drawn for _, y, _ in s.marks]
    x_lo, x_hi = min(xs), max(xs)
    y_lo, y_hi = y_range if y_range is not None else (min(ys), max(ys))
    if x_hi - x_lo < 1e-9:
        x_lo, x_hi = x_lo - 1, x_hi + 1
    if y_hi - y_lo < 1e-9:
        y_lo, y_hi = y_lo - 1, y_hi + 1

    def px(x: float) -> float:
        return pad_l + (width - pad_l - pad_r) * (x - x_lo) / (x_hi - x_lo)

    def py(y: float) -> float:
        return pad_t + (height - pad_t - pad_b) * (1 - (y - y_lo) / (y_hi - y_lo))

    parts = []
    for v in _ticks(y_lo, y_hi, 6):
        parts.append(f'<line class="grid" x1="{pad_l}" x2="{width - pad_r}" y1="{py(v):.1f}" '
                     f'y2="{py(v):.1f}"/><text x="{pad_l - 6}" y="{py(v) + 4:.1f}" '
                     f'text-anchor="end">{v:g}</text>')
    for v in _ticks(x_lo, x_hi, 6):
        if float(v).is_integer():
            parts.append(f'<text x="{px(v):.1f}" y="{height - pad_b + 14}" '
                         f'text-anchor="middle">{int(v)}</text>')
    for k, s in enumerate(drawn):
        colour = f"s{k % PALETTE}"
        inner = []
        if s.band:
            upper = [f"{px(x):.1f},{py(hi):.1f}" for x, _, hi in s.band]
            lower = [f"{px(x):.1f},{py(lo):.1f}" for x, lo, _ in reversed(s.band)]
            inner.append(f'<polygon class="band {colour}" points="{" ".join(upper + lower)}"/>')
        line = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in s.points)
        inner.append(f'<polyline class="line {colour}" points="{line}"><title>{_e(s.name)}'
                     f'</title></polyline>')
        inner.extend(f'<circle class="{colour}" cx="{px(x):.1f}" cy="{py(y):.1f}" r="3">'
                     f'<title>{_e(tip)}</title></circle>' for x, y, tip in s.marks)
        parts.append(f'<g class="series" data-series="{_e(s.name)}">{"".join(inner)}</g>')
    desc = " ".join(s.summary for s in drawn if s.summary)
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-labelledby="{ident}-title {ident}-desc" xmlns="http://www.w3.org/2000/svg">'
        f'<title id="{ident}-title">{_e(title)}</title>'
        f'<desc id="{ident}-desc">{_e(desc)}</desc>{"".join(parts)}'
        f'<text x="{(width + pad_l) / 2:.0f}" y="{height - 4}" text-anchor="middle">'
        f'{_e(x_label)}</text>'
        f'<text transform="rotate(-90)" x="{-(height - pad_b + pad_t) / 2:.0f}" y="12" '
        f'text-anchor="middle">{_e(y_label)}</text></svg>')


def legend(series: list[Series]) -> str:
    """The colour key of a chart, as a list a screen reader can read."""
    items = "".join(f'<li><span class="swatch s{k % PALETTE}" aria-hidden="true"></span>'
                    f'{_e(s.name)}</li>' for k, s in enumerate(x for x in series if x.points))
    return f'<ul class="legend">{items}</ul>' if items else ""
