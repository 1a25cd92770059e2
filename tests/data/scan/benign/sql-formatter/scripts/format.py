import sys

import sqlparse

text = open(sys.argv[1], encoding="utf-8").read()
print(sqlparse.format(text, reindent=True, keyword_case="upper"))
