// The configuration as it takes effect, key by key: for every declared key (declaration.hpp)
// that the file sets, an environment variable sets over it, or that has a default, one row
// with its dotted path, its value and where the value came from. This is what an operator
// asks of a running server ("what is max_body_bytes here, and why?"): the console's
// Configuration page and `toolport config show` print it.
//
// Secrets never appear: a secret key's value (given inline or through `<name>_env`) is
// "***", and so is anything under a key whose name says it holds one (headers such as
// Authorization, a `token`, a `password`), and a URL's user information.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/declaration.hpp"

namespace toolport::config {

struct EffectiveRow {
    std::string path;      // "http.max_body_bytes", "upstreams.weather.url"
    nlohmann::json value;  // typed as the key is (a default's text made a number or boolean where it is one)
    std::string from;      // "file", "env NAME" (a variable that sets the key over the file), "default"
};

// Reads an environment variable (nullopt when unset or empty); std::getenv by default.
using EnvReader = std::function<std::optional<std::string>(const std::string& name)>;

// The rows of `section` as `written` (the file's mapping for it; null when absent), each
// path under `prefix` ("" for the file). Named sections are walked per name written.
// `more(path, value)` may give the section of an open key (`any`) such as `packs:`'s
// mapping form; without it such a key's value is listed as written.
std::vector<EffectiveRow> effective_rows(
    const Section& section, const nlohmann::json& written, const std::string& prefix = {}, const EnvReader& env = {},
    const std::function<const Section*(const std::string& path, const std::string& name)>& more = {});

// Whether a key with this name holds a secret by its name alone (token, password, key,
// authorization, ...); `*_env` and `*_file` keys name where one is, and hold none.
bool secret_by_name(std::string_view key);

// `value` with every secret replaced by "***": the values under secret-named keys, and the
// user information of URLs (redis://:password@host).
nlohmann::json redact_secrets(const nlohmann::json& value, bool secret = false);

}  // namespace toolport::config
