"""The staff's page of the questions nobody answered, in admin: the last 7, 30 or 90 days' unanswered
questions in groups of similar wording; from a group, a new FAQ topic (admin's own add form, filled
with the group's questions) or its questions added to an existing topic.

The page reads what customers wrote: for those who may read conversations (the turn traces' admin's
view permission). Adding to a topic takes the change permission on FAQ entries; creating one, the add
permission (admin's add form checks it again).
"""

from typing import TYPE_CHECKING, TypedDict
from urllib.parse import urlencode

from django import forms
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.views.decorators.http import require_POST

from policies.models import MAX_EXAMPLE_QUESTIONS, PolicyEntry
from policies.services import (
    example_question_reads_as_instruction,
    example_questions_clean,
    policy_entry_add_example_questions,
)
from support.assistant.prompts import PROMPT_QUESTIONS
from support.staff.unanswered import QuestionGroup, unanswered_question_groups

if TYPE_CHECKING:
    from django.contrib.admin import ModelAdmin

    from support.conversations.models import TurnTrace

    _TraceAdmin = ModelAdmin[TurnTrace]
else:
    _TraceAdmin = object

DAYS = (7, 30, 90)
DEFAULT_DAYS = 30
# The "Create a FAQ topic" link carries the questions in its address: kept well under the 8 KB a
# request line may have behind nginx.
PREFILL_MAX_CHARS = 6000


class DaysForm(forms.Form):
    days = forms.TypedChoiceField(
        label="Questions of the last",
        choices=[(days, f"{days} days") for days in DAYS],
        coerce=int,
        initial=DEFAULT_DAYS,
    )


class QuestionsField(forms.Field):
    """The questions of a group, each shown with a box left unticked (a customer's words become the
    store's only when staff tick them; one that reads as an instruction to the assistant is marked),
    cleaned as example questions are."""

    widget = forms.CheckboxSelectMultiple

    def to_python(self, value):
        if not value:
            return []
        if isinstance(value, str):
            value = [value]
        return example_questions_clean(questions=[str(question) for question in value])

    def validate(self, value):
        super().validate(value)
        if not value:
            raise forms.ValidationError("No question to add.", code="required")


# Said after a question that reads as an instruction to the assistant.
INSTRUCTION_MARK = "(reads as an instruction to the assistant, not a question: do not add it as it is)"


