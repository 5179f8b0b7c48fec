"""Support staff's pages in admin, one module a page:

- conversations: the inbox, and a conversation's page with its reply box and actions;
- traces: every assistant turn, for review (and from there the questions nobody answered);
- saved_replies: the replies each member of staff keeps, and the shared ones;
- store: the store's pages of an order, a return and a delivery case, with the links the chat owns (the
  conversations that looked them up or started them).

The admin classes only read and route: every change goes through support.conversations.handoff, which
holds the rules. Admin's autodiscovery imports this package (support/admin.py), which registers every page.
"""

from support.staff.admin import conversations, saved_replies, store, traces

__all__ = ["conversations", "saved_replies", "store", "traces"]
