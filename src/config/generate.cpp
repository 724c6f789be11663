#include "config/generate.hpp"
#include "util/json.hpp"

#include <cmath>
#include <sstream>

#include <fmt/format.h>

namespace toolport::config {

namespace {

// Any scalar may be an ${ENV} reference, expanded when the file is read.
const Json kEnvReference = {{"type", "string"}, {"pattern", "\\$\\{[^}]+\\}"}};

Json with_env_reference(Json schema) { return Json{{"anyOf", Json::array({std::move(schema), kEnvReference})}}; }

std::string number_text(double v) {
    if (std::floor(v) == v && std::fabs(v) < 1e18) return std::to_string(static_cast<long long>(v));
    return fmt::format("{}", v);
}

Json number_value(double v) {
    if (std::floor(v) == v && std::fabs(v) < 1e18) return static_cast<long long>(v);
    return v;
}

std::string type_text(const Key& key) {
    switch (key.type) {
        case Type::string: return "string";
        case Type::integer: return fmt::format("integer, {} to {}", number_text(key.min), number_text(key.max));
        case Type::number: return fmt::format("number, {} to {}", number_text(key.min), number_text(key.max));
        case Type::boolean: return "boolean";
        case Type::string_list: return "list of strings";
        case Type::string_map: return "mapping of names to strings";
        case Type::one_of: {
            std::string out = "one of ";
            for (std::size_t i = 0; i < key.values.size(); ++i) out += (i ? ", `" : "`") + key.values[i] + "`";
            return out;
        }
        case Type::duration:
            return fmt::format("duration in {}, {} to {}", key.unit == "s" ? "seconds" : "milliseconds",
                               number_text(key.min), number_text(key.max));
        case Type::section: return key.also_string ? "section, or a string" : "section";
        case Type::named_sections: return "mapping of names to sections";
        case Type::section_list: return "list of sections";
        case Type::any: return "see below";
    }
    return "";
}

std::string description(const Key& key) {
    std::string text = key.doc;
    if (!key.default_text.empty()) text += fmt::format(" Default: {}.", key.default_text);
    if (!key.env.empty()) text += fmt::format(" Environment: {} (over the file).", key.env);
    return text;
}

Json value_schema(const Key& key) {
    if (key.schema) return key.schema();
    Json s;
    switch (key.type) {
        case Type::string: s = {{"type", "string"}}; break;
        case Type::integer:
        case Type::duration:
            s = with_env_reference(
                {{"type", "integer"}, {"minimum", number_value(key.min)}, {"maximum", number_value(key.max)}});
            break;
        case Type::number:
            s = with_env_reference(
                {{"type", "number"}, {"minimum", number_value(key.min)}, {"maximum", number_value(key.max)}});
            break;
        case Type::boolean:
            s = with_env_reference(
                Json{{"anyOf", Json::array({Json{{"type", "boolean"}},
                                            Json{{"enum", {"true", "false", "yes", "no", "on", "off"}}}})}});
            break;
        case Type::string_list: s = {{"type", "array"}, {"items", {{"type", "string"}}}}; break;
        case Type::string_map: s = {{"type", "object"}, {"additionalProperties", {{"type", "string"}}}}; break;
        case Type::one_of: s = with_env_reference({{"enum", key.values}}); break;
        case Type::section:
            s = section_schema(*key.section);
            if (key.nullable) s["type"] = Json::array({"object", "null"});
            if (key.also_string) s = Json{{"anyOf", Json::array({Json{{"type", "string"}}, s})}};
            break;
        case Type::named_sections:
            s = {{"type", "object"}, {"additionalProperties", section_schema(*key.section)}};
            break;
        case Type::section_list: s = {{"type", "array"}, {"items", section_schema(*key.section)}}; break;
        case Type::any: s = Json::object(); break;
    }
    return s;
}

Json default_value(const Key& key) {
    const auto& text = key.default_text;
    if (text.empty()) return nullptr;
    switch (key.type) {
        case Type::integer:
        case Type::duration:
        case Type::number: {
            try {
                std::size_t used = 0;
                double v = std::stod(text, &used);
                if (used == text.size()) return number_value(v);
            } catch (const std::logic_error&) {}
            return nullptr;
        }
        case Type::boolean: return text == "true" ? Json(true) : text == "false" ? Json(false) : Json(nullptr);
        case Type::string: return text;
        case Type::one_of:
            for (const auto& v : key.values) {
                if (v == text) return text;
            }
            return nullptr;
        default: return nullptr;
    }
}

}  // namespace

Json section_schema(const Section& section) {
    Json s = {{"type", "object"}};
    if (!section.doc.empty()) s["description"] = section.doc;
    if (!section.closed) return s;
    Json properties = Json::object();
    for (const auto* key : section.keys) {
        if (key->secret != Secret::env_only) {
            Json p = value_schema(*key);
            p["description"] = description(*key);
            if (auto d = default_value(*key); !d.is_null()) p["default"] = d;
            properties[key->name] = std::move(p);
        }
        if (key->secret != Secret::no) {
            properties[key->name + "_env"] = {{"type", "string"},
                                              {"description", fmt::format("The environment variable that holds {}: {}",
                                                                          key->name, key->doc)}};
        }
    }
    s["properties"] = std::move(properties);
    s["additionalProperties"] = false;
    return s;
}

namespace {

// ---- Markdown ----

std::string cell(std::string text) {
    std::string out;
    for (char c : text) {
        if (c == '|') out += "\\|";
        else if (c == '\n') out += ' ';
        else out += c;
    }
    return out;
}

// GitHub's anchor of a heading "`path`": lower case, without punctuation but - and _.
std::string anchor(const std::string& path) {
    std::string out;
    for (char c : path) {
        if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_') out += c;
        else if (c >= 'A' && c <= 'Z') out += static_cast<char>(c - 'A' + 'a');
    }
    return out;
}

void write_section(std::ostringstream& out, const Section& section, const std::string& path, const std::string& doc) {
    out << "\n## `" << path << "`\n\n" << doc << "\n";
    if (!section.closed) {
        out << "\nIts keys are the source kind's own (see its page).\n";
        return;
    }
    if (section.keys.empty()) {
        out << "\nNo keys: it is written empty (or as a name in a list).\n";
        return;
    }
    out << "\n| Key | Type | Default | Environment | Description |\n|---|---|---|---|---|\n";
    std::vector<std::pair<std::string, const Key*>> nested;
    for (const auto* key : section.keys) {
        std::string names;
        for (const auto& spelling : key->spellings()) names += (names.empty() ? "`" : " or `") + spelling + "`";
        std::string doc_line = key->doc;
        if (key->secret == Secret::inline_or_env)
            doc_line += fmt::format(" Secret: `{0}_env: VAR` reads it from the environment variable VAR instead.",
                                    key->name);
        if (key->secret == Secret::env_only)
            doc_line += fmt::format(" Secret: given only as `{0}_env: VAR`, the environment variable VAR.", key->name);
        if (key->type == Type::section || key->type == Type::named_sections || key->type == Type::section_list) {
            const auto child = path + "." + key->name +
                               (key->type == Type::named_sections ? ".<name>"
                                : key->type == Type::section_list ? "[]"
                                                                  : "");
            doc_line += fmt::format(" See [`{}`](#{}).", child, anchor(child));
            nested.emplace_back(child, key);
        }
        out << "| " << names << " | " << cell(type_text(*key)) << " | "
            << (key->default_text.empty() ? "" : "`" + cell(key->default_text) + "`") << " | "
            << (key->env.empty() ? "" : "`" + key->env + "`") << " | " << cell(doc_line) << " |\n";
    }
    for (const auto& [child, key] : nested) write_section(out, *key->section, child, key->doc);
}

}  // namespace

Json json_schema(const Section& file, const std::string& title, const std::string& id) {
    Json s = section_schema(file);
    Json out = {{"$schema", "http://json-schema.org/draft-07/schema#"}};
    if (!id.empty()) out["$id"] = id;
    out["title"] = title;
    for (auto& [name, value] : s.items()) out[name] = value;
    return out;
}

std::string markdown(const Section& file, const std::string& title, const std::string& intro,
                     const std::vector<std::pair<std::string, const Section*>>& more) {
    std::ostringstream out;
    out << "# " << title << "\n\n" << intro;
    // The file's top-level keys first, as one table; then each section.
    out << "\n## The file\n\n| Key | Type | Description |\n|---|---|---|\n";
    for (const auto* key : file.keys) {
        out << "| `" << key->name << "` | " << cell(type_text(*key)) << " | " << cell(description(*key)) << " |\n";
    }
    for (const auto* key : file.keys) {
        if (key->type == Type::section) write_section(out, *key->section, key->name, key->doc);
        else if (key->type == Type::named_sections) write_section(out, *key->section, key->name + ".<name>", key->doc);
        else if (key->type == Type::section_list) write_section(out, *key->section, key->name + "[]", key->doc);
    }
    for (const auto& [path, section] : more) write_section(out, *section, path, section->doc);
    return out.str();
}

}  // namespace toolport::config
