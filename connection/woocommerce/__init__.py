"""WooCommerce's room: its orders in Bookly's shape and its webhooks' signature."""
