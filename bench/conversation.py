"""The simulated customer's six-turn conversation, unique per conversation like a real customer's.

Every conversation has its own words from the first message on (the customer
gives a reader number) and returns its own order (a copy of the demo's returnable
BK-10042 made by bench/seed_orders.py), so that no two conversations share a
cached prompt prefix beyond the tools and system prompt, and every confirmation
starts a real return. Without seeded orders, every conversation returns BK-10042
(all but the first are then told a return already exists).
"""

LABELS = ("policy question", "order status", "return request", "confirmation", "off-topic", "thanks")
FIRST_SEEDED_ORDER = 300000


def seeded_order(index: int) -> tuple[str, str]:
    """The number and email of seeded order `index` (0-based)."""
    return f"BK-{FIRST_SEEDED_ORDER + index}", f"reader{index}@example.com"


def conversation(number: int, *, orders: int) -> tuple[str, ...]:
    """The customer messages of conversation `number`, returning seeded order number % orders (if any)."""
    order, email = seeded_order(number % orders) if orders else ("BK-10042", "sarah.chen@example.com")
    return (
        f"Hi, this is reader {number}. How much does shipping cost?",
        "Where is my order BK-10089? My email is james.murphy@example.com",
        f"I want to return order {order}, my email is {email}",
        "Yes, please start the return",
        "What's the weather like today?",
        "Thanks, that's all!",
    )
