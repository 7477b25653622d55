"""Fuzzing as a habit (issue 41): a small recorded day of all five games, broken in seeded ways
(tests/fuzzing.py), each copy audited as a user runs `pitboss audit`. For every variant: exit 0 or 3, never
a traceback; an exit 3 names the file and the column; on exit 0 every input row is accounted for (bets:
read = settled + quarantined; rounds: read = replayed + quarantined; shoes: read = audited + quarantined;
tables and limits: every row read); and where the contract says what must happen, it happened.

`make test` runs a seeded sample (PITBOSS_FUZZ_VARIANTS, default below); `make fuzz` runs every variant
with more rows, cuts and flipped bytes each (PITBOSS_FUZZ_VARIANTS=all). The same variants on every run.
The audits run on a pool of processes (PITBOSS_FUZZ_WORKERS, default: the cores, at most 2), once for the
whole session; each test then judges its variant's outcome. A few go through the `pitboss` executable
(a subprocess), so that the exit codes and the terminal are exactly what a user gets.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import shutil
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from tests import fuzzing
from tests.fuzzing import Expect, Outcome, Variant

SAMPLE = 240  # variants in `make test` (~1.2 s of one core each)
# through the pitboss executable: the first variant whose name starts so (the crashes among them)
VIA_CLI = ("tables.ruleset:other-game@4", "rounds[blackjack].dealer_cards:item=XX@", "rounds[casino_stud]:empty",
           "rounds[baccarat].banker_cards:drop", "bets[baccarat]:truncate@", "bets[baccarat].channel:drop",
           "bets[roulette].stake:-500@")

_DAY = Path(tempfile.mkdtemp(prefix="pitboss-fuzz-"))
atexit.register(shutil.rmtree, _DAY, True)
DAY = fuzzing.record_day(_DAY / "day")
ALL = fuzzing.catalogue_of(DAY)
_wanted = os.environ.get("PITBOSS_FUZZ_VARIANTS", str(SAMPLE))
VARIANTS = {v.name: v for v in (ALL if _wanted == "all" else fuzzing.sample(ALL, int(_wanted)))}
for _prefix in VIA_CLI:  # (in the sample too)
    _v = next(v for v in ALL if v.name.startswith(_prefix))
    VARIANTS.setdefault(_v.name, _v)
CLI = {next(n for n in VARIANTS if n.startswith(prefix)) for prefix in VIA_CLI}

pytestmark = pytest.mark.fuzz


@pytest.fixture(scope="session")
def outcomes(request, tmp_path_factory) -> dict[str, Outcome]:
    """Every selected variant audited, on a pool of processes (spawned: Beam is not fork-safe). Under pytest -n
    each process sees every test of the session: `make test` keeps this file in one of them (--dist loadfile),
    or each would audit every variant."""
    names = [item.callspec.params["name"] for item in request.session.items
             if item.originalname == "test_variant" and "name" in item.callspec.params]
    work = tmp_path_factory.mktemp("fuzz")
    workers = int(os.environ.get("PITBOSS_FUZZ_WORKERS", min(2, os.cpu_count() or 1)))
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = {name: pool.submit(fuzzing.audit_variant, DAY, name, work / str(i),
                                     "cli" if name in CLI else "runner") for i, name in enumerate(names)}
        return {name: future.result() for name, future in futures.items()}


def test_the_recorded_day_audits_clean(tmp_path):
    """What the expectations stand on: the day itself has no finding and no quarantine row, and its
    catalogue is the same when read again (names, files, expectations)."""
    day = fuzzing.Day.read(DAY)
    assert set(day.game_of_file.values()) == {*fuzzing.GAMES, None}
    assert all(day.files[day.file_of(t, g)].num_rows > 0 for t in ("shoes", "rounds", "bets") for g in fuzzing.GAMES)
    outcome = fuzzing.audit_variant(DAY, "bets[baccarat].channel:drop", tmp_path / "w")  # (changes nothing)
    assert outcome.exit_code == 0 and not outcome.error, outcome.output + outcome.error
    assert outcome.findings == [] and outcome.quarantine == []
    assert outcome.settlements == outcome.input_rows["bets"] and outcome.replays == outcome.input_rows["rounds"]
    again = fuzzing.catalogue(DAY, **(fuzzing.FULL if _wanted == "all" else {}))
    assert [(v.name, v.file, v.column, v.expect) for v in again] == [(v.name, v.file, v.column, v.expect) for v in ALL]


def test_the_sample_covers_every_family_and_game():
    if len(VARIANTS) < 50:
        pytest.skip("a sample this small (PITBOSS_FUZZ_VARIANTS) cannot hold every family")
    families = {v.family for v in VARIANTS.values()}
    assert families == {"drop", "null", "type", "empty", "truncate", "flip", "range", "swap", "foreign", "duplicate",
                        "place"}
    for game in fuzzing.GAMES:
        assert any(f"[{game}]" in name for name in VARIANTS), game
    assert len(ALL) >= (2000 if _wanted == "all" else 1000)  # (make fuzz: the "thousands")


def judge(variant: Variant, outcome: Outcome) -> list[str]:
    """What is wrong with a variant's outcome (nothing: an empty list)."""
    problems = []
    if outcome.error:
        problems.append(f"crashed: {outcome.error.strip().splitlines()[-1]}")
    if "Traceback" in outcome.output:
        problems.append("a traceback on the terminal")
    if outcome.exit_code not in (0, 3):
        problems.append(f"exit {outcome.exit_code}: {_tail(outcome.output)}")
    # the dead letter keeps the night going, but an error it caught is a crash the contract should have prevented
    errors = [f for f in outcome.findings if f["kind"] == "AUDIT_ERROR"]
    if errors:
        problems.append(f"{len(errors)} AUDIT_ERROR finding(s): an unexpected error in the audit of "
                        f"{sorted({f['table_id'] for f in errors})} (see pitboss-error.log)")
    expect = variant.expect
    if outcome.exit_code == 3:
        needles = (variant.file, *([variant.column] if variant.column else []), *expect.exit3)
        missing = [n for n in dict.fromkeys(needles) if n not in " ".join(outcome.output.split())]
        if missing:
            problems.append(f"the exit 3 message does not name {missing}: {_tail(outcome.output)}")
        if expect.quarantine or expect.finding or expect.clean:
            problems.append(f"exit 3 where the contract expects {expect.describe()}: {_tail(outcome.output)}")
    elif outcome.exit_code == 0:
        problems += _unaccounted(outcome)
        if expect.exit3:
            problems.append(f"exit 0 where the contract expects exit 3 naming {expect.exit3}; {_reported(outcome)}")
        problems += _unmet(expect, outcome)
    return problems


