"""The key layout of the artifact store: the one module that knows where things live.

Every key skillweave stores is built here, and every component is validated before it is
joined, so a run id, a skill name or a user-supplied path can never climb out of its place::

    skills/{name}/{version}.zip                            a published skill package
    skills/{name}/{version}.sig.json                       its signature (skills.signing)
    runs/{run_id}/run.json                                 a run started over the API
    runs/{run_id}/inputs/{path}                            a file uploaded for a run
    runs/{run_id}/executions/{digest}/outputs/{path}       a file a script wrote under outputs/
    runs/{run_id}/executions/{digest}/{stdout|stderr}.txt  full output when over the cap
    runs/{run_id}/transcript                               the transcript: a record log
    runs/{run_id}/transcript/{seq:08d}.json                one record of it, as an object
    evals/{skill}/{batch_id}/batch.json                    an eval batch: what it runs
    evals/{skill}/{batch_id}/jobs/{job}.json               one graded eval job (its finish mark)
    evals/{skill}/{batch_id}/report.{json|md|html}         the batch's report
    executions/{sha256}.json                               the stored result of an execution
    executions/{sha256}.claim                              the claim marker of an execution
    environments/{skill}/{version}/{runtime}/{platform}.tar.gz   a version's dependencies, built
    environments/{skill}/{version}/{runtime}/{platform}.log      the log of its last build
    environments/{skill}/{version}/{runtime}/{platform}.claim    the claim of its one builder
    environments/{skill}/{version}/{runtime}/{platform}.failed   why its last build failed
    payloads/{sha256}.bin                                  a Temporal payload over the size cap
    catalog/skills/{name}.json                             an uploaded skill: versions, enabled
    catalog/skills.generation.json                         rewritten by every change of those
    catalog/agents/{agent_id}.json                         an agent made over the API
    audit/chains/{writer}/{seq:012d}.jsonl                 a block of one writer's audit chain
    audit/checkpoints/{n:012d}.json                        a checkpoint of the audit log

`digest` is the first 32 hex digits of sha256(execution_id): execution ids (a run's are
``skillweave-run-{run}/script-{seq}``) contain ``/``, so they are hashed rather than embedded.
Stores call :func:`validate_key` and :func:`validate_prefix` on whatever they are given; callers
in the MCP manager use :func:`belongs_to_run` to refuse an input ref that points into another
run.
"""

from __future__ import annotations

import hashlib
import re
from typing import Final, Literal

from skillweave.errors import InvalidKeyError

__all__ = [
    "AGENTS_PREFIX",
    "AUDIT_CHAINS_PREFIX",
    "AUDIT_CHECKPOINTS_PREFIX",
    "AUDIT_PREFIX",
    "EVALS_PREFIX",
    "MAX_AUDIT_SEQ",
    "MAX_KEY_BYTES",
    "MAX_TRANSCRIPT_SEQ",
    "NETWORK_PREFIX",
    "SKILLS_GENERATION_KEY",
    "SKILLS_PREFIX",
    "STORE_IDENTITY_KEY",
    "LogStream",
    "agent_key",
    "audit_block_key",
    "audit_block_place",
    "audit_checkpoint_key",
    "audit_checkpoint_seq",
    "belongs_to_run",
    "check_output_path",
    "decode_output_path",
    "draft_key",
    "egress_log_key",
    "encode_output_path",
    "environment_claim_key",
    "environment_failure_key",
    "environment_key",
    "environment_log_key",
    "eval_batch_key",
    "eval_batch_prefix",
    "eval_job_key",
    "eval_report_key",
    "evals_prefix",
    "execution_claim_key",
    "execution_digest",
    "execution_log_key",
    "execution_output_key",
    "execution_result_key",
    "network_approval_key",
    "payload_key",
    "run_input_key",
    "run_prefix",
    "run_record_key",
    "skill_index_key",
    "skill_package_key",
    "skill_scan_key",
    "skill_signature_key",
    "transcript_key",
    "transcript_log",
    "transcript_seq",
    "validate_key",
    "validate_prefix",
]

MAX_KEY_BYTES: Final = 1024
"""S3's limit on an object key (UTF-8 bytes); ``ArtifactRef.key`` has the same cap."""

