import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.core.exceptions import ValidationError

from policies.models import PolicyEntry, ReturnPolicy, example_questions_validate


def faq_form(**overrides):
    data = {
        "topic": "gift_wrapping",
        "title": "Gift wrapping",
        "text": "We wrap any book for $3.",
        "example_questions": "Do you offer gift wrapping?\nCan you wrap a book as a present?",
        "is_published": "on",
    }
    data.update(overrides)
    return {key: value for key, value in data.items() if value is not None}


@pytest.mark.django_db
class TestFaqAdminForSupportStaff:
    def test_list_shows_entries(self, demo_data, staff_client):
        html = staff_client.get("/admin/policies/policyentry/").content.decode()
        for topic in ("shipping", "password_reset", "returns_overview"):
            assert topic in html

    def test_edit_text_records_who_and_keeps_history(self, demo_data, staff_client, staff_user):
        entry = PolicyEntry.objects.get(topic="shipping")
        new_text = "Standard shipping is free over $30 and takes 2 to 4 business days."
        response = staff_client.post(
            f"/admin/policies/policyentry/{entry.pk}/change/",
            faq_form(topic="shipping", title=entry.title, text=new_text),
        )
        assert response.status_code == 302
        entry.refresh_from_db()
        assert entry.text == new_text
        assert entry.updated_by == staff_user
        log = LogEntry.objects.get(object_id=str(entry.pk), action_flag=CHANGE)
        assert log.user == staff_user
        assert "Text" in log.get_change_message()
        history = staff_client.get(f"/admin/policies/policyentry/{entry.pk}/history/").content.decode()
        assert "Changed Text" in history

    def test_unpublish(self, demo_data, staff_client):
        entry = PolicyEntry.objects.get(topic="password_reset")
        staff_client.post(
            f"/admin/policies/policyentry/{entry.pk}/change/",
            faq_form(topic=entry.topic, title=entry.title, text=entry.text, is_published=None),
        )
        entry.refresh_from_db()
        assert entry.is_published is False

    def test_add_entry(self, db, staff_client):
        response = staff_client.post("/admin/policies/policyentry/add/", faq_form())
        assert response.status_code == 302
        assert PolicyEntry.objects.get(topic="gift_wrapping").text == "We wrap any book for $3."

    @pytest.mark.parametrize("topic", ["Gift-Wrapping", "gift wrapping", "gift2", "x" * 41, ""])
    def test_invalid_topic_key_gets_a_clear_form_error(self, db, staff_client, topic):
        response = staff_client.post("/admin/policies/policyentry/add/", faq_form(topic=topic))
        assert response.status_code == 200
        errors = response.context["adminform"].form.errors["topic"]
        assert errors
        assert not PolicyEntry.objects.exists()
        if topic and len(topic) <= 40:
            assert errors == ["Use only lowercase letters and underscores (for example shipping_times)."]

    @pytest.mark.parametrize(
        ("questions", "error"),
        [
            ("", "This field is required."),
            ("  \n \n", "This field is required."),
            ("\n".join(f"Question {n}?" for n in range(21)), "Write at most 20 questions."),
            ("x" * 201, "Each question can be at most 200 characters"),
            ("Do you <b>wrap</b>?", "Plain text only, without <, > or |"),
            ("Gift wrap? | Wrapping?", "Plain text only, without <, > or |"),
            ("Do you wrap?\ndo you WRAP?", "Each question only once, please."),
        ],
    )
    def test_example_questions_are_checked_with_a_clear_error(self, db, staff_client, questions, error):
        response = staff_client.post(
            "/admin/policies/policyentry/add/", faq_form(example_questions=questions)
        )
        assert response.status_code == 200
        assert error in " ".join(response.context["adminform"].form.errors["example_questions"])
        assert not PolicyEntry.objects.exists()

    def test_duplicate_topic_is_refused(self, demo_data, staff_client):
        response = staff_client.post("/admin/policies/policyentry/add/", faq_form(topic="shipping"))
        assert response.status_code == 200
        assert "already exists" in str(response.context["adminform"].form.errors["topic"])

    def test_cannot_delete_entries(self, demo_data, staff_client):
        entry = PolicyEntry.objects.get(topic="shipping")
        response = staff_client.post(f"/admin/policies/policyentry/{entry.pk}/delete/", {"post": "yes"})
        assert response.status_code == 403
        assert PolicyEntry.objects.filter(pk=entry.pk).exists()


def policy_form(**overrides):
    data = {
        "window_days": "45",
        "condition_requirements": "Unread and undamaged.",
        "refund_method": "store credit",
        "refund_timeline_business_days": "5",
        "non_returnable_categories": ["ebook", "gift_card"],
    }
    data.update(overrides)
    return data


@pytest.mark.django_db
class TestReturnPolicyAdmin:
    def test_staff_can_view_but_not_change(self, demo_data, staff_client):
        view = staff_client.get("/admin/policies/returnpolicy/1/change/")
        assert view.status_code == 200
        assert 'name="window_days"' not in view.content.decode()
        change = staff_client.post("/admin/policies/returnpolicy/1/change/", policy_form())
        assert change.status_code == 403
        assert ReturnPolicy.objects.get().window_days == 30

    def test_superuser_can_change_it(self, demo_data, superuser_client):
        response = superuser_client.post("/admin/policies/returnpolicy/1/change/", policy_form())
        assert response.status_code == 302
        policy = ReturnPolicy.objects.get()
        assert policy.window_days == 45
        assert policy.non_returnable_categories == ["ebook", "gift_card"]

    def test_unknown_category_is_refused(self, demo_data, superuser_client):
        response = superuser_client.post(
            "/admin/policies/returnpolicy/1/change/", policy_form(non_returnable_categories=["comics"])
        )
        assert response.status_code == 200
        assert response.context["adminform"].form.errors["non_returnable_categories"]

    def test_nobody_adds_or_deletes_the_single_row(self, demo_data, superuser_client):
        assert superuser_client.get("/admin/policies/returnpolicy/add/").status_code == 403
        assert (
            superuser_client.post("/admin/policies/returnpolicy/1/delete/", {"post": "yes"}).status_code
            == 403
        )
        assert ReturnPolicy.objects.count() == 1


def test_a_blank_list_of_questions_is_refused_by_the_model_too():
    """Not only the admin form: any full_clean (a fixture edited by hand, a shell) says the same."""
    with pytest.raises(ValidationError, match="Write at least one question"):
        example_questions_validate("\n  \n")
