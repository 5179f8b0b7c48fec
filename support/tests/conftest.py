import pytest

from support.testing.chat_client import ChatClient
from support.testing.messages_stub import MessagesStub, message, text, tool_use


@pytest.fixture(scope="session")
def messages_stub():
    stub = MessagesStub().start()
    yield stub
    stub.stop()


@pytest.fixture
def claude(messages_stub, settings):
    """The real SDK path, pointed at the local Messages API stub (never the network)."""
    messages_stub.reset()
    settings.BOOKLY_LLM = "anthropic"
    settings.ANTHROPIC_API_KEY = "sk-ant-test-not-a-key"
    settings.ANTHROPIC_BASE_URL = messages_stub.url
    settings.ANTHROPIC_MAX_RETRIES = 1
    settings.ANTHROPIC_TIMEOUT_SECONDS = 5.0
    return messages_stub


@pytest.fixture
def customer(db):
    return ChatClient()


@pytest.fixture
def return_checked(demo_data, claude, customer):
    """Sarah's order BK-10042 passed the eligibility check in this conversation."""
    claude.reset(
        message(
            tool_use(
                "check_return_eligibility",
                {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"},
            )
        ),
        message(text("Order BK-10042 can be returned. Shall I start the return?")),
    )
    customer.send("I want to return BK-10042, sarah.chen@example.com")
