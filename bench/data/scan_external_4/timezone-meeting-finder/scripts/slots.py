#!/usr/bin/env python3
import sys
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

zones = [ZoneInfo(z) for z in (sys.argv[1] if len(sys.argv) > 1 else "UTC").split(",")]
length = timedelta(minutes=int(sys.argv[2]) if len(sys.argv) > 2 else 60)
start = datetime.now(timezone.utc).replace(minute=0, second=0, microsecond=0)
for h in range(7 * 24):
    t = start + timedelta(hours=h)
    if all(9 <= t.astimezone(z).hour and (t + length).astimezone(z).hour <= 18 and t.astimezone(z).weekday() < 5 for z in zones):
        print(t.isoformat(), " | ".join(f"{z.key}: {t.astimezone(z):%a %H:%M}" for z in zones))
