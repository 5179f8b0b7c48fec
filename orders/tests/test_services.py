import re
import socket
from datetime import date
from unittest import mock

import pytest
from django.core.management import call_command
from django.db import IntegrityError
from django.utils import timezone

from orders import services
from orders.models import ReturnLine, ReturnRecord, ReturnStatus
from orders.services import (
    ReturnNotAllowed,
    ReturnStatusNotAllowed,
    return_record_create,
    return_record_set_status,
)
from orders.tests.factories import OrderFactory, OrderItemFactory, delivered_order
from policies.selectors import return_policy_get
from store.categories import ItemCategory

TODAY = date(2026, 4, 14)


@pytest.mark.django_db
class TestReturnRecordCreate:
    def test_creates_rma_for_every_returnable_item_with_policy_terms_copied(self):
        order = delivered_order(
            days_ago=10,
            today=TODAY,
            categories=[ItemCategory.FICTION, ItemCategory.NONFICTION, ItemCategory.EBOOK],
        )
        record = return_record_create(order=order, reason="  Arrived damaged ", today=TODAY)

        assert re.fullmatch(r"RMA-[A-Z0-9]{8}", record.rma_number)
        assert record.status == ReturnStatus.INITIATED
        assert record.reason == "Arrived damaged"
        assert sorted(item.category for item in record.items.all()) == ["fiction", "nonfiction"]
        policy = return_policy_get()
        assert record.refund_method == policy.refund_method
        assert record.refund_timeline_business_days == policy.refund_timeline_business_days

    def test_refund_terms_are_a_copy_not_a_reference(self):
        order = delivered_order(days_ago=10, today=TODAY)
        record = return_record_create(order=order, reason="Too long", today=TODAY)
        policy = return_policy_get()
        policy.refund_timeline_business_days = 14
        policy.save()
        record.refresh_from_db()
        assert record.refund_timeline_business_days == 7

    def test_day_30_is_accepted_and_day_31_refused(self):
        on_time = delivered_order(days_ago=30, today=TODAY)
        late = delivered_order(days_ago=31, today=TODAY)
        assert return_record_create(order=on_time, reason="Gift duplicate", today=TODAY).pk
        with pytest.raises(ReturnNotAllowed) as refused:
            return_record_create(order=late, reason="Gift duplicate", today=TODAY)
        assert refused.value.code == "not_eligible"
        assert ReturnRecord.objects.filter(order=late).count() == 0

    def test_undelivered_order_is_refused(self):
        order = OrderFactory.create(shipped=True)
        OrderItemFactory.create(order=order)
        with pytest.raises(ReturnNotAllowed) as refused:
            return_record_create(order=order, reason="Changed my mind", today=TODAY)
        assert refused.value.code == "not_eligible"
        assert "not been delivered" in refused.value.message

    def test_non_returnable_item_is_refused_when_asked_for_by_name(self):
        order = delivered_order(
            days_ago=3, today=TODAY, categories=[ItemCategory.FICTION, ItemCategory.AUDIOBOOK]
        )
        audiobook = order.items.get(category=ItemCategory.AUDIOBOOK)
        with pytest.raises(ReturnNotAllowed) as refused:
            return_record_create(order=order, reason="Not for me", items=[audiobook], today=TODAY)
        assert refused.value.code == "item_not_returnable"
        assert not ReturnRecord.objects.exists()

    def test_an_item_in_an_open_return_is_already_initiated_even_once_its_category_is_excluded(self):
        order = delivered_order(days_ago=3, today=TODAY, categories=[ItemCategory.AUDIOBOOK])
        audiobook = order.items.get()
        policy = return_policy_get()
        policy.non_returnable_categories = []
        policy.save()
        return_record_create(order=order, reason="Not for me", items=[audiobook], today=TODAY)
        policy.non_returnable_categories = [ItemCategory.AUDIOBOOK]
        policy.save()
        with pytest.raises(ReturnNotAllowed) as refused:
            return_record_create(order=order, reason="Again", items=[audiobook], today=TODAY)
        assert refused.value.code == "already_initiated"

    def test_item_of_another_order_is_refused(self):
        order = delivered_order(days_ago=3, today=TODAY)
        stranger = delivered_order(days_ago=3, today=TODAY).items.get()
        with pytest.raises(ReturnNotAllowed) as refused:
            return_record_create(order=order, reason="Wrong book", items=[stranger], today=TODAY)
        assert refused.value.code == "item_not_in_order"

    def test_item_already_in_an_open_return_is_refused(self):
        order = delivered_order(days_ago=3, today=TODAY)
        return_record_create(order=order, reason="Damaged", today=TODAY)
        with pytest.raises(ReturnNotAllowed) as again_all:
            return_record_create(order=order, reason="Damaged", today=TODAY)
        with pytest.raises(ReturnNotAllowed) as again_named:
            return_record_create(order=order, reason="Damaged", items=list(order.items.all()), today=TODAY)
        assert again_all.value.code == "already_initiated"
        assert again_named.value.code == "already_initiated"
        assert ReturnRecord.objects.filter(order=order).count() == 1

    def test_cancelled_return_frees_its_items(self):
        order = delivered_order(days_ago=3, today=TODAY)
        first = return_record_create(order=order, reason="Damaged", today=TODAY)
        return_record_set_status(return_record=first, status=ReturnStatus.CANCELLED, note="Changed mind")
        second = return_record_create(order=order, reason="Damaged after all", today=TODAY)
        assert second.rma_number != first.rma_number

    def test_refunded_return_keeps_holding_its_items(self):
        order = delivered_order(days_ago=3, today=TODAY)
        record = return_record_create(order=order, reason="Damaged", today=TODAY)
        for status in (ReturnStatus.LABEL_SENT, ReturnStatus.RECEIVED, ReturnStatus.REFUNDED):
            record = return_record_set_status(return_record=record, status=status)
        with pytest.raises(ReturnNotAllowed) as refused:
            return_record_create(order=order, reason="Again", today=TODAY)
        assert refused.value.code == "already_initiated"

    def test_empty_reason_is_refused(self):
        order = delivered_order(days_ago=3, today=TODAY)
        with pytest.raises(ReturnNotAllowed) as refused:
            return_record_create(order=order, reason="   ", today=TODAY)
        assert refused.value.code == "reason_required"

    def test_rma_number_collision_is_retried(self):
        order = delivered_order(days_ago=3, today=TODAY)
        other = delivered_order(days_ago=3, today=TODAY)
        taken = return_record_create(order=other, reason="Damaged", today=TODAY).rma_number
        numbers = iter([taken, "RMA-NEWONE11"])
        with mock.patch.object(services, "_new_rma_number", lambda: next(numbers)):
            record = return_record_create(order=order, reason="Damaged", today=TODAY)
        assert record.rma_number == "RMA-NEWONE11"

    def test_database_refuses_a_second_open_return_of_an_item_even_past_the_service(self):
        order = delivered_order(days_ago=3, today=TODAY)
        record = return_record_create(order=order, reason="Damaged", today=TODAY)
        other = ReturnRecord.objects.create(
            rma_number="RMA-ABCDEFGH",
            order=order,
            reason="x",
            refund_method="card",
            refund_timeline_business_days=7,
        )
        with pytest.raises(IntegrityError):
            ReturnLine.objects.create(return_record=other, order_item=record.items.get())

    def test_race_lost_to_the_database_rule_reports_already_initiated(self):
        """Two requests pass the eligibility check; the database lets only one through."""
        order = delivered_order(days_ago=3, today=TODAY)
        real_check = services.order_return_eligibility

        def check_then_competitor_wins(**kwargs):
            result = real_check(**kwargs)
            competitor = ReturnRecord.objects.create(
                rma_number="RMA-RIVAL001",
                order=order,
                reason="x",
                refund_method="card",
                refund_timeline_business_days=7,
            )
            ReturnLine.objects.create(return_record=competitor, order_item=order.items.get())
            return result

        with (
            mock.patch.object(services, "order_return_eligibility", check_then_competitor_wins),
            pytest.raises(ReturnNotAllowed) as refused,
        ):
            return_record_create(order=order, reason="Damaged", today=TODAY)
        assert refused.value.code == "already_initiated"


