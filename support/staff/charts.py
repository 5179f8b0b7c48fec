"""Line charts as server-side SVG for the staff dashboard.

The dashboard is served under `Content-Security-Policy: default-src 'self'`: the markup carries no style
attribute, <style> or script. The dashboard's stylesheet styles these classes:

    chart                            the <figure>
    chart__svg                       the <svg>
    chart__grid                      horizontal grid lines
    chart__axis                      the x axis (the zero line)
    chart__label                     text in the svg, with chart__label--y, chart__label--x or chart__empty
    chart__line chart__line--N       series N's line (N = 0..3; a fifth series looks like the first)
    chart__point chart__point--N     series N's isolated days, drawn as dots
    chart__legend, chart__legend-item, chart__swatch   the legend below the svg
    chart__data, chart__table        the <details> holding the table of values

A few presentation attributes (stroke="currentColor", fill="none", stroke-dasharray) keep the chart legible
without the stylesheet, and the dash pattern tells the series apart where colour cannot.
"""

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from functools import partial

from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

WIDTH, HEIGHT = 640, 240
LEFT, RIGHT, TOP, BOTTOM = 72, 624, 12, 212  # the plot area; the margins hold the axis labels ("2,500 ms")
FONT_SIZE = 13
NO_DATA = "No data for this period"
DASHES = ("", "8 4", "2 4", "12 4 2 4")  # one line style per series, so colour is never the only difference
# Fixed English abbreviations: strftime("%b") would follow the server's locale.
MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
MAX_X_LABELS = 6  # about 110 units apart, and "Nov 30" is about 45 wide at this font size
_CHART_ID = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")

Formatter = Callable[[float | None], str]

_FIGURE = (
    '<figure class="chart" id="{id}"><figcaption id="{id}-title">{title}</figcaption>'
    '<svg class="chart__svg" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" width="100%"'
    ' preserveAspectRatio="xMidYMid meet" role="img" aria-labelledby="{id}-title"'
    ' aria-describedby="{id}-desc">'
    '<desc id="{id}-desc">{desc}</desc>{body}</svg>{legend}'
    '<details class="chart__data"><summary>Table</summary>{table}</details></figure>'
)
_TEXT = (
    '<text class="{cls}" x="{x}" y="{y}" text-anchor="{anchor}" font-size="{size}"'
    ' fill="currentColor">{text}</text>'
)
_GRID = (  # faint, so that the grid stays quiet without the stylesheet
    '<line class="chart__grid" x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" stroke="currentColor"'
    ' stroke-opacity="0.2"/>'
)
_AXIS = '<line class="chart__axis" x1="{x1}" y1="{y}" x2="{x2}" y2="{y}" stroke="currentColor"/>'
_POINT = '<circle class="chart__point chart__point--{style}" cx="{x}" cy="{y}" r="3.5" fill="currentColor"/>'
_LINE = '<polyline class="chart__line chart__line--{style}" points="{points}"{stroke}/>'
_LEGEND_ITEM = (
    '<li class="chart__legend-item"><svg class="chart__swatch" viewBox="0 0 32 8" width="32" height="8"'
    ' aria-hidden="true" focusable="false"><line class="chart__line chart__line--{style}"'
    ' x1="0" y1="4" x2="32" y2="4"{stroke}/></svg> {name}</li>'
)
_TABLE = (
    '<table class="chart__table"><thead><tr><th scope="col">Day</th>{header}</tr></thead>'
    "<tbody>{rows}</tbody></table>"
)
_ROW = '<tr><th scope="row"><time datetime="{iso}">{day}</time></th>{cells}</tr>'


@dataclass(frozen=True)
class Series:
    name: str  # e.g. "Fallback rate"
    points: tuple[tuple[date, float | None], ...]  # one per day, in order; None = no data (a gap, not zero)


