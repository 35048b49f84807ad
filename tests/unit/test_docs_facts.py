"""The facts the docs state about the code, checked against the code.

Docs drift silently: a search attribute added to the contract but not to the registration
commands operators copy stalls disruption rounds on their first upsert; a workflow id format
changed in the code leaves operators searching for ids that no longer exist; a benchmark
renamed leaves performance.md's commands failing. Each check below reads the code's own
constants (imported, never copied here) and fails naming the file and the missing fact.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from models import contract
from sandbox import dev as sandbox_dev
from tests.unit.worker.karpenter_metrics import NOT_EXPORTED, RENAMED
from worker.running import karpenter_settings, metrics
from workflows import search

ROOT = Path(__file__).resolve().parents[2]
DOCS = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
PERFORMANCE = ROOT / "docs" / "performance.md"
PERFORMANCE_MAX_LINES = 415  # 400 until issue 33 added the scale-down table

# Where operators copy the search attributes from: each must list every one of them.
SEARCH_ATTRIBUTE_PLACES = sorted(
    {*DOCS, ROOT / "docker-compose.yml", *(ROOT / "deploy").rglob("*.yaml")}
)
# The places the issue named; the discovery below must find a listing in each.
KNOWN_LISTINGS = {
    "docs/deploy.md",
    "docs/temporal.md",
    "docs/dev.md",
    "README.md",
    "docker-compose.yml",
    "deploy/helm/joinery/values.yaml",
}

CLUSTER = "<cluster>"
NAME = "<name>"


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def search_attribute_names() -> tuple[str, ...]:
    """Every search attribute the code defines: the contract's, and the workflows' keys."""
    names = tuple(contract.SEARCH_ATTRIBUTES)
    assert {key.name for key in search.ALL} == set(names), "workflows/search.py vs the contract"
    return names


def listings(text: str, marker: str, names: tuple[str, ...]) -> Iterator[tuple[int, str]]:
    """Each place in ``text`` that lists search attributes, found by one of them (``marker``)
    named outside a query (``CapacityType = 'spot'`` is an example, not a listing): the line
    with the non-blank lines around it, up to three either side and further while they still
    name a search attribute, so a list wrapped over lines or written one per line is read
    whole."""
    lines = text.splitlines()
    mention = re.compile(rf"\b{re.escape(marker)}\b(?!\s*=\s*['\"])")
    any_name = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")

    def belongs(j: int, distance: int) -> bool:
        return bool(lines[j].strip()) and (distance <= 3 or bool(any_name.search(lines[j])))

    for i, line in enumerate(lines):
        if not mention.search(line):
            continue
        lo = i
        while lo > 0 and belongs(lo - 1, i - lo + 1):
            lo -= 1
        hi = i
        while hi < len(lines) - 1 and belongs(hi + 1, hi - i + 1):
            hi += 1
        yield i + 1, "\n".join(lines[lo : hi + 1])


def test_every_place_that_lists_the_search_attributes_lists_all_of_them() -> None:
    names = search_attribute_names()
    # The least common word among them marks a listing (NodePool or Phase appear everywhere).
    marker = contract.SA_CAPACITY_TYPE
    found: set[str] = set()
    missing: list[str] = []
    for path in SEARCH_ATTRIBUTE_PLACES:
        for line, block in listings(path.read_text(encoding="utf-8"), marker, names):
            found.add(rel(path))
            absent = [n for n in names if not re.search(rf"\b{re.escape(n)}\b", block)]
            if absent:
                missing.append(f"{rel(path)} line {line}: lists search attributes without {absent}")
    assert not missing, "\n".join(missing)
    assert found >= KNOWN_LISTINGS, f"no search-attribute listing found in {KNOWN_LISTINGS - found}"


def test_the_sandbox_registers_every_search_attribute() -> None:
    # sandbox/temporal_server.py registers ``search.ALL``, checked equal to the contract above.
    assert set(sandbox_dev.SEARCH_ATTRIBUTES) == set(search_attribute_names())


def workflow_id_forms() -> dict[str, re.Pattern[str]]:
    """Each workflow's id as the code builds it, with placeholders: the word the docs spell it
    with (``nodeclaim``, ``provisioner``, ...) and the one form a doc may give it in."""
    forms = {
        contract.provisioner_id(CLUSTER): contract.provisioner_id(CLUSTER),
        contract.disruption_id(CLUSTER): contract.disruption_id(CLUSTER),
        contract.garbage_collection_id(CLUSTER): contract.garbage_collection_id(CLUSTER),
    }
    out = {form: re.compile(re.escape(form)) for form in forms}
    nodeclaim = contract.nodeclaim_id(CLUSTER, NAME)
    # Any placeholder for the NodeClaim's name (``<name>``, ``<NodeClaim name>``).
    out[nodeclaim] = re.compile(re.escape(nodeclaim).replace(re.escape(NAME), r"<[^<>`]+>"))
    return out


def id_word(form: str) -> str:
    """``provisioner@<cluster>`` -> ``provisioner``; ``nodeclaim-<name>@<cluster>`` ->
    ``nodeclaim``: what a stale spelling of the same id starts with too."""
    return re.split(r"[-@]<", form, maxsplit=1)[0]


def test_temporal_md_gives_every_workflow_id_as_the_code_builds_it() -> None:
    text = (ROOT / "docs" / "temporal.md").read_text(encoding="utf-8")
    absent = [form for form, pattern in workflow_id_forms().items() if not pattern.search(text)]
    assert not absent, f"docs/temporal.md does not give the workflow ids {absent}"


def test_no_doc_spells_a_workflow_id_another_way() -> None:
    wrong: list[str] = []
    for form, pattern in workflow_id_forms().items():
        # A placeholder id in backticks that starts with the workflow's word.
        spelled = re.compile(rf"`({re.escape(id_word(form))}[-@_]<[^`]*)`")
        for path in DOCS:
            for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for token in spelled.findall(line):
                    if not pattern.fullmatch(token):
                        wrong.append(f"{rel(path)} line {line_no}: `{token}`, the code's is {form}")
    assert not wrong, "\n".join(wrong)


def test_every_karpenter_metric_the_docs_name_is_exported() -> None:
    exported = metrics.sample_names()
    # Label names (``karpenter_sh_nodepool``) and the names the docs say are not exported
    # (or were renamed) are not claims of a series.
    exported |= {label for _kind, labels in metrics.declared().values() for label in labels}
    exported |= set(NOT_EXPORTED) | set(RENAMED)
    # A family name alone (a histogram's or summary's) counts through its ``_count`` series;
    # ``karpenter_voluntary_disruption_*`` is a family of names, not one.
    name = re.compile(r"(?<![/\w])karpenter_[a-z0-9_]*[a-z0-9](?![\w*])")
    absent = [
        f"{rel(path)}: {m}"
        for path in DOCS
        for m in sorted(set(name.findall(path.read_text(encoding="utf-8"))))
        if m not in exported and f"{m}_count" not in exported
    ]
    assert not absent, "named in the docs but not exported by worker/metrics.py:\n" + "\n".join(
        absent
    )


@pytest.mark.parametrize(
    ("stale", "where"),
    [
        ("consolidation and drift are not built yet", "workflows/disruption/ runs both"),
        ("manages no IAM", "activities/ec2/instance_profiles.py manages instance profiles"),
        ("same provisioning decisions", "docs/scheduling.md lists where the plans differ"),
        ("when they land", "consolidation and drift honour joinery pause already"),
        ("delete the empty NodeClaims", "consolidation removes empty nodes by itself"),
        ("batches (1 s idle / 10 s max)", "BATCH_IDLE_DURATION / BATCH_MAX_DURATION set them"),
    ],
)
def test_a_statement_the_code_outgrew_does_not_come_back(stale: str, where: str) -> None:
    said = [rel(p) for p in DOCS if stale.lower() in p.read_text(encoding="utf-8").lower()]
    assert not said, f"{said} say {stale!r}; {where}"


def test_performance_md_is_a_page_not_a_diary() -> None:
    lines = PERFORMANCE.read_text(encoding="utf-8").count("\n")
    assert lines < PERFORMANCE_MAX_LINES, f"docs/performance.md has {lines} lines"


def benchmark_commands(text: str) -> Iterator[tuple[str, str]]:
    """Each benchmark command in inline code: (the script's path, the rest of the command)."""
    command = re.compile(r"python (?:-m benchmarks\.([a-z_]\w*)|benchmarks/([a-z_]\w*)\.py)([^`]*)")
    for span in re.findall(r"`([^`]+)`", text):
        for module, script, rest in command.findall(span):
            yield f"benchmarks/{module or script}.py", rest


def test_every_benchmark_performance_md_names_exists_with_its_flags() -> None:
    text = PERFORMANCE.read_text(encoding="utf-8")
    # Lower case: ``benchmarks/NAME.py`` is the page's placeholder, not a script.
    named = set(re.findall(r"benchmarks/[a-z_][\w/]*\.(?:py|sh)", text))
    named |= {f"benchmarks/{m}.py" for m in re.findall(r"benchmarks\.([a-z_]\w*)", text)}
    missing = sorted(p for p in named if not (ROOT / p).is_file())
    assert not missing, f"docs/performance.md names {missing}, which do not exist"

    unknown: list[str] = []
    commands = list(benchmark_commands(text))
    assert commands, "no benchmark command found in docs/performance.md"
    for script, rest in commands:
        source = (ROOT / script).read_text(encoding="utf-8")
        for flag in re.findall(r"(?<![\w-])--[a-z][\w-]*", rest):
            if f'"{flag}"' not in source:
                unknown.append(f"{script} {flag}")
    assert not unknown, f"docs/performance.md uses flags the scripts do not take: {unknown}"


def test_every_make_target_performance_md_names_exists() -> None:
    targets = set(
        re.findall(r"^([\w-]+):", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)
    )
    named = set(re.findall(r"`make ([\w-]+)", PERFORMANCE.read_text(encoding="utf-8")))
    assert named, "no make target found in docs/performance.md"
    assert named <= targets, f"docs/performance.md names make targets {named - targets}"


NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10,
}  # fmt: skip


