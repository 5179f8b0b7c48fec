"""Views of the site as a whole: health, the CSRF failure page, the favicon."""

import logging

from django.db import DatabaseError, connection
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from support.llm.configured import get_model

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


def csrf_failure(request, reason=""):
    """A refused POST in words: JSON on the API, the site's 403 page elsewhere (Django logs the reason)."""
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"error": "csrf_failed", "detail": CSRF_FAILED_DETAIL, "offline": get_model().offline}, status=403
        )
    return render(request, "403_csrf.html", status=403)


@require_safe
def favicon(request):
    """Browsers ask for /favicon.ico on pages without an icon link (admin's)."""
    return redirect(static("support/favicon.svg"), permanent=True)
