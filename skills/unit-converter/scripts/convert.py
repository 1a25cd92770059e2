#!/usr/bin/env python3
"""Convert a value between units of length, mass, temperature, data size and time.

Usage:
    python3 convert.py --help-json
    python3 convert.py --run-json '{"value": 1, "from_unit": "km", "to_unit": "m"}'
    python3 convert.py VALUE FROM_UNIT TO_UNIT        (plain command line, prints the result)

Conversions use exact rational factors (fractions.Fraction), so 1 km is exactly 1000 m and
1 KiB exactly 1024 B; the result is rounded only for display. Standard library only.
"""

from __future__ import annotations

import json
import math
import sys
from decimal import Decimal
from fractions import Fraction

TOOL_NAME = "convert_units"
DEFAULT_PRECISION = 10

F = Fraction
INCH = F("0.0254")
POUND = F("0.45359237")

# Linear units: factor to the dimension's base unit (m, kg, B, s).
LINEAR: dict[str, dict[str, Fraction]] = {
    "length": {
        "nm": F(1, 10**9),
        "um": F(1, 10**6),
        "mm": F(1, 1000),
        "cm": F(1, 100),
        "m": F(1),
        "km": F(1000),
        "in": INCH,
        "ft": 12 * INCH,
        "yd": 36 * INCH,
        "mi": 63360 * INCH,
        "nmi": F(1852),
    },
    "mass": {
        "ug": F(1, 10**9),
        "mg": F(1, 10**6),
        "g": F(1, 1000),
        "kg": F(1),
        "t": F(1000),
        "oz": POUND / 16,
        "lb": POUND,
        "st": 14 * POUND,
    },
    "data": {
        "bit": F(1, 8),
        "B": F(1),
        "kB": F(10**3),
        "MB": F(10**6),
        "GB": F(10**9),
        "TB": F(10**12),
        "PB": F(10**15),
        "KiB": F(2**10),
        "MiB": F(2**20),
        "GiB": F(2**30),
        "TiB": F(2**40),
        "PiB": F(2**50),
    },
    "time": {
        "ns": F(1, 10**9),
        "us": F(1, 10**6),
        "ms": F(1, 1000),
        "s": F(1),
        "min": F(60),
        "h": F(3600),
        "d": F(86400),
        "wk": F(604800),
    },
}
TEMPERATURE = ("C", "F", "K")
ABSOLUTE_ZERO_K = Fraction(0)

DIMENSION: dict[str, str] = {u: dim for dim, units in LINEAR.items() for u in units}
DIMENSION.update(dict.fromkeys(TEMPERATURE, "temperature"))
UNITS = list(DIMENSION)

UNIT_HELP = (
    "length: nm um mm cm m km in ft yd mi nmi; mass: ug mg g kg t oz lb st; "
    "temperature: C F K; data: bit B kB MB GB TB PB KiB MiB GiB TiB PiB (kB/MB = 1000-based, "
    "KiB/MiB = 1024-based); time: ns us ms s min h d wk"
)

HELP_JSON = {
    "name": TOOL_NAME,
    "description": (
        "Convert a number between units of the same dimension: length (metres, kilometres, "
        "inches, feet, miles), mass (grams, kilograms, pounds, ounces), temperature (Celsius, "
        "Fahrenheit, Kelvin), data size (bytes, kB/MB decimal, KiB/MiB binary) and time "
        "(seconds, minutes, hours, days). Exact factors. Units: " + UNIT_HELP
    ),
    "input_schema": {
        "type": "object",
        "properties": {
            "value": {"type": "number", "description": "The quantity to convert"},
            "from_unit": {"type": "string", "enum": UNITS, "description": "Unit of value"},
            "to_unit": {
                "type": "string",
                "enum": UNITS,
                "description": "Target unit (same dimension as from_unit)",
            },
            "precision": {
                "type": "integer",
                "minimum": 1,
                "maximum": 17,
                "default": DEFAULT_PRECISION,
                "description": "Significant digits in 'formatted' (value is not rounded)",
            },
        },
        "required": ["value", "from_unit", "to_unit"],
        "additionalProperties": False,
    },
}


class ConversionError(Exception):
    """Arguments that cannot be converted."""


def to_kelvin(value: Fraction, unit: str) -> Fraction:
    if unit == "C":
        return value + F("273.15")
    if unit == "F":
        return (value - 32) * F(5, 9) + F("273.15")
    return value


def from_kelvin(kelvin: Fraction, unit: str) -> Fraction:
    if unit == "C":
        return kelvin - F("273.15")
    if unit == "F":
        return (kelvin - F("273.15")) * F(9, 5) + 32
    return kelvin


