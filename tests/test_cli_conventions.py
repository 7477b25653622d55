"""The conventions every `pitboss` command keeps (issue 45), checked over the typer app itself so that a new
command or option is held to them without a new test: `-h` beside `--help`, `--version`, commands in
workflow order, every help a complete sentence, every default shown, one naming rule for files and folders
(`--output`/`-o` a folder, `--out`/`-o` a file, `--input`/`-i` a folder, `--warehouse`/`-w` a DuckDB file),
one error prefix, and every command that writes a file saying where."""

from __future__ import annotations

import re

import click
import pyarrow.parquet as pq
import pytest
import typer
from typer.core import TyperOption
from typer.testing import CliRunner

from pitboss.cli import app
from pitboss.commands import query as query_cmd
from tests.warehouse_fixtures import DAY1, shared_warehouse

runner = CliRunner()
GROUP = typer.main.get_command(app)
# the order of a night's work, then the tools beside
WORKFLOW = ["generate", "validate", "audit", "query", "replay", "report", "surveil", "verify", "rtp", "schema",
            "demo"]
# long name -> (short flag, a word its help must hold): the same on every command that has the option
NAMED = {"--output": ("-o", "folder"), "--out": ("-o", "file"), "--input": ("-i", "folder"),
         "--warehouse": ("-w", "duckdb"), "--format": ("-f", "format")}
PREFIX = "pitboss: error: "


def commands() -> list[tuple[str, click.Command]]:
    ctx = click.Context(GROUP)
    return [(name, GROUP.get_command(ctx, name)) for name in GROUP.list_commands(ctx)]


def visible_options(command: click.Command) -> list[TyperOption]:
    options = [p for p in command.params if isinstance(p, TyperOption) and not p.hidden]
    assert options or command.name in ("schema",), command.name  # (not a vacuous check)
    return options


def helps(command: click.Command) -> list[tuple[str, str]]:
    """(what, text) of the command's help and of each of its visible parameters' help."""
    texts = [("command", command.help or "")]
    texts += [(p.name, getattr(p, "help", None) or "") for p in command.params if not getattr(p, "hidden", False)]
    return texts


def complete(text: str) -> bool:
    """A heuristic for a finished sentence: it ends with a full stop (a closing bracket or quote may follow),
    and its brackets are balanced (help cut mid-sentence leaves one open)."""
    text = " ".join(text.split())
    return bool(re.search(r"[.!?][)`'\"]*$", text)) and text.count("(") == text.count(")")


@pytest.mark.parametrize("text, expected", [
    ("Folder to write.", True), ("A bet (any game).", True), ("Run `pitboss audit`.", True),
    ("The audit's output folder, where a finished `pitboss audit` run is", False),
    ("Output format", False), ("A folder (of the run.", False)])
def test_the_sentence_heuristic(text, expected):
    assert complete(text) is expected


def test_commands_are_listed_in_workflow_order():
    assert [name for name, _ in commands()] == WORKFLOW
    shown = runner.invoke(app, ["--help"], terminal_width=200).stdout
    panel = shown.split("Commands", 1)[1].splitlines()
    listed = [m.group(1) for line in panel if (m := re.match(r"\W*([a-z]+)  ", line))]
    assert listed == WORKFLOW


def test_version_prints_the_package_and_code_versions():
    from pipelines.audit import code_version

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0, result.output
    assert re.fullmatch(r"pitboss \S+ \(code version [0-9a-f]{12}\)\n", result.stdout), result.stdout
    assert code_version()[:12] in result.stdout


@pytest.mark.parametrize("args", [[], *([name] for name in WORKFLOW)], ids=lambda a: " ".join(a) or "pitboss")
def test_h_is_help_everywhere(args):
    short = runner.invoke(app, [*args, "-h"], terminal_width=200)
    long = runner.invoke(app, [*args, "--help"], terminal_width=200)
    assert short.exit_code == 0 and long.exit_code == 0, short.output
    assert short.stdout == long.stdout and "Usage: pitboss" in short.stdout


def test_every_help_is_complete_sentences():
    unfinished = [(name, what, text) for name, command in [("pitboss", GROUP), *commands()]
                  for what, text in helps(command) if not complete(text)]
    assert unfinished == []


def test_every_default_is_shown():
    """An option that takes a value (or has --x/--no-x) shows its default; where the default is None the help
    says in words what happens without it (show_default as text). Plain on/off flags are off by default."""
    hidden_default, checked = [], 0
    for name, command in commands():
        for option in visible_options(command):
            if option.required or (option.is_flag and not option.secondary_opts) or option.name == "help":
                continue
            checked += 1
            if option.show_default is False or (option.default is None and not isinstance(option.show_default, str)):
                hidden_default.append((name, option.opts[0]))
    assert hidden_default == [] and checked > 25


def test_the_audits_default_output_folder_is_in_its_help():
    shown = runner.invoke(app, ["audit", "-h"], terminal_width=200).stdout
    assert "<warehouse>_runs/latest" in shown and "./out" in shown


