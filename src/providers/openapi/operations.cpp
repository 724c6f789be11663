#include "providers/openapi/operations.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

#include <fmt/format.h>

#include "providers/openapi/openapi_schema.hpp"
#include "document/document.hpp"
#include "util/ascii.hpp"

namespace toolport::openapi {

namespace {

constexpr const char* kMethods[] = {"get", "put", "post", "delete", "options", "head", "patch", "trace"};

std::string upper(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}

bool contains(const std::vector<std::string>& list, const std::string& value) {
    return std::find(list.begin(), list.end(), value) != list.end();
}

std::string string_field(const Json& object, const char* key) {
    auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool is_json_media_type(const std::string& media_type) {
    const std::string type = util::to_lower_ascii(media_type.substr(0, media_type.find(';')));
    return type == "application/json" || (type.rfind("application/", 0) == 0 && type.ends_with("+json"));
}

// The JSON media type of a `content` map, if it has one (application/json first).
std::optional<std::string> json_media_type(const Json& content) {
    if (!content.is_object()) return std::nullopt;
    if (content.contains("application/json")) return std::string("application/json");
    for (const auto& [type, media] : content.items()) {
        if (is_json_media_type(type)) return type;
    }
    return std::nullopt;
}

Json media_schema(const Json& content, const std::string& type) {
    const Json& media = content[type];
    return media.is_object() && media.contains("schema") ? media["schema"] : Json::object();
}

// Headers the OpenAPI specification says are described elsewhere (and ignored here).
bool ignored_header(const std::string& name) {
    const std::string l = util::to_lower_ascii(name);
    return l == "accept" || l == "content-type" || l == "authorization";
}

std::uint32_t fnv1a(const std::string& text) {
    std::uint32_t hash = 2166136261u;
    for (unsigned char c : text) {
        hash ^= c;
        hash *= 16777619u;
    }
    return hash;
}

// The parameters of a path item and of its operation, the operation's winning for the
// same name and place.
std::vector<Json> merged_parameters(const Json& path_item, const Json& operation) {
    std::vector<Json> out;
    auto add = [&](const Json& list) {
        if (!list.is_array()) return;
        for (const auto& p : list) {
            if (!p.is_object()) continue;
            auto same = std::find_if(out.begin(), out.end(), [&](const Json& q) {
                return string_field(q, "name") == string_field(p, "name") &&
                       string_field(q, "in") == string_field(p, "in");
            });
            if (same != out.end()) *same = p;
            else out.push_back(p);
        }
    };
    add(path_item.value("parameters", Json::array()));
    add(operation.value("parameters", Json::array()));
    return out;
}

std::string default_style(const std::string& location) {
    return location == "query" || location == "cookie" ? "form" : "simple";
}

// One operation turned into a tool definition (without its final name). Throws
// DocumentError for what cannot be turned into one.
Operation build_operation(const DocumentSet& docs, const Json& root_security, const std::string& method,
                          const std::string& path, const Json& path_item, const Json& operation) {
    const bool v30 = docs.is_openapi_30();
    Operation op;
    op.method = upper(method);
    op.path = path;
    op.operation_id = string_field(operation, "operationId");
    if (auto tags = operation.find("tags"); tags != operation.end() && tags->is_array()) {
        for (const auto& t : *tags) {
            if (t.is_string()) op.tags.push_back(t.get<std::string>());
        }
    }
    op.title = string_field(operation, "summary");
    std::string description = string_field(operation, "description");
    if (description.empty()) description = op.title;
    else if (!op.title.empty() && description.rfind(op.title, 0) != 0) description = op.title + "\n\n" + description;
    if (operation.value("deprecated", false) == true) description = "Deprecated. " + description;
    op.description = description.empty() ? fmt::format("{} {}", op.method, path)
                                         : fmt::format("{}\n\n({} {})", description, op.method, path);

    Json properties = Json::object();
    Json required = Json::array();
    std::set<std::string> taken;
    for (const auto& p : merged_parameters(path_item, operation)) {
        Parameter param;
        param.name = string_field(p, "name");
        param.location = string_field(p, "in");
        if (param.name.empty()) throw DocumentError(fmt::format("a parameter of {} {} has no name", op.method, path));
        if (param.location != "path" && param.location != "query" && param.location != "header" &&
            param.location != "cookie") {
            throw DocumentError(
                fmt::format("parameter \"{}\" of {} {} is in \"{}\"", param.name, op.method, path, param.location));
        }
        if (param.location == "header" && ignored_header(param.name)) continue;
        param.required = param.location == "path" || p.value("required", false) == true;
        param.style = p.contains("style") && p["style"].is_string() ? p["style"].get<std::string>()
                                                                    : default_style(param.location);
        param.explode = p.contains("explode") && p["explode"].is_boolean() ? p["explode"].get<bool>()
                                                                           : param.style == "form";
        Json schema = Json::object();
        if (p.contains("schema")) {
            schema = to_json_schema(p["schema"], v30);
        } else if (auto type = json_media_type(p.value("content", Json())); type) {
            schema = to_json_schema(media_schema(p["content"], *type), v30);
            param.style = "json";
        }
        if (!schema.is_object()) schema = Json::object();
        if (auto d = string_field(p, "description"); !d.empty() && !schema.contains("description")) {
            schema["description"] = d;
        }
        if (p.value("deprecated", false) == true) schema["deprecated"] = true;
        param.argument = taken.count(param.name) ? param.name + "_" + param.location : param.name;
        if (taken.count(param.argument)) {
            throw DocumentError(fmt::format("{} {} declares parameter \"{}\" in {} twice", op.method, path, param.name,
                                            param.location));
        }
        taken.insert(param.argument);
        properties[param.argument] = std::move(schema);
        if (param.required) required.push_back(param.argument);
        op.parameters.push_back(std::move(param));
    }

    // A template variable the document forgot to declare: a required string all the same
    // (without it every call would fail).
    for (auto open = path.find('{'); open != std::string::npos; open = path.find('{', open + 1)) {
        const auto close = path.find('}', open);
        if (close == std::string::npos) break;
        const std::string name = path.substr(open + 1, close - open - 1);
        const bool declared = std::any_of(op.parameters.begin(), op.parameters.end(),
                                          [&](const Parameter& p) { return p.location == "path" && p.name == name; });
        if (declared || name.empty()) continue;
        Parameter param{.name = name, .location = "path", .argument = name, .required = true, .style = "simple"};
        if (taken.count(param.argument)) param.argument = name + "_path";
        taken.insert(param.argument);
        properties[param.argument] = {{"type", "string"}};
        required.push_back(param.argument);
        op.parameters.push_back(std::move(param));
    }

    if (auto body = operation.find("requestBody"); body != operation.end() && body->is_object()) {
        const bool body_required = body->value("required", false) == true;
        const Json content = body->value("content", Json::object());
        if (auto type = json_media_type(content)) {
            op.body.media_type = *type;
            op.body.required = body_required;
            Json schema = for_direction(to_json_schema(media_schema(content, *type), v30), Direction::request);
            bool flat = is_object_schema(schema) && schema.contains("properties") && schema["properties"].is_object() &&
                        !schema.contains("allOf") && !schema.contains("anyOf") && !schema.contains("oneOf") &&
                        !schema.contains("additionalProperties");
            if (flat) {
                for (const auto& [name, property] : schema["properties"].items()) flat = flat && !taken.count(name);
            }
            if (flat) {
                op.body.layout = BodyLayout::merged;
                for (const auto& [name, property] : schema["properties"].items()) {
                    op.body.properties.push_back(name);
                    properties[name] = property;
                }
                if (body_required && schema.contains("required") && schema["required"].is_array()) {
                    for (const auto& r : schema["required"]) {
                        if (r.is_string() && schema["properties"].contains(r.get<std::string>())) required.push_back(r);
                    }
                }
            } else {
                op.body.layout = BodyLayout::nested;
                op.body.argument = taken.count("body") ? "request_body" : "body";
                if (auto d = string_field(*body, "description");
                    !d.empty() && schema.is_object() && !schema.contains("description")) {
                    schema["description"] = d;
                }
                properties[op.body.argument] = std::move(schema);
                if (body_required) required.push_back(op.body.argument);
            }
        } else if (body_required) {
            throw DocumentError(fmt::format("{} {} needs a request body in a format other than JSON", op.method, path));
        }
    }
    op.input_schema = {{"type", "object"}, {"properties", std::move(properties)}, {"additionalProperties", false}};
    if (!required.empty()) op.input_schema["required"] = std::move(required);

    // The first 2xx response in code order, "2XX" last.
    const Json responses = operation.value("responses", Json::object());
    std::vector<std::string> codes;
    for (const auto& [code, response] : responses.items()) {
        if (code.size() == 3 && code[0] == '2') codes.push_back(code);
    }
    std::sort(codes.begin(), codes.end(), [](const std::string& a, const std::string& b) {
        const bool a_range = upper(a) == "2XX", b_range = upper(b) == "2XX";
        return a_range != b_range ? b_range : a < b;
    });
    op.expects_json = codes.empty();
    for (const auto& code : codes) {
        const Json& response = responses[code];
        if (!response.is_object()) continue;
        auto type = json_media_type(response.value("content", Json()));
        if (!type) continue;
        op.expects_json = true;
        if (op.output_schema.is_null()) {
            Json schema = for_direction(to_json_schema(media_schema(response["content"], *type), v30),
                                        Direction::response);
            if (is_object_schema(schema)) op.output_schema = std::move(schema);
        }
        break;
    }

    const Json& security = operation.contains("security") ? operation["security"] : root_security;
    if (security.is_array()) {
        for (const auto& requirement : security) {
            if (!requirement.is_object()) continue;
            std::vector<std::string> schemes;
            for (const auto& [scheme, scopes] : requirement.items()) schemes.push_back(scheme);
            op.security.push_back(std::move(schemes));
        }
    }

    const std::string m = op.method;
    if (m == "GET" || m == "HEAD") op.annotations.read_only = true;
    if (m == "DELETE") op.annotations.destructive = true;
    if (m == "GET" || m == "HEAD" || m == "PUT" || m == "DELETE" || m == "OPTIONS") op.annotations.idempotent = true;
    op.annotations.open_world = true;
    return op;
}

}  // namespace

bool OperationFilter::keeps(const std::vector<std::string>& names, const std::vector<std::string>& tags) const {
    auto any_in = [](const std::vector<std::string>& values, const std::vector<std::string>& wanted) {
        return std::any_of(values.begin(), values.end(),
                           [&](const std::string& v) { return !v.empty() && contains(wanted, v); });
    };
    const bool any_include = !include_tags.empty() || !include_operations.empty();
    if (any_include && !any_in(tags, include_tags) && !any_in(names, include_operations)) return false;
    return !any_in(tags, exclude_tags) && !any_in(names, exclude_operations);
}

std::string safe_tool_name(const std::string& raw) {
    std::string out;
    for (char c : raw) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
        if (ok) out += c;
        else if (!out.empty() && out.back() != '_') out += '_';
    }
    while (!out.empty() && out.back() == '_') out.pop_back();
    return out.empty() ? "operation" : out;
}

std::string fit_tool_name(const std::string& name, std::size_t max) {
    if (name.size() <= max) return name;
    const std::string tail = fmt::format("_{:08x}", fnv1a(name));
    return name.substr(0, max - tail.size()) + tail;
}

std::vector<std::string> unique_tool_names(const std::vector<std::string>& wanted) {
    std::vector<std::string> out;
    std::set<std::string> taken;
    for (const auto& name : wanted) {
        std::string candidate = fit_tool_name(name);
        for (int n = 2; taken.count(candidate); ++n) {
            const std::string suffix = "_" + std::to_string(n);
            candidate = fit_tool_name(name, 64 - suffix.size()) + suffix;
        }
        taken.insert(candidate);
        out.push_back(std::move(candidate));
    }
    return out;
}

OperationList read_operations(const DocumentSet& docs, const OperationFilter& filter, const std::string& tool_prefix) {
    struct Found {
        int line;
        std::string path;
        int method_rank;
        Operation op;
    };
    std::vector<Found> found;
    OperationList list;
    const Json& root = docs.root();
    const Json root_security = root.value("security", Json::array());
    const Json paths = root.value("paths", Json::object());
    for (const auto& [path, raw_item] : paths.items()) {
        const std::string item_pointer = document::pointer_append("/paths", path);
        if (!raw_item.is_object()) continue;
        // A path item by $ref is taken whole; otherwise each operation is resolved on its
        // own, so that one broken ref costs one operation, not its neighbours.
        Json item;
        try {
            if (raw_item.contains("$ref")) {
                item = docs.resolve(raw_item, docs.root_location());
            } else {
                item = raw_item;
                if (item.contains("parameters"))
                    item["parameters"] = docs.resolve(item["parameters"], docs.root_location());
            }
        } catch (const DocumentError& e) {
            list.warnings.push_back(fmt::format("path {} left out: {}", path, e.what()));
            continue;
        }
        if (!item.is_object()) continue;
        for (int rank = 0; rank < static_cast<int>(std::size(kMethods)); ++rank) {
            const char* method = kMethods[rank];
            if (!item.contains(method) || !item[method].is_object()) continue;
            Json operation;
            try {
                operation = raw_item.contains("$ref") ? item[method] : docs.resolve(item[method], docs.root_location());
            } catch (const DocumentError& e) {
                list.warnings.push_back(fmt::format("{} {} left out: {}", upper(method), path, e.what()));
                continue;
            }
            const std::string id = string_field(operation, "operationId");
            const std::string derived = safe_tool_name(id.empty() ? std::string(method) + "_" + path : id);
            std::vector<std::string> tags;
            if (operation.contains("tags") && operation["tags"].is_array()) {
                for (const auto& t : operation["tags"]) {
                    if (t.is_string()) tags.push_back(t.get<std::string>());
                }
            }
            if (!filter.keeps({id, derived}, tags)) continue;
            try {
                Operation op = build_operation(docs, root_security, method, path, item, operation);
                op.tool_name = safe_tool_name(tool_prefix + derived);
                int line = docs.line_of(document::pointer_append(item_pointer, method));
                if (line == 0) line = docs.line_of(item_pointer);
                found.push_back({line, path, rank, std::move(op)});
            } catch (const DocumentError& e) {
                list.warnings.push_back(fmt::format("{} {} left out: {}", upper(method), path, e.what()));
            }
        }
    }
    std::stable_sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
        return std::tie(a.line, a.path, a.method_rank) < std::tie(b.line, b.path, b.method_rank);
    });
    std::vector<std::string> wanted;
    for (const auto& f : found) wanted.push_back(f.op.tool_name);
    auto names = unique_tool_names(wanted);
    for (std::size_t i = 0; i < found.size(); ++i) {
        found[i].op.tool_name = names[i];
        list.operations.push_back(std::move(found[i].op));
    }
    return list;
}

}  // namespace toolport::openapi
