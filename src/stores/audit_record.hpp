// One audit record: who called what, when, with what outcome (tools/call, resources/read,
// prompts/get), as one JSON object per line of the audit file (audit_log.hpp) and one
// entry of the Redis stream. Also what reading the log needs: parsing a line back, the
// filters of `toolport audit` and GET /audit, and the times they take.
//
//   AuditRecord r{.method = "tools/call", .target = "get_weather", ...};
//   std::string line = encode_record(r);          // {"ts":"2026-11-28T06:40:17.123Z",...}
//   auto record = parse_record(line);            // nullopt for a line that is not one
//   if (record && filter.matches(*record)) ...
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "util/json.hpp"

namespace toolport::stores {

// One guard's verdict on a call (pipeline/stages/guard.hpp), as its record lists it.
struct GuardMark {
    std::string guard;
    std::string phase;     // before (the arguments) or after (the result)
    std::string decision;  // allow, deny, modify, failed_open, failed_closed
    bool cached = false;   // a verdict the guard let be reused, not asked again
};

struct AuditRecord {
    std::chrono::system_clock::time_point time;
    std::string method;     // tools/call, resources/read, prompts/get
    std::string target;     // the tool's name, the resource's URI, the prompt's name
    std::string source;     // the source (pack, REST catalog, upstream) that serves it
    std::string principal;  // the caller's principal (a digest of its credential, never the token)
    std::string subject;    // an OAuth token's subject, when the caller had one
    std::string session;    // the MCP session id ("stdio" on stdio)
    std::string profile;    // the view (gateway profile) the caller was served
    std::string request_id;
    std::string trace_id;
    std::string args_sha256;  // of the canonical arguments (compact, keys sorted)
    // Or the canonical arguments themselves: encode_record hashes them (the last digest is
    // kept per thread: a tool's calls often carry the same arguments).
    std::string canonical_arguments;
    std::optional<Json> arguments;  // only when audit.include_arguments, redacted
    std::string outcome;            // ok, tool_error, protocol_error, cancelled, denied (an access rule)
    std::string code;               // the tool error's code or the JSON-RPC error code; "" when ok
    double duration_ms = 0;
    std::optional<long long> downstream_calls;
    std::string cache;              // the cache status of a tool call (hit, miss, partial, bypass)
    std::vector<GuardMark> guards;  // what each guard the call passed said, in order
    std::string replica;            // which process wrote it (host:pid): replicas share the Redis stream
};

// The record as one line of JSON, without its newline. Empty fields are left out.
std::string encode_record(const AuditRecord& record);
// The same, appended to `out`.
void append_record(const AuditRecord& record, std::string& out);

// SHA-256 (hex) of `arguments` as compact JSON with its keys in order (nlohmann keeps them
// sorted): the same arguments give the same digest, whatever their order on the wire.
std::string arguments_digest(const Json& arguments);

// A line of the file as a record: nullopt for anything but a JSON object with a "ts"
// string (a garbled line, a line cut short by a crash).
std::optional<Json> parse_record(std::string_view line);

// "2026-11-28T06:40:17.123Z".
std::string iso_time(std::chrono::system_clock::time_point time);

// A time the filters take: ISO-8601 UTC ("2026-11-28T06:40:17Z", with or without
// fractional seconds, or a bare date "2026-11-28"), or an age before `now` ("90s", "15m",
// "2h", "7d"). nullopt when it is neither.
std::optional<std::chrono::system_clock::time_point> parse_time(std::string_view text,
                                                                std::chrono::system_clock::time_point now);

// What a query keeps: every set field must match (principal and subject: either one; tool:
// the record's target; source: the source that serves it; outcome: ok, tool_error, protocol_error, cancelled or denied, or "error" for
// any but ok).
struct AuditFilter {
    std::string principal;
    std::string tool;
    std::string source;
    std::string outcome;
    std::string method;
    std::string session;
    std::optional<std::chrono::system_clock::time_point> since;  // inclusive
    std::optional<std::chrono::system_clock::time_point> until;  // exclusive
    std::size_t limit = 100;                                     // the newest this many (0: all)

    bool matches(const Json& record) const;
};

// Sets the filter's field `name` (principal, tool, source, outcome, method, session, since, until,
// limit) from text, as `toolport audit` flags and GET /audit parameters give it. Returns
// what is wrong with it ("" when it was taken): an unknown name, a time or limit that does
// not parse, an unknown outcome.
std::string set_filter_field(AuditFilter& filter, std::string_view name, std::string_view value,
                             std::chrono::system_clock::time_point now);

// The record's time, from its "ts" (nullopt when it has none that parses).
std::optional<std::chrono::system_clock::time_point> record_time(const Json& record);

}  // namespace toolport::stores