MAX_NAME_CHARS: Final = 255
"""Longest single component (a run id, a skill name, one path segment): a file-name limit."""

MAX_TRANSCRIPT_SEQ: Final = 99_999_999
"""Transcript sequence numbers are zero-padded to 8 digits so keys sort in order."""

_EXECUTION_DIGEST_HEX: Final = 32

LogStream = Literal["stdout", "stderr"]

_SAFE_NAME = re.compile(r"[A-Za-z0-9._-]+")
_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def validate_key(key: str) -> str:
    """Check that `key` is a well-formed, relative, non-escaping key and return it.

    Rejected: empty keys, keys over 1024 UTF-8 bytes, a leading ``/``, empty segments
    (``a//b``, a trailing ``/``), ``.`` or ``..`` segments, backslashes, NUL and other control
    characters.

    Raises:
        InvalidKeyError: with the reason.
    """
    if not isinstance(key, str):
        raise InvalidKeyError(repr(key), "a key must be a string")
    if not key:
        raise InvalidKeyError(key, "the key is empty")
    if len(key.encode("utf-8", "surrogatepass")) > MAX_KEY_BYTES:
        raise InvalidKeyError(key, f"the key is longer than {MAX_KEY_BYTES} bytes")
    if "\x00" in key:
        raise InvalidKeyError(key, "the key contains a NUL byte")
    if _CONTROL.search(key):
        raise InvalidKeyError(key, "the key contains a control character")
    if "\\" in key:
        raise InvalidKeyError(key, "the key contains a backslash")
    if key.startswith("/"):
        raise InvalidKeyError(key, "the key is absolute (starts with '/')")
    for part in key.split("/"):
        if not part:
            raise InvalidKeyError(key, "the key has an empty segment ('//' or a trailing '/')")
        if part in {".", ".."}:
            raise InvalidKeyError(key, f"the key has a {part!r} segment")
    return key


def validate_prefix(prefix: str) -> str:
    """Check a listing prefix and return it: ``""`` (everything), or a key that may end in ``/``.

    Raises:
        InvalidKeyError: with the reason.
    """
    if prefix == "":
        return prefix
    validate_key(prefix.removesuffix("/") if prefix != "/" else prefix)
    return prefix


def _name(value: str, what: str) -> str:
    """A single safe component: a run id, a skill name, a version."""
    if not isinstance(value, str) or not value:
        raise InvalidKeyError(str(value), f"the {what} is empty")
    if len(value) > MAX_NAME_CHARS:
        raise InvalidKeyError(value, f"the {what} is longer than {MAX_NAME_CHARS} characters")
    if value in {".", ".."}:
        raise InvalidKeyError(value, f"the {what} cannot be {value!r}")
    if not _SAFE_NAME.fullmatch(value):
        raise InvalidKeyError(value, f"the {what} may only contain A-Z a-z 0-9 '.' '_' '-'")
    return value


def _relative_path(path: str) -> str:
    """A relative artifact path: safe components joined by ``/``."""
    if not isinstance(path, str) or not path:
        raise InvalidKeyError(str(path), "the path is empty")
    if "\x00" in path:
        raise InvalidKeyError(path, "the path contains a NUL byte")
    if "\\" in path:
        raise InvalidKeyError(path, "the path contains a backslash")
    if path.startswith("/"):
        raise InvalidKeyError(path, "the path is absolute (starts with '/')")
    for part in path.split("/"):
        if not part:
            raise InvalidKeyError(path, "the path has an empty segment ('//' or a trailing '/')")
        if part in {".", ".."}:
            raise InvalidKeyError(path, f"the path has a {part!r} segment")
        if len(part) > MAX_NAME_CHARS:
            raise InvalidKeyError(path, f"a path segment is longer than {MAX_NAME_CHARS} chars")
        if not _SAFE_NAME.fullmatch(part):
            raise InvalidKeyError(
                path, f"segment {part!r} may only contain A-Z a-z 0-9 '.' '_' '-'"
            )
    return path


