from django.db import models
from rest_framework_api_key.models import AbstractAPIKey


class StoreApiKey(AbstractAPIKey):
    """A key the shop's backend presents to the store API (`Authorization: Bearer <key>`): shown once
    when made, kept only as a hash (djangorestframework-api-key), revocable, its last use recorded."""

    # Moved on at most once a minute: a busy shop should not write a row on every request.
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta(AbstractAPIKey.Meta):
        verbose_name = "store API key"
        verbose_name_plural = "store API keys"
