"""Saved replies in admin: each member of staff keeps their own and uses the shared ones."""

from django.contrib import admin
from django.db.models import Q

from support.conversations.selectors import staff_name
from support.staff.models import SavedReply


@admin.register(SavedReply)
class SavedReplyAdmin(admin.ModelAdmin):
    """Saved replies: each member of staff keeps their own and uses the shared ones, which superusers
    manage. A placeholder that does not exist is refused on save, with the list of those that do."""

    list_display = ["title", "whose", "updated_at"]
    search_fields = ["title", "text"]

    def get_queryset(self, request):
        replies = super().get_queryset(request).select_related("owner")
        if request.user.is_superuser:
            return replies
        return replies.filter(Q(owner=request.user) | Q(owner__isnull=True))

    def get_fields(self, request, obj=None):
        return ["title", "text", "owner"] if request.user.is_superuser else ["title", "text"]

    def _own(self, request, obj) -> bool:
        return obj is None or request.user.is_superuser or obj.owner_id == request.user.pk

    def has_change_permission(self, request, obj=None):
        return super().has_change_permission(request, obj) and self._own(request, obj)

    def has_delete_permission(self, request, obj=None):
        return super().has_delete_permission(request, obj) and self._own(request, obj)

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change, **kwargs)
        if request.user.is_superuser:
            return form

        # Subclasses the form admin made for this request: mypy takes no base class made at run time.
        class OwnSavedReplyForm(form):  # type: ignore[valid-type,misc]
            def clean(self):
                data = super().clean()
                # The owner is not on the form: its uniqueness with the title is checked here.
                title = data.get("title")
                taken = SavedReply.objects.filter(owner=request.user, title=title).exclude(
                    pk=self.instance.pk
                )
                if title and taken.exists():
                    self.add_error("title", "You already have a saved reply with this title.")
                return data

        return OwnSavedReplyForm

    def save_model(self, request, obj, form, change):
        if not request.user.is_superuser:
            obj.owner = request.user
        super().save_model(request, obj, form, change)

    @admin.display(description="whose", ordering="owner")
    def whose(self, obj):
        return staff_name(obj.owner) if obj.owner else "shared"