def _execution_id(execution_id: str) -> str:
    if not isinstance(execution_id, str) or not execution_id:
        raise InvalidKeyError(str(execution_id), "the execution id is empty")
    if "\x00" in execution_id:
        raise InvalidKeyError(execution_id, "the execution id contains a NUL byte")
    return execution_id


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def execution_digest(execution_id: str) -> str:
    """The 32-hex-digit folder name of an execution under its run."""
    return _sha256(_execution_id(execution_id))[:_EXECUTION_DIGEST_HEX]


def skill_package_key(name: str, version: str) -> str:
    """``skills/{name}/{version}.zip``: the package of one version of a skill."""
    return f"skills/{_name(name, 'skill name')}/{_name(version, 'skill version')}.zip"


def skill_scan_key(name: str, version: str) -> str:
    """``skills/{name}/{version}.scan.json``: the scan report of one version of a skill, beside
    its package (a ``skills.scan.ScanReport``)."""
    return f"skills/{_name(name, 'skill name')}/{_name(version, 'skill version')}.scan.json"


def skill_signature_key(name: str, version: str) -> str:
    """``skills/{name}/{version}.sig.json``: the signature of one version of a skill, beside its
    package (a ``skills.signing.SkillSignature`` document)."""
    return f"skills/{_name(name, 'skill name')}/{_name(version, 'skill version')}.sig.json"


STORE_IDENTITY_KEY: Final = "identity.json"
"""The store's id (``storage.identity``): written once, by the first process that uses it."""
SKILLS_PREFIX: Final = "catalog/skills/"
SKILLS_GENERATION_KEY: Final = "catalog/skills.generation.json"
"""Rewritten by every change of the store's skills (``skills.stored``): a library polls this one
object to learn that its skills changed (``skills.library``). Outside :data:`SKILLS_PREFIX`."""
AGENTS_PREFIX: Final = "catalog/agents/"
NETWORK_PREFIX: Final = "catalog/network/"


def skill_index_key(name: str) -> str:
    """``catalog/skills/{name}.json``: an uploaded skill's record (versions, enabled)."""
    return f"{SKILLS_PREFIX}{_name(name, 'skill name')}.json"


def network_approval_key(name: str) -> str:
    """``catalog/network/{name}.json``: an operator's approval of a skill's network, made over
    the API (``PUT /v1/skills/{name}/network``)."""
    return f"{NETWORK_PREFIX}{_name(name, 'skill name')}.json"


def agent_key(agent_id: str) -> str:
    """``catalog/agents/{agent_id}.json``: an agent made over the API."""
    return f"{AGENTS_PREFIX}{_name(agent_id, 'agent id')}.json"


def run_prefix(run_id: str) -> str:
    """``runs/{run_id}/``: everything a run owns is under this prefix."""
    return f"runs/{_name(run_id, 'run id')}/"


def draft_key(run_id: str, name: str, version: str) -> str:
    """``runs/{run_id}/drafts/{name}/{version}.json``: a skill a run wrote (``create_skill``):
    its scan and example runs (its package is at :func:`skill_package_key`)."""
    return (
        f"{run_prefix(run_id)}drafts/{_name(name, 'skill name')}/"
        f"{_name(version, 'skill version')}.json"
    )


EVALS_PREFIX: Final = "evals/"


def evals_prefix(skill: str) -> str:
    """``evals/{skill}/``: every eval batch of a skill (``skillweave.evals``)."""
    return f"{EVALS_PREFIX}{_name(skill, 'skill name')}/"


def eval_batch_prefix(skill: str, batch_id: str) -> str:
    """``evals/{skill}/{batch_id}/``: one eval batch: its request, graded jobs and report."""
    return f"{evals_prefix(skill)}{_name(batch_id, 'eval batch id')}/"


def eval_batch_key(skill: str, batch_id: str) -> str:
    """``evals/{skill}/{batch_id}/batch.json``: what the batch runs (a resume reads it)."""
    return f"{eval_batch_prefix(skill, batch_id)}batch.json"


def eval_job_key(skill: str, batch_id: str, job: str) -> str:
    """``evals/{skill}/{batch_id}/jobs/{job}.json``: one graded job; written once, when the job
    is finished, so a resumed batch never runs it again."""
    return f"{eval_batch_prefix(skill, batch_id)}jobs/{_name(job, 'eval job')}.json"


