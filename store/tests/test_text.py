import unicodedata

import pytest
from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from store.text import text_has_unseen, text_multi_line, text_secrets_masked, text_single_line

_any_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=300)


def _unseen(text: str, allowed: str) -> list[str]:
    return [
        char
        for char in text
        if unicodedata.category(char) in ("Cc", "Cf", "Cs") and char not in allowed + "\u200c\u200d"
    ]


@hypothesis_settings(max_examples=200, derandomize=True)
@given(value=_any_text)
def test_one_line_holds_no_break_and_no_control_or_format_character(value):
    cleaned = text_single_line(value)
    assert _unseen(cleaned, allowed="") == []
    assert cleaned == cleaned.strip() and "  " not in cleaned
    assert text_single_line(cleaned) == cleaned


@hypothesis_settings(max_examples=200, derandomize=True)
@given(value=_any_text)
def test_lines_keep_only_line_breaks_and_tabs(value):
    cleaned = text_multi_line(value)
    assert _unseen(cleaned, allowed="\n\t") == []
    assert "\r" not in cleaned and "\u2028" not in cleaned


def test_bidi_overrides_and_zero_width_characters_go_and_scripts_stay():
    assert text_single_line("bob@exa\u202emple.com") == "bob@example.com"
    assert text_single_line("Gift\u200b wrap\nCustomer's email: x@evil.example") == (
        "Gift wrap Customer's email: x@evil.example"
    )
    hebrew, arabic = "\u05e9\u05dc\u05d5\u05dd", "\u0645\u0631\u062d\u0628\u0627"
    assert text_multi_line(f"  {hebrew}\r\n{arabic} 👩\u200d💻\t ") == f"{hebrew}\n{arabic} 👩\u200d💻"
    assert text_has_unseen("exa\u2066mple") and not text_has_unseen("example")


@pytest.mark.parametrize(
    ("written", "masked"),
    [
        ("card 4111 1111 1111 1111", "card [card number]"),
        ("4111-1111-1111-1111 exp 12/2029, CVC: 999", "[card number] exp [hidden], CVC: [hidden]"),
        ("pay with 4012888888881881 expires 01/30", "pay with [card number] expires [hidden]"),
        ("card: 4111_1111_1111_1111", "card: [card number]"),
        ("\uff14\uff11\uff11\uff11 1111 1111 1111", "[card number]"),  # fullwidth digits
        ("my password is hunter2", "my password is [hidden]"),
        ("password: s3cr3t", "password: [hidden]"),
        ("my one-time code is 483920", "my one-time code is [hidden]"),
        ("PIN 1234", "PIN [hidden]"),
        ("security code 123", "security code [hidden]"),
    ],
)
def test_card_numbers_their_codes_and_passwords_are_masked(written, masked):
    assert text_secrets_masked(written) == masked


@pytest.mark.parametrize(
    "kept",
    [
        "4111 1111 1111 1112",  # fails the Luhn check: no card's
        "ISBN 9780143127741",  # a book's number, which may pass it
        "order BK-10042, phone 555 123 4567, ZIP 62704",
        "tracking 1Z999AA10123456784 and 9400111899223344556677",
        "I need a password reset",
        "can you pin down the date?",
        "Expected by 12/29",
        "between 12/29/2026 12/30/2026 and 01/02/2027",
    ],
)
def test_other_numbers_and_words_are_kept(kept):
    assert text_secrets_masked(kept) == kept
