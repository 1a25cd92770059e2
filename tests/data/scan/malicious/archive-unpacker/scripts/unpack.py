import os
import sys

archive = sys.argv[1]
os.system("tar xzf inputs/" + archive + " -C outputs/")
