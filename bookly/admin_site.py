"""The admin site: Django's, except that a changelist filters only the way its own filters do.

Django admin accepts any lookup on a model's own fields from the URL
(`?session_key__lt=…`, `?field__regex=…`). Each answer ("1 conversation", "0
conversations") is one bit about a value staff may not see, so a binary search
reads a hidden field in a few hundred requests, and a crafted `__regex` can
hold a worker for minutes. Here a changelist takes only the parameters its
sidebar's filters and date hierarchy produce; anything else is refused with
400, on every model registered, ours and the libraries' alike. A search takes at most
MAX_SEARCH_TERMS words.
"""

from typing import TYPE_CHECKING, Any

from django.contrib import admin, messages
from django.contrib.admin.apps import AdminConfig
from django.contrib.admin.filters import SimpleListFilter
from django.db.models.constants import LOOKUP_SEP
from django.utils.text import smart_split

# What Django's own list filters and date hierarchy append to a field's path: a related filter
# reads `<fk>__id__exact`, a date filter `<field>__gte` and `__lt`, the date hierarchy `__year`,
# `__month` and `__day`. No pattern lookups (`startswith`, `regex`), and no `lt` on anything but a
# filtered field.
FILTER_LOOKUPS = frozenset({"exact", "isnull", "gte", "lt", "year", "month", "day", "id"})

# What the mixins below are mixed into (BooklyAdminSite.register): a ModelAdmin, of any model.
if TYPE_CHECKING:
    _ModelAdmin = admin.ModelAdmin[Any]
else:
    _ModelAdmin = object


class FilterLookupsOnly(_ModelAdmin):
    """A ModelAdmin mixin: URL lookups only on the fields its list_filter and date_hierarchy name,
    with only the lookups those filters use."""

    def lookup_allowed(self, lookup, value, request=None):
        paths = {self.date_hierarchy} if self.date_hierarchy else set()
        for item in self.get_list_filter(request):
            if isinstance(item, (list, tuple)):  # (field path, its filter class)
                item = item[0]
            if isinstance(item, str):
                paths.add(item)
            elif (
                isinstance(item, type)
                and issubclass(item, SimpleListFilter)
                and lookup == item.parameter_name
            ):
                return True  # its own queryset() decides what the value means
        parts = lookup.split(LOOKUP_SEP)
        for length in range(len(parts), 0, -1):
            if LOOKUP_SEP.join(parts[:length]) in paths:
                return set(parts[length:]) <= FILTER_LOOKUPS and super().lookup_allowed(
                    lookup, value, request
                )
        return False


# Each word of an admin search ANDs one more OR over the search fields: 1,001 words exceed SQLite's
# expression depth (a 500), and thousands make any database work hard for nothing. Staff never need
# this many; the words past it are left out, and the page says so.
MAX_SEARCH_TERMS = 20


class SearchTermsCapped(_ModelAdmin):
    """A ModelAdmin mixin: a search uses its first MAX_SEARCH_TERMS words (as Django splits them,
    quoted phrases whole), and tells staff when it left the others out."""

    def get_search_results(self, request, queryset, search_term):
        terms = list(smart_split(search_term))
        if len(terms) > MAX_SEARCH_TERMS:
            search_term = " ".join(terms[:MAX_SEARCH_TERMS])
            match = getattr(request, "resolver_match", None)
            if match is None or match.url_name != "autocomplete":  # a JSON answer shows no message
                messages.warning(
                    request,
                    f"A search takes at most {MAX_SEARCH_TERMS} words: these results are for the first "
                    f"{MAX_SEARCH_TERMS} of your {len(terms)}.",
                    fail_silently=True,
                )
        return super().get_search_results(request, queryset, search_term)


class BooklyAdminSite(admin.AdminSite):
    """Every ModelAdmin registered here filters only through its own filters (FilterLookupsOnly) and
    searches for at most MAX_SEARCH_TERMS words (SearchTermsCapped), including those of Django's auth
    app and django-axes, which Bookly does not write."""

    def register(self, model_or_iterable, admin_class=None, **options):
        admin_class = admin_class or admin.ModelAdmin
        mixins = tuple(
            mixin for mixin in (FilterLookupsOnly, SearchTermsCapped) if not issubclass(admin_class, mixin)
        )
        if mixins:
            admin_class = type(admin_class.__name__, (*mixins, admin_class), {})
        super().register(model_or_iterable, admin_class, **options)


class BooklyAdminConfig(AdminConfig):
    """`django.contrib.admin` with BooklyAdminSite as `admin.site` (INSTALLED_APPS names this)."""

    default_site = "bookly.admin_site.BooklyAdminSite"
