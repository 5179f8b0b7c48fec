"""An order shipping outside the United States, with the built-in model: its address read as written
there, re-addressed within its country, its amounts in its currency."""

import pytest

from orders.models import Order
from orders.tests.factories import OrderFactory, OrderItemFactory
from support.assistant.understanding.customer_words import address_abroad_in

MARIA = "maria.souza@example.com"


@pytest.fixture
def order_in_brazil(db):
    order = OrderFactory(
        number="BK-20003",
        customer_name="Maria Souza",
        customer_email=MARIA,
        total="189.90",
        currency="BRL",
        ship_to="Maria Souza",
        ship_line1="Av. Paulista 1000",
        ship_city="São Paulo",
        ship_state="SP",
        ship_zip="01310-100",
        ship_country="BR",
    )
    OrderItemFactory(order=order, line_number=1, title="Dom Casmurro", unit_price="189.90", category="")
    return order


def test_an_address_in_brazil_is_read_as_written_there_confirmed_and_kept_in_brazil(
    customer, order_in_brazil
):
    customer.send(f"Can I change the address of order BK-20003? {MARIA}")

    reply = customer.send("Rua Augusta 500, São Paulo, SP 01305-000").json()["reply"]
    assert "Maria Souza, Rua Augusta 500, São Paulo-SP, 01305-000, Brazil" in reply
    customer.send("yes")

    order = Order.objects.get(number="BK-20003")
    assert (order.ship_line1, order.ship_state, order.ship_zip, order.ship_country) == (
        "Rua Augusta 500",
        "SP",
        "01305-000",
        "BR",
    )


def test_a_us_order_is_not_sent_abroad(customer, order_in_brazil):
    address = {"ship_to": "Maria Souza", "ship_line1": "1 Main St", "ship_city": "Springfield",
               "ship_state": "IL", "ship_zip": "62701"}  # fmt: skip
    us_order = OrderFactory.create(number="BK-20004", customer_email=MARIA, **address)
    customer.send(f"Can I change the address of order BK-20004? {MARIA}")

    reply = customer.send("12 Rue de Rivoli, 75001 Paris").json()["reply"]
    assert "the state or region is required" in reply  # a US address: a state is required
    customer.send("yes")

    us_order.refresh_from_db()
    assert (us_order.ship_line1, us_order.ship_country) == ("1 Main St", "US")


