"""The staff dashboard's page: a period chosen in a form, the period's figures, a chart (with its table)
for each rate over time, and the period as CSV."""

import csv
from datetime import date, timedelta

from django import forms
from django.conf import settings
from django.http import HttpResponse
from django.template.response import TemplateResponse
from django.utils import timezone

from support.insight.traces import TurnOutcome
from support.staff.charts import Series, chart
from support.staff.dashboard import Dashboard, dashboard_csv_rows, dashboard_get

DEFAULT_DAYS = 14
MAX_DAYS = 366


class PeriodForm(forms.Form):
    start = forms.DateField(label="From", widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(label="To", widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self):
        data = super().clean()
        assert data is not None  # Form.clean gives cleaned_data
        start, end = data.get("start"), data.get("end")
        if start and end:
            if end < start:
                raise forms.ValidationError("The period must end on or after the day it starts.")
            if (end - start).days >= MAX_DAYS:
                raise forms.ValidationError(f"Choose a period of at most {MAX_DAYS} days.")
        return data


def _default_period() -> tuple[date, date]:
    end = timezone.localdate()
    return end - timedelta(days=DEFAULT_DAYS - 1), end


def dashboard_page(request, *, context: dict):
    """The dashboard for the period in the query string (the last 14 days without one); ?format=csv gives
    the period as CSV. `context` is the admin's own."""
    start, end = _default_period()
    form = PeriodForm(
        request.GET if "start" in request.GET or "end" in request.GET else None,
        initial={"start": start, "end": end},
    )
    if form.is_bound and form.is_valid():
        start, end = form.cleaned_data["start"], form.cleaned_data["end"]
    dashboard = dashboard_get(start=start, end=end)
    if request.GET.get("format") == "csv":
        return _csv(dashboard)
    query = f"start={start.isoformat()}&end={end.isoformat()}"
    return TemplateResponse(
        request,
        "admin/support/dashboard.html",
        {
            **context,
            "title": "Dashboard: how the assistant is doing",
            "form": form,
            "dashboard": dashboard,
            "total": dashboard.total,
            "outcome_rates": [
                (label, dashboard.total.rate(TurnOutcome(value))) for value, label in TurnOutcome.choices
            ],
            # Counters as lists: a template would look "most_common" up as a key (and count it 0).
            "rejections": dashboard.rejections.most_common(),
            "handoff_reasons": dashboard.handoff_reasons.most_common(),
            "charts": _charts(dashboard),
            "currency": settings.BOOKLY_PRICE_CURRENCY,
            "csv_query": f"{query}&format=csv",
        },
    )


def _charts(dashboard: Dashboard) -> list:
    def series(name, value) -> Series:
        return Series(
            name=name, points=tuple((day, value(figures)) for day, figures in dashboard.days.items())
        )

    def rate(outcome):
        return lambda figures: figures.rate(outcome)

    return [
        chart(
            chart_id="chart-volume",
            title="Conversations and turns",
            series=[
                series("Conversations started", lambda f: f.conversations),
                series("Turns answered by the assistant", lambda f: f.turns),
            ],
        ),
        chart(
            chart_id="chart-resolved",
            title="Resolved without a person, handed to a person, and dead ends",
            percent=True,
            series=[
                series("Resolved without a person", lambda f: f.resolved_rate),
                series("Handoff rate", lambda f: f.handoff_rate),
                series("Dead ends", lambda f: f.dead_end_rate),
            ],
        ),
        chart(
            chart_id="chart-failures",
            title="Fallbacks, refusals and failed turns (share of turns)",
            percent=True,
            series=[
                series("Fallback rate", rate(TurnOutcome.FALLBACK)),
                series("Refusal rate", rate(TurnOutcome.REFUSED)),
                series("Failed turns", rate(TurnOutcome.ERROR)),
            ],
        ),
        chart(
            chart_id="chart-tools",
            title="Tool errors (share of tool calls)",
            percent=True,
            series=[series("Tool error rate", lambda f: f.tool_error_rate)],
        ),
        chart(
            chart_id="chart-latency",
            title="Turn latency",
            unit="ms",
            series=[series("p50", lambda f: f.p50_ms), series("p95", lambda f: f.p95_ms)],
        ),
        chart(
            chart_id="chart-feedback",
            title="Replies customers found helpful (share of votes)",
            percent=True,
            series=[series("Thumbs-up rate", lambda f: f.thumbs_up_rate)],
        ),
        chart(
            chart_id="chart-cost",
            title="Estimated model cost per day",
            unit=settings.BOOKLY_PRICE_CURRENCY,
            series=[series("Estimated cost", lambda f: round(f.cost, 4) if f.turns else None)],
        ),
    ]


def _csv(dashboard: Dashboard) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    name = f"bookly-dashboard-{dashboard.start.isoformat()}-{dashboard.end.isoformat()}.csv"
    response["Content-Disposition"] = f'attachment; filename="{name}"'
    writer = csv.writer(response)
    writer.writerows(dashboard_csv_rows(dashboard=dashboard))
    return response
