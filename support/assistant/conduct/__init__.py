"""What a hijacked model writes that no tool gave: part of guard layer 4 (support.assistant.validator).

A model under prompt injection obeys whoever wrote the injection. An outside probe's stand-in model got
phishing links, phone numbers, "the 16 digits on the front of your card", "I'm Anna from the Bookly
support team", "your refund is confirmed", "enter SAVE50 at checkout", "Ebooks can be returned too",
"Sure, the capital of France is Paris." and, from a real small model, the reminder's markup as HTML
entities through to the customer. A list of known phrasings cannot win this: a reworded one passes. So
each rule here is an allow-list, read on the reply after normalising it (Unicode NFKC, so fullwidth
forms are plain; invisible characters removed; defanged dots, "at"s and "hxxp" restored):

- a value a customer could act on (a link or domain of any ending, an email address, a phone-like run
  of digits, letters or number words, a request for a payment credential) may appear only where the
  `grounding` gave that exact value: the tool results of this very turn (a FAQ answer a tool quoted
  counts). The customer's own words never ground one, so an injected model cannot make any sentence the
  customer typed come back as Bookly's;
- a promise (a refund confirmed, a replacement, a credit, a code or discount, an exception) only where a
  tool result of this turn made that promise in those words;
- the assistant never presents itself as a person;
- what the reply says can be returned, and for how long, must agree with the return policy's `terms`;
- every sentence must be about the store's tasks once its courtesies are taken out;
- nothing internal reaches the customer: our tags and tool names, the prompt's and reminders' prose,
  content-part syntax, HTML entities or other markup.

Each rule is a module of this package (contacts, credentials, promises, persons, policy, prose), each
reads the reply as normalise gives it, and violations runs them all.
"""

from support.assistant.conduct.contacts import emails_vouched_for
from support.assistant.conduct.normalise import normalised
from support.assistant.conduct.prose import REFUSAL_RE
from support.assistant.conduct.violations import Conduct, conduct_violations

__all__ = ["REFUSAL_RE", "Conduct", "conduct_violations", "emails_vouched_for", "normalised"]
