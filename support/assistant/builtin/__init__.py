"""A deterministic stand-in for Claude, used when no Anthropic API key is set.

It speaks the Messages API protocol (text and tool_use blocks, stop reasons,
usage), so the tool loop, guards, validator and storage run unchanged behind
it. Like a real model it is stateless: every decision is derived from the
message history it is sent. Replies repeat only values found in tool results
or in the customer's own words, and never contain markdown.

What a customer asks for is read twice: by hand-written rules, which also
follow the conversation (an order number given in answer, a yes to a
question), and by a classifier trained on typical phrasings of each request.
Where the phrasings are clear they decide; where they are not, the rules do.
"""
