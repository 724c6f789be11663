#include "config/settings.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "config/yaml_file.hpp"
#include "util/closest_name.hpp"

namespace toolport::config {

std::string expand_env(const std::string& text, const std::string& where) {
    std::string out;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if (text[i] == '$' && i + 1 < text.size() && text[i + 1] == '{') {
            auto close = text.find('}', i + 2);
            if (close == std::string::npos) throw SettingsError(fmt::format("{}: unclosed ${{ in \"{}\"", where, text));
            std::string name = text.substr(i + 2, close - i - 2);
            std::string fallback;
            bool has_fallback = false;
            if (auto d = name.find(":-"); d != std::string::npos) {
                fallback = name.substr(d + 2);
                name = name.substr(0, d);
                has_fallback = true;
            }
            const char* value = std::getenv(name.c_str());
            if (value && *value) out += value;
            else if (has_fallback) out += fallback;
            else throw SettingsError(fmt::format("{}: environment variable {} is not set", where, name));
            i = close;
        } else {
            out += text[i];
        }
    }
    return out;
}

namespace {

// "a", "a or b", "a, b or c".
std::string or_list(const std::vector<std::string>& values, const char* quote = "") {
    std::string out;
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (i > 0) out += i + 1 == values.size() ? " or " : ", ";
        out += quote + values[i] + quote;
    }
    return out;
}

long long whole(double v) { return static_cast<long long>(v); }

}  // namespace

Settings::Settings(Json values, std::string prefix, std::string file, std::map<std::string, int> lines)
    : values_(std::move(values)), prefix_(std::move(prefix)), file_(std::move(file)), lines_(std::move(lines)) {
    if (!values_.is_null() && !values_.is_object()) {
        throw SettingsError(fmt::format("{}{}: must be a mapping", file_.empty() ? "" : file_ + ": ", prefix_));
    }
}

Settings::Settings(std::shared_ptr<const FileTree> tree)
    : values_(tree->values), file_(tree->file), tree_(std::move(tree)) {}

// ---- Where ----

std::string Settings::dotted(const std::string& key) const {
    if (key.empty()) return prefix_;
    return prefix_.empty() ? key : prefix_ + "." + key;
}

std::string Settings::mark_path(const std::string& key) const {
    if (key.empty()) return path_;
    return path_.empty() ? key : path_ + "." + key;
}

std::optional<int> Settings::value_line(const std::string& key) const {
    if (from_file()) {
        auto it = tree_->marks.find(mark_path(key));
        if (it == tree_->marks.end()) it = tree_->marks.find(path_);
        if (it == tree_->marks.end()) return std::nullopt;
        return it->second.node_line;
    }
    auto line = lines_.find(key);
    if (line == lines_.end()) line = lines_.find("");
    if (line == lines_.end()) return std::nullopt;
    return line->second;
}

std::optional<int> Settings::key_line(const std::string& key) const {
    if (!from_file()) return value_line(key);
    auto it = tree_->marks.find(mark_path(key));
    if (it == tree_->marks.end() || it->second.key_line == 0) return value_line(key);
    return it->second.key_line;
}

std::string Settings::where(const std::string& key, std::optional<int> line) const {
    std::string location;
    if (!file_.empty()) {
        location = file_;
        if (line) location += fmt::format(":{}", *line);
        location += ": ";
    }
    return location + dotted(key);
}

std::string Settings::location() const {
    if (file_.empty()) return {};
    auto line = value_line("");
    return line ? fmt::format("{}:{}: ", file_, *line) : file_ + ": ";
}

void Settings::fail(const std::string& key, const std::string& what) const {
    throw SettingsError(fmt::format("{}: {}", where(key, value_line(key)), what));
}

void Settings::fail(const Key& key, const std::string& what) const { fail(key.name, what); }

void Settings::fail_at_key(const std::string& key, const std::string& what) const {
    throw SettingsError(fmt::format("{}: {}", where(key, key_line(key)), what));
}

void Settings::fail_here(const std::string& what) const { fail("", what); }

void Settings::fail_item(const std::string& key, std::size_t index, const std::string& what) const {
    std::optional<int> line;
    if (from_file()) {
        auto it = tree_->marks.find(fmt::format("{}[{}]", mark_path(key), index));
        if (it != tree_->marks.end()) line = it->second.node_line;
    }
    throw SettingsError(fmt::format("{}: {}", where(key, line ? line : value_line(key)), what));
}