def eval_report_key(skill: str, batch_id: str, form: Literal["json", "md", "html"]) -> str:
    """``evals/{skill}/{batch_id}/report.{json|md|html}``: the batch's report."""
    return f"{eval_batch_prefix(skill, batch_id)}report.{form}"


def run_record_key(run_id: str) -> str:
    """``runs/{run_id}/run.json``: a run started over the API (its agent as it was, input)."""
    return f"{run_prefix(run_id)}run.json"


def run_input_key(run_id: str, path: str) -> str:
    """``runs/{run_id}/inputs/{path}``: a file uploaded for a run (by a user or a caller)."""
    return validate_key(f"{run_prefix(run_id)}inputs/{_relative_path(path)}")


def _execution_prefix(run_id: str, execution_id: str) -> str:
    return f"{run_prefix(run_id)}executions/{execution_digest(execution_id)}/"


_KEPT_IN_OUTPUT_NAMES: Final = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-"
)


def encode_output_path(path: str) -> str:
    """An output file's path (as the script named it) in the characters a key keeps.

    Each byte of a segment's UTF-8 outside ``A-Z a-z 0-9 . _ -`` becomes ``~XX`` (``~`` itself
    is ``~7E``), so any name a file system accepts (spaces, accents, a leading dot or dash)
    has a key that is safe in S3, on disk and in a URL, and `decode_output_path` gives the
    name back exactly. Control characters (a newline...) are refused, as in any key: such a
    name cannot be fetched, logged or shown as it is.

    Raises:
        InvalidKeyError: an empty, ``.`` or ``..`` segment, a control character, or text that
            is not UTF-8.
    """
    if not isinstance(path, str) or not path:
        raise InvalidKeyError(str(path), "the path is empty")
    encoded: list[str] = []
    if "\x00" in path:
        raise InvalidKeyError(path, "the path contains a NUL byte")
    if _CONTROL.search(path):
        raise InvalidKeyError(path, "the name contains a control character")
    for part in path.split("/"):
        if part in {"", ".", ".."}:
            raise InvalidKeyError(path, f"the path has a {part!r} segment")
        try:
            data = part.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidKeyError(path, "the name is not UTF-8 text") from None
        encoded.append(
            "".join(chr(b) if chr(b) in _KEPT_IN_OUTPUT_NAMES else f"~{b:02X}" for b in data)
        )
    return "/".join(encoded)


_ESCAPE: Final = re.compile(r"~([0-9A-F]{2})")


def decode_output_path(encoded: str) -> str:
    """The path `encode_output_path` was given (a path without ``~`` is its own encoding)."""
    return "/".join(_unescape(part) for part in encoded.split("/"))


def _unescape(part: str) -> str:
    data = bytearray()
    index = 0
    while index < len(part):
        match = _ESCAPE.match(part, index)
        if match:
            data.append(int(match.group(1), 16))
            index = match.end()
        else:
            data += part[index].encode("utf-8")
            index += 1
    return data.decode("utf-8", "replace")


def execution_output_key(run_id: str, execution_id: str, path: str) -> str:
    """``runs/{run_id}/executions/{digest}/outputs/{encoded path}``: a file a script produced
    (its path encoded by `encode_output_path`).

    Raises:
        InvalidKeyError: the path cannot be a key: a segment over 255 characters or the whole
            key over 1024 bytes once encoded, or a name `encode_output_path` refuses.
    """
    prefix = _execution_prefix(run_id, execution_id)
    return validate_key(f"{prefix}outputs/{check_output_path(path)}")


def check_output_path(path: str) -> str:
    """`path` (a file under ``outputs/``, as the script named it) encoded, if some key can
    carry it: the rule an executor applies before it lists an output, and the manager again
    in `execution_output_key` (which also checks the whole key's length, run id included).

    Raises:
        InvalidKeyError: a name `encode_output_path` refuses, or a segment over 255
            characters once encoded.
    """
    encoded = encode_output_path(path)
    for part in encoded.split("/"):
        if len(part) > MAX_NAME_CHARS:
            raise InvalidKeyError(
                path, f"a path segment is longer than {MAX_NAME_CHARS} characters once encoded"
            )
    return encoded