class AddToTopicForm(forms.Form):
    def __init__(self, *args, offered: list[str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["questions"].widget.choices = [
            (
                question,
                f"{question} {INSTRUCTION_MARK}"
                if example_question_reads_as_instruction(question=question)
                else question,
            )
            for question in offered or []
        ]

    entry = forms.ModelChoiceField(
        label="Add these questions to",
        queryset=PolicyEntry.objects.order_by("title"),
        empty_label="Choose a topic",
    )
    questions = QuestionsField(label="Questions to add (tick each that should become an example question)")
    days = forms.TypedChoiceField(
        choices=[(days, days) for days in DAYS], coerce=int, widget=forms.HiddenInput
    )


def group_questions(group: QuestionGroup) -> list[str]:
    """The group's questions as example questions: cleaned, each once, newest first, at most the maximum."""
    return example_questions_clean(questions=group.wordings)[:MAX_EXAMPLE_QUESTIONS]


def topics_having(questions: list[str], entries: list[PolicyEntry]) -> list[PolicyEntry]:
    """The entries that have one of `questions` as an example question (ignoring case)."""
    asked = {question.casefold() for question in questions}
    return [entry for entry in entries if asked & {question.casefold() for question in entry.questions}]


def create_topic_url(questions: list[str]) -> str:
    """FAQ entry's add form, its example questions filled with as many of `questions` as fit the link
    (those that read as instructions to the assistant left out)."""
    kept: list[str] = []
    for question in questions:
        if example_question_reads_as_instruction(question=question):
            continue
        if len(urlencode({"example_questions": "\n".join([*kept, question])})) > PREFILL_MAX_CHARS:
            break
        kept.append(question)
    query = urlencode({"example_questions": "\n".join(kept)})
    return f"{reverse('admin:policies_policyentry_add')}?{query}"


def _quoted(questions) -> str:
    return ", ".join(f"“{question}”" for question in questions)


def _added_message(entry: PolicyEntry, result) -> tuple[int, str]:
    added = len(result.added)
    said = [f"Added {added} question{'s' if added != 1 else ''} to “{entry.title}”."]
    if result.already_there:
        said.append(f"Already there, so left out: {_quoted(result.already_there)}.")
    if result.over_the_maximum:
        said.append(
            f"Left out, a topic has at most {MAX_EXAMPLE_QUESTIONS} example questions: "
            f"{_quoted(result.over_the_maximum)}."
        )
    unseen = [question for question in result.added if question not in entry.questions[:PROMPT_QUESTIONS]]
    if unseen:
        said.append(
            f"Claude or another AI model is shown a topic's first {PROMPT_QUESTIONS} example questions "
            f"only (the built-in model reads them all): move {_quoted(unseen)} up in the topic if it is "
            "among the most typical."
        )
    level = messages.SUCCESS if added and not (result.over_the_maximum or unseen) else messages.WARNING
    return level, " ".join(said)


class _GroupShown(TypedDict):
    group: QuestionGroup
    create_url: str
    in_topics: list[PolicyEntry]
    add_form: AddToTopicForm | None


class UnansweredQuestionsAdminMixin(_TraceAdmin):
    """The page's views and URLs, for the turn traces' admin (whose view permission the list takes)."""

    def get_urls(self):
        return [
            path(
                "unanswered/",
                self.admin_site.admin_view(self.unanswered_view),
                name="support_unanswered",
            ),
            path(
                "unanswered/add-to-topic/",
                self.admin_site.admin_view(require_POST(self.unanswered_add_view)),
                name="support_unanswered_add",
            ),
            *super().get_urls(),
        ]

    def unanswered_view(self, request):
        if not self.has_view_permission(request):
            raise PermissionDenied
        form = DaysForm(request.GET if "days" in request.GET else None)
        days = form.cleaned_data["days"] if form.is_bound and form.is_valid() else DEFAULT_DAYS
        can_add = request.user.has_perm("policies.add_policyentry")
        can_change = request.user.has_perm("policies.change_policyentry")
        entries = list(PolicyEntry.objects.order_by("title"))
        groups: list[_GroupShown] = []
        for number, group in enumerate(unanswered_question_groups(days=days), start=1):
            questions = group_questions(group)
            groups.append(
                {
                    "group": group,
                    "create_url": create_topic_url(questions) if can_add else "",
                    "in_topics": topics_having(questions, entries),
                    # Ids of its own: a page has a form a group.
                    "add_form": AddToTopicForm(
                        offered=questions, initial={"days": days}, auto_id=f"group-{number}-%s"
                    )
                    if can_change
                    else None,
                }
            )
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": "Questions the assistant did not answer",
            "form": form if form.is_bound else DaysForm(initial={"days": days}),
            "days": days,
            "groups": groups,
            "questions": sum(group["group"].count for group in groups),
        }
        return TemplateResponse(request, "admin/support/unanswered.html", context)

    def unanswered_add_view(self, request):
        if not (self.has_view_permission(request) and request.user.has_perm("policies.change_policyentry")):
            raise PermissionDenied
        form = AddToTopicForm(request.POST)
        back = reverse("admin:support_unanswered")
        if not form.is_valid():
            # Each error of an ErrorList reads as text (django-stubs types them as what was added).
            errors = "; ".join(str(error) for errors in form.errors.values() for error in errors)
            self.message_user(request, f"Nothing was added: {errors}", messages.ERROR)
            return HttpResponseRedirect(back)
        entry = form.cleaned_data["entry"]
        result = policy_entry_add_example_questions(
            entry=entry, questions=form.cleaned_data["questions"], user=request.user
        )
        level, said = _added_message(entry, result)
        self.message_user(request, said, level)
        return HttpResponseRedirect(f"{back}?{urlencode({'days': form.cleaned_data['days']})}")
