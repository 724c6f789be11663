#include "providers/tango/tango_settings.hpp"

#include <cctype>
#include <cstdlib>

namespace toolport::tango {

namespace {

std::string env(const std::string& name) {
    const char* value = name.empty() ? nullptr : std::getenv(name.c_str());
    return value ? std::string(value) : std::string();
}

// An http(s) URL without a trailing slash (paths are appended as "/api/...").
std::string check_base_url(const providers::SourceSettings& settings, std::string url, bool from_file) {
    while (!url.empty() && url.back() == '/') url.pop_back();
    const bool http = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
    if (!http || url.find_first_of(" \t\r\n?#") != std::string::npos) {
        const std::string what = "must be an http:// or https:// URL without a query";
        if (from_file) settings.fail("base_url", what);
        throw providers::SettingsError("TANGO_BASE_URL " + what);
    }
    return url;
}

}  // namespace

TangoSettings TangoSettings::from(const providers::SourceSettings& settings) {
    settings.only_keys({"base_url", "api_key_env", "client_key_header", "min_spacing_ms", "spending_summary_max_pages"});
    TangoSettings s;
    if (auto url = settings.string("base_url")) s.base_url = check_base_url(settings, *url, true);
    else if (auto from_env = env("TANGO_BASE_URL"); !from_env.empty()) s.base_url = check_base_url(settings, from_env, false);
    if (auto name = settings.string("api_key_env")) s.api_key_env = *name;
    s.server_api_key = env(s.api_key_env);
    if (auto header = settings.string("client_key_header")) {
        for (char c : *header) {
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
                settings.fail("client_key_header", "must be an HTTP header name (letters, digits, - and _)");
            }
        }
        s.client_key_header = *header;
    }
    if (auto ms = settings.integer("min_spacing_ms", 0, 60000)) s.min_spacing = std::chrono::milliseconds(*ms);
    if (auto pages = settings.integer("spending_summary_max_pages", 1, 1000)) {
        s.spending_summary_max_pages = static_cast<int>(*pages);
    }
    return s;
}

}  // namespace toolport::tango
