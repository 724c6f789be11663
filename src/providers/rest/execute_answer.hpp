// The call side of a REST catalog as pure functions: the execute request built from the
// settings' templates, and the API's answer read back into a tool result: the output
// found in whichever of the configured shapes the answer has, the API's own error kept
// (secrets stripped), an event stream assembled chunk by chunk.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "client/sse_parser.hpp"
#include "providers/rest/catalog_settings.hpp"
#include "server/content.hpp"
#include "server/tool_error.hpp"

namespace toolport::rest {

// base_url + the execute URL with {name} percent-encoded (so a name cannot add a path, a
// query or another host), plus stream_query when streaming.
std::string execute_url(const CatalogSettings& settings, const std::string& catalog_name, bool streaming);
// The body template with "{name}" and "{arguments}" filled in.
Json execute_body(const Json& body_template, const std::string& catalog_name, const Json& arguments);
// Whether the call asks for a stream (its stream argument is true).
bool wants_stream(const ExecuteSettings& execute, const Json& arguments);

// The tool result of a 2xx JSON answer, with every secret redacted (secret_redaction.hpp)
// from its text, structuredContent and _meta. Throws ToolError (UPSTREAM_ERROR) when the
// answer says the call failed: a false success flag, or an error message and no output;
// or when the redacted output no longer matches `output_schema` (the tool's, null: none).
ToolResult read_execute_answer(const Json& answer, const ExecuteSettings& execute,
                               const std::vector<std::string>& secrets, const Json& output_schema = Json());

// The tool error for a non-2xx answer (401/403 credentials, 402 payment, 404, 400/422
// arguments, 429 with Retry-After, 5xx transient). `credentials` names where the keys
// come from, for the suggestion.
ToolError error_for_status(unsigned status, const std::optional<std::string>& retry_after, std::string_view body,
                           const std::vector<std::string>& secrets, const std::string& credentials);

// An execute answer in text/event-stream: events "data" (or unnamed) are output chunks,
// "error" ends the call with the API's message (error()), "done" ends the output.
class StreamedOutput {
public:
    explicit StreamedOutput(std::vector<std::string> secrets, std::size_t max_bytes)
        : secrets_(std::move(secrets)), max_bytes_(max_bytes) {}
    // The chunks these bytes completed, in order (each is sent as a progress message), up
    // to an error event or output beyond max_bytes, which end the stream with error().
    std::vector<std::string> feed(std::string_view bytes);
    // The stream has ended: "done", or a failure (then error() is set).
    bool done() const { return done_; }
    const std::optional<ToolError>& error() const { return error_; }
    std::size_t chunks() const { return chunks_; }
    // The assembled output as the tool's result.
    ToolResult result() const;

private:
    client::SseParser parser_;
    std::vector<std::string> secrets_;
    std::size_t max_bytes_;
    std::string output_;
    std::size_t chunks_ = 0;
    bool done_ = false;
    std::optional<ToolError> error_;
};

}  // namespace toolport::rest
