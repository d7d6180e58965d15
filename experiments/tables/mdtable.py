"""Reading and writing the Markdown tables the study generators share.

Standard library only. A generator reads the tables and JSON a command wrote
(`aware validate`, `aware reproduce`, a study script) and writes a Markdown file
beside that data; tests/results/check_tables.py runs every generator again and
compares its output with the committed file to the byte.
"""
import argparse
import os


def repo_root():
    """The repository this file is in (experiments/tables/ is two levels down)."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def read_table(path, first_column=None):
    """The first pipe table in a Markdown file (or the first whose header starts
    with first_column) as a list of dicts, header cell -> cell text (stripped)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("|") or i + 1 >= len(lines) or not lines[i + 1].startswith("|---"):
            continue
        header = [c.strip() for c in line.strip().strip("|").split("|")]
        if first_column is not None and header[0] != first_column:
            continue
        rows = []
        for body in lines[i + 2:]:
            if not body.startswith("|"):
                break
            cells = [c.strip() for c in body.strip().strip("|").split("|")]
            rows.append(dict(zip(header, cells)))
        return rows
    raise ValueError(f"{path}: no Markdown table" + (f" starting with '{first_column}'" if first_column else ""))


def find_row(rows, path, **match):
    """The one row whose cells equal every key=value given; an error naming the file if none."""
    found = [r for r in rows if all(r.get(k.replace("_", " ")) == v for k, v in match.items())]
    if len(found) != 1:
        raise ValueError(f"{path}: {len(found)} rows match {match}, expected 1")
    return found[0]


def table(header, rows, right=()):
    """A Markdown table: header cells, rows of cells; columns in `right` right-aligned."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---:" if i in right else "---" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out)


def main(generate, default_out, doc):
    """Command line shared by the generators: [--root ROOT] [-o OUT]. `generate(root)`
    returns the file's text; it is written to OUT (default: default_out under ROOT)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=repo_root(), help="repository root whose committed data is read")
    parser.add_argument("-o", "--out", help=f"output file (default ROOT/{default_out})")
    args = parser.parse_args()
    text = generate(args.root)
    out = args.out or os.path.join(args.root, default_out)
    with open(out, "w", encoding="utf-8") as f:
        f.write(text)
