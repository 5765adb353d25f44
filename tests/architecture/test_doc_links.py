"""Every relative link in the README and docs/ resolves: the file exists and, for a Markdown
file, the #anchor is one of its headings (GitHub's anchor rules: lower case, punctuation
dropped, spaces to hyphens, a repeated heading numbered -1, -2, ...)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_anchor(heading: str) -> str:
    """GitHub's anchor for a heading's text (code spans and link targets already removed)."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    seen: dict[str, int] = {}
    in_code = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_code = not in_code
        match = None if in_code else re.match(r"^#{1,6}\s+(.*)$", line)
        if match:
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", match.group(1).replace("`", ""))
            anchor = heading_anchor(text)
            count = seen.get(anchor, 0)
            found.add(anchor if count == 0 else f"{anchor}-{count}")
            seen[anchor] = count + 1
    return found


def broken_links(doc: Path) -> list[str]:
    """Each relative link of ``doc`` that does not resolve, with why."""
    broken = []
    for target in LINK.findall(doc.read_text(encoding="utf-8")):
        if re.match(r"^[a-z]+:", target):  # https:, mailto: ...
            continue
        path, _, fragment = target.partition("#")
        dest = (doc.parent / path).resolve() if path else doc
        if not dest.exists():
            broken.append(f"{target}: no such file")
        elif fragment and dest.suffix == ".md" and fragment not in anchors(dest):
            broken.append(f"{target}: no heading with that anchor in {dest.name}")
    return broken


def test_anchor_rules():
    assert heading_anchor("The warm start with a regret prior toward σ0") == \
        "the-warm-start-with-a-regret-prior-toward-σ0"
    assert heading_anchor("Limit Leduc's stronger-search target: below the exact-leaf level") == \
        "limit-leducs-stronger-search-target-below-the-exact-leaf-level"
    assert heading_anchor("How exact: values to 0.03 chips") == "how-exact-values-to-003-chips"


def test_a_broken_link_is_found(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("# Top\n\n## Twice\n\n## Twice\n\n```\n# not a heading\n```\n\n"
                   "[a](#top) [b](#twice-1) [c](#nowhere) [d](missing.md) [e](#not-a-heading) [f](https://x.org/#y)\n")
    assert broken_links(doc) == ["#nowhere: no heading with that anchor in doc.md", "missing.md: no such file",
                                 "#not-a-heading: no heading with that anchor in doc.md"]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(doc):
    assert broken_links(doc) == []
