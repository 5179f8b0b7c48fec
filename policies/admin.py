from django import forms
from django.contrib import admin
from django.http import HttpRequest

from policies.models import PolicyEntry, ReturnPolicy
from store.categories import ItemCategory


@admin.register(PolicyEntry)
class PolicyEntryAdmin(admin.ModelAdmin):
    list_display = ["topic", "title", "is_published", "updated_at", "updated_by"]
    list_filter = ["is_published"]
    search_fields = ["topic", "title", "text"]
    fields = ["topic", "title", "text", "example_questions", "is_published", "updated_at", "updated_by"]
    readonly_fields = ["updated_at", "updated_by"]

    def save_model(
        self, request: HttpRequest, obj: PolicyEntry, form: "forms.ModelForm[PolicyEntry]", change: bool
    ) -> None:
        assert request.user.is_authenticated  # the admin lets in only its staff
        obj.updated_by = request.user
        super().save_model(request, obj, form, change)

    def has_delete_permission(self, request: HttpRequest, obj: PolicyEntry | None = None) -> bool:
        # Unpublish instead: the history of what customers were told stays.
        return False


class ReturnPolicyForm(forms.ModelForm):
    non_returnable_categories = forms.MultipleChoiceField(
        choices=ItemCategory.choices,
        required=False,
        widget=forms.CheckboxSelectMultiple,
        help_text="Items in these categories can never be returned.",
    )

    class Meta:
        model = ReturnPolicy
        fields = [
            "window_days",
            "condition_requirements",
            "refund_method",
            "refund_timeline_business_days",
            "non_returnable_categories",
        ]


@admin.register(ReturnPolicy)
class ReturnPolicyAdmin(admin.ModelAdmin):
    """One row; only superusers change it, because the assistant promises what it says."""

    form = ReturnPolicyForm
    list_display = ["__str__", "window_days", "refund_method", "refund_timeline_business_days"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: ReturnPolicy | None = None) -> bool:
        return request.user.is_active and request.user.is_superuser

    def has_delete_permission(self, request: HttpRequest, obj: ReturnPolicy | None = None) -> bool:
        return False
