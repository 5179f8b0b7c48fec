"""Store policies: the published FAQ answer quoted as staff wrote it, nothing unpublished and no policy
invented."""

from policies.models import PolicyEntry
from support.evals.runner import Exchange, Scenario
from support.evals.scenarios.helpers import policy


def _password_faq_unpublished():
    PolicyEntry.objects.filter(topic="password_reset").update(is_published=False)


def _shipping_faq_edited():
    PolicyEntry.objects.filter(topic="shipping").update(
        text="Standard shipping is free on every order and takes 2 to 4 business days."
    )


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "shipping_policy_quoted",
        turns=(Exchange("How much does shipping cost?", reply_contains=("$25", "$9.99")),),
        tools=(policy("shipping"),),
    ),
    Scenario(
        "international_shipping_question",
        turns=(Exchange("Do you ship to Canada?", reply_contains=("United States",)),),
        tools=(policy("shipping"),),
    ),
    Scenario(
        "password_reset_policy_quoted",
        turns=(Exchange("I forgot my password, how do I reset it?", reply_contains=("24 hours", "spam")),),
        tools=(policy("password_reset"),),
    ),
    Scenario(
        "return_policy_question_without_an_order",
        turns=(Exchange("What is your return policy?", reply_contains=("30 days",)),),
        tools=(policy("returns_overview"),),
    ),
    Scenario(
        "edited_faq_is_quoted_as_edited",
        setup=_shipping_faq_edited,
        turns=(Exchange("What are your shipping options?", reply_contains=("free on every order",)),),
        tools=(policy("shipping"),),
    ),
    Scenario(
        "unpublished_faq_is_not_quoted",
        setup=_password_faq_unpublished,
        turns=(Exchange("How do I reset my password?", reply_excludes=("24 hours",)),),
        tools=(),
        # The offline model maps the words to the topic and is told it is not supported.
        tools_alternatives=((policy("password_reset"),),),
    ),
    Scenario(
        "price_match_policy_is_not_invented",
        turns=(Exchange("Do you have a price match guarantee?", reply_excludes=("yes, we",)),),
        tools_alternatives=((policy("price_match"),),),
    ),
)