@pytest.mark.django_db
class TestReturnRecordSetStatus:
    def test_final_status_cannot_move(self):
        order = delivered_order(days_ago=3, today=TODAY)
        record = return_record_create(order=order, reason="Damaged", today=TODAY)
        record = return_record_set_status(
            return_record=record, status=ReturnStatus.REJECTED, note="Used copy"
        )
        with pytest.raises(ReturnStatusNotAllowed) as refused:
            return_record_set_status(return_record=record, status=ReturnStatus.RECEIVED)
        assert refused.value.message.endswith("is rejected, so it cannot become received. Rejected is final.")

    def test_a_refused_move_names_where_it_can_go(self):
        order = delivered_order(days_ago=3, today=TODAY)
        record = return_record_create(order=order, reason="Damaged", today=TODAY)
        with pytest.raises(ReturnStatusNotAllowed) as refused:
            return_record_set_status(return_record=record, status=ReturnStatus.REFUNDED)
        assert "From initiated it can go to: label sent, rejected, cancelled." in refused.value.message
        assert not record.status_changes.exists()

    def test_every_move_is_recorded_with_who_made_it(self, django_user_model):
        agent = django_user_model.objects.create_user(username="agent")
        record = return_record_create(order=delivered_order(days_ago=3, today=TODAY), reason="x", today=TODAY)
        return_record_set_status(return_record=record, status=ReturnStatus.LABEL_SENT, changed_by=agent)
        return_record_set_status(return_record=record, status=ReturnStatus.RECEIVED)
        assert list(record.status_changes.values_list("from_status", "to_status", "changed_by")) == [
            ("initiated", "label_sent", agent.pk),
            ("label_sent", "received", None),
        ]

    def test_rejecting_releases_the_lines(self):
        order = delivered_order(days_ago=3, today=TODAY)
        record = return_record_create(order=order, reason="Damaged", today=TODAY)
        return_record_set_status(return_record=record, status=ReturnStatus.REJECTED, note="Used copy")
        assert not ReturnLine.objects.filter(return_record=record, holds_item=True).exists()


