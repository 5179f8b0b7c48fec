"""The assistant: one customer turn (turn.py) behind its guard layers: prompts, tools and validator."""
