#!/usr/bin/env python3
"""One-off: split the `## ` sections of README.md into the mdBook pages under docs/src/.

Every section goes to exactly one page (the script fails on a section it does not know), headings move
up one level, and in-README anchor links become relative links to the page holding the anchor.
Prints the README preamble (before the first `## `) length; the preamble is left to the new README.
"""
import os, re, sys

PAGES = {
    "Project layout it reads": "concepts/layout.md",
    "Commands": "reference/command-table.md",
    "Start a project": "guide/start-a-project.md",
    "Ten minutes after `make demo`": "guide/ten-minutes.md",
    "CI gate": "guide/ci-gate.md",
    "Execution plans": "guide/plans.md",
    "Deploy": "guide/deploy.md",
    "Deploy to Apache Flink (SQL Gateway)": "guide/gateway.md",
    "Confluent Cloud operations": "guide/confluent-cloud.md",
    "Unit tests": "guide/unit-tests.md",
    "Integration tests": "guide/integration-tests.md",
    "Blue-green versioning": "guide/blue-green.md",
    "Blue-green runbook": "guide/blue-green-runbook.md",
    "Data tests on live tables": "guide/live-tests.md",
    "Look at the data": "guide/look-at-the-data.md",
    "Column lineage": "guide/column-lineage.md",
    "Statefulness": "concepts/statefulness.md",
    "Upgrades that keep state": "guide/upgrades.md",
    "Code map": "architecture.md",
    "Cache": "concepts/cache.md",
    "Limits, special files, interrupted writes": "concepts/limits.md",
    "Benchmarks": "benchmarks.md",
}


def slug(title):
    s = title.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def main(readme, out):
    lines = open(readme, encoding="utf-8").read().split("\n")
    sections, preamble, cur = [], [], None
    fence = False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        if not fence and line.startswith("## "):
            cur = [line[3:].strip(), []]
            sections.append(cur)
        (cur[1] if cur else preamble).append(line)
    anchor_page = {}
    for title, body in sections:
        page = PAGES[title]  # KeyError: a section nobody placed
        fence = False
        for line in body:
            if line.startswith("```"):
                fence = not fence
            m = re.match(r"^(#{2,6}) (.*)$", line)
            if m and not fence:
                a = slug(m.group(2))
                assert a not in anchor_page, f"duplicate anchor {a}"
                anchor_page[a] = (page, len(m.group(1)) == 2)
    missing = set(PAGES) - {t for t, _ in sections}
    assert not missing, f"no such section: {missing}"

    def relink(text, page):
        here = os.path.dirname(page)

        def sub(m):
            a = m.group(1)
            target, top = anchor_page[a]
            if target == page:
                return f"](#{a})"
            rel = os.path.relpath(target, here or ".")
            return f"]({rel})" if top else f"]({rel}#{a})"

        return re.sub(r"\]\(#([^)]+)\)", sub, text)

    for title, body in sections:
        page = PAGES[title]
        out_lines, fence = [], False
        for line in body:
            if line.startswith("```"):
                fence = not fence
            if not fence and re.match(r"^#{2,6} ", line):
                line = line[1:]
            out_lines.append(line)
        text = "\n".join(out_lines).rstrip("\n") + "\n"
        path = os.path.join(out, page)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        open(path, "w", encoding="utf-8").write(relink(text, page))
    pre = "\n".join(preamble)
    print(len(pre.encode()), "bytes of preamble", file=sys.stderr)
    # The README's own anchor links, for reference: README -> docs/src/<page>.
    for a, (p, top) in sorted(anchor_page.items()):
        pass


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
