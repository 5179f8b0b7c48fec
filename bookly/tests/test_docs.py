"""What the docs tell a reader to run or to open exists: README.md and docs/*.md.

A management command that does not exist or an option it does not take, a script that is not there or
cannot run, a variable nothing reads, a file path, a URL of the site, a link to a page or to a section
that is not there, a pytest marker that is not registered: each fails here, named by its doc and words.
The commands are read from the fenced ```bash, ```sh and ```console blocks and from inline code that
names `manage.py`; the rest from the whole text.
"""

import itertools
import os
import re
import shlex
from pathlib import Path

import pytest
from django.core.management import call_command, get_commands, load_command_class
from django.urls import Resolver404, URLResolver, get_resolver, resolve

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

FENCE = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)
SHELL_LANGUAGES = {"bash", "sh", "console", "shell"}
SHELL_OPERATORS = {"&&", "||", ";", "|", "&"}
INLINE_CODE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
# What a reader is told to set: Bookly's own variables and the services' it reads.
VARIABLE = re.compile(
    r"(?<!\w)(?:(?:BOOKLY|DJANGO|ANTHROPIC|OPENAI|GUNICORN)_[A-Z0-9_*]*[A-Z0-9*]"
    r"|DATABASE_URL|REDIS_URL|EMAIL_URL|EMAIL_TIMEOUT|DEFAULT_FROM_EMAIL|WEB_CONCURRENCY)(?![\w*])"
)
# Where a variable is read: the settings, gunicorn's configuration and worker, scripts/run, and for
# contributors scripts/test.
VARIABLE_SOURCES = [
    ".env.example",
    "bookly/settings.py",
    "bookly/settings_assistant.py",
    "gunicorn.conf.py",
    "bookly/gunicorn_worker.py",
    "scripts/run",
    "scripts/test",
]
# Named in the docs' examples of the shop's own code, which Bookly does not read.
SHOPS_OWN_VARIABLES = {
    "BOOKLY_KEY": "the shop's shell variable holding its store API key, in the curl examples",
    "BOOKLY_WEBHOOK_SECRET": "the shop's receiver's variable holding the endpoint's secret",
}
# Paths of the machine, not of the site, when a word starts with "/".
SYSTEM_DIRECTORIES = {"usr", "dev", "etc", "tmp", "var", "home", "bin", "opt", "proc"}
SITE_ADDRESS = re.compile(r"https?://(?:127\.0\.0\.1:8000|support\.example\.com)(/[^\s`)>\"']*)")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_]*$")


def _relative(doc: Path) -> str:
    return str(doc.relative_to(ROOT))


def _prose(text: str) -> str:
    """The text outside fenced blocks."""
    return FENCE.sub("", text)


def _shell_blocks(text: str) -> list[str]:
    blocks = []
    for language, body in FENCE.findall(text):
        if language == "console":
            body = "\n".join(line[2:] for line in body.splitlines() if line.startswith("$ "))
        if language in SHELL_LANGUAGES:
            blocks.append(body)
    return blocks


def _commands(block: str) -> list[list[str]]:
    """Each command of a shell block, as its words: a line continues after a backslash or an open
    quote, a here-document's body is no command, comments are dropped, and `&&`, `;`, `|` separate."""
    commands, pending, heredoc_end = [], "", None
    for line in block.splitlines():
        if heredoc_end is not None:
            if line.strip() == heredoc_end:
                heredoc_end = None
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        pending += line
        try:
            words = shlex.split(pending, comments=True)
        except ValueError:  # a quotation still open: the command goes on
            pending += "\n"
            continue
        if heredoc := re.search(r"<<-?\s*['\"]?(\w+)", pending):
            heredoc_end = heredoc.group(1)
        pending = ""
        command: list[str] = []
        for word in words:
            if word in SHELL_OPERATORS:
                commands.append(command)
                command = []
            else:
                command.append(word)
        commands.append(command)
    assert not pending, f"a command never ends: {pending!r}"
    return [command for command in commands if command]


def _manage_py_mentions() -> list[tuple[str, str, list[str]]]:
    """(doc, command, arguments) for every `manage.py <command> ...` in a shell block or inline code."""
    found = {}
    for doc in DOCS:
        text = doc.read_text()
        commands = [command for block in _shell_blocks(text) for command in _commands(block)]
        commands += [
            shlex.split(code)
            for code in INLINE_CODE.findall(_prose(text))
            if re.search(r"\bmanage\.py ", code)
        ]
        for words in commands:
            for at, word in enumerate(words[:-1]):
                if word == "manage.py" or word.endswith("/manage.py"):
                    # "[--only SET]" in a synopsis: the option and its value, without the brackets.
                    arguments = [argument.strip("[]") for argument in words[at + 2 :]]
                    mention = (_relative(doc), words[at + 1], [a for a in arguments if a])
                    found[repr(mention)] = mention
    return list(found.values())


