"""What the scenarios share: the demo's customers and their books, a new address, and the tool calls
the scenarios expect, built from their arguments."""

SARAH = "sarah.chen@example.com"
JAMES = "james.murphy@example.com"
MARIA = "maria.gonzalez@example.com"
STRANGER = "someone.else@example.com"

SARAHS_BOOKS = ("Sapiens", "The Goldfinch")

NEW_HOME = {
    "to": "Sarah Chen",
    "line1": "9 Lake Shore Drive",
    "line2": "Unit 4",
    "city": "Chicago",
    "state": "IL",
    "zip": "60611",
}
NEW_HOME_TYPED = "Sarah Chen, 9 Lake Shore Drive, Unit 4, Chicago, IL 60611"


def lookup(order_id, email):
    return ("lookup_order", {"order_id": order_id, "customer_email": email})


def lookup_rma(rma_number, email):
    return ("lookup_order", {"rma_number": rma_number, "customer_email": email})


def check(order_id, email):
    return ("check_return_eligibility", {"order_id": order_id, "customer_email": email})


def initiate(order_id, email, titles=None):
    arguments = {"order_id": order_id, "customer_email": email, "reason": "<any>"}
    if titles:
        arguments["item_titles"] = titles
    return ("initiate_return", arguments)


def check_cancel(order_id, email):
    return ("check_cancellation", {"order_id": order_id, "customer_email": email})


def cancel(order_id, email):
    return ("cancel_order", {"order_id": order_id, "customer_email": email})


def check_address(order_id, email, **address):
    return ("check_address_change", {"order_id": order_id, "customer_email": email, "new_address": address})


def change_address(order_id, email):
    return ("change_shipping_address", {"order_id": order_id, "customer_email": email})


def report(order_id, email, problem, titles=None):
    arguments = {"order_id": order_id, "customer_email": email, "problem": problem, "details": "<any>"}
    if titles:
        arguments["item_titles"] = list(titles)
    return ("report_delivery_problem", arguments)


def policy(topic):
    return ("lookup_policy", {"topic": topic})


def email_receipt(order_id, email):
    return ("email_receipt", {"order_id": order_id, "customer_email": email})


def hand_off(reason="customer_asked"):
    return ("hand_off_to_person", {"reason": reason, "summary": "<any>"})
