"""The staff dashboard's server-side SVG charts, read back through an XML parser."""

import itertools
import math
import re
import xml.etree.ElementTree as ET
from datetime import date, timedelta

import pytest

from support.staff.charts import Series, chart

SVG = "{http://www.w3.org/2000/svg}"
NOV_3 = date(2024, 11, 3)


def days(*values, start=NOV_3):
    return tuple((start + timedelta(days=i), value) for i, value in enumerate(values))


def parse(html: str) -> ET.Element:
    """The markup must be well-formed XML for this to work at all."""
    return ET.fromstring(html)  # noqa: S314 - the chart's own output, not untrusted input


def render(series, **kwargs) -> ET.Element:
    return parse(str(chart(**{"title": "Fallback rate", "chart_id": "fallback", **kwargs}, series=series)))


def found(root: ET.Element, path: str) -> ET.Element:
    element = root.find(path)
    assert element is not None, f"no {path}"
    return element


def attribute(element: ET.Element, name: str) -> str:
    value = element.get(name)
    assert value is not None, f"no {name} on {element.tag}"
    return value


def text_of(element: ET.Element) -> str:
    assert element.text is not None, f"no text in {element.tag}"
    return element.text


def svg(figure: ET.Element) -> ET.Element:
    return found(figure, f"{SVG}svg")


def with_class(root: ET.Element, name: str) -> list[ET.Element]:
    return [element for element in root.iter() if name in element.get("class", "").split()]


def points(polyline: ET.Element) -> list[tuple[float, ...]]:
    return [tuple(float(n) for n in pair.split(",")) for pair in attribute(polyline, "points").split()]


def y_labels(figure: ET.Element) -> list[str]:
    """The y axis labels, bottom first."""
    labels = with_class(svg(figure), "chart__label--y")
    return [text_of(label) for label in sorted(labels, key=lambda label: -float(attribute(label, "y")))]


def table_rows(figure: ET.Element) -> list[list[str]]:
    return [["".join(cell.itertext()) for cell in row] for row in figure.iter("tr")][1:]


def test_points_land_on_the_plot_area_bottom_middle_and_top():
    figure = render([Series("Fallback rate", days(0.0, 0.5, 1.0))], percent=True)
    (axis,) = with_class(svg(figure), "chart__axis")
    left, right, bottom = (float(attribute(axis, name)) for name in ("x1", "x2", "y1"))
    top = min(float(attribute(line, "y1")) for line in with_class(svg(figure), "chart__grid"))
    (line,) = svg(figure).iter(f"{SVG}polyline")
    first, middle, last = points(line)
    assert first == (left, bottom)
    assert last == (right, top)
    assert middle == pytest.approx(((left + right) / 2, (top + bottom) / 2), abs=0.1)
    assert y_labels(figure)[0] == "0.0%"
    assert y_labels(figure)[-1] == "100.0%"


def test_a_missing_day_splits_the_line_instead_of_dropping_to_zero():
    figure = render([Series("Fallback rate", days(0.2, 0.4, None, 0.6, 0.8))], percent=True)
    (axis,) = with_class(svg(figure), "chart__axis")
    lines = list(svg(figure).iter(f"{SVG}polyline"))
    assert [len(points(line)) for line in lines] == [2, 2]
    assert points(lines[0])[-1][0] < points(lines[1])[0][0]
    assert all(y < float(attribute(axis, "y1")) for line in lines for _, y in points(line))
    assert list(svg(figure).iter(f"{SVG}circle")) == []


def test_a_single_day_is_a_point_not_a_zero_length_line():
    figure = render([Series("Fallback rate", days(0.25))], percent=True)
    assert list(svg(figure).iter(f"{SVG}polyline")) == []
    (point,) = svg(figure).iter(f"{SVG}circle")
    assert "chart__point" in attribute(point, "class").split()
    assert [label.text for label in with_class(svg(figure), "chart__label--x")] == ["Nov 3"]
    assert table_rows(figure) == [["Nov 3", "25.0%"]]


def test_a_day_between_gaps_is_a_point_and_the_rest_a_line():
    figure = render([Series("Latency", days(None, 120, None, 130, 140))], unit="ms")
    assert len(list(svg(figure).iter(f"{SVG}circle"))) == 1
    assert [len(points(line)) for line in svg(figure).iter(f"{SVG}polyline")] == [2]


def test_the_table_has_a_row_per_day_and_formats_values_like_the_axis():
    figure = render(
        [Series("Fallback rate", days(0.125, None, 0.5)), Series("Handoff rate", days(0.02, 0.031, 1.0))],
        percent=True,
    )
    header = ["".join(cell.itertext()) for cell in found(figure, ".//thead/tr")]
    assert header == ["Day", "Fallback rate", "Handoff rate"]
    assert table_rows(figure) == [
        ["Nov 3", "12.5%", "2.0%"],
        ["Nov 4", "no data", "3.1%"],
        ["Nov 5", "50.0%", "100.0%"],
    ]


def test_values_with_a_unit_carry_it_with_thousands_separators():
    figure = render([Series("Median latency", days(1250, None, 980.5))], unit="ms")
    assert table_rows(figure) == [["Nov 3", "1,250 ms"], ["Nov 4", "no data"], ["Nov 5", "980.5 ms"]]
    assert y_labels(figure)[-1] == "2,000 ms"


def test_title_and_series_names_are_escaped():
    title, name = "<script>alert(1)</script>", '<img src=x onerror="alert(2)">'
    html = str(chart(title=title, series=[Series(name, days(0.1, 0.2))], chart_id="evil"))
    assert "<script" not in html
    assert "<img" not in html
    figure = parse(html)
    assert found(figure, "figcaption").text == title
    assert name in "".join(found(figure, ".//ul").itertext())
    assert name in [th.text for th in figure.iter("th")]


