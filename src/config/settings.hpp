// Settings: the one reader of Toolport's configuration. The YAML file is read once into a
// tree (JSON values and the line of every key, yaml_file.hpp); the file's own sections and
// every source's section are read through this class, with typed reads checked against the
// declarations (declaration.hpp). Every refusal says "FILE:LINE: dotted.key: what".
//
// The reading rule for YAML (one for the whole file):
// - The file is first read by document::parse_yaml (document/document.hpp), the one YAML
//   rule of every file Toolport reads (spec files and OpenAPI documents too): syntax, one
//   document, each key once, known tags only. Where that rule types a plain scalar as a
//   boolean or a number, the configuration takes the text as written (its spelling), so
//   the key's declaration alone decides the type: `0123` stays "0123" for a name.
// - Every scalar is read as a string first, with ${NAME} and ${NAME:-default} replaced by
//   environment values (an unset variable without a default is an error); then converted
//   to the key's type: integers and numbers must be written whole (no trailing text) and
//   lie in the key's range; booleans are true/false, yes/no or on/off.
// - A key written with an empty value (`key:`) counts as given in the file's own sections
//   (and is refused as not a string, a list, a mapping); in a source's section it counts as
//   not set.
// - A secret declared as such may be given as `<name>_env: VAR` instead: the value of the
//   environment variable VAR (refused when unset or empty; never both spellings).
//
// Two dialects, so every file accepted before is accepted with the same meaning:
// - the file's own sections (from_yaml_file and the sections under it): typed reads need a
//   YAML scalar; refusals name the line of the value, unknown keys the line of the key;
// - a source's section (source_section(), or built from JSON by tests and the command
//   line): values arrive ${ENV}-expanded, JSON numbers and booleans are accepted too, and
//   refusals name the line each key was remembered with.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/declaration.hpp"
#include "util/json.hpp"

namespace toolport::config {

// A setting that is missing, unknown or of the wrong type; the message names the file,
// the line and the key.
struct SettingsError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// Replaces ${NAME} and ${NAME:-default} with environment values; `where` prefixes the
// refusal of an unset variable or an unclosed ${ (throws SettingsError).
std::string expand_env(const std::string& text, const std::string& where);

struct FileTree;

class Settings {
public:
    // No section: every read answers "not set".
    Settings() = default;
    // A source's section from JSON. `values`: a JSON object (or null). `prefix` names the
    // section in messages ("packs.tango"); `lines` maps dotted key paths below it to their
    // line in `file`.
    Settings(Json values, std::string prefix, std::string file = {}, std::map<std::string, int> lines = {});
    // The whole file, as read by read_yaml_file (yaml_file.hpp).
    explicit Settings(std::shared_ptr<const FileTree> tree);

    bool empty() const { return values_.is_null() || (values_.is_object() && values_.empty()); }
    const std::string& prefix() const { return prefix_; }
    const std::string& file() const { return file_; }

    // ---- Reads checked against a declaration ----
    // Whether the key is written (in the file's own sections, also with an empty value).
    bool has(const Key& key) const;
    // Refuses keys the section does not declare ("unknown key; did you mean ...? (expected
    // one of: ...)"); in the file's sections also a value that is not a mapping.
    void check_keys(const Section& section) const;
    std::optional<std::string> string(const Key& key) const;
    std::optional<long long> integer(const Key& key) const;
    std::optional<double> number(const Key& key) const;
    std::optional<bool> boolean(const Key& key) const;
    std::optional<std::vector<std::string>> list(const Key& key) const;
    std::optional<std::map<std::string, std::string>> string_map(const Key& key) const;
    // A value of key.values (else "must be a, b or c").
    std::optional<std::string> one_of(const Key& key) const;
    template <class Duration>
    std::optional<Duration> duration(const Key& key) const {
        if (auto n = integer(key)) return Duration(*n);
        return std::nullopt;
    }
    // A secret: `name: value`, or `name_env: VAR` read from the environment.
    std::optional<std::string> secret(const Key& key) const;
    // The key's value from its environment variable (key.env), when set and not empty.
    static std::optional<std::string> from_env(const Key& key);
    // The same, as an integer in the key's range (else "environment variable X must be an
    // integer from A to B").
    static std::optional<long long> integer_from_env(const Key& key);
    // The same, as one of key.values (else 'environment variable X must be "a" or "b"').
    static std::optional<std::string> one_of_from_env(const Key& key);
    // A nested section (empty settings when absent).
    Settings section(const Key& key) const;
    [[noreturn]] void fail(const Key& key, const std::string& what) const;

