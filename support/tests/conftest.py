import pytest

from support.testing.chat_client import ChatClient
from support.testing.messages_stub import MessagesStub


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
