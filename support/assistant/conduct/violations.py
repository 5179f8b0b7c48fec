"""The rules' codes (Conduct) and the entry point that reads a reply by every rule
(conduct_violations).
"""

import html
from enum import StrEnum

from support.assistant.claims import Knowledge
from support.assistant.conduct.contacts import _emails, _links, _phones
from support.assistant.conduct.credentials import _asks_for_credentials
from support.assistant.conduct.normalise import _lower, _with_values, normalised
from support.assistant.conduct.persons import _named_by_tools, _poses_as_person
from support.assistant.conduct.policy import _contradicts_policy
from support.assistant.conduct.promises import _unmade_promise
from support.assistant.conduct.prose import (
    _ENTITY_RE,
    _MARKUP_RE,
    _internal_names,
    _leaks_prompt,
    _off_topic_sentence,
)
from support.llm.protocol import CONTENT_PARTS_RE


class Conduct(StrEnum):
    """Violation codes of support.assistant.conduct, one per rule (the validator's table in
    docs/contributors.md lists them)."""

    UNGROUNDED_LINK = "ungrounded_link"
    UNGROUNDED_EMAIL = "ungrounded_email"
    UNGROUNDED_PHONE = "ungrounded_phone"
    ASKS_FOR_CREDENTIALS = "asks_for_credentials"
    UNMADE_PROMISE = "unmade_promise"
    POSES_AS_PERSON = "poses_as_person"
    CONTRADICTS_POLICY = "contradicts_policy"
    PROMPT_LEAK = "prompt_leak"
    OFF_TOPIC_SENTENCE = "off_topic_sentence"
    INTERNAL_TAG = "internal_tag"
    CONTENT_PARTS = "content_parts"
    HTML_ENTITY = "html_entity"
    MARKUP = "markup"


def conduct_violations(
    *,
    reply: str,
    grounding: str,
    terms: str,
    system_prompt: str,
    knowledge: Knowledge,
    vouched_emails: frozenset[str] = frozenset(),
) -> list[Conduct]:
    """The codes of what the reply says that only a hijacked model would: see the package's docstring."""
    raw = reply
    reply, grounding = normalised(reply), normalised(_with_values(grounding))
    grounded = " ".join(_lower(grounding).split())
    # Entities are read too ("&lt;reminder&gt;" is the tag), after their own rule has seen them.
    unescaped = html.unescape(reply)
    checks = [
        (Conduct.UNGROUNDED_LINK, lambda: _links(reply, grounded)),
        (Conduct.UNGROUNDED_EMAIL, lambda: _emails(reply, grounded, vouched_emails)),
        (Conduct.UNGROUNDED_PHONE, lambda: _phones(reply, grounding)),
        (Conduct.ASKS_FOR_CREDENTIALS, lambda: _asks_for_credentials(reply, grounded)),
        (Conduct.UNMADE_PROMISE, lambda: _unmade_promise(reply, _lower(grounding + "\n" + terms))),
        (Conduct.POSES_AS_PERSON, lambda: _poses_as_person(reply, _named_by_tools(grounding))),
        (Conduct.CONTRADICTS_POLICY, lambda: _contradicts_policy(reply, terms, grounding)),
        (
            Conduct.PROMPT_LEAK,
            lambda: bool(system_prompt) and _leaks_prompt(reply, system_prompt, grounding, terms),
        ),
        (
            Conduct.OFF_TOPIC_SENTENCE,
            lambda: _off_topic_sentence(
                reply,
                knowledge=knowledge,
                grounded=grounded,
                grounding=grounding,
                system_prompt=system_prompt,
            ),
        ),
        (Conduct.INTERNAL_TAG, lambda: bool(_internal_names(system_prompt).search(unescaped))),
        (Conduct.CONTENT_PARTS, lambda: bool(CONTENT_PARTS_RE.search(unescaped))),
        (Conduct.HTML_ENTITY, lambda: bool(_ENTITY_RE.search(raw) or _ENTITY_RE.search(reply))),
        (Conduct.MARKUP, lambda: bool(_MARKUP_RE.search(unescaped))),
    ]
    return [code for code, check in checks if check()]
