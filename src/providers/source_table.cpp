#include "providers/source_table.hpp"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

#include "server/server.hpp"
#include "util/closest_name.hpp"

namespace toolport::providers {

// Each source's factory, defined in its folder.
std::unique_ptr<Source> make_conformance_source(const SourceSettings& settings);
std::unique_ptr<Source> make_testing_source(const SourceSettings& settings);
std::unique_ptr<Source> make_tango_source(const SourceSettings& settings);
std::unique_ptr<Source> make_context_source(const SourceSettings& settings);
std::unique_ptr<Source> make_rest_catalog_source(const SourceSettings& settings);
std::unique_ptr<Source> make_openapi_source(const SourceSettings& settings);
std::unique_ptr<Source> make_gateway_source(const SourceSettings& settings);
const config::Section& conformance_settings_table();

}  // namespace toolport::providers

// Each kind's table of settings, declared in its folder.
namespace toolport::tango {
const config::Section& settings_table();
}
namespace toolport::context {
const config::Section& settings_table();
}
namespace toolport::openapi {
const config::Section& settings_table();
}
namespace toolport::rest {
const config::Section& settings_table();
}
namespace toolport::gateway {
const config::Section& settings_table();
}

namespace toolport::providers {

namespace {

bool testing_pack_enabled() {
    const char* flag = std::getenv("TOOLPORT_TEST_PACK");
    return flag && std::string_view(flag) == "1";
}

const std::vector<SourceKind>& table() {
    static const std::vector<SourceKind> sources = {
        {"conformance", "the tools, resources and prompts the official MCP conformance suite drives",
         make_conformance_source, [] { return true; }, false, &conformance_settings_table()},
        {"testing", "tools that misbehave on demand, for the pipeline's tests (TOOLPORT_TEST_PACK=1)",
         make_testing_source, testing_pack_enabled},
        {"tango", "U.S. federal contracting data from the Tango API (TANGO_API_KEY)", make_tango_source,
         [] { return true; }, false, &tango::settings_table()},
        {"context", "context engineering: pattern and skill library, session artifacts and memory, metrics",
         make_context_source, [] { return true; }, false, &context::settings_table()},
        {"rest", "tools defined by a REST API's catalog, calls proxied to it (`rest:`, --rest agentpmt)",
         make_rest_catalog_source, [] { return true; }, true, &rest::settings_table()},
        {"openapi", "each operation of an OpenAPI 3.0/3.1 document as a tool (`openapi:`, --openapi FILE_OR_URL)",
         make_openapi_source, [] { return true; }, true, &openapi::settings_table()},
        {"gateway", "upstream MCP servers served as this server's own (`upstreams:`, --upstream, --import)",
         make_gateway_source, [] { return true; }, true, &gateway::settings_table()},
    };
    return sources;
}

}  // namespace

std::vector<const SourceKind*> source_kinds() {
    std::vector<const SourceKind*> out;
    for (const auto& kind : table()) {
        if (kind.available() && !kind.named_instances) out.push_back(&kind);
    }
    std::sort(out.begin(), out.end(), [](const SourceKind* a, const SourceKind* b) { return a->name < b->name; });
    return out;
}

const SourceKind* find_source_kind(std::string_view name) {
    for (const auto* kind : source_kinds()) {
        if (kind->name == name) return kind;
    }
    return nullptr;
}

std::string source_names() {
    std::string names;
    for (const auto* kind : source_kinds()) names += (names.empty() ? "" : ", ") + kind->name;
    return names;
}

std::string unknown_pack_message(std::string_view name) {
    std::vector<std::string> known;
    for (const auto* kind : source_kinds()) known.push_back(kind->name);
    return fmt::format("unknown pack \"{}\"{} (known: {})", name, util::did_you_mean(name, known), source_names());
}

const SourceKind* find_instance_kind(std::string_view name) {
    for (const auto& kind : table()) {
        if (kind.named_instances && kind.name == name) return &kind;
    }
    return nullptr;
}

RunningSource::RunningSource(std::unique_ptr<SourceContext> context, std::unique_ptr<Source> source)
    : context_(std::move(context)), source_(std::move(source)) {}

RunningSource::~RunningSource() {
    if (source_) source_->stop();
}

RunningSource start_source(const SourceKind& kind, McpServer& server, const SourceSettings& settings,
                           SourceServices services, const std::string& instance_name) {
    auto source = kind.make(settings);
    auto context = std::make_unique<SourceContext>(instance_name.empty() ? kind.name : instance_name, server, services);
    // The packs (every kind but the configured instances of REST, OpenAPI and the gateway)
    // are Toolport's own: their tools refuse any argument they do not define. The others
    // follow their schema, or their `strict_arguments` setting.
    if (!kind.named_instances) context->set_strict_arguments(true);
    server.registry().batch([&] { source->start(*context); });
    return RunningSource(std::move(context), std::move(source));
}

RunningSource start_source(const std::string& name, McpServer& server, const SourceSettings& settings,
                           SourceServices services) {
    for (const auto& kind : table()) {
        if (kind.name == name) return start_source(kind, server, settings, services);
    }
    throw SourceError("unknown source \"" + name + "\"");
}

}  // namespace toolport::providers
