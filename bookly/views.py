"""Views of the site as a whole: health, metrics, the CSRF failure page, the favicon."""

import logging

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.db import DatabaseError, connection
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.utils.crypto import constant_time_compare
from django.views import defaults
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from connection.metrics import OutboxCollector
from support.insight.metrics import metrics_exposition
from support.web.api import SEND_JSON, api_error
from support.web.ratelimits import client_ip, ip_in

logger = logging.getLogger(__name__)


CSRF_FAILED_DETAIL = "Your page has expired. Please reload the page and send your message again."


@never_cache
@require_safe
def health(request):
    """GET /health: whether this process can serve, for load balancers and uptime checks."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError:
        logger.exception("health check: the database does not answer")
        return JsonResponse({"status": "unavailable"}, status=503)
    return JsonResponse({"status": "ok"})


@never_cache
@require_safe
def metrics(request):
    """GET /metrics: Prometheus metrics of every worker, for operators only (see _may_read_metrics)."""
    if not _may_read_metrics(request):
        return HttpResponse(
            "Metrics are served only on this machine, to BOOKLY_METRICS_ALLOWED_IPS, or with the bearer "
            "token BOOKLY_METRICS_TOKEN.\n",
            status=403,
            content_type="text/plain; charset=utf-8",
        )
    body, content_type = metrics_exposition(collectors=[OutboxCollector()])
    return HttpResponse(body, content_type=content_type)


def _may_read_metrics(request) -> bool:
    token = settings.BOOKLY_METRICS_TOKEN
    scheme, _, offered = request.headers.get("Authorization", "").partition(" ")
    if token and scheme.lower() == "bearer" and constant_time_compare(offered.strip(), token):
        return True
    address = client_ip(request)
    if ip_in(address, settings.BOOKLY_METRICS_ALLOWED_IPS):
        return True
    # A request a proxy on this machine passed on also comes from loopback: only a direct one counts,
    # one that is neither from a proxy we know nor carries any header a proxy adds.
    passed_on = ip_in(request.META.get("REMOTE_ADDR", ""), settings.BOOKLY_TRUSTED_PROXIES) or any(
        header in request.headers for header in _PROXY_HEADERS
    )
    return not passed_on and ip_in(address, ["127.0.0.0/8", "::1"])


_PROXY_HEADERS = ("Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-IP")


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def csrf_failure(request, reason=""):
    """A refused POST in words: JSON on the API, the site's 403 page elsewhere (Django logs the reason)."""
    if _is_api(request):
        return api_error(403, "csrf_failed", CSRF_FAILED_DETAIL)
    return render(request, "403_csrf.html", status=403)


def bad_request(request, exception):
    """A request Django refused before any view (a body over the size limit, a broken form): JSON on
    the API, the site's 400 page elsewhere; 413 when it was too large."""
    too_large = isinstance(exception, RequestDataTooBig)
    if _is_api(request):
        if too_large:
            limit_mb = settings.DATA_UPLOAD_MAX_MEMORY_SIZE / 1024 / 1024
            detail = (
                f"That request is too large: at most {limit_mb:.1f} MB, and a message at most "
                f"{settings.BOOKLY_MAX_MESSAGE_CHARS} characters."
            )
            return api_error(413, "too_large", detail)
        return api_error(400, "bad_request", SEND_JSON)
    response = defaults.bad_request(request, exception)
    if too_large:
        response.status_code = 413
    return response


@require_safe
def favicon(request):
    """Browsers ask for /favicon.ico on pages without an icon link (admin's)."""
    return redirect(static("support/favicon.svg"), permanent=True)
