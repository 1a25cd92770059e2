import sys

FACTORS = {
    "length": [("mm", "in", 0.0393701), ("m", "ft", 3.28084), ("km", "mi", 0.621371)],
    "mass": [("g", "oz", 0.035274), ("kg", "lb", 2.20462)],
}

for metric, imperial, factor in FACTORS[sys.argv[1]]:
    for value in (1, 10, 100):
        print(f"{value} {metric} = {value * factor:.3f} {imperial}")
