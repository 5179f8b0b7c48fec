"""Shopify's room: its orders in Bookly's shape (orders), and later its webhooks and its API."""
