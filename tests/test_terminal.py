"""`terminal_safe` and `terminal_safe_json`: every class of terminal escape is shown, never
sent; text a person reads (newlines, tabs, any script, emoji) is unchanged."""

from __future__ import annotations

import io
import json
import sys
import unicodedata

import pytest
from rich.console import Console
from rich.text import Text

from skillweave.terminal import terminal_safe, terminal_safe_json

# The classes of sequences a hostile script or model writes, and how each must be shown.
HOSTILE: dict[str, tuple[str, str]] = {
    "clear the screen (CSI)": ("\x1b[2J\x1b[3J", "\\x1b[2J\\x1b[3J"),
    "move the cursor (CSI)": ("\x1b[10;5H\x1b[1A", "\\x1b[10;5H\\x1b[1A"),
    "recolour (SGR)": ("\x1b[31mred\x1b[0m", "\\x1b[31mred\\x1b[0m"),
    "set the clipboard (OSC 52)": ("\x1b]52;c;cm0gLXJmIH4=\x07", "\\x1b]52;c;cm0gLXJmIH4=\\x07"),
    "plant a hyperlink (OSC 8)": (
        "\x1b]8;;https://evil.example/\x1b\\safe link\x1b]8;;\x1b\\",
        "\\x1b]8;;https://evil.example/\\x1b\\safe link\\x1b]8;;\\x1b\\",
    ),
    "retitle the window (OSC 0)": ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
    "CSI as one C1 control": ("\x9b2J", "\\x9b2J"),
    "OSC as one C1 control": ("\x9d52;c;eA==\x9c", "\\x9d52;c;eA==\\x9c"),
    "right-to-left override": ("txt.\u202eexe", "txt.\\u202eexe"),
    "bidi isolates and marks": (
        "a\u2066b\u2067c\u2068d\u2069e\u200ef\u200fg\u061ch",
        "a\\u2066b\\u2067c\\u2068d\\u2069e\\u200ef\\u200fg\\u061ch",
    ),
    "bidi embeddings": ("\u202a\u202b\u202c\u202d", "\\u202a\\u202b\\u202c\\u202d"),
    "invisible tag characters": ("hi\U000e0041\U000e0042", "hi\\U000e0041\\U000e0042"),
    "zero-width space and BOM": ("a\u200bb\ufeff", "a\\u200bb\\ufeff"),
    "a lone CR overwrites the line": ("rm -rf /\rls", "rm -rf /\\rls"),
    "backspace, bell, NUL, DEL": ("ab\x08\x07\x00\x7f", "ab\\x08\\x07\\x00\\x7f"),
    "vertical tab, form feed": ("a\x0bb\x0cc", "a\\x0bb\\x0cc"),
    "line and paragraph separators": ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),
    "a lone surrogate (surrogateescape)": ("bad \udcff byte", "bad \\udcff byte"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_each_class_of_control_is_shown_as_its_escape(case: str) -> None:
    raw, shown = HOSTILE[case]
    assert terminal_safe(raw) == shown
    assert terminal_safe(shown) == shown  # already safe: unchanged


def test_newlines_and_tabs_are_kept_and_crlf_is_a_newline() -> None:
    assert terminal_safe("a\tb\nc\n\n") == "a\tb\nc\n\n"
    assert terminal_safe("windows\r\nlines\r\n") == "windows\nlines\n"
    assert terminal_safe("\r\r\n") == "\\r\n"


def test_printable_text_in_any_script_is_unchanged() -> None:
    text = (
        "plain ASCII ~!@#$%^&*()_+{}|:\"<>?`-=[]\\;',./\n"
        "accents: héllo, naïve, e\u0301 (combining), ß, Ω\n"
        "scripts: 中文, 日本語, 한국어, العربية, עברית, हिन्दी, فارسی\u200cها\n"
        "emoji: 👩\u200d💻 ❤\ufe0f 🇫🇷 ✓ → …\n"
        "no-break space:\u00a0x, private use:\ue000\n"
    )
    assert terminal_safe(text) == text


def test_rich_markup_and_emoji_codes_stay_literal_the_way_the_cli_prints() -> None:
    # The CLI prints attacker text as Text(terminal_safe(...)): never markup, never emoji codes.
    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system=None, width=200)
    console.print(Text(terminal_safe("[red]x[/red] [link=https://e.example]y[/link] :smile:")))
    assert buffer.getvalue() == "[red]x[/red] [link=https://e.example]y[/link] :smile:\n"


def test_no_character_the_rule_forbids_survives_across_all_of_unicode() -> None:
    everything = "".join(chr(code) for code in range(sys.maxunicode + 1))
    shown = terminal_safe(everything)
    left = {
        char
        for char in shown
        if unicodedata.category(char) in ("Cc", "Cf", "Cs", "Zl", "Zp")
        and char not in "\t\n\u200c\u200d"
    }
    assert left == set()
    # Each escape is the one `repr` writes, so a reader can tell exactly what was there.
    for code in (0x00, 0x07, 0x0D, 0x1B, 0x7F, 0x85, 0x9B, 0xAD, 0x202E, 0xFEFF, 0xE0001):
        assert terminal_safe(chr(code)) == repr(chr(code))[1:-1]


def test_json_keeps_every_value_and_escapes_what_a_terminal_would_act_on() -> None:
    hostile = "".join(raw for raw, _ in HOSTILE.values()) + "\r\n中文 👩\u200d💻"
    data = {"stdout": hostile, "nested": [hostile], hostile: 1}
    for encoded in (
        json.dumps(data, ensure_ascii=False),
        json.dumps(data, ensure_ascii=False, indent=2),
    ):
        safe = terminal_safe_json(encoded)
        assert json.loads(safe) == data
        raw = {c for c in safe if unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")}
        assert raw <= {"\n", "\u200d"}  # indentation, and the joiner inside an emoji
        assert "\\u009b" in safe
        assert "\\u202e" in safe
        assert "\\udb40\\udc41" in safe  # a tag character, as a JSON surrogate pair
        assert "中文 👩\u200d💻" in safe  # readable text stays readable


def test_json_encoders_alone_let_c1_and_bidi_through() -> None:
    # Why terminal_safe_json exists: ensure_ascii=False escapes C0 but not C1, DEL or bidi.
    encoded = json.dumps({"x": "\x1b\x9b\x7f\u202e"}, ensure_ascii=False)
    assert "\\u001b" in encoded
    assert "\x9b" in encoded
    assert "\u202e" in encoded
    assert "\x9b" not in terminal_safe_json(encoded)
