"""One module per thing the assistant can do; registry.py lists them."""
