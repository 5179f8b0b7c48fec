"""Staff's pages in admin for the orders app, one module a page:

- shop: the shops and the shape of their order numbers;
- order: an order, with its items, parcels, refunds and delivery problems, and starting a return;
- order_changes: the record of an order's changes (on its page, and in the support inbox);
- return_record: a return, and moving it to its next status;
- delivery_case: a reported delivery problem, and resolving it;
- customer_email: the outbox of emails to customers;
- base: what they share (read-only inlines and pages, the columns of a record of an order).

Admin's autodiscovery imports this package, which registers every page.
"""

from orders.admin import customer_email, delivery_case, order, return_record, shop

__all__ = ["customer_email", "delivery_case", "order", "return_record", "shop"]