MANAGE_PY = _manage_py_mentions()


def test_the_docs_are_read_where_they_are():
    assert {_relative(doc) for doc in DOCS} >= {
        "README.md",
        "docs/contributors.md",
        "docs/operators.md",
        "docs/staff.md",
        "docs/store-developers.md",
    }
    assert len(MANAGE_PY) > 20  # the commands above are found at all


@pytest.mark.parametrize("name", sorted({name for _, name, _ in MANAGE_PY}))
def test_every_management_command_the_docs_name_exists_and_answers_help(name, capsys):
    assert name in get_commands(), f"the docs name `manage.py {name}`, which is no management command"
    with pytest.raises(SystemExit) as exited:
        call_command(name, "--help")
    assert exited.value.code == 0
    assert "usage:" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("doc", "name", "arguments"),
    [mention for mention in MANAGE_PY if mention[2]],
    ids=[
        " ".join(f"{doc}:{name} {' '.join(arguments)}".split())[:80]
        for doc, name, arguments in MANAGE_PY
        if arguments
    ],
)
def test_every_management_command_line_in_the_docs_parses(doc, name, arguments):
    """The options and sub-commands a doc gives are the command's own; a placeholder in capitals
    (ID, N, PREFIX) stands for a value."""
    commands = get_commands()
    assert name in commands, f"{doc} names `manage.py {name}`, which is no management command"
    parser = load_command_class(commands[name], name).create_parser("manage.py", name)
    values = ["1" if PLACEHOLDER.match(argument) else argument for argument in arguments]
    _, unknown = parser.parse_known_args(values)  # a wrong sub-command or value raises CommandError
    assert not [word for word in unknown if word.startswith("-")], (
        f"{doc}: `manage.py {name}` takes no {unknown}"
    )


def _script_mentions() -> list[tuple[str, str]]:
    found = set()
    for doc in DOCS:
        for path in re.findall(r"(?<![\w/.-])((?:scripts|\.ci)/[\w-]+|bench/[\w-]+\.sh)\b", doc.read_text()):
            found.add((_relative(doc), path))
    return sorted(found)


@pytest.mark.parametrize(("doc", "path"), _script_mentions())
def test_every_script_the_docs_name_is_there_and_runs(doc, path):
    script = ROOT / path
    assert script.is_file(), f"{doc} names {path}, which is not there"
    assert os.access(script, os.X_OK), f"{doc} names {path}, which is not executable"


def test_scripts_are_found_in_the_docs():
    assert ("README.md", "scripts/run") in _script_mentions()
    assert ("README.md", "scripts/test") in _script_mentions()


def _variables() -> list[tuple[str, str]]:
    found = set()
    for doc in DOCS:
        for name in VARIABLE.findall(doc.read_text()):
            found.add((_relative(doc), name))
    return sorted(found)


@pytest.mark.parametrize(("doc", "name"), _variables())
def test_every_variable_the_docs_name_is_read(doc, name):
    if name in SHOPS_OWN_VARIABLES:
        return
    sources = "\n".join((ROOT / source).read_text() for source in VARIABLE_SOURCES)
    # BOOKLY_MAX_* and BOOKLY_PRICE_*_PER_MTOK stand for several.
    pattern = r"\b" + re.escape(name).replace(r"\*", r"[A-Z0-9_]+") + r"\b"
    assert re.search(pattern, sources), f"{doc} names {name}, which none of {VARIABLE_SOURCES} reads"


def test_the_shop_s_own_variables_are_still_the_docs():
    named = {name for _, name in _variables()}
    assert set(SHOPS_OWN_VARIABLES) <= named


def _words_of_code(text: str) -> list[str]:
    """Inline code and shell blocks, cut into words."""
    words = [word for code in INLINE_CODE.findall(_prose(text)) for word in code.split()]
    words += [word for block in _shell_blocks(text) for word in block.split()]
    return [word.strip(",;:.()[]\"'") for word in words]


