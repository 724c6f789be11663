// The request checks of the HTTP transports, as pure functions (testable without sockets):
// Origin and Host validation (DNS-rebinding protection), bearer authentication, Accept and
// Content-Type negotiation, protocol-version header rules.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/jsonrpc.hpp"
#include "protocol/versions.hpp"
#include "transports/http_options.hpp"

namespace toolport::http_policy {

bool is_loopback_host(std::string_view host);
// The host of an authority "host[:port]" (a Host header, an origin after its "scheme://"):
// an IPv6 literal in brackets, or a name or IPv4 address of URI host characters, then
// optionally ':' and up to five digits, and nothing else. nullopt when it is not that shape.
std::optional<std::string_view> authority_host(std::string_view authority);
// `origin` is the Origin header ("" when absent).
bool origin_allowed(const HttpOptions& options, std::string_view origin);
// `host` is the Host header ("" when absent).
bool host_allowed(const HttpOptions& options, std::string_view host);
// The token of an "Authorization: Bearer <token>" header; "" for any other header.
std::string_view bearer_token(std::string_view authorization);
// Whether `token` is `expected`, compared in constant time so timing does not reveal how
// much of a token matched. An empty token matches nothing.
bool same_token(std::string_view expected, std::string_view token);
// Whether `token` is one of `tokens` (each compared as same_token does, none skipped).
bool token_listed(const std::vector<std::string>& tokens, std::string_view token);
// The principal a token authenticates: "bearer:<SHA-256 prefix of the token>".
std::string principal_of_token(std::string_view token);
// `authorization` is the Authorization header; true when auth is off or a token matches.
bool authorized(const HttpOptions& options, std::string_view authorization);
// Who is calling, for per-client quotas and per-user caches: "bearer:<SHA-256 prefix of
// the token>" when auth is on (never the token itself), else "".
std::string principal_of(const HttpOptions& options, std::string_view authorization);
// The W3C trace context headers of a POST (`traceparent`, `tracestate`, `baggage`).
struct TraceHeaders {
    std::string traceparent;
    std::string tracestate;
    std::string baggage;
};
// Carries them into a request's params._meta (traceparent and tracestate only when _meta
// has no traceparent of its own, baggage only when it has no baggage: _meta wins), so the
// request's span continues the caller's trace and one user request's calls share a budget
// whatever the transport. Notifications and responses are left alone.
void attach_trace_headers(protocol::Message& message, const TraceHeaders& headers);

bool accepts(std::string_view accept_header, std::string_view media_type);
bool is_json_content_type(std::string_view content_type);

struct VersionHeader {
    bool present = false;
    std::optional<protocol::Revision> revision;  // nullopt when present but unsupported
};
VersionHeader read_version_header(std::string_view value, bool present);

// Free text served without authentication (the /health report's states): every URL in it
// keeps its scheme, host and path but not its userinfo, query or fragment (where keys and
// passwords travel), home-directory paths become "~", control characters spaces.
std::string public_text(std::string_view text);

// Session ids are visible ASCII (0x21-0x7E) per the spec.
bool valid_session_id(std::string_view id);

}  // namespace toolport::http_policy
