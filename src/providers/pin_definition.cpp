#include "providers/pin_definition.hpp"

#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/canonical_json.hpp"
#include "util/digest.hpp"
#include "util/sanitize.hpp"

namespace toolport::pins {

PinRecord make_pin(std::string kind, std::string name, Json definition) {
    PinRecord r;
    r.kind = std::move(kind);
    r.name = std::move(name);
    if (!definition.is_object()) definition = Json::object();
    definition.erase("name");
    r.body_digest = util::sha256_hex(util::canonical_json(definition));
    definition["name"] = r.name;
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

std::string describe_difference(const Json& before, const Json& after) {
    std::vector<std::string> parts;
    std::vector<std::string> keys;
    for (const Json* side : {&before, &after}) {
        if (!side->is_object()) continue;
        for (const auto& [key, value] : side->items()) {
            if (key != "name" && std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
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

std::vector<Classified> classify(const PinMap& pinned, const std::vector<PinRecord>& current) {
    std::vector<Classified> out;
    out.reserve(current.size());
    // Pins by body digest, per kind: where a definition was pinned under another name.
    std::multimap<std::string, const PinRecord*> by_body;
    for (const auto& [key, pin] : pinned) by_body.emplace(pin.kind + ":" + pin.body_digest, &pin);
    for (const auto& record : current) {
        Classified c{record, Finding::pinned, {}};
        if (pinned.empty()) {
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
            c.detail = describe_difference(same->second.definition, record.definition);
            if (c.detail.empty()) c.detail = "definition changed";
        } else {
            c.finding = Finding::added;
            c.detail = fmt::format("new {} in a source whose {}s are pinned", record.kind, record.kind);
        }
        out.push_back(std::move(c));
    }
    return out;
}

}  // namespace toolport::pins