def chart(
    *, title: str, series: list[Series], unit: str = "", percent: bool = False, chart_id: str
) -> SafeString:
    """A <figure> with the title as <figcaption>, an svg line chart, a legend and a <details> table of the
    values. `percent=True` means values are fractions 0..1 shown as percentages; `chart_id` (a slug) prefixes
    the ids of the figure's elements. Values must be finite and not negative: the y axis starts at 0."""
    if not _CHART_ID.fullmatch(chart_id):
        raise ValueError(f"chart_id must be a slug starting with a letter, not {chart_id!r}")
    values = [value for one in series for _, value in one.points if value is not None]
    if not all(math.isfinite(value) and value >= 0 for value in values):
        raise ValueError("chart values must be finite and not negative")
    days = sorted({day for one in series for day, _ in one.points})
    fmt = partial(_format_value, unit=unit, percent=percent)
    if values:
        body = _plot(series, days, top=_nice_top(max(values), percent), fmt=fmt)
        names = ", ".join(one.name for one in series)
        desc = f"{names} from {_day(days[0])} to {_day(days[-1])}. The table below lists every value."
        legend: str = _legend(series)  # safe markup, or "" without data
    else:
        body = _text("chart__label chart__empty", WIDTH / 2, HEIGHT / 2, "middle", NO_DATA)
        desc, legend = f"{NO_DATA}.", ""
    table = _table(series, days, bool(values), fmt)
    return format_html(
        _FIGURE,
        id=chart_id,
        title=title,
        width=WIDTH,
        height=HEIGHT,
        desc=desc,
        body=body,
        legend=legend,
        table=table,
    )


def _format_value(value: float | None, *, unit: str = "", percent: bool = False) -> str:
    """How the axis and the table show a value: "12.5%", "1,250 ms", or "no data" for None."""
    if value is None:
        return "no data"
    if percent:
        return f"{value * 100:.1f}%"
    if value == int(value):
        text = f"{int(value):,}"
    else:
        # Two significant digits for small numbers, so that a tick of 0.005 is not shown as "0".
        decimals = max(2, 1 - math.floor(math.log10(abs(value))))
        text = f"{value:,.{decimals}f}".rstrip("0").rstrip(".")
    return f"{text} {unit}" if unit else text


def _nice_top(peak: float, percent: bool) -> tuple[float, int]:
    """The axis top, the smallest 1, 2, 2.5 or 5 times 10^n at or above `peak`, and a number of grid steps
    that divides it into round values. Percent axes top out at 5, 10, 20, 25, 50 or 100%, never lower than
    5%: that keeps every grid label a whole percent."""
    peak = max(peak, 0.05 if percent else 0.0)
    if peak == 0:
        return 1.0, 4
    magnitude = 10.0 ** math.floor(math.log10(peak))
    for mantissa, steps in ((1, 4), (2, 4), (2.5, 5), (5, 5)):
        if mantissa * magnitude >= peak * (1 - 1e-9):  # tolerate float noise such as 0.1 * 3
            return mantissa * magnitude, steps
    return 10 * magnitude, 4


