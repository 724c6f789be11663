#include "server/error_result_guard.hpp"

#include <mutex>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "observability/metrics.hpp"
#include "schema/json_schema.hpp"
#include "server/registry.hpp"
#include "util/sanitize.hpp"

namespace toolport {

namespace {

bool has_text(const Json& content) {
    if (!content.is_array()) return false;
    for (const auto& block : content) {
        if (block.is_object() && block.value("type", "") == "text" && block.contains("text")) return true;
    }
    return false;
}

// The operator hears once per tool at warning level (a source that does it does it on
// every error), then at debug level.
bool first_time_for(const std::string& tool) {
    static std::mutex mutex;
    static std::set<std::string> seen;
    std::lock_guard lock(mutex);
    if (seen.size() > 10000) return false;
    return seen.insert(tool).second;
}

}  // namespace

bool matches_output_schema(const ToolSpec& tool, const Json& structured) {
    if (tool.compiled_output_schema) return tool.compiled_output_schema->is_valid(structured);
    // Tools whose schemas are compiled lazily (upstream and catalog tools): compiled here,
    // on an error path only, with the leniency the validation stage allows their inputs.
    try {
        schema::Options lenient;
        lenient.reject_unknown_dialect = false;
        return schema::compile(tool.output_schema, lenient).is_valid(structured);
    } catch (const schema::SchemaError&) {
        // What we cannot compile, a client's validator cannot be trusted to accept.
        return false;
    }
}

bool guard_error_result(const ToolSpec& tool, ToolResult& result, bool report) {
    if (!result.is_error || result.structured_content.is_null() || tool.output_schema.is_null()) return false;
    result.expand_raw_parts();  // read below
    if (matches_output_schema(tool, result.structured_content)) return false;

    if (!has_text(result.content)) {
        // The structured error was all the result said: its JSON becomes the text.
        if (!result.content.is_array()) result.content = Json::array();
        result.content.push_back(
            {{"type", "text"},
             {"text",
              util::sanitize_for_message(result.structured_content.dump(-1, ' ', false, Json::error_handler_t::replace),
                                         4000)}});
    }
    // Its fields stay machine-readable where no schema applies: _meta["toolport/error"].
    if (!result.meta.is_object()) result.meta = Json::object();
    result.meta[kDroppedErrorMetaKey] = std::move(result.structured_content);
    result.structured_content = nullptr;
    if (!report) return true;

    auto& metrics = observability::metrics();
    static std::once_flag described;
    std::call_once(described, [&] {
        metrics.describe("toolport_error_structured_content_dropped_total",
                         "Error results whose structuredContent did not match the tool's outputSchema and was "
                         "dropped (the text was kept), by tool");
    });
    metrics.increment("toolport_error_structured_content_dropped_total", {{"tool", tool.name}});
    if (first_time_for(tool.name)) {
        spdlog::warn(
            "tool {} (source {}): an error result's structuredContent does not match the tool's outputSchema; "
            "it is dropped so that schema-validating clients see the error text",
            tool.name, tool.source);
    } else {
        spdlog::debug("tool {}: error structuredContent dropped (outputSchema mismatch)", tool.name);
    }
    return true;
}

}  // namespace toolport
