#include "providers/tango/tango_settings.hpp"

#include <cctype>
#include <cstdlib>

namespace toolport::tango {

namespace {

namespace keys {
using namespace config;
const Key base_url = string_key("base_url",
                                "The Tango API's base URL (http or https, no query); unset: "
                                "$TANGO_BASE_URL, else the default.",
                                "https://tango.makegov.com");
const Key api_key_env = string_key("api_key_env", "The environment variable that holds the server's own Tango API key.",
                                   "TANGO_API_KEY");
const Key client_key_header = string_key("client_key_header",
                                         "The HTTP header a client may send its own Tango key in (\"\" turns it off).",
                                         "X-Tango-Api-Key");
const Key min_spacing_ms = duration_key("min_spacing_ms", "ms", 0, 60000,
                                        "Least time between two requests to Tango (all replicas).", "100");
const Key spending_summary_max_pages = integer_key("spending_summary_max_pages", 1, 1000,
                                                   "Pages of 100 contracts a spending summary may read.", "10");
const Section table{"tango",
                    "The tango pack: U.S. federal contracting data from the Tango API.",
                    {&base_url, &api_key_env, &client_key_header, &min_spacing_ms, &spending_summary_max_pages}};
}  // namespace keys

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
        if (from_file) settings.fail(keys::base_url, what);
        throw providers::SettingsError("TANGO_BASE_URL " + what);
    }
    return url;
}

}  // namespace

const config::Section& settings_table() { return keys::table; }

TangoSettings TangoSettings::from(const providers::SourceSettings& settings) {
    settings.check_keys(keys::table);
    TangoSettings s;
    if (auto url = settings.string(keys::base_url)) s.base_url = check_base_url(settings, *url, true);
    else if (auto from_env = env("TANGO_BASE_URL"); !from_env.empty())
        s.base_url = check_base_url(settings, from_env, false);
    if (auto name = settings.string(keys::api_key_env)) s.api_key_env = *name;
    s.server_api_key = env(s.api_key_env);
    if (auto header = settings.string(keys::client_key_header)) {
        for (char c : *header) {
            if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
                settings.fail(keys::client_key_header, "must be an HTTP header name (letters, digits, - and _)");
            }
        }
        s.client_key_header = *header;
    }
    if (auto ms = settings.duration<std::chrono::milliseconds>(keys::min_spacing_ms)) s.min_spacing = *ms;
    if (auto pages = settings.integer(keys::spending_summary_max_pages)) {
        s.spending_summary_max_pages = static_cast<int>(*pages);
    }
    return s;
}

}  // namespace toolport::tango