def _unaccounted(o: Outcome) -> list[str]:
    q = {}
    for row in o.quarantine:
        q[row["source_table"]] = q.get(row["source_table"], 0) + 1
    read = {t: o.input_rows[t] if o.input_rows[t] is not None else o.metrics.get(f"input.{t}_rows", 0)
            for t in o.input_rows}
    counted = {"bets": o.settlements + q.get("bets", 0), "rounds": o.replays + q.get("rounds", 0),
               "shoes": o.metrics.get("audit.shoes", 0) + q.get("shoes", 0),
               "tables": o.metrics.get("input.tables_rows", 0), "limits": o.metrics.get("input.limits_rows", 0)}
    return [f"{t}: {read[t]} rows read, {counted[t]} accounted for (settled/replayed/audited + quarantined)"
            for t in counted if read[t] != counted[t]]


def _unmet(expect: Expect, o: Outcome) -> list[str]:
    problems = []
    kinds = {f["kind"] for f in o.findings}
    if expect.quarantine:
        table, text = expect.quarantine
        if not any(r["source_table"] == table and text in r["reason"] for r in o.quarantine):
            problems.append(f"no {table} row quarantined with a reason holding {text!r}; {_reported(o)}")
    if expect.finding and expect.finding not in kinds:
        problems.append(f"no {expect.finding} finding; {_reported(o)}")
    if expect.absent and expect.absent in kinds:
        problems.append(f"a false {expect.absent} finding; {_reported(o)}")
    if expect.noticed is not None and not _names(o, expect.noticed):
        problems.append(f"silent: no finding or quarantine row names {expect.noticed or 'anything'}; {_reported(o)}")
    if expect.clean and (o.findings or o.quarantine):
        problems.append(f"a harmless change reported; {_reported(o)}")
    return problems


def _names(o: Outcome, ids: tuple[str, ...]) -> bool:
    """Whether a finding or a quarantine row names one of `ids` (any at all when there are none)."""
    if not ids:
        return bool(o.findings or o.quarantine)
    wanted = set(ids)
    return (any(wanted & {f["table_id"], f["shoe_id"], f["round_id"], f["bet_id"]} for f in o.findings)
            or any(r["record_id"] in wanted or any(i in (r["record"] or "") for i in ids) for r in o.quarantine))


def _reported(o: Outcome) -> str:
    kinds: dict[str, int] = {}
    for f in o.findings:
        kinds[f["kind"]] = kinds.get(f["kind"], 0) + 1
    reasons = sorted({f"{r['source_table']}: {r['reason']}" for r in o.quarantine})
    return f"findings {kinds or 'none'}, quarantine {reasons[:3] or 'none'}{' ...' if len(reasons) > 3 else ''}"


def _tail(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return " | ".join(lines[-2:])[:400]


@pytest.mark.parametrize("name", list(VARIANTS))
def test_variant(name, outcomes):
    variant = VARIANTS[name]
    problems = judge(variant, outcomes[name])
    assert not problems, f"{name} ({variant.expect.describe()}):\n  " + "\n  ".join(problems)
