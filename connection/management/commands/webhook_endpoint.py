from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from connection.deliveries import EndpointRefused, webhook_endpoint_create
from connection.models import WebhookEndpoint
from connection.selectors import webhook_endpoint_list_with_counts
from orders.models import EventType


class Command(BaseCommand):
    help = (
        "Add a webhook endpoint of the store's systems (its signing secret printed once), list the "
        "endpoints with their deliveries, or turn one off."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True)
        add = actions.add_parser("add", help="Add an endpoint and print its secret once.")
        add.add_argument("url")
        add.add_argument(
            "--events",
            nargs="+",
            default=[],
            metavar="TYPE",
            help=f"The event types it receives (default: all): {', '.join(EventType.values)}.",
        )
        add.add_argument("--description", default="")
        actions.add_parser("list", help="The endpoints: id, active, events, deliveries failed and waiting.")
        off = actions.add_parser("disable", help="Stop sending to the endpoint with this id.")
        off.add_argument("id", type=int)

    def handle(self, *args: Any, action: str, **options: Any) -> None:
        if action == "add":
            try:
                endpoint = webhook_endpoint_create(
                    url=options["url"], event_types=options["events"], description=options["description"]
                )
            except EndpointRefused as refused:
                raise CommandError(str(refused)) from None
            self.stdout.write(f"{endpoint.secret}\n")
            self.stderr.write(
                f"Webhook endpoint {endpoint.pk} for {endpoint.url}: the secret above signs its events; keep "
                "it where the receiver can read it, it is not shown again."
            )
        elif action == "list":
            for endpoint in webhook_endpoint_list_with_counts():
                events = ",".join(endpoint.event_types) or "all events"
                state = "active" if endpoint.is_active else "off"
                counts = f"failed {endpoint.failed_count}  waiting {endpoint.waiting_count}"
                self.stdout.write(f"{endpoint.pk}  {state:6}  {counts}  {endpoint.url}  ({events})")
        elif not WebhookEndpoint.objects.filter(pk=options["id"]).update(is_active=False):
            raise CommandError("No endpoint has that id.")
        else:
            self.stdout.write(f"Endpoint {options['id']} is off: nothing more is sent to it.")
