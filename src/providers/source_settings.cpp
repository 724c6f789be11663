#include "providers/source_settings.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "util/closest_name.hpp"

namespace toolport::providers {

SourceSettings::SourceSettings(Json values, std::string prefix, std::string file, std::map<std::string, int> lines)
    : values_(std::move(values)), prefix_(std::move(prefix)), file_(std::move(file)), lines_(std::move(lines)) {
    if (!values_.is_null() && !values_.is_object()) {
        throw SettingsError(fmt::format("{}{}: must be a mapping", file_.empty() ? "" : file_ + ": ", prefix_));
    }
}

std::string SourceSettings::where(const std::string& key) const {
    std::string location;
    if (!file_.empty()) {
        location = file_;
        auto line = lines_.find(key);
        if (line == lines_.end()) line = lines_.find("");
        if (line != lines_.end()) location += fmt::format(":{}", line->second);
        location += ": ";
    }
    return location + (key.empty() ? prefix_ : prefix_ + "." + key);
}

void SourceSettings::fail(const std::string& key, const std::string& what) const {
    throw SettingsError(fmt::format("{}: {}", where(key), what));
}

const Json* SourceSettings::find(const std::string& key) const {
    if (!values_.is_object()) return nullptr;
    auto it = values_.find(key);
    if (it == values_.end() || it->is_null()) return nullptr;
    return &*it;
}

void SourceSettings::only_keys(const std::vector<std::string>& allowed) const {
    if (!values_.is_object()) return;
    for (const auto& [key, value] : values_.items()) {
        if (std::find(allowed.begin(), allowed.end(), key) != allowed.end()) continue;
        auto closest = util::closest_name(key, allowed);
        fail(key, closest ? fmt::format("unknown key; did you mean \"{}\"? (expected one of: {})", *closest,
                                        fmt::join(allowed, ", "))
                          : fmt::format("unknown key (expected one of: {})", fmt::join(allowed, ", ")));
    }
}

std::optional<std::string> SourceSettings::string(const std::string& key) const {
    const Json* v = find(key);
    if (!v) return std::nullopt;
    if (v->is_string()) return v->get<std::string>();
    if (v->is_number() || v->is_boolean()) return v->dump();
    fail(key, "must be a string");
}

std::optional<long long> SourceSettings::integer(const std::string& key, long long min, long long max) const {
    const Json* v = find(key);
    if (!v) return std::nullopt;
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

std::optional<double> SourceSettings::number(const std::string& key, double min, double max) const {
    const Json* v = find(key);
    if (!v) return std::nullopt;
    double n = 0;
    if (v->is_number()) {
        n = v->get<double>();
    } else if (v->is_string()) {
        const auto text = v->get<std::string>();
        try {
            std::size_t used = 0;
            n = std::stod(text, &used);
            if (used != text.size()) throw std::invalid_argument("trailing characters");
        } catch (const std::logic_error&) {
            fail(key, fmt::format("must be a number, got \"{}\"", text));
        }
    } else {
        fail(key, "must be a number");
    }
    if (!(n >= min && n <= max)) fail(key, fmt::format("must be between {} and {}", min, max));
    return n;
}

std::optional<bool> SourceSettings::boolean(const std::string& key) const {
    const Json* v = find(key);
    if (!v) return std::nullopt;
    if (v->is_boolean()) return v->get<bool>();
    if (v->is_string()) {
        const auto text = v->get<std::string>();
        if (text == "true" || text == "yes" || text == "on") return true;
        if (text == "false" || text == "no" || text == "off") return false;
        fail(key, fmt::format("must be true or false, got \"{}\"", text));
    }
    fail(key, "must be true or false");
}

std::optional<std::vector<std::string>> SourceSettings::list(const std::string& key) const {
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

std::optional<std::map<std::string, std::string>> SourceSettings::string_map(const std::string& key) const {
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

std::optional<Json> SourceSettings::value(const std::string& key) const {
    const Json* v = find(key);
    if (!v) return std::nullopt;
    return *v;
}

std::optional<int> SourceSettings::line_of(const std::string& key) const {
    auto it = lines_.find(key);
    if (it == lines_.end()) return std::nullopt;
    return it->second;
}

SourceSettings SourceSettings::section(const std::string& key) const { return section(key, prefix_ + "." + key); }

SourceSettings SourceSettings::section(const std::string& key, const std::string& prefix) const {
    const Json* v = find(key);
    if (!v) return SourceSettings(Json(nullptr), prefix, file_);
    if (!v->is_object()) fail(key, "must be a mapping");
    std::map<std::string, int> lines;
    const std::string below = key + ".";
    for (const auto& [path, line] : lines_) {
        if (path == key) lines[""] = line;
        else if (path.rfind(below, 0) == 0) lines[path.substr(below.size())] = line;
    }
    return SourceSettings(*v, prefix, file_, std::move(lines));
}

}  // namespace toolport::providers
