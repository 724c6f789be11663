#include "providers/secret_redaction.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "schema/json_schema.hpp"
#include "server/tool_error.hpp"

namespace toolport::providers {

namespace {

// Whether `text` holds any secret worth redacting: most answers hold none, and are then
// neither copied nor rewritten.
bool holds_secret(const std::string& text, const std::vector<std::string>& secrets) {
    for (const auto& secret : secrets) {
        if (secret.size() >= kMinSecretLength && text.find(secret) != std::string::npos) return true;
    }
    return false;
}

bool redact_string(std::string& text, const std::vector<std::string>& secrets) {
    if (!holds_secret(text, secrets)) return false;
    text = redact_text(std::move(text), secrets);
    return true;
}

bool redact_block(Json& block, const std::vector<std::string>& secrets) {
    if (!block.is_object()) return false;
    bool changed = false;
    if (auto text = block.find("text"); text != block.end() && text->is_string()) {
        changed |= redact_string(text->get_ref<std::string&>(), secrets);
    }
    // An embedded text resource: {type: resource, resource: {uri, text}}.
    if (auto resource = block.find("resource"); resource != block.end() && resource->is_object()) {
        if (auto text = resource->find("text"); text != resource->end() && text->is_string()) {
            changed |= redact_string(text->get_ref<std::string&>(), secrets);
        }
    }
    return changed;
}

}  // namespace

std::string redact_text(std::string text, const std::vector<std::string>& secrets) {
    for (const auto& secret : secrets) {
        if (secret.size() < kMinSecretLength) continue;
        for (auto at = text.find(secret); at != std::string::npos; at = text.find(secret, at)) {
            text.replace(at, secret.size(), kRedacted);
            at += std::char_traits<char>::length(kRedacted);
        }
    }
    return text;
}

bool redact_json(Json& value, const std::vector<std::string>& secrets) {
    if (value.is_string()) return redact_string(value.get_ref<std::string&>(), secrets);
    bool changed = false;
    if (value.is_array()) {
        for (auto& item : value) changed |= redact_json(item, secrets);
    } else if (value.is_object()) {
        std::vector<std::string> renamed;
        for (auto it = value.begin(); it != value.end(); ++it) {
            changed |= redact_json(it.value(), secrets);
            if (holds_secret(it.key(), secrets)) renamed.push_back(it.key());
        }
        // A secret as a member name: the member stays, under the redacted name.
        for (const auto& key : renamed) {
            Json member = std::move(value[key]);
            value.erase(key);
            value[redact_text(key, secrets)] = std::move(member);
            changed = true;
        }
    }
    return changed;
}

bool redact_result(ToolResult& result, const std::vector<std::string>& secrets) {
    // None long enough to be redacted (none configured, as a rule): nothing to look for, and
    // every forwarded result would be walked for it.
    if (std::none_of(secrets.begin(), secrets.end(),
                     [](const std::string& secret) { return secret.size() >= kMinSecretLength; })) {
        return false;
    }
    // Every string is looked at: a gateway's result is read here after all.
    result.expand_raw_parts();
    bool changed = false;
    const bool structured_changed = !result.structured_content.is_null() &&
                                    redact_json(result.structured_content, secrets);
    if (result.content.is_array()) {
        for (auto& block : result.content) {
            // The text block that is structuredContent's JSON (ToolResult::structured): written
            // again from the redacted value.
            if (structured_changed && block.is_object() && block.value("type", "") == "text" &&
                block.contains("text") && block["text"].is_string()) {
                auto parsed = Json::parse(block["text"].get_ref<const std::string&>(), nullptr, false);
                if (!parsed.is_discarded() && redact_json(parsed, secrets) && parsed == result.structured_content) {
                    block["text"] = parsed.dump(-1, ' ', false, Json::error_handler_t::replace);
                    continue;
                }
            }
            changed |= redact_block(block, secrets);
        }
    }
    if (!result.meta.is_null()) changed |= redact_json(result.meta, secrets);
    return changed || structured_changed;
}

void check_redacted_output(const ToolResult& result, const Json& output_schema, const std::string& tool) {
    if (output_schema.is_null() || result.structured_content.is_null()) return;
    bool valid = true;
    try {
        valid = schema::compile(output_schema).is_valid(result.structured_content);
    } catch (const schema::SchemaError&) {
        // Compiled when the tool was declared; nothing to compare against otherwise.
    }
    if (valid) return;
    throw ToolError(ToolErrorCode::upstream_error,
                    fmt::format("The API's answer held a credential of the server's; with it redacted the answer no "
                                "longer matches the outputSchema of {}, so it is not passed on",
                                tool))
        .recoverable(false)
        .suggest("The API echoes the server's credentials back; ask the operator to check the API or its keys.");
}

}  // namespace toolport::providers