def convert(value: Fraction, from_unit: str, to_unit: str) -> tuple[Fraction, str]:
    for unit in (from_unit, to_unit):
        if unit not in DIMENSION:
            raise ConversionError(f"unknown unit {unit!r}; known units: {UNIT_HELP}")
    dim_from, dim_to = DIMENSION[from_unit], DIMENSION[to_unit]
    if dim_from != dim_to:
        raise ConversionError(
            f"cannot convert {dim_from} ({from_unit}) to {dim_to} ({to_unit}): "
            "units must measure the same dimension"
        )
    if dim_from == "temperature":
        kelvin = to_kelvin(value, from_unit)
        if kelvin < ABSOLUTE_ZERO_K:
            raise ConversionError(f"{format_number(value, 10)} {from_unit} is below absolute zero")
        return from_kelvin(kelvin, to_unit), dim_from
    factors = LINEAR[dim_from]
    return value * factors[from_unit] / factors[to_unit], dim_from


def format_number(x: Fraction, digits: int) -> str:
    """`digits` significant digits, plain notation for everyday magnitudes, no trailing zeros."""
    if x == 0:
        return "0"
    magnitude = abs(x)
    if F(1, 10**6) <= magnitude < 10**15:
        exponent = math.floor(math.log10(magnitude))
        # Correct a log10 off-by-one at exact powers of ten.
        if F(10) ** exponent > magnitude:
            exponent -= 1
        elif F(10) ** (exponent + 1) <= magnitude:
            exponent += 1
        places = max(digits - 1 - exponent, 0)
        quantum = Decimal(1).scaleb(-places)
        d = (Decimal(x.numerator) / Decimal(x.denominator)).quantize(quantum)
        text = f"{d:f}"
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return "0" if text in {"-0", ""} else text
    return f"{float(x):.{digits}g}"


def as_json_number(x: Fraction) -> int | float:
    if x.denominator == 1 and abs(x) < 2**53:
        return int(x)
    return float(x)


def parse_args(args: object) -> tuple[Fraction, str, str, int]:
    if not isinstance(args, dict):
        raise ConversionError("arguments must be a JSON object")
    unknown = sorted(set(args) - set(HELP_JSON["input_schema"]["properties"]))  # type: ignore[index]
    if unknown:
        raise ConversionError(f"unknown argument(s): {', '.join(unknown)}")
    missing = [k for k in ("value", "from_unit", "to_unit") if k not in args]
    if missing:
        raise ConversionError(f"missing required argument(s): {', '.join(missing)}")
    value = args["value"]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConversionError("'value' must be a number")
    if isinstance(value, float) and not math.isfinite(value):
        raise ConversionError("'value' must be finite")
    for key in ("from_unit", "to_unit"):
        if not isinstance(args[key], str):
            raise ConversionError(f"'{key}' must be a string")
    precision = args.get("precision", DEFAULT_PRECISION)
    if isinstance(precision, bool) or not isinstance(precision, int) or not 1 <= precision <= 17:
        raise ConversionError("'precision' must be an integer between 1 and 17")
    # repr() gives the shortest decimal that round-trips, so 0.1 becomes exactly 1/10.
    exact = Fraction(value) if isinstance(value, int) else Fraction(repr(value))
    return exact, args["from_unit"], args["to_unit"], precision


def run(args: object) -> dict[str, object]:
    value, from_unit, to_unit, precision = parse_args(args)
    result, dimension = convert(value, from_unit, to_unit)
    return {
        "value": as_json_number(result),
        "unit": to_unit,
        "formatted": f"{format_number(result, precision)} {to_unit}",
        "dimension": dimension,
        "input": f"{format_number(value, 17)} {from_unit}",
    }


def main(argv: list[str]) -> int:
    if argv[:1] == ["--help-json"]:
        print(json.dumps(HELP_JSON))
        return 0
    if argv[:1] == ["--run-json"]:
        if len(argv) != 2:
            print(json.dumps({"error": "--run-json takes exactly one JSON argument"}))
            return 2
        try:
            args = json.loads(argv[1])
        except json.JSONDecodeError as exc:
            print(json.dumps({"error": f"arguments are not valid JSON: {exc.msg}"}))
            return 2
        try:
            print(json.dumps(run(args)))
        except ConversionError as exc:
            print(json.dumps({"error": str(exc)}))
            return 2
        return 0
    if len(argv) == 3:
        try:
            number = float(argv[0])
            value: int | float = int(argv[0]) if argv[0].lstrip("+-").isdigit() else number
            print(run({"value": value, "from_unit": argv[1], "to_unit": argv[2]})["formatted"])
        except ValueError:
            print(f"convert.py: error: not a number: {argv[0]!r}", file=sys.stderr)
            return 2
        except ConversionError as exc:
            print(f"convert.py: error: {exc}", file=sys.stderr)
            return 2
        return 0
    print(
        "usage: convert.py VALUE FROM_UNIT TO_UNIT | --help-json | --run-json JSON\n"
        f"units: {UNIT_HELP}",
        file=sys.stderr,
    )
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