std::optional<int> Settings::line_of(const std::string& key) const {
    if (from_file()) {
        auto it = tree_->marks.find(mark_path(key));
        if (it == tree_->marks.end()) return std::nullopt;
        return it->second.node_line;
    }
    auto it = lines_.find(key);
    if (it == lines_.end()) return std::nullopt;
    return it->second;
}

// ---- Values ----

const Json* Settings::find(const std::string& key) const {
    if (!values_.is_object()) return nullptr;
    auto it = values_.find(key);
    if (it == values_.end()) return nullptr;
    // In a source's section an empty value is "not set"; in the file's own it is given.
    if (it->is_null() && !from_file()) return nullptr;
    return &*it;
}

std::string Settings::file_scalar(const std::string& key) const {
    const Json* v = find(key);
    if (!v || !v->is_string()) fail(key, "must be a string");
    return expand_env(v->get<std::string>(), where(key, value_line(key)));
}

std::string Settings::scalar() const {
    if (!from_file()) {
        if (values_.is_string()) return values_.get<std::string>();
        if (values_.is_number() || values_.is_boolean()) return values_.dump();
        fail_here("must be a string");
    }
    if (!values_.is_string()) fail_here("must be a string");
    return expand_env(values_.get<std::string>(), where("", value_line("")));
}

namespace {

// `text` read whole by `parse` (std::stoll, std::stod): nullopt when it is not a number of
// that kind or has anything after it.
template <typename T, typename Parse>
std::optional<T> read_whole(const std::string& text, Parse parse) {
    try {
        std::size_t used = 0;
        T n = parse(text, &used);
        if (used == text.size()) return n;
    } catch (const std::logic_error&) {}
    return std::nullopt;
}

}  // namespace

long long Settings::parse_integer(const std::string& key, const std::string& text, double min, double max) const {
    auto n = read_whole<long long>(text, [](const std::string& s, std::size_t* used) { return std::stoll(s, used); });
    if (!n) fail(key, fmt::format("must be an integer, got \"{}\"", text));
    if (*n < whole(min) || *n > whole(max)) fail(key, fmt::format("must be between {} and {}", whole(min), whole(max)));
    return *n;
}

double Settings::parse_number(const std::string& key, const std::string& text, double min, double max) const {
    auto n = read_whole<double>(text, [](const std::string& s, std::size_t* used) { return std::stod(s, used); });
    if (!n) fail(key, fmt::format("must be a number, got \"{}\"", text));
    if (!(*n >= min && *n <= max)) fail(key, fmt::format("must be between {} and {}", min, max));
    return *n;
}

bool Settings::parse_boolean(const std::string& key, const std::string& text) const {
    if (text == "true" || text == "yes" || text == "on") return true;
    if (text == "false" || text == "no" || text == "off") return false;
    fail(key, fmt::format("must be true or false, got \"{}\"", text));
}

// ---- Reads checked against a declaration ----

bool Settings::has(const Key& key) const {
    for (const auto& spelling : key.spellings()) {
        if (find(spelling)) return true;
    }
    return false;
}

void Settings::refuse_unknown(const std::string& key, const std::vector<std::string>& allowed, bool at_key) const {
    if (allowed.empty()) {
        if (at_key) fail_at_key(key, "unknown key (this section takes no settings)");
        fail(key, "unknown key (this section takes no settings)");
    }
    auto closest = util::closest_name(key, allowed);
    auto what = closest ? fmt::format("unknown key; did you mean \"{}\"? (expected one of: {})", *closest,
                                      fmt::join(allowed, ", "))
                        : fmt::format("unknown key (expected one of: {})", fmt::join(allowed, ", "));
    if (at_key) fail_at_key(key, what);
    fail(key, what);
}

void Settings::check_keys(const Section& section) const {
    if (!section.closed) return;
    if (!from_file()) return only_keys(section.spellings());
    if (!values_.is_object()) fail_here("must be a mapping");
    const auto allowed = section.spellings();
    for (const auto& name : names()) {
        if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) refuse_unknown(name, allowed, true);
    }
}

std::optional<std::string> Settings::string(const Key& key) const {
    if (!from_file()) return string(key.name);
    if (!find(key.name)) return std::nullopt;
    return file_scalar(key.name);
}

std::optional<long long> Settings::integer(const Key& key) const {
    if (!from_file()) return integer(key.name, whole(key.min), whole(key.max));
    if (!find(key.name)) return std::nullopt;
    return parse_integer(key.name, file_scalar(key.name), key.min, key.max);
}

