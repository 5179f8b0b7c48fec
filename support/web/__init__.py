"""The customer's interfaces: the JSON API and the chat page, rate limits and the error mapping."""
