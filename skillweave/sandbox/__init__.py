"""The sandbox API: the client and wire models of the manager's ``/sandbox/*`` API.

Everything a caller of the MCP manager shares with it: the request and result models of a script
run (:mod:`.models`), the problem codes on the wire (:mod:`.problems`), the client that asks for
runs and waits on a busy manager (:mod:`.client`, :mod:`.queue`), the rules both sides check a
request by (:mod:`.validation`), the egress policy (:mod:`.egress_policy`), who gets a skill's
secrets and network approvals (:mod:`.bindings`, :mod:`.approvals`), skill packages sent to
the manager and pinned versions (:mod:`.packages`, :mod:`.pinned`), the tool schemas asked
of a script (:mod:`.tool_schemas`), the masking of a run's secrets (:mod:`.masking`), the
wire of the run channel and the zygote (:mod:`.run_channel`, :mod:`.zygote_protocol`), and
what killed sandbox processes leave in the temp dir (:mod:`.leftovers`). The package carries
the name of the API it speaks; the sandboxes themselves are the executor's
(``sandbox_executor``) and the manager's pool's.

Names are imported on first use (:mod:`skillweave.lazy`): workflow code and the executor import
this front without loading the HTTP client.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from skillweave.lazy import lazy_exports

if TYPE_CHECKING:
    from skillweave.sandbox.approvals import NetworkApprovals, describe_network
    from skillweave.sandbox.bindings import (
        SkillOwnership,
        check_bound_names,
        check_bound_settings,
        configured_for,
    )
    from skillweave.sandbox.client import SandboxClient
    from skillweave.sandbox.egress_policy import (
        EGRESS_SOCKET,
        IDEMPOTENCY_HEADER,
        STAGE_EGRESS_VARIABLE,
        Verdict,
        decide_addresses,
        decide_destination,
        idempotency_key,
        parse_authority,
        proxy_environment,
    )
    from skillweave.sandbox.leftovers import (
        FETCH_FILE_PREFIX,
        POOL_FOLDER_PREFIX,
        hold_entry,
        sweep_leftovers,
    )
    from skillweave.sandbox.masking import is_run_log, mask_result, output_masker
    from skillweave.sandbox.models import (
        EXECUTION_ID_VARIABLE,
        EgressGrant,
        ExecuteRequest,
        ExecutionLimits,
        ExecutionRecord,
        ExecutionResult,
        ExecutionStatus,
        ExecutorFile,
        ExecutorRequest,
        ExecutorResult,
        Isolation,
        OutputArtifact,
        SkippedOutput,
        describe_isolation,
        isolation_allowed,
        isolation_covers,
        isolation_in_force,
        isolation_of_health,
        render_result,
    )
    from skillweave.sandbox.packages import publish_library, publish_skill
    from skillweave.sandbox.pinned import skill_at
    from skillweave.sandbox.problems import (
        AUDIT_RETRY_SECONDS,
        PROBLEM_JSON,
        FieldProblem,
        Problem,
        ProblemCode,
        audit_refusal,
        media_type_refusal,
    )
    from skillweave.sandbox.queue import queued
    from skillweave.sandbox.run_channel import (
        GO,
        HEAD_MAX_BYTES,
        SOCKET_NAME,
        SPAN_NAME,
        TOKEN_MAX_BYTES,
        ChannelError,
        RunHead,
        answer,
        answer_max_bytes,
        frame,
        read_answer,
        read_frame,
    )
    from skillweave.sandbox.tool_schemas import (
        TOOL_SCHEMA_RUN_ID,
        discover_tool_schemas,
        run_json_args,
    )
    from skillweave.sandbox.validation import (
        check_env,
        check_path,
        check_run,
        check_text,
        clean_script,
    )
    from skillweave.sandbox.zygote_protocol import EXECUTOR_FOLDER_PREFIX, EXIT_REFUSED, TOKEN_FILE


# Imported on first use (skillweave.lazy): the front stays cheap to import.
_EXPORTS: dict[str, str] = {
    "AUDIT_RETRY_SECONDS": "problems",
    "ChannelError": "run_channel",
    "EGRESS_SOCKET": "egress_policy",
    "EXECUTION_ID_VARIABLE": "models",
    "EXECUTOR_FOLDER_PREFIX": "zygote_protocol",
    "EXIT_REFUSED": "zygote_protocol",
    "FETCH_FILE_PREFIX": "leftovers",
    "EgressGrant": "models",
    "ExecuteRequest": "models",
    "ExecutionLimits": "models",
    "ExecutionRecord": "models",
    "ExecutionResult": "models",
    "ExecutionStatus": "models",
    "ExecutorFile": "models",
    "ExecutorRequest": "models",
    "ExecutorResult": "models",
    "FieldProblem": "problems",
    "GO": "run_channel",
    "HEAD_MAX_BYTES": "run_channel",
    "IDEMPOTENCY_HEADER": "egress_policy",
    "Isolation": "models",
    "NetworkApprovals": "approvals",
    "OutputArtifact": "models",
    "POOL_FOLDER_PREFIX": "leftovers",
    "PROBLEM_JSON": "problems",
    "Problem": "problems",
    "ProblemCode": "problems",
    "RunHead": "run_channel",
    "SOCKET_NAME": "run_channel",
    "SPAN_NAME": "run_channel",
    "STAGE_EGRESS_VARIABLE": "egress_policy",
    "SandboxClient": "client",
    "SkillOwnership": "bindings",
    "SkippedOutput": "models",
    "TOKEN_FILE": "zygote_protocol",
    "TOKEN_MAX_BYTES": "run_channel",
    "TOOL_SCHEMA_RUN_ID": "tool_schemas",
    "Verdict": "egress_policy",
    "answer": "run_channel",
    "answer_max_bytes": "run_channel",
    "audit_refusal": "problems",
    "check_bound_names": "bindings",
    "check_bound_settings": "bindings",
    "check_env": "validation",
    "check_path": "validation",
    "check_run": "validation",
    "check_text": "validation",
    "clean_script": "validation",
    "configured_for": "bindings",
    "decide_addresses": "egress_policy",
    "decide_destination": "egress_policy",
    "describe_isolation": "models",
    "describe_network": "approvals",
    "discover_tool_schemas": "tool_schemas",
    "frame": "run_channel",
    "hold_entry": "leftovers",
    "idempotency_key": "egress_policy",
    "is_run_log": "masking",
    "isolation_allowed": "models",
    "isolation_covers": "models",
    "isolation_in_force": "models",
    "isolation_of_health": "models",
    "mask_result": "masking",
    "media_type_refusal": "problems",
    "output_masker": "masking",
    "parse_authority": "egress_policy",
    "proxy_environment": "egress_policy",
    "publish_library": "packages",
    "publish_skill": "packages",
    "queued": "queue",
    "read_answer": "run_channel",
    "read_frame": "run_channel",
    "render_result": "models",
    "run_json_args": "tool_schemas",
    "skill_at": "pinned",
    "sweep_leftovers": "leftovers",
}
__all__ = [
    "AUDIT_RETRY_SECONDS",
    "EGRESS_SOCKET",
    "EXECUTION_ID_VARIABLE",
    "EXECUTOR_FOLDER_PREFIX",
    "EXIT_REFUSED",
    "FETCH_FILE_PREFIX",
    "GO",
    "HEAD_MAX_BYTES",
    "IDEMPOTENCY_HEADER",
    "POOL_FOLDER_PREFIX",
    "PROBLEM_JSON",
    "SOCKET_NAME",
    "SPAN_NAME",
    "STAGE_EGRESS_VARIABLE",
    "TOKEN_FILE",
    "TOKEN_MAX_BYTES",
    "TOOL_SCHEMA_RUN_ID",
    "ChannelError",
    "EgressGrant",
    "ExecuteRequest",
    "ExecutionLimits",
    "ExecutionRecord",
    "ExecutionResult",
    "ExecutionStatus",
    "ExecutorFile",
    "ExecutorRequest",
    "ExecutorResult",
    "FieldProblem",
    "Isolation",
    "NetworkApprovals",
    "OutputArtifact",
    "Problem",
    "ProblemCode",
    "RunHead",
    "SandboxClient",
    "SkillOwnership",
    "SkippedOutput",
    "Verdict",
    "answer",
    "answer_max_bytes",
    "audit_refusal",
    "check_bound_names",
    "check_bound_settings",
    "check_env",
    "check_path",
    "check_run",
    "check_text",
    "clean_script",
    "configured_for",
    "decide_addresses",
    "decide_destination",
    "describe_isolation",
    "describe_network",
    "discover_tool_schemas",
    "frame",
    "hold_entry",
    "idempotency_key",
    "is_run_log",
    "isolation_allowed",
    "isolation_covers",
    "isolation_in_force",
    "isolation_of_health",
    "mask_result",
    "media_type_refusal",
    "output_masker",
    "parse_authority",
    "proxy_environment",
    "publish_library",
    "publish_skill",
    "queued",
    "read_answer",
    "read_frame",
    "render_result",
    "run_json_args",
    "skill_at",
    "sweep_leftovers",
]
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
