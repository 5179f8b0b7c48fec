from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.test.utils import override_settings

from orders.models import ReturnRecord
from store.clock import DEMO_TODAY
from support.assistant.claims.meaning import SURE
from support.assistant.claims.reader import KINDS, LANGUAGES
from support.assistant.configured import configured_model
from support.assistant.prompts import system_prompt, system_prompt_forget
from support.evals.claims import claims_held_out
from support.evals.fallbacks import fallback_evaluate
from support.evals.faq import OUTCOMES, SERVED, faq_evaluate, faq_heldout, faq_topics, faq_topics_install
from support.evals.routing import resolution_evaluate, resolution_sets, routing_evaluate, routing_sets
from support.evals.runner import scenario_run
from support.evals.scenarios import SCENARIOS

# Evaluations replay wrong emails in worlds rolled back after each (conversation ids come round again)
# while the cache keeps counting: no run may spend the next one's budget for identity checks, nor wait
# out its delay (a scripted customer writes at once), which tests check on their own.
_UNLIMITED_CHECKS = {
    **dict.fromkeys(
        (
            "BOOKLY_FAILED_CHECKS_PER_ORDER",
            "BOOKLY_FAILED_CHECKS_PER_CONVERSATION",
            "BOOKLY_FAILED_CHECKS_PER_SESSION",
            "BOOKLY_FAILED_CHECKS_PER_IP",
        ),
        10**9,
    ),
    "BOOKLY_FAILED_CHECK_DELAY_SECONDS": 0,
}


