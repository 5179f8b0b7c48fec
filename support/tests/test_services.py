import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from support import services
from support.models import Conversation

pytestmark = pytest.mark.django_db


def _reread(conversation: Conversation) -> Conversation:
    return Conversation.objects.get(pk=conversation.pk)


class TestLeaseTake:
    """The lease is a compare-and-set on the row as read: a read that has gone stale never takes it."""

    def test_a_free_conversation_is_taken_and_its_turn_counted(self):
        conversation = Conversation.objects.create(session_key="s1", eligibility_verified=["BK-10042"])
        token, number = services._lease_take(_reread(conversation))
        row = _reread(conversation)
        assert (row.lease_token, row.turn_count, number) == (token, 1, 1)
        assert row.eligibility_verified == ["BK-10042"]

    def test_a_turn_that_began_and_ended_after_the_read_wins(self):
        conversation = Conversation.objects.create(session_key="s1")
        stale = _reread(conversation)
        # Another worker's whole turn, between our read and our take: it passed an eligibility check.
        services._lease_take(_reread(conversation))
        Conversation.objects.filter(pk=conversation.pk).update(
            lease_token=None, lease_expires_at=None, eligibility_verified=["BK-10042"]
        )
        with pytest.raises(services.TurnInProgress):
            services._lease_take(stale)
        assert _reread(conversation).turn_count == 1

    def test_a_slow_turn_that_commits_after_its_lease_expired_is_not_overtaken_with_stale_state(self):
        conversation = Conversation.objects.create(session_key="s1", turn_count=3)
        Conversation.objects.filter(pk=conversation.pk).update(
            lease_token=uuid.uuid4(), lease_expires_at=timezone.now() - timedelta(seconds=1)
        )
        stale = _reread(conversation)
        # The slow turn (lease expired, but nobody took it over) commits its guard state.
        Conversation.objects.filter(pk=conversation.pk).update(
            lease_token=None, lease_expires_at=None, eligibility_verified=["BK-10042"]
        )
        with pytest.raises(services.TurnInProgress):
            services._lease_take(stale)

    def test_an_expired_lease_nobody_ended_is_taken_over(self):
        conversation = Conversation.objects.create(session_key="s1", turn_count=3)
        Conversation.objects.filter(pk=conversation.pk).update(
            lease_token=uuid.uuid4(), lease_expires_at=timezone.now() - timedelta(seconds=1)
        )
        token, number = services._lease_take(_reread(conversation))
        assert (_reread(conversation).lease_token, number) == (token, 4)

    def test_a_live_lease_is_respected_without_writing(self):
        conversation = Conversation.objects.create(session_key="s1")
        services._lease_take(_reread(conversation))
        with pytest.raises(services.TurnInProgress):
            services._lease_take(_reread(conversation))
        assert _reread(conversation).turn_count == 1