std::optional<double> Settings::number(const Key& key) const {
    if (!from_file()) return number(key.name, key.min, key.max);
    if (!find(key.name)) return std::nullopt;
    return parse_number(key.name, file_scalar(key.name), key.min, key.max);
}

std::optional<bool> Settings::boolean(const Key& key) const {
    if (!from_file()) return boolean(key.name);
    if (!find(key.name)) return std::nullopt;
    return parse_boolean(key.name, file_scalar(key.name));
}

std::optional<std::vector<std::string>> Settings::list(const Key& key) const {
    if (!from_file()) return list(key.name);
    const Json* v = find(key.name);
    if (!v) return std::nullopt;
    if (!v->is_array()) fail(key.name, "must be a list");
    std::vector<std::string> out;
    for (std::size_t i = 0; i < v->size(); ++i) {
        const auto& item = (*v)[i];
        if (!item.is_string()) fail_item(key.name, i, "must be a string");
        auto line = tree_->marks.find(fmt::format("{}[{}]", mark_path(key.name), i));
        out.push_back(expand_env(item.get<std::string>(),
                                 where(key.name, line != tree_->marks.end() ? std::optional<int>(line->second.node_line)
                                                                            : value_line(key.name))));
    }
    return out;
}

std::optional<std::map<std::string, std::string>> Settings::string_map(const Key& key) const {
    if (!from_file()) return string_map(key.name);
    if (!find(key.name)) return std::nullopt;
    auto entries = section(key);
    if (!entries.is_mapping()) fail(key.name, "must be a mapping of names to strings");
    std::map<std::string, std::string> out;
    for (const auto& name : entries.names()) out[name] = entries.entry(name).scalar();
    return out;
}

std::optional<std::string> Settings::one_of(const Key& key) const {
    auto value = string(key);
    if (!value) return std::nullopt;
    if (std::find(key.values.begin(), key.values.end(), *value) == key.values.end()) {
        fail(key, fmt::format("must be {}{}", or_list(key.values),
                              key.echo_value ? fmt::format(", got \"{}\"", *value) : std::string()));
    }
    return value;
}

std::optional<std::string> Settings::secret(const Key& key) const {
    const std::string env_key = key.name + "_env";
    const bool inline_given = key.secret == Secret::inline_or_env && find(key.name);
    if (inline_given && find(env_key)) {
        fail(env_key, fmt::format("give {} or {}, not both", key.name, env_key));
    }
    if (key.secret == Secret::no || inline_given) {
        return from_file() ? (find(key.name) ? std::optional(file_scalar(key.name)) : std::nullopt) : string(key.name);
    }
    if (!find(env_key)) return std::nullopt;
    const auto name = from_file() ? file_scalar(env_key) : *string(env_key);
    const char* value = std::getenv(name.c_str());
    if (!value || !*value) fail(env_key, fmt::format("environment variable {} is not set", name));
    return std::string(value);
}

std::optional<std::string> Settings::from_env(const Key& key) {
    if (key.env.empty()) return std::nullopt;
    const char* value = std::getenv(key.env.c_str());
    if (!value || !*value) return std::nullopt;
    return std::string(value);
}

std::optional<long long> Settings::integer_from_env(const Key& key) {
    auto text = from_env(key);
    if (!text) return std::nullopt;
    try {
        std::size_t used = 0;
        long long n = std::stoll(*text, &used);
        if (used != text->size() || n < whole(key.min) || n > whole(key.max)) throw std::out_of_range(key.env);
        return n;
    } catch (const std::logic_error&) {
        throw SettingsError(fmt::format("environment variable {} must be an integer from {} to {}", key.env,
                                        whole(key.min), whole(key.max)));
    }
}

std::optional<std::string> Settings::one_of_from_env(const Key& key) {
    auto text = from_env(key);
    if (!text) return std::nullopt;
    if (std::find(key.values.begin(), key.values.end(), *text) == key.values.end()) {
        throw SettingsError(fmt::format("environment variable {} must be {}", key.env, or_list(key.values, "\"")));
    }
    return text;
}

Settings Settings::section(const Key& key) const {
    if (!from_file()) return section(key.name);
    Settings sub;
    sub.tree_ = tree_;
    sub.file_ = file_;
    sub.path_ = mark_path(key.name);
    sub.prefix_ = dotted(key.name);
    if (const Json* v = find(key.name)) sub.values_ = *v;
    return sub;
}

// ---- Mappings of names ----