BAKER_STREET = {"line1": "221B Baker Street", "city": "London", "state": "", "zip": "NW1 6XE"}
CONNAUGHT_PLACE = {"line1": "A-12 Connaught Place", "city": "New Delhi", "state": "Delhi", "zip": "110001"}
SAO_PAULO = {"to": "Maria Souza", "line1": "Rua Augusta 500", "line2": "Apto 3", "city": "São Paulo",
             "state": "SP", "zip": "01305-000"}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "fields"),
    [
        ("Maria Souza, Rua Augusta 500, Apto 3, São Paulo, SP 01305-000", SAO_PAULO),
        (
            "12 Rue de Rivoli, 75001 Paris",
            {"line1": "12 Rue de Rivoli", "city": "Paris", "state": "", "zip": "75001"},
        ),
        ("the new one is 221B Baker Street, London NW1 6XE", BAKER_STREET),
        ("A-12 Connaught Place, New Delhi, Delhi 110001", CONNAUGHT_PLACE),
        (
            "Rua Augusta 500, Apto 3, São Paulo, SP 01305-000, Brazil",
            {**SAO_PAULO, "to": None, "country": "Brazil"},
        ),
        (
            "Ryan Waldon, 12 Marcus Clarke Street, Unit 4, Canberra, ACT, 2601",
            {
                "to": "Ryan Waldon",
                "line1": "12 Marcus Clarke Street",
                "line2": "Unit 4",
                "city": "Canberra",
                "state": "ACT",
                "zip": "2601",
            },
        ),
        (
            "12 Marcus Clarke Street, Canberra ACT 2601, Australia",
            {
                "line1": "12 Marcus Clarke Street",
                "city": "Canberra",
                "state": "ACT",
                "zip": "2601",
                "country": "Australia",
            },
        ),
        (
            "221B Baker Street, London NW1 6XE, United Kingdom",
            {**BAKER_STREET, "country": "United Kingdom"},
        ),
        (
            "Chinedu Okafor, 15 Allen Avenue, Ikeja, Lagos, 100001, Nigeria",
            {
                "to": "Chinedu Okafor",
                "line1": "15 Allen Avenue",
                "city": "Ikeja",
                "state": "Lagos",
                "zip": "100001",
                "country": "Nigeria",
            },
        ),
        (
            "Juan Pérez, Av. Reforma 222, 06600 Ciudad de México, CDMX, Mexico",
            {
                "to": "Juan Pérez",
                "line1": "Av. Reforma 222",
                "city": "Ciudad de México",
                "state": "CDMX",
                "zip": "06600",
                "country": "Mexico",
            },
        ),
        (
            "10 Corn Street, Bristol, Avon, BS1 4DJ",
            {"line1": "10 Corn Street", "city": "Bristol", "state": "", "zip": "BS1 4DJ"},
        ),
        (
            "Jane Smith, 1 High Street, Stratford-upon-Avon, Warwickshire, CV37 6QW, United Kingdom",
            {
                "to": "Jane Smith",
                "line1": "1 High Street",
                "city": "Stratford-upon-Avon",
                "state": "",
                "zip": "CV37 6QW",
                "country": "United Kingdom",
            },
        ),
        (
            "5 Donegall Square, Belfast, Co. Antrim BT1 5GS",
            {"line1": "5 Donegall Square", "city": "Belfast", "state": "", "zip": "BT1 5GS"},
        ),
        (
            "10 Royal York Crescent, Clifton, Bristol, BS8 4JX",  # a district before the town: no county
            {
                "line1": "10 Royal York Crescent",
                "line2": "Clifton",
                "city": "Bristol",
                "state": "",
                "zip": "BS8 4JX",
            },
        ),
        (
            "Flat 2, Old Elvet, Durham, DH1 3HP",
            {"line1": "Flat 2", "line2": "Old Elvet", "city": "Durham", "state": "", "zip": "DH1 3HP"},
        ),
        ("yes please", None),
        ("I paid 24.99, ok", None),
        ("Hmm, wait, what's the fee, is it 10 USD", None),
        ("Sorry, I meant the one from March 2024", None),
        ("12 Rue de Rivoli, Paris", None),  # no postal code: asked again
    ],
)
def test_an_address_is_read_as_other_countries_write_it(text, fields):
    if fields and fields.get("to", "") is None:
        fields = {key: value for key, value in fields.items() if key != "to"}
    assert address_abroad_in(text) == fields


def test_a_postal_code_before_the_city_is_read_as_written_abroad_though_a_us_state_is_named(customer):
    OrderFactory(number="BK-20005", customer_email=MARIA, ship_to="Sophie Martin", ship_line1="1 Rue Cler",
                 ship_city="Paris", ship_zip="75007", ship_country="FR")  # fmt: skip
    customer.send(f"Can I change the address of order BK-20005? {MARIA}")

    reply = customer.send("Sophie Martin, 10 Rue de Washington, 75008 Paris").json()["reply"]

    assert "Sophie Martin, 10 Rue de Washington, 75008 Paris, France" in reply


RYAN = "ryan.waldon@example.com"


@pytest.fixture
def order_in_australia(db):
    """Like the Shopify development store's order #1030: an order shipping within Australia."""
    order = OrderFactory(
        number="BK-21030",
        customer_name="Ryan Waldon",
        customer_email=RYAN,
        total="64.00",
        currency="AUD",
        ship_to="Ryan Waldon",
        ship_line1="1 George Street",
        ship_city="Sydney",
        ship_state="NSW",
        ship_zip="2000",
        ship_country="AU",
    )
    OrderItemFactory(order=order, line_number=1, title="The Dry", unit_price="32.00", quantity=2, category="")
    return order


