#include "providers/pin_definition.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/canonical_json.hpp"
#include "util/digest.hpp"
#include "util/sanitize.hpp"

namespace toolport::pins {

namespace {

std::string text_of(const Json& entry, const char* key) {
    auto it = entry.find(key);
    return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// `key` of `from` copied into `to` when it is there and not empty.
void copy_text(const Json& from, Json& to, const char* key) {
    if (auto text = text_of(from, key); !text.empty()) to[key] = std::move(text);
}

}  // namespace

std::string_view name_field(std::string_view kind) { return kind == kTemplateKind ? "uriTemplate" : "name"; }

PinRecord make_pin(std::string kind, std::string name, Json definition) {
    PinRecord r;
    r.kind = std::move(kind);
    r.name = std::move(name);
    const std::string field(name_field(r.kind));
    if (!definition.is_object()) definition = Json::object();
    definition.erase(field);
    r.body_digest = util::sha256_hex(util::canonical_json(definition));
    definition[field] = r.name;
    r.digest = util::sha256_hex(util::canonical_json(definition));
    r.definition = std::move(definition);
    return r;
}

Json tool_definition(const providers::ToolDeclaration& tool, const Json& identity) {
    Json d = Json::object();
    // Absent parts are left out rather than written as null: a tool that gains an empty
    // title has not changed for a client either.
    if (!tool.title.empty()) d["title"] = tool.title;
    if (!tool.description.empty()) d["description"] = tool.description;
    d["inputSchema"] = tool.input_schema;
    if (!tool.output_schema.is_null()) d["outputSchema"] = tool.output_schema;
    if (auto annotations = tool.annotations.to_json(tool.title); !annotations.is_null()) {
        d["annotations"] = std::move(annotations);
    }
    if (!identity.is_null()) d["source"] = identity;
    return d;
}

Json prompt_definition(const Json& prompt, const Json& identity) {
    Json d = Json::object();
    if (prompt.is_object()) {
        copy_text(prompt, d, "title");
        copy_text(prompt, d, "description");
        if (auto it = prompt.find("arguments"); it != prompt.end() && it->is_array()) {
            Json arguments = Json::array();
            for (const auto& a : *it) {
                // The arguments a client is served (gateway.cpp skips the nameless ones).
                if (!a.is_object() || text_of(a, "name").empty()) continue;
                Json argument = {{"name", text_of(a, "name")}};
                copy_text(a, argument, "title");
                copy_text(a, argument, "description");
                if (auto r = a.find("required"); r != a.end() && r->is_boolean() && r->get<bool>())
                    argument["required"] = true;
                arguments.push_back(std::move(argument));
            }
            if (!arguments.empty()) d["arguments"] = std::move(arguments);
        }
    }
    if (!identity.is_null()) d["source"] = identity;
    return d;
}

Json template_definition(const Json& resource_template, const Json& identity) {
    Json d = Json::object();
    if (resource_template.is_object()) {
        for (const char* key : {"name", "title", "description", "mimeType"}) copy_text(resource_template, d, key);
        if (auto it = resource_template.find("annotations"); it != resource_template.end() && it->is_object())
            d["annotations"] = *it;
    }
    if (!identity.is_null()) d["source"] = identity;
    return d;
}

std::string_view finding_name(Finding finding) {
    switch (finding) {
        case Finding::pinned: return "pinned";
        case Finding::first_sight: return "first_sight";
        case Finding::changed: return "changed";
        case Finding::renamed: return "renamed";
        case Finding::added: return "added";
    }
    return "pinned";
}

std::string describe_difference(const Json& before, const Json& after, std::string_view name_field) {
    std::vector<std::string> parts;
    std::vector<std::string> keys;
    for (const Json* side : {&before, &after}) {
        if (!side->is_object()) continue;
        for (const auto& [key, value] : side->items()) {
            if (key != name_field && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
        }
    }
    std::sort(keys.begin(), keys.end());
    std::string identity;
    for (const auto& key : keys) {
        const Json a = before.is_object() && before.contains(key) ? before[key] : Json();
        const Json b = after.is_object() && after.contains(key) ? after[key] : Json();
        if (a == b) continue;
        if (key == "source" && a.is_object() && b.is_object()) {
            std::vector<std::string> fields;
            for (const auto& [field, value] : b.items()) {
                if (!a.contains(field) || a[field] != value) {
                    fields.push_back(
                        fmt::format("{} {} -> {}", field,
                                    util::sanitize_for_message(a.contains(field) ? a[field].dump() : "none", 80),
                                    util::sanitize_for_message(value.dump(), 80)));
                }
            }
            for (const auto& [field, value] : a.items()) {
                if (!b.contains(field)) fields.push_back(fmt::format("{} removed", field));
            }
            identity = fmt::format("source identity changed ({})", fmt::join(fields, ", "));
            continue;
        }
        parts.push_back(a.is_null() ? key + " added" : b.is_null() ? key + " removed" : key + " changed");
    }
    if (!identity.empty()) parts.push_back(std::move(identity));
    return fmt::format("{}", fmt::join(parts, "; "));
}

std::vector<Classified> classify(const PinMap& pinned, const std::vector<PinRecord>& current, bool seen) {
    std::vector<Classified> out;
    out.reserve(current.size());
    // Pins by body digest, per kind: where a definition was pinned under another name.
    std::multimap<std::string, const PinRecord*> by_body;
    for (const auto& [key, pin] : pinned) by_body.emplace(pin.kind + ":" + pin.body_digest, &pin);
    for (const auto& record : current) {
        Classified c{record, Finding::pinned, {}};
        if (pinned.empty() && !seen) {
            c.finding = Finding::first_sight;
            out.push_back(std::move(c));
            continue;
        }
        auto same = pinned.find(record.key());
        if (same != pinned.end() && same->second.digest == record.digest) {
            out.push_back(std::move(c));
            continue;
        }
        const PinRecord* moved = nullptr;
        auto [from, to] = by_body.equal_range(record.kind + ":" + record.body_digest);
        for (auto it = from; it != to; ++it) {
            if (it->second->name != record.name) {
                moved = it->second;
                break;
            }
        }
        if (moved) {
            c.finding = Finding::renamed;
            c.detail = same != pinned.end()
                           ? fmt::format(
                                 "the definition pinned as {} is now served as {}, whose own definition it "
                                 "replaces (names swapped or reused)",
                                 util::sanitize_for_message(moved->name, 128),
                                 util::sanitize_for_message(record.name, 128))
                           : fmt::format("the definition pinned as {} is now served as {}",
                                         util::sanitize_for_message(moved->name, 128),
                                         util::sanitize_for_message(record.name, 128));
        } else if (same != pinned.end()) {
            c.finding = Finding::changed;
            c.detail = describe_difference(same->second.definition, record.definition, name_field(record.kind));
            if (c.detail.empty()) c.detail = "definition changed";
        } else {
            c.finding = Finding::added;
            c.detail = pinned.empty()
                           ? fmt::format("new {} in a source first seen with no {}s", record.kind, record.kind)
                           : fmt::format("new {} in a source whose {}s are pinned", record.kind, record.kind);
        }
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace toolport::pins
