from unittest import mock

import pytest
from django.core import mail
from django.db import IntegrityError, transaction

from orders import services
from orders.models import CaseStatus, CustomerEmail, DeliveryCase, DeliveryProblem, OrderStatus, Shipment
from orders.selectors import ProblemCode, delivery_problem_check
from orders.services import (
    ALREADY_RESOLVED,
    ITEM_NOT_IN_ORDER,
    ITEMS_NEEDED,
    RESOLUTION_NEEDED,
    DeliveryCaseRefused,
    delivery_case_open,
    delivery_case_resolve,
)
from orders.tests.factories import OrderFactory, OrderItemFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def delivered():
    """A delivered order of two books."""
    order = OrderFactory.create(delivered=True)
    OrderItemFactory.create(order=order, line_number=1, title="The Goldfinch")
    OrderItemFactory.create(order=order, line_number=2, title="Sapiens")
    return order


def _refusal(**kwargs) -> str:
    with pytest.raises(DeliveryCaseRefused) as refused:
        delivery_case_open(**kwargs)
    return refused.value.code


@pytest.mark.parametrize(
    ("status", "problem", "code"),
    [
        (OrderStatus.PROCESSING, DeliveryProblem.NOT_ARRIVED, ProblemCode.NOT_SHIPPED),
        (OrderStatus.CANCELLED, DeliveryProblem.LATE, ProblemCode.CANCELLED),
        (OrderStatus.SHIPPED, DeliveryProblem.DAMAGED, ProblemCode.NOT_DELIVERED),
        (OrderStatus.SHIPPED, DeliveryProblem.WRONG_ITEM, ProblemCode.NOT_DELIVERED),
        (OrderStatus.SHIPPED, DeliveryProblem.NOT_ARRIVED, ProblemCode.ALLOWED),  # overdue in transit
        (OrderStatus.SHIPPED, DeliveryProblem.LATE, ProblemCode.ALLOWED),
        (OrderStatus.DELIVERED, DeliveryProblem.MISSING_ITEM, ProblemCode.ALLOWED),
    ],
)
def test_what_can_be_reported_depends_on_how_far_the_order_got(status, problem, code):
    order = OrderFactory.build(status=status)
    assert delivery_problem_check(order=order, problem=problem).code is code


@pytest.mark.django_db
def test_a_book_of_a_parcel_delivered_can_be_reported_while_the_other_parcel_travels():
    order = OrderFactory.create(status=OrderStatus.SHIPPED, tracking_number="1Z1")
    Shipment.objects.create(order=order, number=1, shipped_on=order.ordered_on)
    assert (
        delivery_problem_check(order=order, problem=DeliveryProblem.DAMAGED).code is ProblemCode.NOT_DELIVERED
    )
    Shipment.objects.create(order=order, number=2, shipped_on=order.ordered_on, delivered_on=order.ordered_on)
    assert delivery_problem_check(order=order, problem=DeliveryProblem.DAMAGED).code is ProblemCode.ALLOWED