@pytest.mark.django_db
def test_clear_demo_returns_deletes_only_returns_of_demo_orders(demo_data, capsys):
    from orders.models import Order

    demo = Order.objects.get(number="BK-10042")
    return_record_create(order=demo, reason="Damaged", today=TODAY)
    outsider = delivered_order(days_ago=3, today=TODAY)
    kept = return_record_create(order=outsider, reason="Damaged", today=TODAY)

    call_command("clear_demo_returns")

    assert list(ReturnRecord.objects.all()) == [kept]
    assert "Deleted 1 return(s)" in capsys.readouterr().out


@pytest.mark.django_db
class TestReturnGrantedByStaff:
    def test_an_exception_after_the_window_is_kept_with_its_note_who_and_the_policys_terms(
        self, django_user_model
    ):
        staff = django_user_model.objects.create_user("kim")
        order = delivered_order(days_ago=45, today=TODAY)
        record = return_record_create(
            order=order,
            reason="Late, but damaged",
            today=TODAY,
            created_by=staff,
            exception_note="Courier delay",
        )
        assert (record.exception_note, record.created_by) == ("Courier delay", staff)
        assert record.refund_timeline_business_days == return_policy_get().refund_timeline_business_days
        assert [line.order_item for line in record.lines.all()] == list(order.items.all())

    def test_without_a_note_the_policy_still_refuses(self):
        order = delivered_order(days_ago=45, today=TODAY)
        with pytest.raises(ReturnNotAllowed) as refused:
            return_record_create(order=order, reason="Late", today=TODAY)
        assert refused.value.code == "not_eligible"

    def test_an_exception_may_take_back_an_item_never_returnable(self):
        order = delivered_order(days_ago=3, today=TODAY, categories=[ItemCategory.EBOOK])
        record = return_record_create(
            order=order, reason="Broken file", today=TODAY, exception_note="Goodwill"
        )
        assert record.items.get().category == ItemCategory.EBOOK

    def test_no_exception_returns_an_order_never_delivered(self):
        order = OrderFactory.create(shipped=True)
        OrderItemFactory.create(order=order)
        with pytest.raises(ReturnNotAllowed) as refused:
            return_record_create(order=order, reason="x", today=TODAY, exception_note="Please")
        assert refused.value.code == "not_eligible"

    def test_no_exception_takes_an_item_already_in_an_open_return(self):
        order = delivered_order(days_ago=45, today=TODAY)
        return_record_create(order=order, reason="First", today=TODAY, exception_note="Granted")
        with pytest.raises(ReturnNotAllowed) as refused:
            return_record_create(order=order, reason="Again", today=TODAY, exception_note="Again")
        assert refused.value.code == "already_initiated"
        assert ReturnRecord.objects.count() == 1