def _plot(series: list[Series], days: list[date], *, top: tuple[float, int], fmt: Formatter) -> SafeString:
    top_value, steps = top
    first, span = days[0], (days[-1] - days[0]).days

    def x(day: date) -> float:
        # By date, not by index, so that a day missing from every series still takes its space.
        return (LEFT + RIGHT) / 2 if span == 0 else LEFT + (day - first).days / span * (RIGHT - LEFT)

    def y(value: float) -> float:
        return BOTTOM - value / top_value * (BOTTOM - TOP)

    parts = []
    for step in range(steps + 1):
        value = top_value * step / steps
        if step:  # the zero line is the x axis, drawn below
            parts.append(format_html(_GRID, x1=LEFT, x2=RIGHT, y=_n(y(value))))
        parts.append(
            _text("chart__label chart__label--y", LEFT - 6, y(value) + FONT_SIZE / 3, "end", fmt(value))
        )
    parts.append(format_html(_AXIS, x1=LEFT, x2=RIGHT, y=BOTTOM))
    ticks = _x_ticks(first, span)
    for index, day in enumerate(ticks):
        anchor = "middle"
        if len(ticks) > 1 and index in (0, len(ticks) - 1):  # outer labels align inward: inside the viewBox
            anchor = "start" if index == 0 else "end"
        parts.append(_text("chart__label chart__label--x", x(day), BOTTOM + FONT_SIZE + 6, anchor, _day(day)))
    for index, one in enumerate(series):
        style = index % len(DASHES)
        for run in _runs(one.points):
            if len(run) == 1:  # a line needs two days: a lone day is a dot
                ((day, value),) = run
                parts.append(format_html(_POINT, style=style, x=_n(x(day)), y=_n(y(value))))
            else:
                points = " ".join(f"{_n(x(day))},{_n(y(value))}" for day, value in run)
                parts.append(format_html(_LINE, style=style, points=points, stroke=_stroke(style)))
    return format_html_join("", "{}", ((part,) for part in parts))  # each part is already safe markup


def _x_ticks(first: date, span: int) -> list[date]:
    """The first and the last day, and up to four evenly spread between them."""
    intervals = min(span, MAX_X_LABELS - 1)
    if intervals == 0:
        return [first]
    return [first + timedelta(days=round(i * span / intervals)) for i in range(intervals + 1)]


def _runs(points: tuple[tuple[date, float | None], ...]) -> Iterator[list[tuple[date, float]]]:
    """The stretches of consecutive days with data: a None ends one."""
    run: list[tuple[date, float]] = []
    for day, value in points:
        if value is None:
            if run:
                yield run
            run = []
        else:
            run.append((day, value))
    if run:
        yield run


def _legend(series: list[Series]) -> SafeString:
    items = format_html_join(
        "",
        _LEGEND_ITEM,
        (
            {"style": i % len(DASHES), "stroke": _stroke(i % len(DASHES)), "name": one.name}
            for i, one in enumerate(series)
        ),
    )
    return format_html('<ul class="chart__legend">{}</ul>', items)


def _table(series: list[Series], days: list[date], has_data: bool, fmt: Formatter) -> SafeString:
    header = format_html_join("", '<th scope="col">{}</th>', ((one.name,) for one in series))
    if not has_data:
        rows = format_html('<tr><td colspan="{}">{}</td></tr>', len(series) + 1, NO_DATA)
        return format_html(_TABLE, header=header, rows=rows)
    by_day = [dict(one.points) for one in series]
    rows = format_html_join(
        "",
        _ROW,
        (
            {
                "iso": day.isoformat(),
                "day": _day(day),
                "cells": _cells(fmt(values.get(day)) for values in by_day),
            }
            for day in days
        ),
    )
    return format_html(_TABLE, header=header, rows=rows)


def _cells(texts: Iterator[str]) -> SafeString:
    return format_html_join("", "<td>{}</td>", ((text,) for text in texts))


def _text(cls: str, x: float, y: float, anchor: str, text: str) -> SafeString:
    return format_html(_TEXT, cls=cls, x=_n(x), y=_n(y), anchor=anchor, size=FONT_SIZE, text=text)


def _stroke(style: int) -> SafeString:
    """Presentation attributes that draw a line without the stylesheet; CSS on the classes overrides them."""
    dash = format_html(' stroke-dasharray="{}"', DASHES[style]) if DASHES[style] else ""
    return format_html(' fill="none" stroke="currentColor" stroke-width="2" stroke-linejoin="round"{}', dash)


def _day(day: date) -> str:
    return f"{MONTHS[day.month - 1]} {day.day}"


def _n(coordinate: float) -> str:
    """Coordinates to one decimal: enough for a screen, and stable output."""
    return f"{coordinate:.1f}"
