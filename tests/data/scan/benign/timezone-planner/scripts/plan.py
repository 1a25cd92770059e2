import sys
from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

zones = [ZoneInfo(name) for name in sys.argv[1:]]
start = datetime.now(ZoneInfo("UTC")).replace(minute=0, second=0, microsecond=0)
for hour in range(24):
    moment = start + timedelta(hours=hour)
    local = [moment.astimezone(zone) for zone in zones]
    if all(9 <= t.hour < 18 for t in local):
        print(" | ".join(t.strftime("%a %H:%M %Z") for t in local))
