#!/usr/bin/env python3
"""CSV subcommands dispatched with getattr(self, 'cmd_' + name)."""
import csv
import itertools
import sys


class CsvTool:
    def __init__(self, path):
        self.path = path

    def rows(self):
        with open(self.path, newline="", encoding="utf-8") as fh:
            yield from csv.reader(fh)

    def cmd_head(self, n="10"):
        for row in itertools.islice(self.rows(), int(n) + 1):
            print(",".join(row))

    def cmd_count(self):
        print(sum(1 for _ in self.rows()) - 1)

    def cmd_select(self, cols):
        it = self.rows()
        header = next(it)
        idx = [header.index(c) for c in cols.split(",")]
        for row in itertools.chain([header], it):
            print(",".join(row[i] for i in idx))

    def dispatch(self, name, *args):
        handler = getattr(self, f"cmd_{name}", None)
        if handler is None:
            sys.exit(f"unknown command {name!r}; try head, count, select")
        handler(*args)


if __name__ == "__main__":
    cmd, path, *rest = sys.argv[1:]
    CsvTool(path).dispatch(cmd, *rest)