std::vector<std::string> Settings::names() const {
    std::vector<std::string> out;
    if (!values_.is_object()) return out;
    for (const auto& [name, value] : values_.items()) out.push_back(name);
    // In the order written (JSON objects keep none); by name where no line is known.
    auto written = [&](const std::string& key) -> std::pair<int, int> {
        if (from_file()) {
            auto it = tree_->marks.find(mark_path(key));
            if (it != tree_->marks.end()) return {it->second.key_line, it->second.key_column};
        }
        return {key_line(key).value_or(0), 0};
    };
    std::stable_sort(out.begin(), out.end(),
                     [&](const std::string& a, const std::string& b) { return written(a) < written(b); });
    return out;
}

Settings Settings::entry(const std::string& name) const {
    if (!from_file()) return section(name);
    Key key;
    key.name = name;
    return section(key);
}

std::size_t Settings::item_count(const Key& key) const {
    const Json* v = find(key.name);
    if (!v || (v->is_null() && from_file())) return 0;
    if (!v->is_array()) fail(key.name, "must be a list");
    return v->size();
}

Settings Settings::item(const Key& key, std::size_t index) const {
    const std::string name = fmt::format("{}[{}]", key.name, index);
    const Json* list = find(key.name);
    Json value = list && list->is_array() && index < list->size() ? (*list)[index] : Json(nullptr);
    if (from_file()) {
        Settings sub;
        sub.tree_ = tree_;
        sub.file_ = file_;
        sub.path_ = mark_path(name);
        sub.prefix_ = dotted(name);
        sub.values_ = std::move(value);
        return sub;
    }
    if (!value.is_null() && !value.is_object()) fail_item(key.name, index, "must be a mapping");
    std::map<std::string, int> lines;
    const std::string below = name + ".";
    for (const auto& [path, line] : lines_) {
        if (path == key.name) lines[""] = line;
        else if (path.rfind(below, 0) == 0) lines[path.substr(below.size())] = line;
    }
    return Settings(std::move(value), dotted(name), file_, std::move(lines));
}

std::pair<Json, std::map<std::string, int>> Settings::source_values(const std::string& key,
                                                                    const std::string& base) const {
    const Json* v = find(key);
    if (!from_file() || !v) return {v ? *v : Json(nullptr), {}};
    const std::string tree_key = mark_path(key);
    // Each scalar ${ENV}-expanded, in the order written (so the first error is the first in the file).
    std::function<Json(const Json&, const std::string&, const std::string&)> expand =
        [&](const Json& value, const std::string& unique, const std::string& name) -> Json {
        if (value.is_object()) {
            std::vector<std::string> keys;
            for (const auto& [k, child] : value.items()) keys.push_back(k);
            auto line = [&](const std::string& k) {
                auto it = tree_->marks.find(unique + "." + k);
                return it == tree_->marks.end() ? std::pair(0, 0)
                                                : std::pair(it->second.key_line, it->second.key_column);
            };
            std::stable_sort(keys.begin(), keys.end(),
                             [&](const std::string& a, const std::string& b) { return line(a) < line(b); });
            Json object = Json::object();
            for (const auto& k : keys) object[k] = expand(value[k], unique + "." + k, name + "." + k);
            return object;
        }
        if (value.is_array()) {
            Json array = Json::array();
            for (std::size_t i = 0; i < value.size(); ++i)
                array.push_back(expand(value[i], fmt::format("{}[{}]", unique, i), name));
            return array;
        }
        if (value.is_string()) {
            auto it = tree_->marks.find(unique);
            const int line = it == tree_->marks.end() ? 0 : it->second.node_line;
            return expand_env(value.get<std::string>(), fmt::format("{}:{}: {}", file_, line, name));
        }
        return value;
    };
    Json values = expand(*v, tree_key, dotted(key));
    std::map<std::string, int> lines;
    const std::string below = tree_key + ".";
    for (const auto& [path, line] : tree_->lines) {
        if (path == tree_key) lines[base] = line;
        else if (path.rfind(below, 0) == 0)
            lines[base.empty() ? path.substr(below.size()) : base + "." + path.substr(below.size())] = line;
    }
    return {std::move(values), std::move(lines)};
}

Settings Settings::source_section(const std::string& key, const std::string& prefix) const {
    auto [values, lines] = source_values(key, "");
    return Settings(std::move(values), prefix, file_, std::move(lines));
}

// ---- Reads by name ----