def _paths() -> list[tuple[str, str]]:
    """Words naming a file or folder in one of the project's own folders."""
    folders = {entry.name for entry in ROOT.iterdir() if entry.is_dir()} - {".venv", ".git", "test-artifacts"}
    found = set()
    for doc in DOCS:
        for word in _words_of_code(doc.read_text()):
            if "/" in word and word.split("/")[0] in folders and "://" not in word:
                found.add((_relative(doc), word))
    return sorted(found)


@pytest.mark.parametrize(("doc", "path"), _paths())
def test_every_file_the_docs_name_is_there(doc, path):
    assert (ROOT / path).exists(), f"{doc} names {path}, which is not there"


def _site_paths() -> list[tuple[str, str]]:
    """Paths of the site: inline code and words starting with "/", and addresses of the demo site."""
    found = set()
    for doc in DOCS:
        text = doc.read_text()
        words = [word for word in _words_of_code(text) if word.startswith("/") and not word.startswith("//")]
        words += SITE_ADDRESS.findall(text)
        for word in words:
            if word.split("/")[1] in SYSTEM_DIRECTORIES:
                continue
            path = re.split(r"[?#]", word)[0]
            # /api/store/v1/returns/<rma>, /api/store/v1/returns?updated_since=…: any value
            path = re.sub(r"<[^>/]*>|…", "x", path)
            found.add((_relative(doc), path))
    return sorted(found)


def _routes(resolver=None, prefix: str = "/") -> list[str]:
    """Every route of the site, as written in its URLconf (converters and regexes left as they are)."""
    routes = []
    for entry in (resolver or get_resolver()).url_patterns:
        route = prefix + str(entry.pattern).lstrip("^").rstrip("$")
        routes.append(route)
        if isinstance(entry, URLResolver):
            routes += _routes(entry, route)
    return routes


@pytest.mark.parametrize(("doc", "path"), _site_paths())
def test_every_address_of_the_site_the_docs_give_is_served(doc, path):
    """A path is served, or (ending with "/", as "under /api/") begins some that are."""
    if path.endswith("/") and any(route.startswith(path) for route in _routes()):
        return
    try:
        resolve(path)
    except Resolver404:
        pytest.fail(f"{doc} gives {path}, which no URL of the site matches")


def _anchors(doc: Path) -> set[str]:
    """GitHub's anchors for the headings of a page: lower case, punctuation dropped, spaces as hyphens."""
    anchors: set[str] = set()
    seen: dict[str, int] = {}
    for heading in re.findall(r"^#{1,6} +(.+?) *$", _prose(doc.read_text()), re.M):
        anchor = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(anchor, 0)
        seen[anchor] = count + 1
        anchors.add(anchor if count == 0 else f"{anchor}-{count}")
    return anchors


def _links() -> list[tuple[str, str]]:
    found = set()
    for doc in DOCS:
        prose = INLINE_CODE.sub("", _prose(doc.read_text()))
        for target in LINK.findall(prose):
            if not re.match(r"[a-z]+:", target):
                found.add((_relative(doc), target))
    return sorted(found)


@pytest.mark.parametrize(("doc", "target"), _links())
def test_every_link_between_the_docs_leads_somewhere(doc, target):
    path, _, anchor = target.partition("#")
    page = (ROOT / doc).parent / path if path else ROOT / doc
    assert page.resolve().is_relative_to(ROOT), f"{doc} links to {target}, outside the project"
    assert page.exists(), f"{doc} links to {target}: there is no {path}"
    if anchor:
        assert page.suffix == ".md", f"{doc} links to {target}: an anchor in a file that is not a page"
        assert anchor in _anchors(page), f"{doc} links to {target}: {path or doc} has no such section"


def test_the_docs_link_every_page_from_the_readme():
    linked = {target.partition("#")[0] for doc, target in _links() if doc == "README.md"}
    assert {_relative(doc) for doc in DOCS[1:]} <= linked


def test_the_markers_the_docs_select_by_are_registered(pytestconfig):
    registered = {line.split(":")[0].strip() for line in pytestconfig.getini("markers")}
    selections = [
        expression
        for doc in DOCS
        for block in _shell_blocks(doc.read_text())
        for command in _commands(block)
        if command[0] in ("scripts/test", "pytest")
        for option, expression in itertools.pairwise(command)
        if option == "-m"
    ]
    assert selections, "the quick loop's marker selection is in the docs"
    for expression in selections:
        names = set(re.findall(r"\w+", expression)) - {"and", "or", "not"}
        assert names <= registered, f"`-m {expression}` names markers pytest.ini does not register"