def test_every_count_of_the_search_attributes_is_right() -> None:
    """ "the six search attributes" stayed in three docs when DisruptionReason made seven."""
    words = "|".join(NUMBERS)
    count = re.compile(rf"\b({words}|\d+) (?:custom )?search attributes\b", re.IGNORECASE)
    expected = len(contract.SEARCH_ATTRIBUTES)
    wrong = [
        f"{rel(path)}: {m.group(0)!r}"
        for path in [*DOCS, ROOT / "docker-compose.yml", *(ROOT / "deploy").rglob("*.yaml")]
        for m in count.finditer(path.read_text(encoding="utf-8"))
        if NUMBERS.get(m.group(1).lower(), 0) != expected and m.group(1) != str(expected)
    ]
    assert not wrong, f"there are {expected} search attributes: {wrong}"


def settings_rows() -> dict[str, str]:
    """docs/operations.md's Settings table: Karpenter's env name -> its row."""
    text = (ROOT / "docs" / "operations.md").read_text(encoding="utf-8")
    section = text.split("\n## Settings\n", 1)[1].split("\n## ", 1)[0]
    rows = re.findall(r"^\| `([A-Z_]+)` \|(.*)$", section, re.MULTILINE)
    assert rows, "no settings table in docs/operations.md"
    return dict(rows)


def test_the_settings_table_has_one_row_per_karpenter_setting_as_the_code_has_it() -> None:
    rows = settings_rows()
    code = {s.env: s for s in karpenter_settings.SETTINGS}
    assert set(rows) == set(code), (
        f"rows without a setting {sorted(set(rows) - set(code))}, "
        f"settings without a row {sorted(set(code) - set(rows))}"
    )
    wrong = []
    for env, setting in code.items():
        row = rows[env]
        for fact in (setting.flag, setting.joinery_env, setting.chart):
            if fact and f"`{fact}`" not in row:
                wrong.append(f"{env}: the row does not give `{fact}`")
        refused = "**refused**" in row
        if refused != (setting.status == karpenter_settings.REFUSED):
            wrong.append(f"{env}: the row says refused={refused}, the code {setting.status}")
    assert not wrong, "\n".join(wrong)
