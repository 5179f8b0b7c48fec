"""The store API, for the shop's backend: its orders in (create or replace, read, list what changed),
Bookly's returns out (read, list what changed, for a shop that polls rather than takes webhooks).

Thin: orders.intake checks and applies an order, orders.selectors read; these views turn their answers
into JSON and status codes.
"""

from datetime import UTC

from django.db import transaction
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework.pagination import CursorPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from connection.api.auth import KEY_REVOKED, HasStoreApiKey, PerKeyThrottle, StoreApiKeyAuthentication
from connection.api.errors import api_error
from connection.models import StoreApiKey
from orders.intake import (
    OrderConflict,
    OrderRefused,
    UpsertOutcome,
    incoming_order_clean,
    order_shape,
    order_upsert,
)
from orders.models import OrderSource
from orders.numbers import ORDER_NUMBERS
from orders.schemas import ORDER_EXAMPLE
from orders.selectors import (
    order_get_by_number,
    orders_changed_since,
    return_get_by_rma,
    returns_changed_since,
)
from orders.shapes import return_shape

_UPDATED_SINCE = OpenApiParameter(
    "updated_since",
    OpenApiTypes.DATETIME,
    description="Only what changed after this time (ISO 8601 with a time zone, e.g. 2026-04-01T00:00:00Z).",
)


class StoreApiView(APIView):
    authentication_classes = [StoreApiKeyAuthentication]
    permission_classes = [HasStoreApiKey]
    throttle_classes = [PerKeyThrottle]


class _ByChange(CursorPagination):
    """Pages in the order things changed, oldest first: a shop keeps the last cursor and asks again."""

    ordering = ("updated_at", "id")
    page_size = 100


def _since(request):
    """The updated_since parameter, or an error response naming it."""
    raw = request.query_params.get("updated_since")
    if raw is None:
        return None, None
    try:
        moment = parse_datetime(raw.replace(" ", "+"))  # a "+" in a query string arrives as a space
        # In UTC here: a time at the calendar's edge (9999-12-31T23:59:59-23:59) is past year 9999 in
        # UTC, which the database query would fail on.
        moment = moment.astimezone(UTC) if moment and moment.tzinfo else moment
    except (ValueError, OverflowError):  # well formed but no real time (month 13), or past the calendar
        moment = None
    if moment is None or moment.tzinfo is None:
        return None, api_error(
            "invalid_parameter",
            "updated_since must be a time like 2026-04-01T00:00:00Z, with its time zone.",
            400,
            fields=[{"field": "updated_since", "problem": "must be an ISO 8601 time with a time zone"}],
        )
    return moment, None


def _page(view, request, items, shape):
    paginator = _ByChange()
    page = paginator.paginate_queryset(items, request, view=view)
    return paginator.get_paginated_response([shape(item) for item in page])


class OrderView(StoreApiView):
    @extend_schema(
        operation_id="order_put",
        summary="Create or replace an order",
        request=OpenApiTypes.OBJECT,
        responses={
            200: OpenApiTypes.OBJECT,
            201: OpenApiTypes.OBJECT,
            400: OpenApiTypes.OBJECT,
            409: OpenApiTypes.OBJECT,
        },
        examples=[OpenApiExample("An order", value=ORDER_EXAMPLE, request_only=True)],
        description="The whole order, as the shop has it now: created (201), or replacing what Bookly "
        'had (200, with "outcome": "updated" or "unchanged"). Refused whole with every problem by field '
        '(400, "code": "invalid_order"). A version that would undo what Bookly did (older than the one '
        'it has, a status moving back, an address changed here put back) is refused whole (409, "code": '
        '"order_conflict", "reason" saying which).',
    )
    def put(self, request, number: str):
        data = request.data
        if isinstance(data, dict) and "number" in data:
            # A JSON Lines line sent as it is: its number may stand beside the fields if it is the address's.
            if not isinstance(data["number"], str) or ORDER_NUMBERS.canonical(
                data["number"]
            ) != ORDER_NUMBERS.canonical(number):
                return api_error(
                    "invalid_order",
                    "The order was not saved: fix the fields named.",
                    400,
                    fields=[
                        {"field": "number", "problem": "must be the order number in the address, or left out"}
                    ],
                )
            data = {name: value for name, value in data.items() if name != "number"}
        try:
            incoming = incoming_order_clean(number=number, data=data)
            with transaction.atomic():
                # A key revoked while this request ran writes nothing: checked again under its row lock.
                if (
                    not StoreApiKey.objects.select_for_update()
                    .filter(pk=request.auth.pk, revoked=False)
                    .exists()
                ):
                    return api_error("invalid_key", KEY_REVOKED, 401)
                try:
                    order, outcome = order_upsert(incoming=incoming, source=OrderSource.API)
                except OrderConflict as conflict:
                    # Answered inside the transaction, which keeps the refusal's record for staff.
                    return api_error(
                        "order_conflict",
                        f"The order was not saved: {conflict.message}.",
                        409,
                        reason=conflict.code,
                        fields=conflict.problems,
                    )
        except OrderRefused as refused:
            return api_error(
                "invalid_order",
                "The order was not saved: fix the fields named.",
                400,
                fields=refused.problems,
            )
        created = outcome is UpsertOutcome.CREATED
        return Response({**order_shape(order=order), "outcome": outcome}, status=201 if created else 200)

    @extend_schema(
        operation_id="order_get",
        summary="Read an order",
        responses={200: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT},
    )
    def get(self, request, number: str):
        order = order_get_by_number(number=number)
        if order is None:
            return api_error("not_found", "No order has that number.", 404)
        return Response(order_shape(order=order))


class OrderListView(StoreApiView):
    @extend_schema(
        operation_id="orders_list",
        summary="Orders that changed",
        parameters=[_UPDATED_SINCE],
        responses={200: OpenApiTypes.OBJECT},
        description="Oldest change first, 100 a page; follow `next` (a cursor) for the rest.",
    )
    def get(self, request):
        since, error = _since(request)
        return error or _page(
            self, request, orders_changed_since(since=since), lambda o: order_shape(order=o)
        )


class ReturnView(StoreApiView):
    @extend_schema(
        operation_id="return_get",
        summary="Read a return",
        responses={200: OpenApiTypes.OBJECT, 404: OpenApiTypes.OBJECT},
    )
    def get(self, request, rma_number: str):
        record = return_get_by_rma(rma_number=rma_number)
        if record is None:
            return api_error("not_found", "No return has that RMA number.", 404)
        return Response(return_shape(record=record))


class ReturnListView(StoreApiView):
    @extend_schema(
        operation_id="returns_list",
        summary="Returns that changed",
        parameters=[_UPDATED_SINCE],
        responses={200: OpenApiTypes.OBJECT},
        description="Oldest change first, 100 a page; follow `next` (a cursor) for the rest.",
    )
    def get(self, request):
        since, error = _since(request)
        return error or _page(
            self, request, returns_changed_since(since=since), lambda r: return_shape(record=r)
        )


class NoSuchPath(APIView):
    """Any other address under the API, a trailing slash among them ("orders/"): a 404 in the API's
    shape, not the site's HTML page. Public, as the schema is: which addresses exist is no secret."""

    authentication_classes = []
    permission_classes = []

    @extend_schema(exclude=True)
    def get(self, request, *args, **kwargs):
        hint = " Addresses have no trailing slash." if request.path.endswith("/") else ""
        return api_error("not_found", f"There is nothing here by that name.{hint}", 404)

    post = put = patch = delete = options = get