class TestOpen:
    def test_a_parcel_that_never_came_concerns_every_book_and_the_customer_is_emailed(
        self, delivered, django_capture_on_commit_callbacks
    ):
        with django_capture_on_commit_callbacks(execute=True):
            case, created = delivery_case_open(
                order=delivered, problem=DeliveryProblem.NOT_ARRIVED, items=None, details="not on the porch"
            )
        assert created and case.status == CaseStatus.OPEN and case.details == "not on the porch"
        assert sorted(item.title for item in case.items.all()) == ["Sapiens", "The Goldfinch"]
        (sent,) = mail.outbox
        assert sent.to == [delivered.customer_email]
        assert f"case {case.pk}" in sent.subject
        assert "check with the carrier" in sent.body

    def test_a_damaged_book_of_several_must_be_named(self, delivered):
        code = _refusal(order=delivered, problem=DeliveryProblem.DAMAGED, items=None, details="torn")
        assert code == ITEMS_NEEDED
        assert not DeliveryCase.objects.exists()

    def test_the_one_book_of_an_order_is_the_one_meant(self):
        order = OrderFactory.create(delivered=True)
        only = OrderItemFactory.create(order=order)
        case, _ = delivery_case_open(order=order, problem=DeliveryProblem.WRONG_ITEM, items=None, details="")
        assert list(case.items.all()) == [only]

    def test_a_book_of_another_order_is_refused(self, delivered):
        other = OrderItemFactory.create(order=OrderFactory.create(delivered=True))
        code = _refusal(order=delivered, problem=DeliveryProblem.DAMAGED, items=[other], details="")
        assert code == ITEM_NOT_IN_ORDER

    def test_reported_again_while_open_is_the_same_case_with_the_new_book_added_and_one_email(
        self, delivered, django_capture_on_commit_callbacks
    ):
        goldfinch, sapiens = delivered.items.all()
        with django_capture_on_commit_callbacks(execute=True):
            first, _ = delivery_case_open(
                order=delivered, problem=DeliveryProblem.DAMAGED, items=[goldfinch], details="torn"
            )
            again, created = delivery_case_open(
                order=delivered, problem=DeliveryProblem.DAMAGED, items=[sapiens], details="also torn"
            )
        assert again == first and not created
        assert set(again.items.all()) == {goldfinch, sapiens}
        assert len(mail.outbox) == 1

    def test_an_order_not_yet_shipped_has_no_delivery_to_look_into(self):
        order = OrderFactory.create()
        OrderItemFactory.create(order=order)
        code = _refusal(order=order, problem=DeliveryProblem.NOT_ARRIVED, items=None, details="")
        assert code == ProblemCode.NOT_SHIPPED
        assert not CustomerEmail.objects.exists()

    def test_the_database_keeps_one_open_case_per_problem_and_order(self, delivered):
        DeliveryCase.objects.create(order=delivered, problem=DeliveryProblem.LATE)
        with pytest.raises(IntegrityError), transaction.atomic():
            DeliveryCase.objects.create(order=delivered, problem=DeliveryProblem.LATE)
        DeliveryCase.objects.create(order=delivered, problem=DeliveryProblem.NOT_ARRIVED)  # another problem

    def test_two_reports_at_once_make_one_case(self, delivered):
        """Both pass the check (SQLite has no row lock to make one wait); the database's rule makes the
        second report the first one's case."""
        real_check = services.delivery_problem_check
        competitor = []

        def check_then_competitor_wins(**kwargs):
            result = real_check(**kwargs)
            competitor.append(DeliveryCase.objects.create(order=delivered, problem=DeliveryProblem.LATE))
            return result

        with mock.patch.object(services, "delivery_problem_check", check_then_competitor_wins):
            case, created = delivery_case_open(
                order=delivered, problem=DeliveryProblem.LATE, items=None, details="late"
            )
        assert (case, created) == (competitor[0], False)
        assert DeliveryCase.objects.count() == 1


class TestResolve:
    @pytest.fixture
    def case(self, delivered):
        return delivery_case_open(
            order=delivered, problem=DeliveryProblem.NOT_ARRIVED, items=None, details=""
        )[0]

    def test_resolving_says_what_was_done_and_emails_it(
        self, case, admin_user, django_capture_on_commit_callbacks
    ):
        mail.outbox.clear()
        with django_capture_on_commit_callbacks(execute=True):
            delivery_case_resolve(case=case, resolution="We sent a new copy today.", resolved_by=admin_user)
        case.refresh_from_db()
        assert case.status == CaseStatus.RESOLVED and case.resolved_by == admin_user and case.resolved_at
        (sent,) = mail.outbox
        assert "We sent a new copy today." in sent.body

    def test_nothing_said_is_refused(self, case, admin_user):
        with pytest.raises(DeliveryCaseRefused) as refused:
            delivery_case_resolve(case=case, resolution="  ", resolved_by=admin_user)
        assert refused.value.code == RESOLUTION_NEEDED
        case.refresh_from_db()
        assert case.status == CaseStatus.OPEN

    def test_resolving_twice_is_refused_and_emails_once(
        self, case, admin_user, django_capture_on_commit_callbacks
    ):
        mail.outbox.clear()
        with django_capture_on_commit_callbacks(execute=True):
            delivery_case_resolve(case=case, resolution="Refunded.", resolved_by=admin_user)
            with pytest.raises(DeliveryCaseRefused) as refused:
                delivery_case_resolve(case=case, resolution="Refunded again.", resolved_by=admin_user)
        assert refused.value.code == ALREADY_RESOLVED
        assert len(mail.outbox) == 1

    def test_the_database_refuses_a_resolved_case_that_says_nothing(self, case):
        with pytest.raises(IntegrityError), transaction.atomic():
            DeliveryCase.objects.filter(pk=case.pk).update(status=CaseStatus.RESOLVED)

    def test_once_resolved_the_same_problem_can_be_reported_again(self, case, admin_user):
        delivery_case_resolve(case=case, resolution="Found at a neighbour's.", resolved_by=admin_user)
        again, created = delivery_case_open(
            order=case.order, problem=DeliveryProblem.NOT_ARRIVED, items=None, details="gone again"
        )
        assert created and again != case
