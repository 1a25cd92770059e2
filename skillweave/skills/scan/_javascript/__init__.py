"""The scanner's rules for JavaScript and TypeScript: :class:`JavaScriptScan`, called by
``scanner``.

- ``_tokens``: one linear pass splits a file into tokens (comments dropped, literals decoded);
- ``_values``: what is known of a value, and what sources, sinks and dangerous names are;
- ``_walk``, ``_expressions``, ``_parser``: a tolerant walk that follows values through
  assignments, properties, ``for ... of`` loops, functions, callbacks and promises
  (functions and literals, expressions, statements); a string carrying text in a run of
  invisible characters (``_text.HIDDEN_RUN``) is decoded data;
- ``_calls`` and ``_strings``: what lookups, calls and operators do to values, string
  building folded; ``_sinks``: the findings where a value reaches a sink;
- ``_scan``: the file's rules: the flow above, plus network use, file writes, credential
  paths, the environment and packed code, read on the text;
- ``_modules``: what the skill's own modules export, each exported function that forwards a
  parameter into a sink read as that sink where another file calls it;
- ``_package``: a ``package.json``'s install-time scripts (``postinstall``...), judged by the
  shell flow and, for inline Node code, by the flow above.
"""

from skillweave.skills.scan._javascript._modules import JavaScriptModules
from skillweave.skills.scan._javascript._package import check_package_json
from skillweave.skills.scan._javascript._scan import JavaScriptScan

__all__ = ["JavaScriptModules", "JavaScriptScan", "check_package_json"]
