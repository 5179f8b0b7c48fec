from django.apps import AppConfig


class TaskQueueConfig(AppConfig):
    """The task queue's worker as Bookly runs it: django-q2's `qcluster`, made to stop on a signal.

    Listed before `django_q` in INSTALLED_APPS, so that its `qcluster` command is the one
    `manage.py qcluster` runs."""

    name = "bookly.taskqueue"
    label = "taskqueue"
