#include "providers/rest/schema_repair.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "util/ascii.hpp"
#include "util/sanitize.hpp"

namespace toolport::rest {

namespace {

constexpr int kMaxDepth = 48;

// A short rendering of a value for a repair line.
std::string shown(const Json& value) { return util::sanitize_for_message(value.dump(), 60); }

std::string child(const std::string& path, const std::string& key) { return path.empty() ? key : path + "." + key; }

class Repairer {
public:
    explicit Repairer(std::vector<std::string>& repairs) : repairs_(repairs) {}

    // Repairs the subschema `s` at `path`; false when it is beyond repair (why_ says why).
    bool repair(Json& s, const std::string& path, int depth) {
        if (depth > kMaxDepth) {
            why_ = fmt::format("{}: nested more than {} levels deep", path.empty() ? "the schema" : path, kMaxDepth);
            return false;
        }
        if (s.is_boolean()) return true;
        if (!s.is_object()) {
            note(path, fmt::format("{} is not a schema; any value is accepted there", shown(s)));
            s = Json::object();
            return true;
        }
        fix_type(s, path);
        fix_enum(s, path);
        fix_default(s, path);
        if (!fix_properties(s, path, depth)) return false;
        fix_required(s, path);
        for (const char* key : {"items", "additionalProperties", "not", "contains", "propertyNames"}) {
            auto it = s.find(key);
            if (it == s.end()) continue;
            if (it->is_array() && std::string(key) == "items") {
                // Draft-4 tuple form: each item schema in turn.
                for (std::size_t i = 0; i < it->size(); ++i) {
                    if (!repair((*it)[i], child(path, fmt::format("items.{}", i)), depth + 1)) return false;
                }
            } else if (!repair(*it, child(path, key), depth + 1)) {
                return false;
            }
        }
        for (const char* key : {"anyOf", "oneOf", "allOf", "prefixItems"}) {
            auto it = s.find(key);
            if (it == s.end()) continue;
            if (!it->is_array() || it->empty()) {
                note(child(path, key), "not a non-empty list of schemas; removed");
                s.erase(key);
                continue;
            }
            for (std::size_t i = 0; i < it->size(); ++i) {
                if (!repair((*it)[i], child(path, fmt::format("{}.{}", key, i)), depth + 1)) return false;
            }
        }
        for (const char* key : {"$defs", "definitions", "patternProperties"}) {
            auto it = s.find(key);
            if (it == s.end()) continue;
            if (!it->is_object()) {
                note(child(path, key), "not a mapping of schemas; removed");
                s.erase(key);
                continue;
            }
            for (auto& [name, sub] : it->items()) {
                if (!repair(sub, child(path, std::string(key) + "." + name), depth + 1)) return false;
            }
        }
        return true;
    }

    const std::string& why() const { return why_; }
    void note(const std::string& path, const std::string& what) {
        repairs_.push_back(fmt::format("{}: {}", path.empty() ? "(top)" : path, what));
    }

private:
    // The single type a schema declares, or "".
    static std::string single_type(const Json& s) {
        auto it = s.find("type");
        return it != s.end() && it->is_string() ? it->get<std::string>() : std::string();
    }

    void fix_type(Json& s, const std::string& path) {
        auto it = s.find("type");
        if (it == s.end()) return;
        auto fix_one = [&](Json& t) -> bool {  // false: drop it
            if (!t.is_string()) return false;
            std::string name = t.get<std::string>();
            std::string lower = util::to_lower_ascii(name);
            static const std::pair<const char*, const char*> aliases[] = {{"int", "integer"},    {"long", "integer"},
                                                                          {"float", "number"},   {"double", "number"},
                                                                          {"decimal", "number"}, {"bool", "boolean"},
                                                                          {"str", "string"},     {"text", "string"},
                                                                          {"dict", "object"},    {"map", "object"},
                                                                          {"list", "array"}};
            for (const auto& [from, to] : aliases) {
                if (lower == from) lower = to;
            }
            static const char* standard[] = {"string", "number", "integer", "boolean", "object", "array", "null"};
            if (std::find(std::begin(standard), std::end(standard), lower) == std::end(standard)) return false;
            if (lower != name) {
                note(child(path, "type"), fmt::format("\"{}\" → \"{}\"", util::sanitize_for_message(name, 40), lower));
                t = lower;
            }
            return true;
        };
        if (it->is_array()) {
            Json kept = Json::array();
            for (auto& t : *it) {
                if (fix_one(t)) kept.push_back(t);
                else note(child(path, "type"), fmt::format("{} is not a JSON Schema type; removed", shown(t)));
            }
            if (kept.empty()) s.erase("type");
            else *it = kept;
        } else if (!fix_one(*it)) {
            note(child(path, "type"), fmt::format("{} is not a JSON Schema type; removed", shown(*it)));
            s.erase("type");
        }
    }

    void fix_enum(Json& s, const std::string& path) {
        auto it = s.find("enum");
        if (it == s.end()) return;
        if (!it->is_array() || it->empty()) {
            note(child(path, "enum"), "not a non-empty list; removed");
            s.erase("enum");
        }
    }

