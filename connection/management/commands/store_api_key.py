from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from connection.models import StoreApiKey
from orders.shops import ShopNotSaid, shop_named


class Command(BaseCommand):
    help = (
        "Make a store API key for the shop's backend (printed once: only its hash is kept), list the keys, "
        "or revoke one by its prefix (for good)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        create = actions.add_parser("create", help="Make a key and print it once.")
        create.add_argument("name", help="Whose key it is, e.g. the shop's backend.")
        create.add_argument(
            "--shop",
            help="The name of the shop whose orders the key reaches (admin: Shops); needed when there are "
            "several.",
        )
        actions.add_parser("list", help="The keys: prefix, name, made, last used, revoked.")
        revoke = actions.add_parser("revoke", help="Revoke the key with this prefix.")
        revoke.add_argument("prefix")

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if action == "create":
            name = options["name"].strip()
            longest = StoreApiKey._meta.get_field("name").max_length
            if not name or (longest is not None and len(name) > longest):
                raise CommandError("Give the key a name of 1 to 50 characters.")
            try:
                shop = shop_named(name=options["shop"])
            except ShopNotSaid as unsaid:
                raise CommandError(str(unsaid)) from None
            api_key, key = StoreApiKey.objects.create_key(name=name, shop=shop)
            self.stdout.write(f"{key}\n")
            self.stderr.write(
                f"Store API key {api_key.prefix} for {name!r}, reaching {shop}'s orders: keep it safe, it is "
                "not shown again."
            )
        elif action == "list":
            for api_key in StoreApiKey.objects.order_by("created"):
                used = api_key.last_used_at.isoformat(timespec="seconds") if api_key.last_used_at else "never"
                state = "revoked" if api_key.revoked else "active"
                self.stdout.write(
                    f"{api_key.prefix}  {state:7}  used {used:25}  {api_key.name}  ({api_key.shop})"
                )
        else:
            revoked = StoreApiKey.objects.filter(prefix=options["prefix"], revoked=False).update(revoked=True)
            if not revoked:
                raise CommandError("No active key has that prefix.")
            self.stdout.write(f"Revoked {options['prefix']}.")
