"""Every relative link of the README and of docs/ resolves: its file exists and, where it names a heading
(`page.md#anchor`), the page has that heading under GitHub's anchor rules. Links to the web are not
followed (no network in the tests)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").rglob("*.md")])

FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
INLINE_CODE = re.compile(r"`[^`\n]*`")
LINK = re.compile(r"\[[^\]\n]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)


def prose(text: str) -> str:
    """The text a reader sees as Markdown: code blocks and code spans hold no links."""
    return INLINE_CODE.sub("", FENCE.sub("", text))


def anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped (hyphens and underscores kept),
    each space a hyphen; code spans keep their text."""
    text = heading.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for heading in HEADING.findall(FENCE.sub("", page.read_text(encoding="utf-8"))):
        slug = anchor(heading)
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def relative_links(page: Path) -> list[str]:
    return [t for t in LINK.findall(prose(page.read_text(encoding="utf-8"))) if not re.match(r"[a-z]+:", t)]


def broken(page: Path) -> list[str]:
    problems = []
    for target in relative_links(page):
        path, _, fragment = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        if not dest.exists():
            problems.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            problems.append(f"{target}: no heading #{fragment} in {dest.name}")
    return problems


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(page):
    assert broken(page) == []


def test_the_readme_links_every_page_of_docs():
    """A page of docs/ no one links to is a page no newcomer finds: each is linked from the README or
    from a page the README links."""
    readme = ROOT / "README.md"
    reached, todo = {readme}, [readme]
    while todo:
        page = todo.pop()
        for target in relative_links(page):
            dest = (page.parent / target.partition("#")[0]).resolve()
            if dest.suffix == ".md" and dest.exists() and dest not in reached:
                reached.add(dest)
                todo.append(dest)
    assert sorted(str(p.relative_to(ROOT)) for p in PAGES if p not in reached) == []


def test_the_checker_finds_a_broken_file_and_a_broken_anchor(tmp_path):
    page = tmp_path / "a.md"
    (tmp_path / "b.md").write_text("# The `pitboss demo --surveillance` page: § one\n")
    page.write_text(
        "[ok](b.md#the-pitboss-demo---surveillance-page--one) [gone](c.md) [bad](b.md#nope) "
        "`[in code](c.md)` [web](https://example.com/x)\n```\n[fenced](c.md)\n```\n"
    )
    assert [p.split(":")[0] for p in broken(page)] == ["c.md", "b.md#nope"]


def test_the_readme_stays_short_and_keeps_ci_test_command():
    """Issue 45: a README a newcomer reads to the end (about 150 lines); .ci/run runs its `make test`."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 150
    assert "make test" in text
