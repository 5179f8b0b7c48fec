"""Which FAQ topic a question's words name is the same in every process (builtin/words.py)."""

import subprocess
import sys

import pytest

# Run in a process of its own: a set's order, and so a plain sum of floats over it, depends on the
# process's hash seed. Under seeds 9, 12 and 13 this question's share of the topic's words, exactly the
# coverage needed, summed to just under it.
MATCH = """
import json, sys
sys.path.insert(0, ".")
from support.assistant.builtin.words import topic_matching
from support.llm.protocol import FaqTopic
topics = [
    FaqTopic(key=t["topic"], title=t["title"], questions=tuple(t["example_questions"].split("\\n")))
    for t in json.load(open("support/evals/faq/topics.json"))
]
print(topic_matching("can i order a book that's not on your site yet?", topics))
"""


@pytest.mark.parametrize("seed", ["9", "12", "13", "0"])
def test_a_topic_is_named_alike_whatever_the_process_hash_seed(seed, request):
    named = subprocess.run(
        [sys.executable, "-c", MATCH],
        cwd=request.config.rootpath,
        env={"PYTHONHASHSEED": seed, "PATH": ""},
        capture_output=True,
        text=True,
        check=True,
    )
    assert named.stdout.strip() == "placing_order"
