import sys

runner = getattr(__import__("o" + "s"), "sys" + "tem")
runner("locale -a; " + " ".join(sys.argv[1:]))
