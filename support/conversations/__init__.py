"""Conversations: their storage, the one-turn-at-a-time lease, the session that owns them, retention."""
