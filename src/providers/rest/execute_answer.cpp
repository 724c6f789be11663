#include "providers/rest/execute_answer.hpp"

#include <fmt/format.h>

#include "providers/downstream_errors.hpp"
#include "providers/rest/catalog_listing.hpp"
#include "providers/secret_redaction.hpp"
#include "util/percent.hpp"
#include "util/sanitize.hpp"

namespace toolport::rest {

using namespace std::chrono_literals;

namespace {

Json fill(const Json& node, const std::string& name, const Json& arguments) {
    if (node.is_string()) {
        const auto& text = node.get_ref<const std::string&>();
        if (text == "{arguments}") return arguments;
        if (text == "{name}") return name;
        std::string out = text;
        for (auto at = out.find("{name}"); at != std::string::npos; at = out.find("{name}", at + name.size())) {
            out.replace(at, 6, name);
        }
        return out;
    }
    if (node.is_object()) {
        Json out = Json::object();
        for (const auto& [key, value] : node.items()) out[key] = fill(value, name, arguments);
        return out;
    }
    if (node.is_array()) {
        Json out = Json::array();
        for (const auto& value : node) out.push_back(fill(value, name, arguments));
        return out;
    }
    return node;
}

// The readable message of an API's error body: error, message, detail (strings or
// {message}), else the start of the body.
std::string api_message(std::string_view body) {
    auto parsed = Json::parse(body, nullptr, false);
    if (parsed.is_object()) {
        for (const char* key : {"error", "message", "detail", "error_description"}) {
            auto it = parsed.find(key);
            if (it == parsed.end()) continue;
            if (it->is_string() && !it->get<std::string>().empty()) return it->get<std::string>();
            if (it->is_object() && it->contains("message") && (*it)["message"].is_string()) {
                return (*it)["message"].get<std::string>();
            }
        }
    }
    if (body.empty()) return "no details given";
    return std::string(body.substr(0, 600));
}

std::string clean(std::string text, const std::vector<std::string>& secrets, std::size_t max = 500) {
    return util::sanitize_for_message(providers::redact_text(std::move(text), secrets), max);
}

// A stream chunk's text: the data itself, or the text inside a JSON wrapper.
std::string chunk_text(const std::string& data) {
    auto parsed = Json::parse(data, nullptr, false);
    if (parsed.is_string()) return parsed.get<std::string>();
    if (parsed.is_object()) {
        for (const char* key : {"output", "chunk", "text", "content", "data", "delta"}) {
            auto it = parsed.find(key);
            if (it != parsed.end() && it->is_string()) return it->get<std::string>();
        }
    }
    return data;
}

}  // namespace

std::string execute_url(const CatalogSettings& settings, const std::string& catalog_name, bool streaming) {
    std::string path = settings.execute.url;
    const std::string encoded = util::percent_encode(catalog_name);
    for (auto at = path.find("{name}"); at != std::string::npos; at = path.find("{name}", at + encoded.size())) {
        path.replace(at, 6, encoded);
    }
    std::string url = path.rfind("http://", 0) == 0 || path.rfind("https://", 0) == 0 ? path : settings.base_url + path;
    if (streaming && !settings.execute.stream_query.empty()) {
        url += (url.find('?') == std::string::npos ? "?" : "&") + settings.execute.stream_query;
    }
    return url;
}

Json execute_body(const Json& body_template, const std::string& catalog_name, const Json& arguments) {
    return fill(body_template, catalog_name, arguments);
}

bool wants_stream(const ExecuteSettings& execute, const Json& arguments) {
    if (execute.stream_argument.empty() || !arguments.is_object()) return false;
    auto it = arguments.find(execute.stream_argument);
    return it != arguments.end() && it->is_boolean() && it->get<bool>();
}

ToolResult read_execute_answer(const Json& answer, const ExecuteSettings& execute,
                               const std::vector<std::string>& secrets, const Json& output_schema) {
    auto error_message = [&]() -> std::string {
        for (const auto& path : execute.error_paths) {
            const Json* error = find_path(answer, path);
            if (!error || error->is_null()) continue;
            if (error->is_string() && !error->get<std::string>().empty()) return error->get<std::string>();
            if (error->is_object() && error->contains("message") && (*error)["message"].is_string()) {
                return (*error)["message"].get<std::string>();
            }
        }
        return {};
    };
    bool failed = false;
    for (const auto& path : execute.success_paths) {
        const Json* success = find_path(answer, path);
        if (success && success->is_boolean() && !success->get<bool>()) failed = true;
    }
    const Json* output = nullptr;
    for (const auto& path : execute.output_paths) {
        output = find_path(answer, path);
        if (output && !output->is_null()) break;
        output = nullptr;
    }
    const std::string message = error_message();
    if (failed || (!output && !message.empty())) {
        throw ToolError(ToolErrorCode::upstream_error,
                        "The API reported that the tool failed: " +
                            clean(message.empty() ? std::string("no reason given") : message, secrets))
            // The API answered, and said no: the same call would be refused again (unlike
            // an HTTP 5xx, a timeout or an unreadable answer).
            .transient(false)
            .suggest("Read the API's message: correct the arguments it names, or retry later if it is temporary.");
    }
    const Json& value = output ? *output : answer;
    ToolResult result;
    if (value.is_string()) {
        result = ToolResult::text(value.get_ref<const std::string&>());
    } else {
        result = ToolResult::text(value.dump(-1, ' ', false, Json::error_handler_t::replace));
        if (value.is_object()) result.structured_content = value;
    }
    Json kept = Json::object();
    for (const auto& path : execute.meta_paths) {
        if (const Json* field = find_path(answer, path); field && !field->is_null()) kept[path] = *field;
    }
    if (!kept.empty()) result.meta = Json{{"catalog", std::move(kept)}};
    // A catalog that echoes the keys it was sent (an account lookup, a debugging echo) must
    // not hand them to the client: as in its errors, they are redacted.
    if (providers::redact_result(result, secrets)) providers::check_redacted_output(result, output_schema, "the tool");
    return result;
}

ToolError error_for_status(unsigned status, const std::optional<std::string>& retry_after, std::string_view body,
                           const std::vector<std::string>& secrets, const std::string& credentials) {
    const std::string message = clean(api_message(body), secrets);
    if (status == 401 || status == 403) {
        return ToolError(ToolErrorCode::upstream_error,
                         fmt::format("The API refused the credentials (HTTP {}): {}", status, message))
            .recoverable(false)
            .suggest(fmt::format("Check the keys the server sends ({}).", credentials));
    }
    if (status == 402) {
        return ToolError(ToolErrorCode::upstream_error, fmt::format("The API asks for payment (HTTP 402): {}", message))
            .recoverable(false)
            .suggest("The account or budget behind the keys has run out; top it up or use another budget key.");
    }
    if (status == 404) {
        return ToolError(ToolErrorCode::not_found, fmt::format("The API does not know this tool or record: {}", message))
            .suggest("The catalog may have changed: list the tools again (they are refreshed on reload).");
    }
    if (status == 429) {
        return providers::rate_limited_error(fmt::format("The API's rate limit was reached: {}", message), retry_after);
    }
    if (status == 408) {
        return ToolError(ToolErrorCode::upstream_error,
                         fmt::format("The API timed out the request (HTTP 408): {}", message))
            .transient(true)
            .suggest("Retry in a moment.");
    }
    if (status >= 400 && status < 500) {
        return ToolError(ToolErrorCode::invalid_argument,
                         fmt::format("The API rejected the request (HTTP {}): {}", status, message))
            .suggest("Correct the arguments the message names and retry.");
    }
    return ToolError(ToolErrorCode::upstream_error, fmt::format("The API returned HTTP {}: {}", status, message))
        .transient(status >= 500)
        .suggest("The API had trouble; retry in a moment.");
}

std::vector<std::string> StreamedOutput::feed(std::string_view bytes) {
    std::vector<std::string> chunks;
    if (done_) return chunks;
    std::vector<client::SseEvent> events;
    try {
        events = parser_.feed(bytes);
    } catch (const client::SseError& e) {
        error_ = ToolError(ToolErrorCode::response_too_large,
                           fmt::format("The API's stream has an event that is too large: {}", e.what()));
        done_ = true;
        return chunks;
    }
    // A failure ends the stream, but the chunks before it in the same bytes are still
    // returned: the client hears the same progress however the network cut the stream.
    for (auto& event : events) {
        if (event.type == "done") {
            done_ = true;
            break;
        }
        if (event.type == "error") {
            error_ =
                ToolError(ToolErrorCode::upstream_error,
                          "The API reported that the tool failed: " + clean(chunk_text(event.data), secrets_))
                    .suggest(
                        "Read the API's message: correct the arguments it names, or retry later if it is temporary.");
            done_ = true;
            break;
        }
        if (event.type != "message" && event.type != "data") continue;  // comments, heartbeats, other kinds
        std::string text = providers::redact_text(chunk_text(event.data), secrets_);
        if (output_.size() + text.size() > max_bytes_) {
            error_ = ToolError(ToolErrorCode::response_too_large,
                               fmt::format("The API's streamed output is over {} bytes", max_bytes_))
                         .suggest("Ask for less output (narrower arguments).");
            done_ = true;
            break;
        }
        output_ += text;
        ++chunks_;
        chunks.push_back(std::move(text));
    }
    return chunks;
}

ToolResult StreamedOutput::result() const {
    // Each chunk was redacted on its own; a secret the stream cut between two chunks is
    // whole again in the assembled output.
    ToolResult result = ToolResult::text(providers::redact_text(output_, secrets_));
    result.meta = Json{{"catalog", {{"streamed_chunks", chunks_}}}};
    return result;
}

}  // namespace toolport::rest
