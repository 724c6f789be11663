// SourceSettings: a source's own section of the configuration file, e.g.
//
//   packs:
//     tango:
//       base_url: https://tango.makegov.com
//       spending_summary_max_pages: 20
//
// The loader hands each source its section with ${ENV} already expanded and the line of
// every key remembered, so a source reads its settings with the same "file:line: key:
// what" errors as the rest of the configuration, and the file is checked when it is
// loaded (`toolport config check`), not when the source starts. Values written in YAML
// arrive as strings; tests may build settings from JSON numbers and booleans too.
#pragma once

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace toolport::providers {

using Json = nlohmann::json;

// A setting that is missing, unknown or of the wrong type; the message names the file,
// the line and the key.
struct SettingsError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

class SourceSettings {
public:
    // No section: every read answers "not set".
    SourceSettings() = default;
    // `values`: a JSON object (or null). `prefix` names the section in messages
    // ("packs.tango"); `lines` maps dotted key paths below it to their line in `file`.
    SourceSettings(Json values, std::string prefix, std::string file = {}, std::map<std::string, int> lines = {});

    bool empty() const { return values_.is_null() || (values_.is_object() && values_.empty()); }
    const std::string& prefix() const { return prefix_; }

    // Refuses keys outside `allowed` (the message lists the allowed ones).
    void only_keys(const std::vector<std::string>& allowed) const;

    std::optional<std::string> string(const std::string& key) const;
    std::optional<long long> integer(const std::string& key, long long min, long long max) const;
    std::optional<double> number(const std::string& key, double min, double max) const;
    std::optional<bool> boolean(const std::string& key) const;
    std::optional<std::vector<std::string>> list(const std::string& key) const;
    // name → string value (a mapping of scalars, e.g. headers).
    std::optional<std::map<std::string, std::string>> string_map(const std::string& key) const;
    // The value as written (for templates), nullopt when absent.
    std::optional<Json> value(const std::string& key) const;
    // A nested mapping (empty settings when absent).
    SourceSettings section(const std::string& key) const;
    // The same, named `prefix` in messages: a key the file holds elsewhere than the settings
    // do (the gateway's `upstreams:` is a top-level key of the file).
    SourceSettings section(const std::string& key, const std::string& prefix) const;

    [[noreturn]] void fail(const std::string& key, const std::string& what) const;
    // The line `key` was written on, when it came from a file (so a mapping's entries can
    // be taken in the order they were written: JSON objects keep none).
    std::optional<int> line_of(const std::string& key) const;

private:
    const Json* find(const std::string& key) const;
    std::string where(const std::string& key) const;

    Json values_;
    std::string prefix_;
    std::string file_;
    std::map<std::string, int> lines_;  // "key" or "key.sub" → line (1-based)
};

}  // namespace toolport::providers