def test_files_and_folders_are_named_alike_everywhere():
    """--output is a folder, --out a file; a short flag means one long option (or the two outputs) on every
    command."""
    wrong, shorts = [], {}
    for name, command in commands():
        for option in visible_options(command):
            for short in option.opts + option.secondary_opts:
                if not short.startswith("--"):
                    shorts.setdefault(short, set()).update(o for o in option.opts if o.startswith("--"))
            for long, (short, word) in NAMED.items():
                if long in option.opts and (short not in option.opts or word not in (option.help or "").lower()):
                    wrong.append((name, long, option.opts, option.help))
            if "--out" in option.opts and "folder" in (option.help or "").lower():
                wrong.append((name, "--out names a folder", option.help))
    assert wrong == []
    assert {short: longs for short, longs in shorts.items() if len(longs) > 1} == {"-o": {"--out", "--output"}}


def test_query_help_names_every_view():
    from importlib import resources

    files = [p for p in (resources.files("audits") / "views").iterdir() if p.name.endswith(".sql")]
    shown = " ".join(runner.invoke(app, ["query", "-h"], terminal_width=300).stdout.split())
    assert len(query_cmd.view_names()) == len(files) >= 14
    for view in query_cmd.view_names():
        assert re.search(rf"\b{view}\b", shown), view
    assert "all_rounds" in shown and "dealer_anomalies" in shown


@pytest.mark.parametrize("args", [
    ["rtp", "--ruleset", "no_such_ruleset"],
    ["schema", "no_such_table"],
    ["query", "SELECT 1", "-w", "/nonexistent/audit.duckdb"],
    ["replay", "R1"],
    ["report", "-w", "/nonexistent/audit.duckdb", "-o", "/nonexistent/report.html"],
    ["verify", "-w", "/nonexistent/audit.duckdb"],
    ["surveil", "-i", "in", "--alpha", "2"],
    ["generate", "-o", "/nonexistent/x", "--tables", "0"],
    ["generate", "--tables", "1"],
    # usage errors typer finds before the command runs: the same one line, not a boxed panel
    ["audit"],
    ["schema", "-f", "yaml"],
    ["query", "--bogus"],
    ["no-such-command"],
], ids=lambda a: " ".join(a[:2]))
def test_one_error_prefix(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(PREFIX), result.stderr


def test_pitboss_alone_prints_the_help():
    result = runner.invoke(app, [])
    assert result.exit_code == 2 and "Usage: pitboss" in result.stdout and result.stderr == ""


def test_generate_records_a_day_of_one_other_game(tmp_path):
    """--tables 0 is a day without baccarat; only a day without any table is refused."""
    result = runner.invoke(app, ["generate", "-o", str(tmp_path / "d"), "--tables", "0", "--roulette-tables", "1",
                                 "--rounds-per-table", "5", "--bets-per-round", "2", "--quiet"])
    assert result.exit_code == 0, result.output
    tables = pq.read_table(tmp_path / "d" / "tables.parquet").to_pylist()
    assert [t["game"] for t in tables] == ["roulette"]
    refused = runner.invoke(app, ["generate", "-o", str(tmp_path / "e"), "--tables", "0", "--quiet"])
    assert refused.exit_code == 2 and "no table to simulate" in refused.stderr
    assert not (tmp_path / "e").exists()


def test_generate_keeps_out_as_a_hidden_alias(tmp_path):
    result = runner.invoke(app, ["generate", "--out", str(tmp_path / "d"), "--tables", "1",
                                 "--rounds-per-table", "5", "--bets-per-round", "2", "--quiet"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "d" / "tables.parquet").is_file()
    assert "--out " not in runner.invoke(app, ["generate", "-h"], terminal_width=200).stdout


def test_commands_that_write_a_file_say_where(tmp_path):
    wh = shared_warehouse()
    out = tmp_path / "r.json"
    result = runner.invoke(app, ["replay", "S1-R2", "-w", str(wh.path), "-f", "json", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout == "" and result.stderr == f"replay of round S1-R2 written to {out}\n"
    assert out.stat().st_size > 0
    out = tmp_path / "rounds.csv"
    result = runner.invoke(app, ["query", "-s", "rounds", "-p", "table_id=T1", "-p", f"date={DAY1}",
                                 "-w", str(wh.path), "-f", "csv", "-o", str(out)])
    assert result.exit_code == 0, result.output
    rows = out.read_text().splitlines()
    assert result.stderr == f"{len(rows) - 1} rows written to {out}\n" and len(rows) > 2


def test_the_command_line_starts_without_the_surveillance_detectors():
    """Every command, the audit included, starts by importing the whole command line; the detectors import
    scipy.stats (~1 s of CPU), which only `surveil` needs, and inside its run. `--history-days`' default is
    still the detectors' own window."""
    import subprocess
    import sys

    from engine.surveillance import dealers, equipment

    script = "import sys\nimport pitboss.cli\nprint(sorted({m.split('.')[0] for m in sys.modules} & {'scipy'}), " \
             "sorted(m for m in sys.modules if m.startswith('engine.surveillance.')))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "[] []"
    option = next(p for p in GROUP.get_command(click.Context(GROUP), "surveil").params if p.name == "history_days")
    assert option.default == equipment.HISTORY_DAYS == dealers.DEALER_ACCOUNT_SETTINGS["history_days"] == 30
