"""The store's shared vocabulary: its calendar and the categories of what it sells.

Every app may import it; it imports nothing of ours, so the domain apps
(orders, policies) need neither each other both ways nor the project package.
"""
