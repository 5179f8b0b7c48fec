"""The store API, for the shop's backend: its orders in (create or replace, read, list what changed),
Bookly's returns out (read, list what changed, for a shop that polls rather than takes webhooks).

Thin: orders.intake checks and applies an order, orders.selectors read; these views turn their answers
into JSON and status codes.
"""

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from django.db import models, transaction
from django.db.models import QuerySet
from django.utils.dateparse import parse_datetime
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework.pagination import CursorPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from connection.api.auth import KEY_REVOKED, HasStoreApiKey, PerKeyThrottle, StoreApiKeyAuthentication
from connection.api.errors import api_error
from connection.api.schema import READ_ONLY_ORDER_FIELDS, OrderPut, errors
from connection.models import StoreApiKey
from orders.inbound import ORDER_EXAMPLE
from orders.intake import (
    OrderConflict,
    OrderRefused,
    UpsertOutcome,
    incoming_order_clean,
    order_shape,
    order_upsert,
)
from orders.models import OrderSource, Shop
from orders.numbers import ORDER_NUMBERS
from orders.outbound import OrderOut, OrderPageOut, OrderWrittenOut, ReturnOut, ReturnPageOut
from orders.patterns import RMA_NUMBER_PATTERN
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
_CURSOR = OpenApiParameter("cursor", str, description="Where the page starts: the `next` of the page before.")
_NUMBER = OpenApiParameter(
    "number",
    str,
    OpenApiParameter.PATH,
    description="The order number, in the key's shop's own shape (admin: Shops), e.g. BK-10042 or #1001.",
)
_RMA_NUMBER = OpenApiParameter("rma_number", str, OpenApiParameter.PATH, pattern=RMA_NUMBER_PATTERN)


class StoreApiView(APIView):
    authentication_classes = [StoreApiKeyAuthentication]
    permission_classes = [HasStoreApiKey]
    throttle_classes = [PerKeyThrottle]


def _key(request: Request) -> StoreApiKey:
    """The key a StoreApiView's request came with (HasStoreApiKey let in no other)."""
    key = request.auth
    assert isinstance(key, StoreApiKey)
    return key


class _ByChange(CursorPagination):
    """Pages in the order things changed, oldest first: a shop keeps the last cursor and asks again."""

    ordering = ("updated_at", "id")
    page_size = 100


def _since(request: Request) -> tuple[datetime | None, Response | None]:
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


# Why a PUT of an order as read is refused: the order changed since (409 "order_conflict").
CHANGED_SINCE_READ = "changed_since_read"


def _read_only_taken_out(
    data: object, *, shop: Shop, number: str
) -> tuple[object, list[dict[str, str]], bool]:
    """The body without what an order read from the API holds beside the shop's fields, each checked
    (problems by field): `number` must be the address's (a JSON Lines line sent as it is has it too),
    `source` and `outcome` one of theirs. `updated_at` is Bookly's time when it is the order's as read
    now (left out), and in a body that carries `source` (an order as read: a shop's own version never
    has it), where any other time means the order changed since it was read (the third value: refused
    with 409, never applied over the newer version nor taken for the shop's time)."""
    if not isinstance(data, dict):
        return data, [], False  # the intake names it
    problems = []
    sent = data.get("number")
    if sent is not None and (
        not isinstance(sent, str) or ORDER_NUMBERS.canonical(sent) != ORDER_NUMBERS.canonical(number)
    ):
        problems.append(
            {"field": "number", "problem": "must be the order number in the address, or left out"}
        )
    if data.get("source") is not None and data["source"] not in OrderSource.values:
        problems.append({"field": "source", "problem": "is read only: send it as read, or leave it out"})
    if data.get("outcome") is not None and data["outcome"] not in ("created", "updated", "unchanged"):
        problems.append({"field": "outcome", "problem": "is read only: send it as read, or leave it out"})
    as_read = data.get("source") is not None
    data = {name: value for name, value in data.items() if name not in READ_ONLY_ORDER_FIELDS}
    if "updated_at" not in data or (data["updated_at"] is None and not as_read):
        return data, problems, False
    read = None
    if isinstance(data["updated_at"], str) and len(data["updated_at"]) <= 40:
        try:
            read = parse_datetime(data["updated_at"])
        except (ValueError, OverflowError):  # well formed but no real time: the intake names it
            read = None
    order = order_get_by_number(shop=shop, number=number) if read is not None and read.tzinfo else None
    if order is not None and read == order.updated_at:
        del data["updated_at"]
    elif as_read:
        data.pop("updated_at")
        return data, problems, order is not None  # a new order's number read elsewhere: nothing to undo
    return data, problems, False


_Model = TypeVar("_Model", bound=models.Model)


