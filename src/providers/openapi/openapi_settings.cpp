#include "providers/openapi/openapi_settings.hpp"

#include <stdexcept>

#include "http_client/url.hpp"
#include "providers/openapi/openapi_document.hpp"
#include "providers/upstream_auth_settings.hpp"

namespace toolport::openapi {

namespace {

bool plain_name(const std::string& text) {
    for (char c : text) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
        if (!ok) return false;
    }
    return true;
}

}  // namespace

OpenApiSettings OpenApiSettings::from(const providers::SourceSettings& settings) {
    settings.only_keys({"document", "base_url", "tool_prefix", "include_tags", "exclude_tags", "include_operations",
                        "exclude_operations", "credentials", "refresh_interval_s", "auth", "max_response_bytes",
                        "strict_arguments"});
    OpenApiSettings out;
    out.document = settings.string("document").value_or("");
    if (out.document.empty()) settings.fail("document", "is required: a file path or an http(s):// URL");
    if (is_url(out.document)) {
        try {
            http_client::parse_url(out.document);
        } catch (const std::invalid_argument& e) {
            settings.fail("document", e.what());
        }
    }
    out.base_url = settings.string("base_url").value_or("");
    if (!out.base_url.empty()) {
        if (!is_url(out.base_url)) settings.fail("base_url", "must be an http:// or https:// URL");
        try {
            http_client::parse_url(out.base_url);
        } catch (const std::invalid_argument& e) {
            settings.fail("base_url", e.what());
        }
        if (out.base_url.find_first_of("?#") != std::string::npos) {
            settings.fail("base_url", "may not have a query or a fragment (operation paths are appended to it)");
        }
    }
    out.tool_prefix = settings.string("tool_prefix").value_or("");
    if (out.tool_prefix.size() > 40 || !plain_name(out.tool_prefix)) {
        settings.fail("tool_prefix", "must be at most 40 of A-Z a-z 0-9 _ - (tool names are at most 64)");
    }
    out.filter.include_tags = settings.list("include_tags").value_or(std::vector<std::string>{});
    out.filter.exclude_tags = settings.list("exclude_tags").value_or(std::vector<std::string>{});
    out.filter.include_operations = settings.list("include_operations").value_or(std::vector<std::string>{});
    out.filter.exclude_operations = settings.list("exclude_operations").value_or(std::vector<std::string>{});
    out.credentials = settings.string_map("credentials").value_or(std::map<std::string, std::string>{});
    for (const auto& [scheme, variable] : out.credentials) {
        if (variable.empty() || !plain_name(variable)) {
            settings.fail("credentials." + scheme, "must be the NAME of an environment variable (A-Z a-z 0-9 _)");
        }
    }
    out.refresh_interval = std::chrono::seconds(settings.integer("refresh_interval_s", 0, 7 * 24 * 3600).value_or(0));
    if (auto v = settings.integer("max_response_bytes", 1024, 1LL << 32)) out.max_response_bytes = static_cast<std::size_t>(*v);
    if (auto v = settings.boolean("strict_arguments")) out.strict_arguments = *v;
    if (settings.value("auth")) out.auth = providers::read_upstream_auth(settings.section("auth"));
    return out;
}

}  // namespace toolport::openapi