def execution_log_key(run_id: str, execution_id: str, stream: LogStream) -> str:
    """``runs/{run_id}/executions/{digest}/{stream}.txt``: the full stdout or stderr."""
    if stream not in ("stdout", "stderr"):
        raise InvalidKeyError(str(stream), "the stream must be 'stdout' or 'stderr'")
    return f"{_execution_prefix(run_id, execution_id)}{stream}.txt"


def egress_log_key(run_id: str, execution_id: str) -> str:
    """``runs/{run_id}/executions/{digest}/egress.jsonl``: the egress proxy's records of one
    execution (one JSON object a line: every connection and request, allowed or refused)."""
    return validate_key(f"{_execution_prefix(run_id, execution_id)}egress.jsonl")


def execution_result_key(execution_id: str) -> str:
    """``executions/{sha256}.json``: the persisted result of an execution (idempotency)."""
    return f"executions/{_sha256(_execution_id(execution_id))}.json"


def execution_claim_key(execution_id: str, attempt: int = 1) -> str:
    """``executions/{sha256}.claim`` (``.claim.{attempt}`` after the first): won with
    ``put_if_absent`` just before the script is handed to a sandbox; from then on the script
    may have run. A later attempt is claimed only once the earlier claim's lease lapsed."""
    suffix = "" if attempt == 1 else f".{attempt}"
    return f"executions/{_sha256(_execution_id(execution_id))}.claim{suffix}"


def _environment_stem(skill: str, version: str, runtime: str, platform: str) -> str:
    return (
        f"environments/{_name(skill, 'skill name')}/{_name(version, 'skill version')}/"
        f"{_name(runtime, 'runtime')}/{_name(platform, 'platform')}"
    )


def environment_key(skill: str, version: str, runtime: str, platform: str) -> str:
    """``environments/{skill}/{version}/{runtime}/{platform}.tar.gz``: a skill's dependencies,
    installed for one executor runtime (``cp311-node20``) and platform (``linux-x86_64``);
    `version` is the digest of what is installed (the manager's choice). Written once, after a
    build that succeeded; never replaced."""
    return f"{_environment_stem(skill, version, runtime, platform)}.tar.gz"


def environment_log_key(skill: str, version: str, runtime: str, platform: str) -> str:
    """``environments/{skill}/{version}/{runtime}/{platform}.log``: the output of the last
    build of that environment, kept whether it succeeded or failed."""
    return f"{_environment_stem(skill, version, runtime, platform)}.log"


def environment_claim_key(
    skill: str, version: str, runtime: str, platform: str, attempt: int = 1
) -> str:
    """``environments/{skill}/{version}/{runtime}/{platform}.claim`` (``.claim.{attempt}``
    after the first): won with ``put_if_absent`` by the one builder that builds the
    environment, renewed while it builds, removed when it is done. A later attempt is claimed
    only once the earlier claim's lease lapsed (its builder stopped)."""
    if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
        raise InvalidKeyError(repr(attempt), "the claim attempt must be an int >= 1")
    suffix = "" if attempt == 1 else f".{attempt}"
    return f"{_environment_stem(skill, version, runtime, platform)}.claim{suffix}"


def environment_failure_key(skill: str, version: str, runtime: str, platform: str) -> str:
    """``environments/{skill}/{version}/{runtime}/{platform}.failed``: why the last build
    failed (reason, package, log key), so that the requests waiting on that build share its
    error instead of building again; a later request builds again."""
    return f"{_environment_stem(skill, version, runtime, platform)}.failed"


def payload_key(digest: str) -> str:
    """``payloads/{sha256}.bin``: a serialized Temporal payload kept out of workflow history,
    named by the sha256 of its bytes (so storing the same payload twice is one object)."""
    if not isinstance(digest, str) or not _SHA256_HEX.fullmatch(digest):
        raise InvalidKeyError(str(digest), "a payload digest must be 64 lowercase hex digits")
    return f"payloads/{digest}.bin"


def transcript_key(run_id: str, seq: int) -> str:
    """``runs/{run_id}/transcript/{seq:08d}.json``: one record of the transcript as an object
    (a store without record logs, and runs written before them)."""
    return f"{run_prefix(run_id)}transcript/{transcript_seq(seq):08d}.json"