class Command(BaseCommand):
    help = (
        "Run the scenario suite against the configured model (BOOKLY_LLM: Claude, an OpenAI-compatible "
        "provider or the offline model) and report pass^k: the share of scenarios that passed all k "
        "runs. Each run happens in a "
        "transaction that is rolled back, over a fresh copy of the demo data, on the demo's date."
    )

    def add_arguments(self, parser):
        parser.add_argument("--repeat", "-k", type=int, default=1, help="Runs per scenario (k).")
        parser.add_argument("--only", default="", help="Run only scenarios whose name contains this text.")
        parser.add_argument(
            "--routing",
            action="store_true",
            help="Instead, report where the model takes the first messages of the routing sets "
            "(support/evals/routing/; --only picks sets by name), and the share of the store requests "
            "in support/evals/resolution/ left at a dead end (--only resolution: those alone). With "
            "Claude that is one to four calls a message, several thousand in all. -v 2 lists each miss.",
        )
        parser.add_argument(
            "--fallbacks",
            action="store_true",
            help="Instead, take every first message of the routing and resolution sets (--only picks sets "
            "by name) through the real turn as a new conversation, then a second turn giving BK-10042 and "
            "its email, and report the share of replies the validator replaced with the fallback (its "
            "false positives, on honest replies). Two turns a message, several thousand in all, in a "
            "transaction rolled back after. -v 2 lists each replaced reply's words and codes.",
        )

        parser.add_argument(
            "--claims",
            action="store_true",
            help="Instead, report how the claim reader of layer 4 reads labelled sentences no one trained it "
            "on (support/assistant/claims/sentences/: each writer's held out in turn): per kind of claim and "
            "per language, precision and recall. No model is called. -v 2 lists each sentence read wrongly.",
        )
        parser.add_argument(
            "--faq",
            action="store_true",
            help="Instead, publish the FAQ topics of support/evals/faq/topics.json beside the demo's (in a "
            "transaction rolled back after) and report, per topic, what the held-out customer messages of "
            "support/evals/faq/heldout.json got as a first answer (served from their topic, another topic, "
            "refused, asked which, offered a person, handed over, another route), and the share of the "
            "messages no FAQ topic may answer that were routed right. -v 2 lists each miss.",
        )

    def handle(self, *args, repeat, only, routing, fallbacks, faq, claims, **options):
        if repeat < 1:
            raise CommandError("--repeat must be at least 1.")
        if claims:
            return self._claims(verbose=options["verbosity"] > 1)
        model = configured_model()
        if faq:
            return self._faq(model, verbose=options["verbosity"] > 1)
        if fallbacks:
            return self._fallbacks(model, only=only, verbose=options["verbosity"] > 1)
        if routing:
            if repeat != 1:
                raise CommandError("--repeat is for the scenarios; a routing set is measured once.")
            return self._routing(model, only=only, verbose=options["verbosity"] > 1)
        scenarios = [scenario for scenario in SCENARIOS if only in scenario.name]
        self.stdout.write(f"Model: {model.name} ({model.provider}), k={repeat}")
        passed_all = 0
        for scenario in scenarios:
            outcomes = [self._run_once(scenario, model) for _ in range(repeat)]
            ok = sum(not failures for failures in outcomes)
            passed_all += ok == repeat
            mark = "PASS" if ok == repeat else "FAIL"
            self.stdout.write(f"{mark} {ok}/{repeat} {scenario.name}")
            for failures in outcomes:
                for failure in failures:
                    self.stdout.write(f"    {failure}")
        self.stdout.write(f"pass^{repeat}: {passed_all}/{len(scenarios)} scenarios passed every run")
        if passed_all != len(scenarios):
            raise CommandError("Some scenarios failed.")

    def _routing(self, model, *, only: str, verbose: bool) -> None:
        self.stdout.write(f"Model: {model.name} ({model.provider})")
        # The system prompt is the demo FAQ's, written in a transaction rolled back at once: the calls
        # that follow (thousands with Claude) hold no lock on the database.
        with transaction.atomic():
            call_command("loaddata", "demo", verbosity=0)
            system_prompt_forget()  # not one rendered earlier from other rows
            system = [{"type": "text", "text": system_prompt()}]
            transaction.set_rollback(True)
        for name, cases in routing_sets().items():
            if only not in name:
                continue
            report = routing_evaluate(model=model, system=system, cases=cases)
            figures = ", ".join(f"{figure} {share:.1%}" for figure, share in report.shares().items())
            self.stdout.write(f"{name} ({len(cases)} messages): {figures}")
            for text, expected, got in report.misses if verbose else ():
                self.stdout.write(f"    {expected} -> {got}: {text!r}")
        for name, cases in resolution_sets().items():
            if only not in f"resolution/{name}":
                continue
            resolution = resolution_evaluate(model=model, system=system, cases=cases)
            self.stdout.write(
                f"resolution/{name} ({len(cases)} store requests, {len(resolution.total)} intents): "
                f"dead ends {resolution.share():.1%}"
            )
            for text, intent, said in resolution.dead_ends if verbose else ():
                self.stdout.write(f"    {intent}: {text!r} -> {said!r}")

    def _fallbacks(self, model, *, only: str, verbose: bool) -> None:
        sets = {
            **routing_sets(),
            **{f"resolution/{name}": cases for name, cases in resolution_sets().items()},
        }
        texts = [case["text"] for name, cases in sets.items() if only in name for case in cases]
        self.stdout.write(f"Model: {model.name} ({model.provider})")
        with override_settings(BOOKLY_TODAY=DEMO_TODAY, **_UNLIMITED_CHECKS), transaction.atomic():
            call_command("loaddata", "demo", verbosity=0)
            ReturnRecord.objects.all().delete()
            system_prompt_forget()
            report = fallback_evaluate(model=model, texts=texts)
            transaction.set_rollback(True)
        self.stdout.write(
            f"{len(texts)} messages, {report.turns} turns: the validator replaced {len(report.replaced)} "
            f"replies ({report.share():.2%}); codes: {dict(report.codes.most_common()) or 'none'}"
        )
        for words, codes in report.replaced if verbose else ():
            self.stdout.write(f"    {', '.join(codes)}: {words!r}")

    def _claims(self, *, verbose: bool) -> None:
        report = claims_held_out(sure=SURE)
        writers = len(report.writers)
        self.stdout.write(
            f"{report.sentences} labelled sentences by {writers} writers, each held out in turn"
        )
        self.stdout.write(f"{'kind':<12} {'all':>11}  " + "  ".join(f"{lang:>11}" for lang in LANGUAGES))
        for kind in KINDS:
            cells = [report.by_kind[kind], *(report.by_kind_language[kind, lang] for lang in LANGUAGES)]
            self.stdout.write(
                f"{kind:<12} " + "  ".join(f"P{c.precision:.2f} R{c.recall:.2f}" for c in cells)
            )
        for text, kind, labelled, read in report.errors if verbose else ():
            self.stdout.write(f"    {kind}: {labelled} read as {read}: {text!r}")

    def _faq(self, model, *, verbose: bool) -> None:
        cases = faq_heldout()
        self.stdout.write(f"Model: {model.name} ({model.provider})")
        with override_settings(BOOKLY_TODAY=DEMO_TODAY), transaction.atomic():
            call_command("loaddata", "demo", verbosity=0)
            faq_topics_install(topics=faq_topics())
            system_prompt_forget()
            system = [{"type": "text", "text": system_prompt()}]
            report = faq_evaluate(model=model, system=system, cases=cases)
            transaction.set_rollback(True)
        system_prompt_forget()  # not one rendered from the topics rolled back
        self.stdout.write(f"{'topic':<20} {'n':>3} {'served%':>7}  " + " ".join(OUTCOMES))
        for topic, counts in report.outcomes.items():
            total = sum(counts.values())
            served = sum(counts[outcome] for outcome in SERVED)
            self.stdout.write(
                f"{topic:<20} {total:>3} {served / total:>7.1%}  "
                + " ".join(f"{counts[outcome]:>{len(outcome)}}" for outcome in OUTCOMES)
            )
        for figure, share in report.figures().items():
            self.stdout.write(f"{figure}: {share:.1%}")
        for name, counts in report.by_set.items():
            self.stdout.write(
                f"issue's seven topics in {name}: {counts['served']} of {counts['asked']} served "
                f"({counts['served'] / counts['asked']:.1%})"
            )
        for text, topic, outcome, route in report.misses if verbose else ():
            self.stdout.write(f"    {topic} -> {outcome} ({route}): {text!r}")
        for text, expected, got in report.negatives.misses if verbose and report.negatives else ():
            self.stdout.write(f"    {expected} -> {got}: {text!r}")

    def _run_once(self, scenario, model) -> list[str]:
        # The scenarios are written against the demo data, whose dates hold on DEMO_TODAY.
        with override_settings(BOOKLY_TODAY=DEMO_TODAY, **_UNLIMITED_CHECKS), transaction.atomic():
            call_command("loaddata", "demo", verbosity=0)
            ReturnRecord.objects.all().delete()
            try:
                failures = scenario_run(scenario, model=model)
            except Exception as error:  # a crashed run is a failed run, not a crashed suite
                failures = [f"crashed: {type(error).__name__}: {error}"]
            transaction.set_rollback(True)
        return failures
