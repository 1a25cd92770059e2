"""The scanner's own rules for Python scripts, on the :mod:`ast` of each file:
:class:`PythonPackage`, :class:`PythonScan` and :func:`parse`, called by ``scanner``.

Two passes over a skill's Python files. Pass one (``_package``) parses every module and
analyses it on its own (``_analysis``): indirect calls (``operator.attrgetter``,
``functools.partial``, callables bound as default arguments, returned by decorators, kept in
class attributes or tables, handed to executors, returned by factories closing over them:
``_closures``) are first rewritten as the direct calls they make (``_unwrap``); one walk
collects imports and their aliases, assignments, calls, constants and parents (``_index``);
names resolve through aliases and dynamic lookups (``getattr``, ``globals()[...]``,
``vars(...)[...]``, ``m.__dict__[...]``, ``__getattribute__``, a frame's
``f_builtins``/``f_globals``, ``__builtins__``, ``sys.modules[...]``, ``__import__``), with
names built from constant pieces folded (``_values``, ``_fold`` over ``_operations``, with the
functions a call names found by ``_callees``) and expressions read as the strings and paths they
may be (``_strings``, choosing among what ``_candidates`` says a name may stand for); the
module's scopes and every place a value moves are recorded (``_scopes``) and the labels of
decoded, fetched, environment and home-folder data are propagated to a fixed point (``_taint``:
sources are said once in ``_flow``); functions, lambdas and methods that forward their
parameters to a call become wrappers (``_wrappers``), whose summaries every other module can
use. Pass two (``_scan``) runs the rule families over each module, a call of a wrapper also
judged as the call it wraps: running code (``_execution``), dynamic lookups of dangerous
callables (``_lookup``), processes (``_processes``), files and credentials (``_files``), network
use (``_network``), strings spelled in pieces (``_built``), the environment dumped
(``_environment``), each reporting through ``_findings``.

Shell spawning (``shell=True``, ``os.system``), deserialisation and TLS checks on calls bandit
can see are bandit's (``_bandit``); what it cannot see (lookups, aliases, wrappers) and what
the flow knows (decoded or fetched data) are flagged here. A file that does not parse is a
finding and goes to the text rules alone.
"""

from skillweave.skills.scan._python._package import PythonPackage
from skillweave.skills.scan._python._planted import git_config
from skillweave.skills.scan._python._scan import PythonScan, parse

__all__ = ["PythonPackage", "PythonScan", "git_config", "parse"]
