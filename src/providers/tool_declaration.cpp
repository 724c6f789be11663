#include "providers/tool_declaration.hpp"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "schema/json_schema.hpp"

namespace toolport::providers {

namespace {

bool valid_tool_name(const std::string& name) {
    return !name.empty() && name.size() <= 128 && std::all_of(name.begin(), name.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
    });
}

std::shared_ptr<const schema::CompiledSchema> compile_or_fail(const Json& schema, const std::string& what) {
    if (!schema.is_object() || schema.value("type", Json()) != "object") {
        throw SourceError(fmt::format("{} must be a JSON Schema object with \"type\": \"object\"", what));
    }
    try {
        return std::make_shared<schema::CompiledSchema>(schema::compile(schema));
    } catch (const schema::SchemaError& e) {
        throw SourceError(fmt::format("{} does not compile: {}", what, e.what()));
    }
}

}  // namespace

Json ToolAnnotations::to_json(const std::string& title) const {
    Json j = Json::object();
    if (!title.empty()) j["title"] = title;
    if (read_only) j["readOnlyHint"] = *read_only;
    if (destructive) j["destructiveHint"] = *destructive;
    if (idempotent) j["idempotentHint"] = *idempotent;
    if (open_world) j["openWorldHint"] = *open_world;
    return j.empty() ? Json() : j;
}

ToolSpec make_tool_spec(ToolDeclaration d, const std::string& source) {
    if (!valid_tool_name(d.name)) {
        throw SourceError(fmt::format("source {}: \"{}\" is not a valid tool name (1-128 of A-Z a-z 0-9 _ . -)", source,
                                      d.name.substr(0, 140)));
    }
    const std::string tool = fmt::format("source {}: tool {}", source, d.name);
    if (!d.handler) throw SourceError(tool + " has no handler");
    ToolSpec spec;
    spec.compiled_input_schema = compile_or_fail(d.input_schema, tool + ": inputSchema");
    if (d.compile_on_first_call) spec.compiled_input_schema.reset();
    if (!d.output_schema.is_null()) {
        auto compiled_output = compile_or_fail(d.output_schema, tool + ": outputSchema");
        if (!d.compile_on_first_call) spec.compiled_output_schema = std::move(compiled_output);
    }
    spec.name = std::move(d.name);
    spec.annotations = d.annotations.to_json(d.title);
    spec.title = std::move(d.title);
    spec.description = std::move(d.description);
    spec.input_schema = std::move(d.input_schema);
    spec.output_schema = std::move(d.output_schema);
    spec.handler = std::move(d.handler);
    spec.service = std::move(d.service);
    spec.execution = std::move(d.execution);
    spec.meta = std::move(d.meta);
    spec.icons = std::move(d.icons);
    spec.on_cache_hit = std::move(d.on_cache_hit);
    spec.on_error = std::move(d.on_error);
    spec.paces_downstream = d.paces_downstream;
    spec.source = source;
    return spec;
}

}  // namespace toolport::providers