def _page(
    view: APIView, request: Request, items: QuerySet[_Model], shape: Callable[[_Model], dict[str, object]]
) -> Response:
    paginator = _ByChange()
    page = paginator.paginate_queryset(items, request, view=view)
    assert page is not None  # None only for a paginator without a page size
    return paginator.get_paginated_response([shape(item) for item in page])


class OrderView(StoreApiView):
    @extend_schema(
        operation_id="order_put",
        summary="Create or replace an order",
        parameters=[_NUMBER],
        request=OrderPut,
        responses={
            200: OrderWrittenOut,
            201: OrderWrittenOut,
            **errors(400, 409, 413, 415),
        },
        examples=[OpenApiExample("An order", value=ORDER_EXAMPLE, request_only=True)],
        description="The whole order, as the shop has it now: created (201), or replacing what Bookly "
        'had (200, with "outcome": "updated" or "unchanged"). Refused whole with every problem by field '
        '(400, "code": "invalid_order"). A version that would undo what Bookly did (older than the one '
        'it has, a status moving back, an address changed here put back) is refused whole (409, "code": '
        '"order_conflict", "reason" saying which). An order as GET answered it may be sent back: `number`, '
        "`source` and `outcome` are read only; with `source`, `updated_at` is Bookly's: ignored when it is "
        'the order\'s now, refused when the order changed since it was read (409, "reason": '
        '"changed_since_read").',
    )
    def put(self, request: Request, number: str) -> Response:
        shop = _key(request).shop
        data, problems, changed_since_read = _read_only_taken_out(request.data, shop=shop, number=number)
        if problems:
            return api_error(
                "invalid_order", "The order was not saved: fix the fields named.", 400, fields=problems
            )
        if changed_since_read:
            return api_error(
                "order_conflict",
                "The order was not saved: it changed since it was read. Read it again and send that, or "
                "send the shop's own version without source.",
                409,
                reason=CHANGED_SINCE_READ,
                fields=[{"field": "updated_at", "problem": "is not the order's now: it changed since read"}],
            )
        try:
            incoming = incoming_order_clean(number=number, data=data)
            with transaction.atomic():
                # A key revoked while this request ran writes nothing: checked again under its row lock.
                if (
                    not StoreApiKey.objects.select_for_update()
                    .filter(pk=_key(request).pk, revoked=False)
                    .exists()
                ):
                    return api_error("invalid_key", KEY_REVOKED, 401)
                try:
                    order, outcome = order_upsert(incoming=incoming, source=OrderSource.API, shop=shop)
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
        parameters=[_NUMBER],
        responses={200: OrderOut, **errors(404)},
    )
    def get(self, request: Request, number: str) -> Response:
        order = order_get_by_number(shop=_key(request).shop, number=number)
        if order is None:
            return api_error("not_found", "This key's shop has no order of that number.", 404)
        return Response(order_shape(order=order))


class OrderListView(StoreApiView):
    @extend_schema(
        operation_id="orders_list",
        summary="Orders that changed",
        parameters=[_UPDATED_SINCE, _CURSOR],
        responses={200: OrderPageOut, **errors(400)},
        description="Oldest change first, 100 a page; follow `next` (a cursor) for the rest.",
    )
    def get(self, request: Request) -> Response:
        since, error = _since(request)
        return error or _page(
            self,
            request,
            orders_changed_since(shop=_key(request).shop, since=since),
            lambda o: order_shape(order=o),
        )


class ReturnView(StoreApiView):
    @extend_schema(
        operation_id="return_get",
        summary="Read a return",
        parameters=[_RMA_NUMBER],
        responses={200: ReturnOut, **errors(404)},
    )
    def get(self, request: Request, rma_number: str) -> Response:
        record = return_get_by_rma(shop=_key(request).shop, rma_number=rma_number)
        if record is None:
            return api_error("not_found", "This key's shop has no return of that RMA number.", 404)
        return Response(return_shape(record=record))


class ReturnListView(StoreApiView):
    @extend_schema(
        operation_id="returns_list",
        summary="Returns that changed",
        parameters=[_UPDATED_SINCE, _CURSOR],
        responses={200: ReturnPageOut, **errors(400)},
        description="Oldest change first, 100 a page; follow `next` (a cursor) for the rest.",
    )
    def get(self, request: Request) -> Response:
        since, error = _since(request)
        return error or _page(
            self,
            request,
            returns_changed_since(shop=_key(request).shop, since=since),
            lambda r: return_shape(record=r),
        )


class NoSuchPath(APIView):
    """Any other address under the API, a trailing slash among them ("orders/"): a 404 in the API's
    shape, not the site's HTML page. Public, as the schema is: which addresses exist is no secret."""

    authentication_classes = []
    permission_classes = []

    @extend_schema(exclude=True)
    def get(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        hint = " Addresses have no trailing slash." if request.path.endswith("/") else ""
        return api_error("not_found", f"There is nothing here by that name.{hint}", 404)

    post = put = patch = delete = options = get