@pytest.mark.parametrize("chart_id", ["", "has space", 'a"b', "x<y", "1st", "chart\n", "a/b", "é"])
def test_a_chart_id_that_is_not_a_simple_slug_is_refused(chart_id):
    with pytest.raises(ValueError, match="chart_id"):
        chart(title="T", series=[Series("A", days(0.1))], chart_id=chart_id)


def test_the_chart_id_prefixes_the_ids_and_labels_the_svg():
    figure = render([Series("A", days(0.1, 0.2))], chart_id="fallback-7d")
    labelled_by = svg(figure).get("aria-labelledby")
    assert svg(figure).get("role") == "img"
    assert labelled_by == "fallback-7d-title"
    assert found(figure, f".//*[@id='{labelled_by}']").text == "Fallback rate"


@pytest.mark.parametrize("value", [-0.1, math.nan, math.inf])
def test_values_the_axis_cannot_show_are_refused(value):
    with pytest.raises(ValueError, match="finite and not negative"):
        chart(title="T", series=[Series("A", days(0.1, value))], chart_id="c")


@pytest.mark.parametrize("series", [[], [Series("A", days(None, None))]], ids=["no-series", "all-none"])
def test_no_data_still_renders_and_says_so(series):
    figure = render(series, percent=True)
    assert "No data for this period" in ["".join(text.itertext()) for text in svg(figure).iter(f"{SVG}text")]
    assert list(svg(figure).iter(f"{SVG}polyline")) == []
    assert list(svg(figure).iter(f"{SVG}circle")) == []
    assert table_rows(figure) == [["No data for this period"]]


def test_series_differ_by_dash_pattern_not_only_colour():
    series = [Series(f"S{i}", days(0.1 * i, 0.1 * i + 0.05)) for i in range(4)]
    figure = render(series, percent=True)
    lines = list(svg(figure).iter(f"{SVG}polyline"))
    assert len({line.get("stroke-dasharray") for line in lines}) == 4
    swatches = [line.get("stroke-dasharray") for line in with_class(found(figure, "ul"), "chart__line")]
    assert swatches == [line.get("stroke-dasharray") for line in lines]
    assert all(line.get("fill") == "none" and line.get("stroke") == "currentColor" for line in lines)


def test_nothing_the_content_security_policy_would_block():
    html = str(
        chart(
            title="Fallback rate",
            series=[Series("A", days(0.1, None, 0.3, 0.2)), Series("B", days(0.05, 0.1, 0.2, None))],
            percent=True,
            chart_id="csp",
        )
    )
    elements = list(parse(html).iter())
    assert not [element for element in elements if "style" in element.attrib]
    assert not [name for element in elements for name in element.attrib if name.lower().startswith("on")]
    assert not {element.tag.removeprefix(SVG) for element in elements} & {"style", "script", "foreignObject"}
    assert "style=" not in html
    assert "href" not in html


@pytest.mark.parametrize(
    ("values", "percent", "unit", "top_label"),
    [
        ((0.03, 0.12), True, "", "20.0%"),
        ((0.6,), True, "", "100.0%"),
        ((1.0,), True, "", "100.0%"),
        ((0.002,), True, "", "5.0%"),
        ((1234,), False, "ms", "2,000 ms"),
        ((2.4,), False, "", "2.5"),
        ((7,), False, "", "10"),
        ((500, 20), False, "", "500"),
        ((0,), False, "", "1"),
    ],
)
def test_the_axis_top_is_a_nice_number_at_or_above_the_max(values, percent, unit, top_label):
    figure = render([Series("A", days(*values))], percent=percent, unit=unit)
    labels = y_labels(figure)
    assert labels[-1] == top_label
    assert 3 <= len(with_class(svg(figure), "chart__grid")) <= 5


@pytest.mark.parametrize("peak", [0.3, 3, 30, 45, 99, 101, 2501, 1e6])
def test_any_axis_top_is_one_two_two_and_a_half_or_five_times_a_power_of_ten(peak):
    top = float(y_labels(render([Series("A", days(peak))]))[-1].replace(",", ""))
    assert top >= peak
    assert top / 10 ** math.floor(math.log10(top)) in {1, 2, 2.5, 5}


def test_ninety_days_label_the_first_and_last_day_without_overlap():
    figure = render([Series("A", days(*[i % 7 for i in range(90)]))])
    labels = with_class(svg(figure), "chart__label--x")
    assert labels[0].text == "Nov 3"
    assert labels[-1].text == "Jan 31"
    assert len(labels) <= 6
    xs = [float(attribute(label, "x")) for label in labels]
    assert all(b - a >= 60 for a, b in itertools.pairwise(xs))  # "Nov 30" is about 45 units wide


def test_output_is_deterministic_with_one_decimal_coordinates():
    series = [Series("A", days(0.1234, 0.5678, 1 / 3))]
    html = str(chart(title="T", series=series, percent=True, chart_id="c"))
    assert html == str(chart(title="T", series=series, percent=True, chart_id="c"))
    coordinates = [
        number
        for element in parse(html).iter()
        for name in ("x", "y", "cx", "cy", "x1", "y1", "points")
        for number in re.split(r"[ ,]", element.get(name, ""))
        if number and element.tag.startswith(SVG) and element.tag != f"{SVG}svg"
    ]
    assert coordinates
    assert all(re.fullmatch(r"\d+(\.\d)?", number) for number in coordinates)
