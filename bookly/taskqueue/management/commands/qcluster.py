import os

from django.conf import settings
from django_q.management.commands import qcluster

from bookly.taskqueue.cluster import cluster_run


class Command(qcluster.Command):
    help = (
        "Starts the task queue's worker (a django-q2 cluster). SIGTERM or SIGINT, to it or to its "
        "process group, stops it: the tasks it holds finish, and whatever still runs after "
        "BOOKLY_TASK_STOP_GRACE_SECONDS is killed and handed out again by the queue."
    )

    def handle(self, *args, **options):
        settings.SECRET_KEY  # noqa: B018 -- as django-q2's command: the queue signs its tasks with it
        if options.get("cluster_name"):
            # As django-q2's command: the cluster reads its name from the environment when it starts.
            os.environ["Q_CLUSTER_NAME"] = options["cluster_name"]
        exit_code = cluster_run(
            grace_seconds=settings.BOOKLY_TASK_STOP_GRACE_SECONDS, run_once=options["run_once"]
        )
        if exit_code:
            raise SystemExit(exit_code)