def test_an_address_in_australia_as_the_assistant_asks_for_it_is_taken_in_its_format(
    customer, order_in_australia
):
    customer.send(f"Can I change the address of order BK-21030? {RYAN}")

    reply = customer.send("Ryan Waldon, 12 Marcus Clarke Street, Unit 4, Canberra, ACT, 2601").json()["reply"]
    assert "Ryan Waldon, 12 Marcus Clarke Street, Unit 4, Canberra ACT 2601, Australia" in reply
    assert "Done" in customer.send("yes").json()["reply"]

    order_in_australia.refresh_from_db()
    assert (order_in_australia.ship_city, order_in_australia.ship_state, order_in_australia.ship_zip,
            order_in_australia.ship_country) == ("Canberra", "ACT", "2601", "AU")  # fmt: skip


def test_an_address_in_another_country_is_refused_in_words_with_a_person_offered_and_never_saved(
    customer, order_in_australia
):
    customer.send(f"Can I change the address of order BK-21030? {RYAN}")

    reply = customer.send("221B Baker Street, London NW1 6XE, United Kingdom").json()["reply"]

    assert (
        "The store ships order BK-21030 within Australia; a change to the United Kingdom needs our team."
        in reply
    )
    assert "ask for a person and our team will help" in reply
    order_in_australia.refresh_from_db()
    assert (order_in_australia.ship_line1, order_in_australia.ship_country) == ("1 George Street", "AU")
    assert not order_in_australia.changes.exists()
    # An address within Australia is still taken in the same conversation.
    reply = customer.send("Ryan Waldon, 12 Marcus Clarke Street, Unit 4, Canberra, ACT, 2601").json()["reply"]
    assert "Canberra ACT 2601, Australia" in reply and "Shall I send the order" in reply


def test_no_thanks_after_a_change_abroad_was_refused_ends_it(customer, order_in_australia):
    customer.send(f"Can I change the address of order BK-21030? {RYAN}")
    customer.send("221B Baker Street, London NW1 6XE, United Kingdom")

    assert customer.send("no thanks").json()["reply"].startswith("No problem.")


def test_a_country_the_store_ships_to_is_taken(customer, order_in_australia, settings):
    settings.BOOKLY_ADDRESS_CHANGE_COUNTRIES = frozenset({"NZ"})
    customer.send(f"Can I change the address of order BK-21030? {RYAN}")

    reply = customer.send("Ryan Waldon, 1 Queen Street, Auckland 1010, New Zealand").json()["reply"]
    assert "Ryan Waldon, 1 Queen Street, Auckland 1010, New Zealand" in reply
    customer.send("yes")

    order_in_australia.refresh_from_db()
    assert (order_in_australia.ship_city, order_in_australia.ship_state, order_in_australia.ship_country) == (
        "Auckland",
        "",  # the Australian state is no part of an address in New Zealand
        "NZ",
    )


def test_an_address_in_britain_written_with_its_county_ships_to_its_town(customer, db):
    """A British address as many still write it (street, town, county, postcode): the town is the city,
    and the county no field (Google's data has no region of Britain), never the city."""
    order = OrderFactory.create(number="BK-20006", customer_email=MARIA, ship_to="Tom Hale",
                                ship_line1="1 Park St", ship_city="Bristol", ship_zip="BS1 5NT",
                                ship_country="GB")  # fmt: skip
    customer.send(f"Can I change the address of order BK-20006? {MARIA}")

    reply = customer.send("10 Corn Street, Bristol, Avon, BS1 4DJ").json()["reply"]
    assert "Tom Hale, 10 Corn Street, Bristol, BS1 4DJ, United Kingdom" in reply
    assert "Done" in customer.send("yes").json()["reply"]

    order.refresh_from_db()
    assert (order.ship_line1, order.ship_city, order.ship_state, order.ship_zip, order.ship_country) == (
        "10 Corn Street",
        "Bristol",
        "",
        "BS1 4DJ",
        "GB",
    )