    // `value` as `type`, or nullopt when it cannot be read as one.
    static std::optional<Json> coerce(const Json& value, const std::string& type) {
        if (type == "integer") {
            if (value.is_number_float()) {
                double d = value.get<double>();
                if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < 9e15)
                    return Json(static_cast<long long>(d));
            }
            if (value.is_string()) {
                auto text = value.get<std::string>();
                try {
                    std::size_t used = 0;
                    long long n = std::stoll(text, &used);
                    if (used == text.size()) return Json(n);
                } catch (const std::logic_error&) {}
            }
            return std::nullopt;
        }
        if (type == "number") {
            if (value.is_string()) {
                auto text = value.get<std::string>();
                try {
                    std::size_t used = 0;
                    double d = std::stod(text, &used);
                    if (used == text.size() && std::isfinite(d)) return Json(d);
                } catch (const std::logic_error&) {}
            }
            return std::nullopt;
        }
        if (type == "boolean") {
            if (value.is_string()) {
                auto text = value.get<std::string>();
                if (text == "true" || text == "True" || text == "TRUE") return Json(true);
                if (text == "false" || text == "False" || text == "FALSE") return Json(false);
            }
            if (value.is_number_integer() && (value.get<long long>() == 0 || value.get<long long>() == 1)) {
                return Json(value.get<long long>() == 1);
            }
            return std::nullopt;
        }
        if (type == "string") {
            if (value.is_number() || value.is_boolean()) return Json(value.dump());
            return std::nullopt;
        }
        if (type == "array" || type == "object") {
            if (value.is_string()) {
                auto parsed = Json::parse(value.get<std::string>(), nullptr, false);
                if (!parsed.is_discarded() && (type == "array" ? parsed.is_array() : parsed.is_object())) return parsed;
            }
            return std::nullopt;
        }
        return std::nullopt;
    }

    static bool has_type(const Json& value, const std::string& type) {
        if (type == "integer")
            return value.is_number_integer() ||
                   (value.is_number_float() && value.get<double>() == std::floor(value.get<double>()));
        if (type == "number") return value.is_number();
        if (type == "boolean") return value.is_boolean();
        if (type == "string") return value.is_string();
        if (type == "array") return value.is_array();
        if (type == "object") return value.is_object();
        if (type == "null") return value.is_null();
        return true;
    }

    void fix_default(Json& s, const std::string& path) {
        auto it = s.find("default");
        if (it == s.end()) return;
        const std::string where = child(path, "default");
        const std::string type = single_type(s);
        if (!type.empty() && !has_type(*it, type)) {
            if (auto value = coerce(*it, type)) {
                note(where, fmt::format("{} → {} (the type is {})", shown(*it), shown(*value), type));
                *it = std::move(*value);
            } else {
                note(where, fmt::format("{} is not of type {}; removed", shown(*it), type));
                s.erase("default");
                return;
            }
        }
        auto e = s.find("enum");
        if (e != s.end() && e->is_array() && std::find(e->begin(), e->end(), *it) == e->end()) {
            // The first enum value would be a guess at what the API meant; no default is not.
            note(where, fmt::format("{} is not one of the enum's values; removed", shown(*it)));
            s.erase("default");
        }
    }

    bool fix_properties(Json& s, const std::string& path, int depth) {
        auto it = s.find("properties");
        if (it == s.end()) return true;
        if (!it->is_object()) {
            note(child(path, "properties"), "not a mapping of schemas; removed");
            s.erase("properties");
            return true;
        }
        std::vector<std::string> now_required;
        for (auto& [name, sub] : it->items()) {
            const std::string where = child(path, "properties." + name);
            if (sub.is_object()) {
                auto r = sub.find("required");
                if (r != sub.end() && r->is_boolean()) {
                    if (r->get<bool>()) now_required.push_back(name);
                    note(where + ".required", r->get<bool>() ? "true → listed in the object's required"
                                                             : "false → removed (not a JSON Schema keyword here)");
                    sub.erase("required");
                }
            }
            if (!repair(sub, where, depth + 1)) return false;
        }
        if (!now_required.empty()) {
            Json& required = s["required"];
            if (!required.is_array()) required = Json::array();
            for (auto& name : now_required) {
                if (std::find(required.begin(), required.end(), name) == required.end()) required.push_back(name);
            }
        }
        return true;
    }

    void fix_required(Json& s, const std::string& path) {
        auto it = s.find("required");
        if (it == s.end()) return;
        if (!it->is_array()) {
            note(child(path, "required"), fmt::format("{} is not a list of property names; removed", shown(*it)));
            s.erase("required");
            return;
        }
        Json names = Json::array();
        for (const auto& name : *it) {
            if (name.is_string() && std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
        }
        if (names.size() != it->size()) {
            note(child(path, "required"), "entries that are not names (or repeated) removed");
            *it = std::move(names);
        }
    }

    std::vector<std::string>& repairs_;
    std::string why_;
};

}  // namespace

SchemaRepair repair_input_schema(Json schema) {
    SchemaRepair out;
    if (schema.is_null() || (schema.is_object() && schema.empty())) {
        out.schema = Json{{"type", "object"}, {"properties", Json::object()}};
        return out;
    }
    if (!schema.is_object()) {
        out.unrepairable = fmt::format("its parameters are {}, not a JSON Schema object",
                                       schema.is_string()  ? "a string"
                                       : schema.is_array() ? "a list"
                                                           : "a scalar");
        return out;
    }
    out.schema = std::move(schema);
    Repairer repairer(out.repairs);
    if (!out.schema.contains("type")) {
        repairer.note("type", "missing → \"object\" (tool arguments are an object)");
        out.schema["type"] = "object";
    }
    if (!repairer.repair(out.schema, "", 0)) {
        out.unrepairable = repairer.why();
        out.repairs.clear();
        return out;
    }
    // After the repair ("Object" → "object"), the arguments must be an object.
    auto type = out.schema.find("type");
    if (type == out.schema.end() || *type != "object") {
        out.unrepairable = fmt::format("its parameters schema is of type {}; tool arguments are an object",
                                       type == out.schema.end() ? "(none)"
                                                                : util::sanitize_for_message(type->dump(), 40));
        out.repairs.clear();
    }
    return out;
}

}  // namespace toolport::rest
