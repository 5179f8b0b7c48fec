"""How the built-in model reads a conversation, shared by its router (support.assistant.builtin) and the
capabilities' steps (support.assistant.capabilities): the history as it reads it (history.py), the
details in a customer's words (customer_words.py), the words it looks for (vocabulary.py), its own sentences
and what asking one records (wording.py), and what a step is given (turn.py). It knows neither the
capabilities nor the built-in model."""