@pytest.mark.django_db
class TestTheCustomerHearsOfEachMove:
    def test_each_move_emails_the_orders_address_once_it_commits(
        self, mailoutbox, django_capture_on_commit_callbacks
    ):
        record = return_record_create(
            order=delivered_order(days_ago=3, today=TODAY), reason="Torn", today=TODAY
        )
        with django_capture_on_commit_callbacks(execute=True):
            return_record_set_status(return_record=record, status=ReturnStatus.LABEL_SENT)
            return_record_set_status(return_record=record, status=ReturnStatus.RECEIVED)
        assert [mail.subject for mail in mailoutbox] == [
            f"Your return label for {record.rma_number}",
            f"We received your return {record.rma_number}",
        ]
        assert mailoutbox[1].to == [record.order.customer_email]
        assert "within 7 business days" in mailoutbox[1].body

    @pytest.mark.parametrize("status", [ReturnStatus.REJECTED, ReturnStatus.CANCELLED])
    def test_rejecting_or_cancelling_needs_the_reason_the_customer_reads(
        self, status, mailoutbox, django_capture_on_commit_callbacks
    ):
        record = return_record_create(
            order=delivered_order(days_ago=3, today=TODAY), reason="Torn", today=TODAY
        )
        with pytest.raises(ReturnStatusNotAllowed):
            return_record_set_status(return_record=record, status=status, note="  ")
        assert ReturnRecord.objects.get().status == ReturnStatus.INITIATED
        with django_capture_on_commit_callbacks(execute=True):
            return_record_set_status(return_record=record, status=status, note="The copy arrived used.")
        assert "Our team's reason: The copy arrived used." in mailoutbox[0].body
        assert record.status_changes.get().note == "The copy arrived used."

    def test_a_mail_server_that_is_down_loses_nothing(
        self, settings, mailoutbox, django_capture_on_commit_callbacks
    ):
        from orders.models import CustomerEmail
        from orders.tasks import FIRST_SEND_GRACE, customer_emails_sweep_task

        record = return_record_create(
            order=delivered_order(days_ago=3, today=TODAY), reason="Torn", today=TODAY
        )
        # Django's SMTP backend against a port nothing listens on: the mail server is down.
        settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
        settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", _closed_port(), 2
        with django_capture_on_commit_callbacks(execute=True):
            return_record_set_status(return_record=record, status=ReturnStatus.LABEL_SENT)
        record.refresh_from_db()
        assert record.status == ReturnStatus.LABEL_SENT  # the move happened
        email = CustomerEmail.objects.get()
        assert (email.sent_at, email.attempts, email.last_error) == (None, 1, "ConnectionRefusedError")

        settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
        customer_emails_sweep_task()  # a moment later: it may still be on its first send, and is left
        assert email.attempts == CustomerEmail.objects.get().attempts
        CustomerEmail.objects.update(created_at=timezone.now() - FIRST_SEND_GRACE)
        customer_emails_sweep_task()
        email.refresh_from_db()
        assert email.sent_at is not None and email.attempts == 2
        assert [mail.subject for mail in mailoutbox] == [f"Your return label for {record.rma_number}"]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # free once closed: nothing listens there


@pytest.mark.django_db
def test_two_senders_with_the_same_copy_send_an_email_once(mailoutbox):
    from orders.emails import customer_email_send
    from orders.models import CustomerEmail

    order = OrderFactory.create()
    email = CustomerEmail.objects.create(order=order, to=order.customer_email, subject="Hi", body="...")
    first, second = CustomerEmail.objects.get(pk=email.pk), CustomerEmail.objects.get(pk=email.pk)

    assert (customer_email_send(email=first), customer_email_send(email=second)) == (True, False)
    assert len(mailoutbox) == 1


@pytest.mark.django_db
def test_a_return_staff_start_is_emailed_with_its_exception(
    mailoutbox, django_capture_on_commit_callbacks, django_user_model
):
    staff = django_user_model.objects.create_user("kim")
    order = delivered_order(days_ago=45, today=TODAY)
    with django_capture_on_commit_callbacks(execute=True):
        record = return_record_create(
            order=order, reason="Late", today=TODAY, created_by=staff, exception_note="OK"
        )
    [mail] = mailoutbox
    assert mail.subject == f"Your return {record.rma_number} has started"
    assert "granted it as an exception" in mail.body
