#include "spec/outcome.hpp"

#include <vector>

#include <fmt/format.h>

#include "document/document.hpp"

namespace toolport::spec::detail {

namespace {

void append_text(std::string& out, bool& first, const Json& block) {
    if (!block.is_object()) return;
    auto it = block.find("text");
    if (it == block.end() || !it->is_string()) return;
    // A prompt message or content block must say it is text; resource contents have no type.
    if (auto type = block.find("type"); type != block.end() && *type != "text") return;
    if (!first) out += '\n';
    out += it->get_ref<const std::string&>();
    first = false;
}

// Cuts UTF-8 text at most `max` bytes in, never inside a code point.
std::string cut_utf8(const std::string& text, std::size_t max) {
    if (text.size() <= max) return text;
    std::size_t end = max;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
    return text.substr(0, end) + "…";
}

}  // namespace

std::string Outcome::describe_error() const {
    switch (kind) {
        case Kind::result: return "no error";
        case Kind::tool_error:
            return text.empty() ? "the tool returned isError: true"
                                : "the tool returned isError: true: " + preview_text(text);
        case Kind::call_failed: return error;
    }
    return error;
}

std::string response_text(SpecKind kind, const Json& result) {
    std::string out;
    bool first = true;
    if (!result.is_object()) return out;
    auto list = [&](const char* key) -> const Json* {
        auto it = result.find(key);
        return it != result.end() && it->is_array() ? &*it : nullptr;
    };
    switch (kind) {
        case SpecKind::tool:
            if (const Json* content = list("content")) {
                for (const auto& block : *content) append_text(out, first, block);
            }
            break;
        case SpecKind::prompt:
            if (const Json* messages = list("messages")) {
                for (const auto& message : *messages) {
                    if (!message.is_object() || !message.contains("content")) continue;
                    const Json& content = message["content"];
                    if (content.is_array()) {
                        for (const auto& block : content) append_text(out, first, block);
                    } else {
                        append_text(out, first, content);
                    }
                }
            }
            break;
        case SpecKind::resource:
            if (const Json* contents = list("contents")) {
                for (const auto& item : *contents) append_text(out, first, item);
            }
            break;
    }
    return out;
}

Outcome outcome_of_result(SpecKind kind, Json result) {
    Outcome outcome;
    outcome.spec_kind = kind;
    outcome.text = response_text(kind, result);
    bool is_error = false;
    if (kind == SpecKind::tool && result.is_object()) {
        auto flag = result.find("isError");
        is_error = flag != result.end() && flag->is_boolean() && flag->get<bool>();
    }
    outcome.kind = is_error ? Outcome::Kind::tool_error : Outcome::Kind::result;
    outcome.result = std::move(result);
    return outcome;
}

Outcome outcome_of_failure(SpecKind kind, const std::exception& e) {
    Outcome outcome;
    outcome.spec_kind = kind;
    outcome.kind = Outcome::Kind::call_failed;
    if (const auto* rpc = dynamic_cast<const TargetError*>(&e)) {
        outcome.rpc_code = rpc->code();
        outcome.error = fmt::format("JSON-RPC error {}: {}", rpc->code(), rpc->what());
    } else {
        outcome.error = e.what();
        if (outcome.error.empty()) outcome.error = "the call failed without a message";
    }
    outcome.text = e.what();
    return outcome;
}

Json response_document(const Outcome& outcome) {
    if (outcome.kind == Outcome::Kind::call_failed) {
        throw std::runtime_error("there is no response to check: the call failed (" + outcome.error + ")");
    }
    if (outcome.spec_kind != SpecKind::tool) {
        if (nesting_depth(outcome.result) > static_cast<std::size_t>(document::kMaxDocumentDepth)) {
            throw std::runtime_error(fmt::format("the result is nested more than {} deep", document::kMaxDocumentDepth));
        }
        return outcome.result;
    }
    try {
        return parse_json_text(outcome.text);
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(
            fmt::format("the response text is not valid JSON ({}): {}", e.what(), preview_text(outcome.text, 80)));
    }
}

Json parse_json_text(const std::string& text) {
    try {
        return document::parse_json_value(text);
    } catch (const document::DocumentError& e) {
        throw std::runtime_error(e.what());
    }
}

std::size_t nesting_depth(const Json& value) {
    std::size_t deepest = 0;
    std::vector<std::pair<const Json*, std::size_t>> stack{{&value, 0}};
    while (!stack.empty()) {
        auto [v, depth] = stack.back();
        stack.pop_back();
        deepest = std::max(deepest, depth);
        if (v->is_structured()) {
            for (const auto& child : *v) stack.emplace_back(&child, depth + 1);
        }
    }
    return deepest;
}

std::string preview(const Json& value, std::size_t max_chars) {
    if (nesting_depth(value) > static_cast<std::size_t>(document::kMaxDocumentDepth))
        return "(a value nested too deeply to show)";
    return cut_utf8(value.dump(-1, ' ', false, Json::error_handler_t::replace), max_chars);
}

std::string preview_text(const std::string& text, std::size_t max_chars) {
    return Json(cut_utf8(text, max_chars)).dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace toolport::spec::detail
