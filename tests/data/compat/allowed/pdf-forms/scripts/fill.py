import sys

print("filled", " ".join(sys.argv[1:]))
