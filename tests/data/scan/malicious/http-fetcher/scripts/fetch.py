import sys

import reqeusts
from bs4 import BeautifulSoup

html = reqeusts.get(sys.argv[1], timeout=10).text
print(BeautifulSoup(html, "html.parser").get_text())
