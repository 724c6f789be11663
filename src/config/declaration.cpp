#include "config/declaration.hpp"

#include <algorithm>

namespace toolport::config {

std::vector<std::string> Key::spellings() const {
    switch (secret) {
        case Secret::no: return {name};
        case Secret::inline_or_env: return {name, name + "_env"};
        case Secret::env_only: return {name + "_env"};
    }
    return {name};
}

const Key* Section::find(const std::string& wanted) const {
    for (const auto* key : keys) {
        if (key->name == wanted) return key;
    }
    return nullptr;
}

std::vector<std::string> Section::spellings() const {
    std::vector<std::string> out;
    for (const auto* key : keys) {
        for (auto& spelling : key->spellings()) out.push_back(std::move(spelling));
    }
    if (list_sorted) std::sort(out.begin(), out.end());
    return out;
}

namespace {

Key make(std::string name, Type type, std::string doc, std::string default_text) {
    Key key;
    key.name = std::move(name);
    key.type = type;
    key.doc = std::move(doc);
    key.default_text = std::move(default_text);
    return key;
}

Key ranged(Key key, double min, double max) {
    key.min = min;
    key.max = max;
    key.ranged = true;
    return key;
}

}  // namespace

Key string_key(std::string name, std::string doc, std::string default_text) {
    return make(std::move(name), Type::string, std::move(doc), std::move(default_text));
}

Key integer_key(std::string name, double min, double max, std::string doc, std::string default_text) {
    return ranged(make(std::move(name), Type::integer, std::move(doc), std::move(default_text)), min, max);
}

Key number_key(std::string name, double min, double max, std::string doc, std::string default_text) {
    return ranged(make(std::move(name), Type::number, std::move(doc), std::move(default_text)), min, max);
}

Key boolean_key(std::string name, std::string doc, std::string default_text) {
    return make(std::move(name), Type::boolean, std::move(doc), std::move(default_text));
}

Key list_key(std::string name, std::string doc, std::string default_text) {
    return make(std::move(name), Type::string_list, std::move(doc), std::move(default_text));
}

Key map_key(std::string name, std::string doc) { return make(std::move(name), Type::string_map, std::move(doc), {}); }

Key one_of_key(std::string name, std::vector<std::string> values, std::string doc, std::string default_text) {
    auto key = make(std::move(name), Type::one_of, std::move(doc), std::move(default_text));
    key.values = std::move(values);
    return key;
}

Key duration_key(std::string name, std::string unit, double min, double max, std::string doc, std::string default_text) {
    auto key = ranged(make(std::move(name), Type::duration, std::move(doc), std::move(default_text)), min, max);
    key.unit = std::move(unit);
    return key;
}

Key section_key(std::string name, const Section& section, std::string doc) {
    auto key = make(std::move(name), Type::section, std::move(doc), {});
    key.section = &section;
    return key;
}

Key named_sections_key(std::string name, const Section& section, std::string doc) {
    auto key = make(std::move(name), Type::named_sections, std::move(doc), {});
    key.section = &section;
    return key;
}

Key section_list_key(std::string name, const Section& section, std::string doc) {
    auto key = make(std::move(name), Type::section_list, std::move(doc), {});
    key.section = &section;
    return key;
}

Key any_key(std::string name, std::string doc) { return make(std::move(name), Type::any, std::move(doc), {}); }

Key with_env(Key key, std::string env) {
    key.env = std::move(env);
    return key;
}

Key as_secret(Key key, Secret secret) {
    key.secret = secret;
    return key;
}

}  // namespace toolport::config
