#include "providers/gateway/registry/server_json.hpp"

#include <initializer_list>

#include <fmt/format.h>

namespace toolport::registry {

namespace {

// The member under the first of `spellings` present (a field's camelCase name first, then
// the 2025-07-09 snake_case one, then a draft's).
const Json* member(const Json& object, std::initializer_list<const char*> spellings) {
    for (const char* key : spellings) {
        if (auto it = object.find(key); it != object.end() && !it->is_null()) return &*it;
    }
    return nullptr;
}

std::string text(const Json& object, std::initializer_list<const char*> spellings, const std::string& where) {
    const Json* value = member(object, spellings);
    if (!value) return {};
    if (value->is_string()) return value->get<std::string>();
    // Numbers and booleans as the schema says they become strings.
    if (value->is_boolean()) return value->get<bool>() ? "true" : "false";
    if (value->is_number()) return value->dump();
    throw ServerJsonError(fmt::format("{}.{} must be a string", where, *spellings.begin()));
}

bool flag(const Json& object, std::initializer_list<const char*> spellings) {
    const Json* value = member(object, spellings);
    return value && value->is_boolean() && value->get<bool>();
}

ServerInput read_input(const Json& j, const std::string& where);

std::map<std::string, ServerInput> read_variables(const Json& object, const std::string& where) {
    std::map<std::string, ServerInput> out;
    const Json* variables = member(object, {"variables"});
    if (!variables) return out;
    if (!variables->is_object()) throw ServerJsonError(where + ".variables must be an object");
    for (const auto& [name, value] : variables->items()) out[name] = read_input(value, where + ".variables." + name);
    return out;
}

ServerInput read_input(const Json& j, const std::string& where) {
    if (!j.is_object()) throw ServerJsonError(where + " must be an object");
    ServerInput in;
    in.type = text(j, {"type"}, where);
    in.name = text(j, {"name"}, where);
    in.value_hint = text(j, {"valueHint", "value_hint"}, where);
    in.description = text(j, {"description"}, where);
    in.value = text(j, {"value"}, where);
    in.default_value = text(j, {"default"}, where);
    in.format = text(j, {"format"}, where);
    in.required = flag(j, {"isRequired", "is_required"});
    in.secret = flag(j, {"isSecret", "is_secret"});
    in.repeated = flag(j, {"isRepeated", "is_repeated"});
    in.variables = read_variables(j, where);
    return in;
}

std::vector<ServerInput> read_inputs(const Json& object, std::initializer_list<const char*> spellings,
                                     const std::string& where) {
    std::vector<ServerInput> out;
    const Json* list = member(object, spellings);
    if (!list) return out;
    const std::string field = where + "." + *spellings.begin();
    if (!list->is_array()) throw ServerJsonError(field + " must be an array");
    for (std::size_t i = 0; i < list->size(); ++i)
        out.push_back(read_input((*list)[i], fmt::format("{}[{}]", field, i)));
    return out;
}

ServerPackage read_package(const Json& j, const std::string& where) {
    if (!j.is_object()) throw ServerJsonError(where + " must be an object");
    ServerPackage p;
    p.registry_type = text(j, {"registryType", "registry_type", "registry_name"}, where);
    if (p.registry_type == "docker") p.registry_type = "oci";  // the drafts' name for it
    if (p.registry_type.empty()) throw ServerJsonError(where + ".registryType is missing");
    p.registry_base_url = text(j, {"registryBaseUrl", "registry_base_url"}, where);
    p.identifier = text(j, {"identifier", "name"}, where);
    if (p.identifier.empty()) throw ServerJsonError(where + ".identifier is missing");
    p.version = text(j, {"version"}, where);
    p.runtime_hint = text(j, {"runtimeHint", "runtime_hint"}, where);
    if (const Json* transport = member(j, {"transport"})) {
        if (transport->is_string()) {
            p.transport = transport->get<std::string>();
        } else if (transport->is_object()) {
            p.transport = text(*transport, {"type"}, where + ".transport");
            p.transport_url = text(*transport, {"url"}, where + ".transport");
        } else {
            throw ServerJsonError(where + ".transport must be an object");
        }
        if (p.transport.empty()) p.transport = "stdio";
    }
    p.runtime_arguments = read_inputs(j, {"runtimeArguments", "runtime_arguments"}, where);
    p.package_arguments = read_inputs(j, {"packageArguments", "package_arguments"}, where);
    p.environment_variables = read_inputs(j, {"environmentVariables", "environment_variables"}, where);
    return p;
}

ServerRemote read_remote(const Json& j, const std::string& where) {
    if (!j.is_object()) throw ServerJsonError(where + " must be an object");
    ServerRemote r;
    r.type = text(j, {"type", "transport_type"}, where);
    if (r.type == "streamable" || r.type == "http") r.type = "streamable-http";  // the drafts' spelling
    r.url = text(j, {"url"}, where);
    if (r.url.empty()) throw ServerJsonError(where + ".url is missing");
    if (r.type != "streamable-http" && r.type != "sse")
        throw ServerJsonError(fmt::format("{}.type \"{}\" is neither streamable-http nor sse", where, r.type));
    r.headers = read_inputs(j, {"headers"}, where);
    r.variables = read_variables(j, where);
    return r;
}

}  // namespace

ServerJson read_server_json(const Json& server) {
    if (!server.is_object()) throw ServerJsonError("server.json must be an object");
    ServerJson s;
    const std::string where = "server";
    s.schema = text(server, {"$schema"}, where);
    s.name = text(server, {"name"}, where);
    if (s.name.empty()) throw ServerJsonError("server.name is missing");
    s.title = text(server, {"title"}, where);
    s.description = text(server, {"description"}, where);
    s.version = text(server, {"version"}, where);
    if (s.version.empty()) {
        if (const Json* detail = member(server, {"version_detail"}); detail && detail->is_object())
            s.version = text(*detail, {"version"}, "server.version_detail");
    }
    if (const Json* packages = member(server, {"packages"})) {
        if (!packages->is_array()) throw ServerJsonError("server.packages must be an array");
        for (std::size_t i = 0; i < packages->size(); ++i)
            s.packages.push_back(read_package((*packages)[i], fmt::format("server.packages[{}]", i)));
    }
    if (const Json* remotes = member(server, {"remotes"})) {
        if (!remotes->is_array()) throw ServerJsonError("server.remotes must be an array");
        for (std::size_t i = 0; i < remotes->size(); ++i)
            s.remotes.push_back(read_remote((*remotes)[i], fmt::format("server.remotes[{}]", i)));
    }
    return s;
}

}  // namespace toolport::registry
