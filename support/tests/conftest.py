import pytest
from django.contrib.auth.models import Group

from support.testing.chat_client import ChatClient
from support.testing.chat_completions_stub import ChatCompletionsStub
from support.testing.messages_stub import MessagesStub, message, text, tool_use


@pytest.fixture(scope="session")
def messages_stub():
    stub = MessagesStub().start()
    yield stub
    stub.stop()


@pytest.fixture
def claude(messages_stub, settings, db):
    """The real SDK path, pointed at the local Messages API stub (never the network). With the database:
    a provider's calls go through its circuit, kept in the cache (Redis in the PostgreSQL leg)."""
    messages_stub.reset()
    settings.BOOKLY_LLM = "anthropic"
    settings.ANTHROPIC_API_KEY = "sk-ant-test-not-a-key"
    settings.ANTHROPIC_BASE_URL = messages_stub.url
    settings.ANTHROPIC_MAX_RETRIES = 1
    settings.ANTHROPIC_TIMEOUT_SECONDS = 5.0
    return messages_stub


@pytest.fixture(scope="session")
def completions_stub():
    stub = ChatCompletionsStub().start()
    yield stub
    stub.stop()


@pytest.fixture
def openai_model(completions_stub, settings, db):
    """BOOKLY_LLM=openai with a server of the store's own (as for Ollama or vLLM), here the stub. With
    the database, as `claude`."""
    completions_stub.reset()
    settings.BOOKLY_LLM = "openai"
    settings.OPENAI_API_KEY = ""
    settings.OPENAI_BASE_URL = completions_stub.url + "/v1"
    settings.OPENAI_MODEL = "llama3.1:8b"
    settings.OPENAI_MAX_RETRIES = 1
    settings.OPENAI_TIMEOUT_SECONDS = 5.0
    return completions_stub


class ModelApi:
    """The stub of one provider's API, scripted the same way whichever it is (Messages API shapes in,
    `sent` in the same shapes out), and that provider's settings."""

    def __init__(self, stub: MessagesStub, settings, prefix: str):
        self.stub, self.settings, self.prefix = stub, settings, prefix

    def __getattr__(self, name):
        return getattr(self.stub, name)

    def configure(self, *, timeout_seconds: float | None = None, max_retries: int | None = None) -> None:
        if timeout_seconds is not None:
            setattr(self.settings, f"{self.prefix}_TIMEOUT_SECONDS", timeout_seconds)
        if max_retries is not None:
            setattr(self.settings, f"{self.prefix}_MAX_RETRIES", max_retries)

    def unreachable(self) -> None:
        """Point the provider at a port nothing listens on (the discard port)."""
        url = "http://127.0.0.1:9" + ("/v1" if self.prefix == "OPENAI" else "")
        setattr(self.settings, f"{self.prefix}_BASE_URL", url)


@pytest.fixture(params=["anthropic", "openai"])
def model_api(request, settings):
    """Each provider in turn behind the model boundary: Claude's Messages API, then an
    OpenAI-compatible Chat Completions API, each through its real SDK and a local stub. A guard
    tested with this holds whichever model answers."""
    if request.param == "anthropic":
        return ModelApi(request.getfixturevalue("claude"), settings, "ANTHROPIC")
    return ModelApi(request.getfixturevalue("openai_model"), settings, "OPENAI")


@pytest.fixture
def customer(db):
    return ChatClient()


@pytest.fixture
def return_checked(demo_data, model_api, customer):
    """Sarah's order BK-10042 passed the eligibility check in this conversation."""
    model_api.reset(
        message(
            tool_use(
                "check_return_eligibility",
                {"order_id": "BK-10042", "customer_email": "sarah.chen@example.com"},
            )
        ),
        message(text("Order BK-10042 can be returned. Shall I start the return?")),
    )
    customer.send("I want to return BK-10042, sarah.chen@example.com")


@pytest.fixture
def colleague(django_user_model):
    """Another member of support staff, Bob (never logged in here)."""
    user = django_user_model.objects.create_user(
        username="bob", first_name="Bob", email="bob@bookly.example", is_staff=True
    )
    user.groups.add(Group.objects.get(name="Support staff"))
    return user
