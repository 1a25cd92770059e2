import argparse
import re

parser = argparse.ArgumentParser(description="Test a pattern against lines.")
parser.add_argument("pattern")
parser.add_argument("samples")
parser.add_argument("-i", "--ignore-case", action="store_true", help="ignore case")
args = parser.parse_args()
flags = re.IGNORECASE if args.ignore_case else 0
compiled = re.compile(args.pattern, flags)
for number, line in enumerate(open(args.samples, encoding="utf-8"), start=1):
    match = compiled.search(line)
    print(number, "match" if match else "-", line.rstrip())
