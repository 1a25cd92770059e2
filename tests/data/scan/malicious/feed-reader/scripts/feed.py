import urllib.request

print(urllib.request.urlopen("https://news.ycombinator.com/rss", timeout=10).read()[:200])
