from datetime import date

import pytest

BEFORE = [("orders", "0002_returnrecord_conversation"), ("support", "0002_conversations")]
AFTER = [("orders", "0003_remove_returnrecord_conversation"), ("support", "0003_conversation_returns")]


# Serialized rollback, like the suite's other transactional tests: the content types survive the flush.
@pytest.mark.django_db(transaction=True, serialized_rollback=True)
def test_the_link_from_a_return_to_its_conversation_moves_to_the_chat_with_the_data(migrate):
    old = migrate(BEFORE)
    conversation = old.get_model("support", "Conversation").objects.create(session_key="s1")
    order = old.get_model("orders", "Order").objects.create(
        number="BK-1234",
        customer_name="Ann",
        customer_email="ann@example.com",
        status="delivered",
        ordered_on=date(2026, 4, 1),
        delivered_on=date(2026, 4, 3),
        total="10.00",
    )
    records = old.get_model("orders", "ReturnRecord").objects
    linked = records.create(
        rma_number="RMA-AAAA1111",
        order=order,
        reason="r",
        refund_method="card",
        refund_timeline_business_days=5,
        conversation=conversation,
    )
    records.create(
        rma_number="RMA-BBBB2222",
        order=order,
        reason="r",
        refund_method="card",
        refund_timeline_business_days=5,
    )

    new = migrate(AFTER)

    links = new.get_model("support", "ConversationReturn").objects.values_list(
        "conversation_id", "return_record_id"
    )
    assert list(links) == [(conversation.pk, linked.pk)]
    link = new.get_model("support", "ConversationReturn").objects.get()
    assert link.created_at == linked.created_at
    assert "conversation" not in {f.name for f in new.get_model("orders", "ReturnRecord")._meta.fields}