    // ---- Mappings of names chosen by the user (services:, rest:, upstreams: ...) ----
    // The names of this mapping, in the order they are written in the file.
    std::vector<std::string> names() const;
    // The entry `name` (named `prefix.name` in messages).
    Settings entry(const std::string& name) const;
    // ---- Lists of sections (Type::section_list) ----
    // How many items the list `key` has (0 when absent; refused when not a list).
    std::size_t item_count(const Key& key) const;
    // Item `index` of the list `key` (named `prefix.key[index]` in messages).
    Settings item(const Key& key, std::size_t index) const;
    // The line the key itself (not its value) was written on.
    std::optional<int> line_of_key(const std::string& key) const { return key_line(key); }
    // Refuses `key` naming the line of the key itself (its name is what is wrong).
    [[noreturn]] void fail_at_key(const std::string& key, const std::string& what) const;
    // Refuses item `index` of the list `key`, naming the item's line.
    [[noreturn]] void fail_item(const std::string& key, std::size_t index, const std::string& what) const;
    // Refuses the section itself.
    [[noreturn]] void fail_here(const std::string& what) const;
    // Whether the value is a mapping, a list, a scalar (a string in the tree), written empty.
    bool is_mapping() const { return values_.is_object(); }
    bool is_list() const { return values_.is_array(); }
    bool is_scalar() const { return values_.is_string() || values_.is_number() || values_.is_boolean(); }
    bool is_null() const { return values_.is_null(); }
    // The scalar itself (${ENV} expanded; refused when not a scalar).
    std::string scalar() const;
    // A source's section as the source reads it: values ${ENV}-expanded (refusals name the
    // line of the value), named `prefix` in messages, each key with its line.
    Settings source_section(const std::string& key, const std::string& prefix) const;
    // The same values and lines, to combine sections into one source's settings
    // (`gateway:` and `upstreams:`); the lines' paths start with `base`.
    std::pair<Json, std::map<std::string, int>> source_values(const std::string& key, const std::string& base) const;
    // The line the section itself was written on ("FILE:LINE: " for messages, or "").
    std::string location() const;

    // ---- Reads by name (the sources' own settings) ----
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
    Settings section(const std::string& key) const;
    // The same, named `prefix` in messages: a key the file holds elsewhere than the settings
    // do (the gateway's `upstreams:` is a top-level key of the file).
    Settings section(const std::string& key, const std::string& prefix) const;

    [[noreturn]] void fail(const std::string& key, const std::string& what) const;
    // The line `key` was written on, when it came from a file (so a mapping's entries can
    // be taken in the order they were written: JSON objects keep none).
    std::optional<int> line_of(const std::string& key) const;

private:
    bool from_file() const { return tree_ != nullptr; }
    const Json* find(const std::string& key) const;
    std::string where(const std::string& key, std::optional<int> line) const;
    std::string dotted(const std::string& key) const;
    std::string mark_path(const std::string& key) const;
    std::optional<int> value_line(const std::string& key) const;
    std::optional<int> key_line(const std::string& key) const;
    // File dialect: the key's scalar, ${ENV}-expanded (refused when not a scalar).
    std::string file_scalar(const std::string& key) const;
    long long parse_integer(const std::string& key, const std::string& text, double min, double max) const;
    double parse_number(const std::string& key, const std::string& text, double min, double max) const;
    bool parse_boolean(const std::string& key, const std::string& text) const;
    void refuse_unknown(const std::string& key, const std::vector<std::string>& allowed, bool at_key) const;

    Json values_;
    std::string prefix_;
    std::string file_;
    std::map<std::string, int> lines_;      // source dialect: "key" or "key.sub" → line (1-based)
    std::shared_ptr<const FileTree> tree_;  // file dialect: the whole file
    std::string path_;                      // file dialect: this section's path in the tree
};

}  // namespace toolport::config
