"""A person: asked for in words or with the button (the model then stays quiet), and store requests nothing
else serves offered one (no dead ends)."""

from support.evals.runner import Exchange, Scenario
from support.evals.scenarios.helpers import JAMES, hand_off, lookup

SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "handoff_asked_in_words",
        turns=(
            Exchange(
                "Can I talk to an agent?", reply_contains=("support team",), reply_excludes=("can't help",)
            ),
            Exchange("Hello? Is anyone there?"),
        ),
        tools=(hand_off(),),
        status="waiting",
    ),
    Scenario(
        "handoff_to_customer_service_after_a_status_answer",
        turns=(
            Exchange(f"Where is BK-10089? {JAMES}", reply_contains=("shipped",)),
            Exchange("Could you help me contact customer service?", reply_contains=("support team",)),
        ),
        tools=(lookup("BK-10089", JAMES), hand_off()),
        status="waiting",
    ),
    Scenario(
        "handoff_by_the_button_then_the_model_stays_quiet",
        turns=(
            Exchange(press_handoff=True),
            Exchange("My book arrived soaked, can someone call me?"),
            Exchange("Where is my order BK-10089?"),
        ),
        status="waiting",
    ),
    Scenario(
        "asking_whether_it_is_a_person_is_not_a_handoff",
        turns=(Exchange("Are you a human?", reply_contains=("assistant",)),),
    ),
    Scenario(
        "a_payment_problem_offered_a_person_and_declined_stays_with_the_assistant",
        turns=(
            Exchange("my card got declined twice at checkout", reply_contains=("support team",)),
            Exchange("no thanks", reply_excludes=("passed this conversation",)),
        ),
    ),
    Scenario(
        "a_complaint_goes_to_a_person_without_asking_for_one",
        turns=(
            Exchange(
                "Honestly the worst service I've had, nobody answers my emails",
                reply_contains=("support team",),
            ),
        ),
        tools=(hand_off("needs_staff"),),
        status="waiting",
    ),
)
