"""The scanner's own rules for Python scripts, on the :mod:`ast` of each file: :func:`parse`
and :class:`PythonScan`, called by ``scanner``.

One walk over the tree collects imports and their aliases, simple ``name = value``
assignments and every node's parent (``_index``); the rules then read calls against that:

- names resolve through import aliases, ``getattr(module, "name")`` and ``__import__("os")``,
  and path arguments are approximated as strings (``_values``);
- what a source (decoded or fetched data) and a sink (code execution, processes, file
  writes, what serialises or sends) are is said once (``_flow``); a value is *decoded* or
  *fetched* when a source is found in its expression, or in what a name it uses was assigned
  (followed to a fixed point, three rounds: ``_taint``);
- the rule families: running code (``_execution``), processes (``_processes``), files and
  credentials (``_files``), network use (``_network``), the environment dumped
  (``_environment``), each reporting through ``_findings``; ``_scan`` runs them in order.

Shell spawning (``shell=True``, ``os.system``), deserialisation and TLS checks are bandit's
(``_bandit``); calls bandit cannot resolve (through ``getattr`` or ``__import__``) are flagged
here. A file that does not parse is a finding and goes to the text rules alone.
"""

from skillweave.skills.scan._python._package import PythonPackage
from skillweave.skills.scan._python._scan import PythonScan, parse

__all__ = ["PythonPackage", "PythonScan", "parse"]