def transcript_log(run_id: str) -> str:
    """``runs/{run_id}/transcript``: the transcript as one record log, where the store keeps
    record logs (``skillweave.storage.base.RecordLogStore``: the local store); its records are
    numbered by :func:`transcript_seq`. Not a key: a log is never listed or read as one."""
    return f"{run_prefix(run_id)}transcript"


def transcript_seq(seq: int) -> int:
    """`seq`, when it can number a transcript record (an int in 0..MAX_TRANSCRIPT_SEQ)."""
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise InvalidKeyError(repr(seq), "the transcript sequence number must be an int")
    if not 0 <= seq <= MAX_TRANSCRIPT_SEQ:
        raise InvalidKeyError(str(seq), f"the sequence number must be in 0..{MAX_TRANSCRIPT_SEQ}")
    return seq


AUDIT_PREFIX: Final = "audit/"
AUDIT_CHAINS_PREFIX: Final = "audit/chains/"
"""Every writer's chain of the audit log: ``{writer}/{seq:012d}.jsonl``, one block each."""
AUDIT_CHECKPOINTS_PREFIX: Final = "audit/checkpoints/"
"""The audit log's checkpoint chain: ``{n:012d}.json``, one checkpoint each."""

MAX_AUDIT_SEQ: Final = 999_999_999_999
"""Audit sequence numbers start at 1 and are zero-padded to 12 digits so keys sort in order."""

_AUDIT_WRITER = re.compile(r"[0-9a-f]{16}")
_AUDIT_BLOCK = re.compile(r"audit/chains/([0-9a-f]{16})/([0-9]{12})\.jsonl")
_AUDIT_CHECKPOINT = re.compile(r"audit/checkpoints/([0-9]{12})\.json")


def _audit_seq(seq: int) -> str:
    if isinstance(seq, bool) or not isinstance(seq, int):
        raise InvalidKeyError(repr(seq), "the audit sequence number must be an int")
    if not 1 <= seq <= MAX_AUDIT_SEQ:
        raise InvalidKeyError(str(seq), f"the audit sequence number must be in 1..{MAX_AUDIT_SEQ}")
    return f"{seq:012d}"


def audit_block_key(writer: str, seq: int) -> str:
    """``audit/chains/{writer}/{seq:012d}.jsonl``: the block of `writer`'s chain whose first
    record is `seq`, written once with ``put_if_absent`` (`writer`: 16 lowercase hex digits)."""
    if not isinstance(writer, str) or not _AUDIT_WRITER.fullmatch(writer):
        raise InvalidKeyError(repr(writer), "an audit writer is 16 lowercase hex digits")
    return f"{AUDIT_CHAINS_PREFIX}{writer}/{_audit_seq(seq)}.jsonl"


def audit_block_place(key: str) -> tuple[str, int] | None:
    """The writer and first sequence number `audit_block_key` made `key` from, or None."""
    match = _AUDIT_BLOCK.fullmatch(key) if isinstance(key, str) else None
    if match is None or int(match.group(2)) < 1:
        return None
    return match.group(1), int(match.group(2))


def audit_checkpoint_key(seq: int) -> str:
    """``audit/checkpoints/{seq:012d}.json``: checkpoint `seq` of the audit log, written once
    with ``put_if_absent`` (its place in the checkpoint chain)."""
    return f"{AUDIT_CHECKPOINTS_PREFIX}{_audit_seq(seq)}.json"


def audit_checkpoint_seq(key: str) -> int | None:
    """The sequence number `audit_checkpoint_key` made `key` from, or None for any other key."""
    match = _AUDIT_CHECKPOINT.fullmatch(key) if isinstance(key, str) else None
    if match is None:
        return None
    seq = int(match.group(1))
    return seq if seq >= 1 else None


def belongs_to_run(key: str, run_id: str) -> bool:
    """Whether `key` is a well-formed key under ``runs/{run_id}/``.

    A malformed key (``runs/r/../other/x``, a backslash…) never belongs to any run, so this is
    safe to call on untrusted refs. A malformed `run_id` raises ``InvalidKeyError``.
    """
    prefix = run_prefix(run_id)
    try:
        validate_key(key)
    except InvalidKeyError:
        return False
    return key.startswith(prefix) and len(key) > len(prefix)
