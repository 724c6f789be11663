#include "providers/openapi/openapi_settings.hpp"

#include <stdexcept>

#include "http_client/url.hpp"
#include "providers/openapi/openapi_document.hpp"
#include "providers/upstream_auth_settings.hpp"

namespace toolport::openapi {

namespace {

bool plain_name(const std::string& text) {
    for (char c : text) {
        const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
                        c == '-';
        if (!ok) return false;
    }
    return true;
}

namespace keys {
using namespace config;
const Key document = string_key("document",
                                "The OpenAPI 3.0/3.1 document: a file path or an http(s):// URL (required).");
const Key base_url = string_key("base_url", "Where the operations are called; unset: the document's first server.");
const Key tool_prefix = string_key("tool_prefix", "Put before every tool name (at most 40 of A-Z a-z 0-9 _ -).");
const Key include_tags = list_key("include_tags", "Only operations with one of these tags.");
const Key exclude_tags = list_key("exclude_tags", "No operations with one of these tags.");
const Key include_operations = list_key("include_operations", "Only these operations (by operationId).");
const Key exclude_operations = list_key("exclude_operations", "Not these operations (by operationId).");
const Key credentials = map_key("credentials",
                                "Security scheme name → the NAME of the environment variable holding "
                                "its secret (else <SOURCE>_<SCHEME>).");
const Key refresh_interval_s = duration_key("refresh_interval_s", "s", 0, 7 * 24 * 3600,
                                            "Read the document again this often (0: only on reload).", "0");
const Key auth = providers::auth_key(
    "How Toolport authenticates to the API (OAuth client credentials or token exchange).");
const Key max_response_bytes = integer_key("max_response_bytes", 1024, 4294967296.0,
                                           "An answer beyond this is refused while it is read.", "8388608");
const Key strict_arguments = boolean_key("strict_arguments", "Refuse arguments the operation does not define.", "false");
const Section table{"openapi",
                    "One OpenAPI document: each operation served as a tool.",
                    {&document, &base_url, &tool_prefix, &include_tags, &exclude_tags, &include_operations,
                     &exclude_operations, &credentials, &refresh_interval_s, &auth, &max_response_bytes,
                     &strict_arguments}};
}  // namespace keys

}  // namespace

const config::Section& settings_table() { return keys::table; }

const config::Key& file_key() {
    static const config::Key key = config::named_sections_key(
        "openapi", keys::table, "OpenAPI documents, by source name (1-64 of A-Z a-z 0-9 _ -).");
    return key;
}

OpenApiSettings OpenApiSettings::from(const providers::SourceSettings& settings) {
    settings.check_keys(keys::table);
    OpenApiSettings out;
    out.document = settings.string(keys::document).value_or("");
    if (out.document.empty()) settings.fail(keys::document, "is required: a file path or an http(s):// URL");
    if (is_url(out.document)) {
        try {
            http_client::parse_url(out.document);
        } catch (const std::invalid_argument& e) {
            settings.fail(keys::document, e.what());
        }
    }
    out.base_url = settings.string(keys::base_url).value_or("");
    if (!out.base_url.empty()) {
        if (!is_url(out.base_url)) settings.fail(keys::base_url, "must be an http:// or https:// URL");
        try {
            http_client::parse_url(out.base_url);
        } catch (const std::invalid_argument& e) {
            settings.fail(keys::base_url, e.what());
        }
        if (out.base_url.find_first_of("?#") != std::string::npos) {
            settings.fail(keys::base_url, "may not have a query or a fragment (operation paths are appended to it)");
        }
    }
    out.tool_prefix = settings.string(keys::tool_prefix).value_or("");
    if (out.tool_prefix.size() > 40 || !plain_name(out.tool_prefix)) {
        settings.fail(keys::tool_prefix, "must be at most 40 of A-Z a-z 0-9 _ - (tool names are at most 64)");
    }
    out.filter.include_tags = settings.list(keys::include_tags).value_or(std::vector<std::string>{});
    out.filter.exclude_tags = settings.list(keys::exclude_tags).value_or(std::vector<std::string>{});
    out.filter.include_operations = settings.list(keys::include_operations).value_or(std::vector<std::string>{});
    out.filter.exclude_operations = settings.list(keys::exclude_operations).value_or(std::vector<std::string>{});
    out.credentials = settings.string_map(keys::credentials).value_or(std::map<std::string, std::string>{});
    for (const auto& [scheme, variable] : out.credentials) {
        if (variable.empty() || !plain_name(variable)) {
            settings.fail(keys::credentials.name + "." + scheme,
                          "must be the NAME of an environment variable (A-Z a-z 0-9 _)");
        }
    }
    out.refresh_interval = std::chrono::seconds(settings.integer(keys::refresh_interval_s).value_or(0));
    if (auto v = settings.integer(keys::max_response_bytes)) out.max_response_bytes = static_cast<std::size_t>(*v);
    if (auto v = settings.boolean(keys::strict_arguments)) out.strict_arguments = *v;
    if (settings.value(keys::auth.name)) out.auth = providers::read_upstream_auth(settings.section(keys::auth.name));
    return out;
}

}  // namespace toolport::openapi
