#include "config/effective.hpp"

#include <cctype>
#include <cstdlib>

namespace toolport::config {

using Json = nlohmann::json;

namespace {

constexpr const char* kHidden = "***";

std::string join(const std::string& prefix, const std::string& name) {
    return prefix.empty() ? name : prefix + "." + name;
}

// A default's documentation text as the value it stands for: "4096" a number, "true" a
// boolean, anything else ("$XDG_STATE_HOME/...", "2 × cores") the text itself.
Json default_value(const Key& key) {
    const std::string& text = key.default_text;
    switch (key.type) {
        case Type::integer:
        case Type::number:
        case Type::duration: {
            char* end = nullptr;
            const double n = std::strtod(text.c_str(), &end);
            if (end && *end == '\0' && end != text.c_str()) {
                if (key.type != Type::number && n == static_cast<double>(static_cast<long long>(n)))
                    return static_cast<long long>(n);
                return n;
            }
            return text;
        }
        case Type::boolean:
            if (text == "true") return true;
            if (text == "false") return false;
            return text;
        default: return text;
    }
}

// An environment variable's text as the key's type reads it (a number, a boolean).
Json env_value(const Key& key, const std::string& text) {
    Key as_default = key;
    as_default.default_text = text;
    return default_value(as_default);
}

const Json* member(const Json& object, const std::string& name) {
    if (!object.is_object()) return nullptr;
    auto it = object.find(name);
    return it == object.end() ? nullptr : &*it;
}

struct Walker {
    const EnvReader& env;
    const std::function<const Section*(const std::string&, const std::string&)>& more;
    std::vector<EffectiveRow> rows;

    std::optional<std::string> read_env(const std::string& name) const {
        if (env) return env(name);
        const char* value = std::getenv(name.c_str());
        if (!value || !*value) return std::nullopt;
        return std::string(value);
    }

    void section(const Section& s, const Json& written, const std::string& prefix) {
        for (const Key* key : s.keys) this->key(*key, written, prefix);
    }

    void key(const Key& key, const Json& written, const std::string& prefix) {
        const std::string path = join(prefix, key.name);
        const Json* value = member(written, key.name);
        if (key.secret != Secret::no) {
            if (const Json* via = member(written, key.name + "_env"); via && via->is_string()) {
                rows.push_back({path, kHidden, "env " + via->get<std::string>()});
            } else if (value && !value->is_null()) {
                rows.push_back({path, kHidden, "file"});
            }
            return;
        }
        switch (key.type) {
            case Type::section: {
                Json inner = value ? *value : Json(nullptr);
                // `store: redis://...`: the section written as its first key alone.
                if (key.also_string && inner.is_string() && key.section && !key.section->keys.empty()) {
                    inner = Json{{key.section->keys.front()->name, inner}};
                }
                if (key.section) section(*key.section, inner, path);
                return;
            }
            case Type::named_sections:
                if (value && value->is_object() && key.section) {
                    for (const auto& [name, entry] : value->items()) section(*key.section, entry, join(path, name));
                }
                return;
            case Type::any:
                if (!value) return;
                if (more && value->is_object()) {
                    bool walked = false;
                    for (const auto& [name, entry] : value->items()) {
                        if (const Section* s = more(path, name)) {
                            section(*s, entry, join(path, name));
                            walked = true;
                        }
                    }
                    if (walked) return;
                }
                rows.push_back({path, redact_secrets(*value, secret_by_name(key.name)), "file"});
                return;
            default: break;
        }
        const bool secret = secret_by_name(key.name);
        if (!key.env.empty()) {
            if (auto text = read_env(key.env)) {
                rows.push_back({path, secret ? Json(kHidden) : redact_secrets(env_value(key, *text)), "env " + key.env});
                return;
            }
        }
        if (value) {
            rows.push_back({path, redact_secrets(*value, secret), "file"});
        } else if (!key.default_text.empty()) {
            rows.push_back({path, secret ? Json(kHidden) : default_value(key), "default"});
        }
    }
};

}  // namespace

std::vector<EffectiveRow> effective_rows(
    const Section& section, const Json& written, const std::string& prefix, const EnvReader& env,
    const std::function<const Section*(const std::string& path, const std::string& name)>& more) {
    Walker walker{env, more, {}};
    walker.section(section, written, prefix);
    return std::move(walker.rows);
}

bool secret_by_name(std::string_view name) {
    std::string key(name);
    for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    auto ends = [&](std::string_view tail) {
        return key.size() >= tail.size() && key.compare(key.size() - tail.size(), tail.size(), tail) == 0;
    };
    if (ends("_env") || ends("_file")) return false;
    for (std::string_view tail : {"secret", "password", "passwd", "token", "tokens", "api_key", "apikey", "key"}) {
        if (ends(tail)) return true;
    }
    return key == "authorization" || key == "cookie" || key == "credentials" || key == "x-api-key";
}

Json redact_secrets(const Json& value, bool secret) {
    if (value.is_object()) {
        Json out = Json::object();
        for (const auto& [key, v] : value.items()) out[key] = redact_secrets(v, secret || secret_by_name(key));
        return out;
    }
    if (value.is_array()) {
        Json out = Json::array();
        for (const auto& v : value) out.push_back(redact_secrets(v, secret));
        return out;
    }
    if (secret && !value.is_null()) return kHidden;
    if (value.is_string()) {
        std::string text = value.get<std::string>();
        for (auto scheme = text.find("://"); scheme != std::string::npos; scheme = text.find("://", scheme + 3)) {
            const auto start = scheme + 3;
            const auto end = text.find_first_of("/?# ", start);
            const auto at = text.rfind('@', end == std::string::npos ? text.size() : end);
            if (at != std::string::npos && at >= start) text.replace(start, at - start, kHidden);
        }
        return text;
    }
    return value;
}

}  // namespace toolport::config
