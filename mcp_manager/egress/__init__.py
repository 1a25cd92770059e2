"""The egress proxy (DESIGN §6): the only way a sandboxed script reaches the network.

One :class:`EgressProxy` serves one execution of one skill (:class:`EgressContext`): an HTTP
forward proxy for ``http://`` requests and ``CONNECT`` tunnels for TLS. The manager's
:class:`EgressGateway` is the one listener for all runs and hands each connection to the proxy
of the run whose grant it carries (:meth:`EgressProxy.serve_tcp` serves one alone, for tests
and the benchmark). The manager's :class:`EgressService` holds the approvals, the credential
bindings, the gateway and the audit log.

What the proxy guarantees, and how:

- **Strict HTTP.** A connection carries one request. Its head is read within a bound (431
  past it) and parsed strictly (``_http``, on h11): a bare CR or LF,
  obs-fold, a control character, a duplicate or conflicting ``Host``, ``Content-Length`` or
  ``Transfer-Encoding``, both of the last two, a request-line host other than the ``Host``
  header's, a host that is not a plain ASCII name or address, user info, or anything h11
  cannot parse is answered ``400`` in one line. A ``CONNECT`` target is ``host:port`` only.
- **Judged before it is looked up.** The name and port are judged first
  (``skillweave.sandbox.egress_policy.decide_destination``: declared by the skill, approved by an
  operator, for this version), then the caps; only an approved name is resolved (the
  `resolver`), and every address it resolves to must be public unless approved as private
  (``decide_addresses``). The proxy connects to the address it checked, so the answer cannot
  change in between (no DNS rebinding), and no DNS query ever carries an unjudged name.
- **Re-serialised upstream.** A plain-HTTP request goes upstream as the proxy writes it:
  origin-form target, ``Host`` the judged destination, the end-to-end headers only (hop-by-hop
  ones, those the ``Connection`` header lists and ``Proxy-Authorization`` dropped), the body
  re-framed from h11's reading of it, and ``Connection: close``. Nothing after the request's
  end is read from the client, so a pipelined or smuggled second request goes nowhere; the
  response is relayed back as it comes, and the connection closes.
- **Credentials stay with the proxy.** A destination with a bound credential
  (:class:`CredentialBinding`) gets its header on that one re-serialised request, its value
  filled from the skill's secrets here: the script never holds it, and a header of that name
  the script sent is replaced. A ``CONNECT`` tunnel is opaque (TLS end to end), so nothing is
  added to it: header injection needs plain HTTP.
- **Everything is recorded.** Per execution there are caps (:class:`EgressLimits`):
  connections, bytes each way together, requests per second (``429`` saying which, or the
  connection closed). Every request, refused (400, 403, 407 at the gateway, 408 for a head
  that does not arrive in time, 429, 431, 502) or not, has exactly one :class:`EgressRecord`,
  sent to `audit` (the manager stores them with the run and logs them; one without a live
  grant is logged only).

Hand-written around h11: no proxy library both judges every connection by our policy before
any lookup and connects to the address it judged; h11 reads the HTTP, this module decides.

The package's modules, lowest first: ``_http`` (strict HTTP/1.1 on h11), ``_connection`` (a
client connection's head read in time, a refusal answered, a lingering close), ``_log``
(:class:`EgressRecord`), ``_context`` (:class:`EgressContext`, bound credentials,
:func:`declared_network`), ``_caps`` (an execution's caps), ``_dialer`` (judging and opening
the way upstream; :data:`Resolver`), ``_relay`` (moving the bytes), ``_proxy``
(:class:`EgressProxy`), ``_gateway`` (:class:`EgressGateway`) and ``_service``
(:class:`EgressService`). The manager's app and executions import this front.
"""

from mcp_manager.egress._context import EgressContext, declared_network
from mcp_manager.egress._dialer import Resolver
from mcp_manager.egress._gateway import EgressGateway
from mcp_manager.egress._log import EgressRecord
from mcp_manager.egress._proxy import EgressProxy
from mcp_manager.egress._service import EgressService

__all__ = [
    "EgressContext",
    "EgressGateway",
    "EgressProxy",
    "EgressRecord",
    "EgressService",
    "Resolver",
    "declared_network",
]
