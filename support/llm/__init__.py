"""The model boundary: shared types and protocol, Claude, and the built-in offline model."""