void Settings::only_keys(const std::vector<std::string>& allowed) const {
    if (!values_.is_object()) return;
    // The file's sections: the first unknown key in the file; a source's: by name, as always.
    std::vector<std::string> keys;
    if (from_file()) keys = names();
    else
        for (const auto& [key, value] : values_.items()) keys.push_back(key);
    for (const auto& key : keys) {
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
        refuse_unknown(key, allowed, from_file());
    }
}

std::optional<std::string> Settings::string(const std::string& key) const {
    const Json* v = find(key);
    if (!v) return std::nullopt;
    if (from_file()) return file_scalar(key);
    if (v->is_string()) return v->get<std::string>();
    if (v->is_number() || v->is_boolean()) return v->dump();
    fail(key, "must be a string");
}

std::optional<long long> Settings::integer(const std::string& key, long long min, long long max) const {
    const Json* v = find(key);
    if (!v) return std::nullopt;
    if (from_file()) return parse_integer(key, file_scalar(key), static_cast<double>(min), static_cast<double>(max));
    long long n = 0;
    if (v->is_number_integer()) {
        n = v->get<long long>();
    } else if (v->is_string()) {
        const auto text = v->get<std::string>();
        try {
            std::size_t used = 0;
            n = std::stoll(text, &used);
            if (used != text.size()) throw std::invalid_argument("trailing characters");
        } catch (const std::logic_error&) {
            fail(key, fmt::format("must be an integer, got \"{}\"", text));
        }
    } else {
        fail(key, "must be an integer");
    }
    if (n < min || n > max) fail(key, fmt::format("must be between {} and {}", min, max));
    return n;
}

std::optional<double> Settings::number(const std::string& key, double min, double max) const {
    const Json* v = find(key);
    if (!v) return std::nullopt;
    if (from_file()) return parse_number(key, file_scalar(key), min, max);
    double n = 0;
    if (v->is_number()) {
        n = v->get<double>();
    } else if (v->is_string()) {
        return parse_number(key, v->get<std::string>(), min, max);
    } else {
        fail(key, "must be a number");
    }
    if (!(n >= min && n <= max)) fail(key, fmt::format("must be between {} and {}", min, max));
    return n;
}

std::optional<bool> Settings::boolean(const std::string& key) const {
    const Json* v = find(key);
    if (!v) return std::nullopt;
    if (from_file()) return parse_boolean(key, file_scalar(key));
    if (v->is_boolean()) return v->get<bool>();
    if (v->is_string()) return parse_boolean(key, v->get<std::string>());
    fail(key, "must be true or false");
}

std::optional<std::vector<std::string>> Settings::list(const std::string& key) const {
    if (from_file()) {
        Key k;
        k.name = key;
        return list(k);
    }
    const Json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_array()) fail(key, "must be a list");
    std::vector<std::string> out;
    for (const auto& item : *v) {
        if (item.is_string()) out.push_back(item.get<std::string>());
        else if (item.is_number() || item.is_boolean()) out.push_back(item.dump());
        else fail(key, "must be a list of strings");
    }
    return out;
}

std::optional<std::map<std::string, std::string>> Settings::string_map(const std::string& key) const {
    const Json* v = find(key);
    if (!v) return std::nullopt;
    if (!v->is_object()) fail(key, "must be a mapping of names to strings");
    std::map<std::string, std::string> out;
    for (const auto& [name, item] : v->items()) {
        if (item.is_string()) out[name] = item.get<std::string>();
        else if (item.is_number() || item.is_boolean()) out[name] = item.dump();
        else fail(key + "." + name, "must be a string");
    }
    return out;
}

std::optional<Json> Settings::value(const std::string& key) const {
    const Json* v = find(key);
    if (!v) return std::nullopt;
    return *v;
}

Settings Settings::section(const std::string& key) const { return section(key, dotted(key)); }

Settings Settings::section(const std::string& key, const std::string& prefix) const {
    if (from_file()) {
        Key k;
        k.name = key;
        auto sub = section(k);
        sub.prefix_ = prefix;
        return sub;
    }
    const Json* v = find(key);
    if (!v) return Settings(Json(nullptr), prefix, file_);
    if (!v->is_object()) fail(key, "must be a mapping");
    std::map<std::string, int> lines;
    const std::string below = key + ".";
    for (const auto& [path, line] : lines_) {
        if (path == key) lines[""] = line;
        else if (path.rfind(below, 0) == 0) lines[path.substr(below.size())] = line;
    }
    return Settings(*v, prefix, file_, std::move(lines));
}

}  // namespace toolport::config
