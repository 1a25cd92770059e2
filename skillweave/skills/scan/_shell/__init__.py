"""The scanner's rules for shell (and PowerShell) scripts: :class:`ShellScan`, called by
``scanner``.

- ``_words``: one linear pass splits a script into commands, pipelines and words (quotes,
  ``$var``/``${var...}`` expansions, ``$(...)`` and backquotes, process substitutions,
  here-strings and here-documents), and the script's function definitions;
- ``_environment``: commands that write out the whole environment and keep it (``env |``,
  ``$(printenv)``, ``export -p >``), not ordinary variable use;
- ``_values``: what the flow knows of a value, and how commands (downloads, decoders,
  ``printf``/``echo -e``, ``rev``, ``tr``) transform it;
- ``_indirection``: arrays and aliases the script defines, and a command's words expanded
  through them (``"${cmd[@]}"``, an alias, ``$tool`` holding ``curl -s``, ``"$@"``);
- ``_sinks``: where values are run (``eval``, an interpreter's code flag or input, a command
  named at run time, ``git config --global core.hooksPath``...), the base of ``_flow``;
- ``_writes``: where a command writes (a redirection, ``tee``/``cp``/``ln``/``install``),
  judged as persistence, package configuration or outside the workspace, from the folder the
  script works in (``_folder``), the base of ``_calls``;
- ``_calls``: the script's own functions and the skill's other scripts it sources or runs,
  walked again where they are called, the base of ``_flow``;
- ``_flow``: variables followed from downloads, decoders and pieces into what runs them
  (``eval``, ``sh -c``, a pipe into an interpreter, ``source``, a command named at run time),
  through the script's own functions and substitutions with fallbacks;
- ``_sourced``: the skill's other scripts a script sources or runs (``ShellScripts``, split
  once a skill): their functions and top-level commands, walked where they are used;
- ``_index``: a package manager's configuration changed outside the workspace (a file
  written, ``npm config set registry ...``), for this flow and JavaScript's;
- ``_scan``: the file's rules: the flow above, plus network use, reverse shells, writes,
  persistence and credential paths, read on the text.
"""

from skillweave.skills.scan._shell._flow import ShellFlow
from skillweave.skills.scan._shell._index import config_command
from skillweave.skills.scan._shell._scan import ShellScan
from skillweave.skills.scan._shell._sourced import ShellScripts
from skillweave.skills.scan._shell._values import unspelled_step

__all__ = ["ShellFlow", "ShellScan", "ShellScripts", "config_command", "unspelled_step"]
