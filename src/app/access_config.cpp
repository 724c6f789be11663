#include "app/access_config.hpp"

#include <set>

#include <fmt/format.h>

#include "app/config_table.hpp"
#include "auth/resource_metadata.hpp"
#include "util/glob.hpp"

namespace toolport {

namespace {

namespace ka = config_table::access;
using config::Key;
using config::Settings;

// The list `key` of `rule`: refused when written empty (a condition nothing can meet is a
// mistake, not a rule), each item checked by `check` (a reason, or nullopt).
template <typename Check>
std::vector<std::string> conditions(const Settings& rule, const Key& key, Check check) {
    if (!rule.has(key)) return {};
    auto values = *rule.list(key);
    if (values.empty()) rule.fail(key, "is empty: leave it out to match everyone, or name at least one");
    for (std::size_t i = 0; i < values.size(); ++i) {
        if (auto problem = check(values[i]))
            rule.fail_item(key.name, i, fmt::format("\"{}\": {}", values[i], *problem));
    }
    return values;
}

std::optional<std::string> plain_name(const std::string& value) {
    if (value.empty()) return std::string("an empty name matches nothing");
    return std::nullopt;
}

std::optional<std::string> scope_name(const std::string& value) {
    if (!auth::valid_scope_token(value))
        return std::string("is not a scope (printable ASCII without spaces, quotes or backslashes)");
    return std::nullopt;
}

}  // namespace

void read_access(const Settings& root, Config& config) {
    if (!root.has(config_table::access_key)) return;
    auto a = root.section(config_table::access_key);
    a.check_keys(ka::section);
    auto effect_of = [](const std::string& text) {
        return text == "allow" ? auth::AccessEffect::allow : auth::AccessEffect::deny;
    };
    auto default_effect = effect_of(a.one_of(ka::default_effect).value_or("allow"));
    std::string groups_claim = a.string(ka::groups_claim).value_or("groups");
    if (groups_claim.empty()) a.fail(ka::groups_claim, "must name a claim");
    std::string local = a.string(ka::stdio_principal).value_or("stdio");
    if (local.empty()) a.fail(ka::stdio_principal, "must not be empty");
    std::vector<auth::AccessRule> rules;
    config.access_names.clear();
    const std::size_t count = a.item_count(ka::rules);
    std::set<std::string> names;
    for (std::size_t i = 0; i < count; ++i) {
        auto r = a.item(ka::rules, i);
        if (!r.is_mapping()) a.fail_item(ka::rules.name, i, "must be a mapping (effect: allow or deny, conditions)");
        r.check_keys(ka::rule::section);
        auth::AccessRule rule;
        if (!r.has(ka::rule::effect)) r.fail_here("needs effect: allow or deny");
        rule.effect = effect_of(*r.one_of(ka::rule::effect));
        rule.name = fmt::format("access.rules[{}]", i);
        if (auto name = r.string(ka::rule::name)) {
            if (name->empty()) r.fail(ka::rule::name, "must not be empty (leave it out to be named access.rules[N])");
            if (!names.insert(*name).second)
                r.fail(ka::rule::name, fmt::format("\"{}\" names another rule too", *name));
            rule.name = *name;
        }
        rule.principals = conditions(r, ka::rule::principals, util::glob_problem);
        rule.groups = conditions(r, ka::rule::groups, plain_name);
        rule.scopes = conditions(r, ka::rule::scopes, scope_name);
        rule.profiles = conditions(r, ka::rule::profiles, plain_name);
        rule.sources = conditions(r, ka::rule::sources, plain_name);
        rule.tools = conditions(r, ka::rule::tools, util::glob_problem);
        // Where each name was written, for the warnings about names nothing has.
        for (const auto* key : {&ka::rule::sources, &ka::rule::profiles}) {
            const auto& values = key == &ka::rule::sources ? rule.sources : rule.profiles;
            for (std::size_t j = 0; j < values.size(); ++j) {
                config.access_names.push_back({key == &ka::rule::sources, values[j],
                                               fmt::format("{}{}.{}", r.location(), r.prefix(), key->name)});
            }
        }
        rules.push_back(std::move(rule));
    }
    config.access = std::make_shared<const auth::AccessPolicy>(std::move(rules), default_effect,
                                                               std::move(groups_claim), std::move(local));
}

std::vector<std::string> access_warnings(const Config& config) {
    std::vector<std::string> out;
    if (config.access_names.empty()) return out;
    std::set<std::string> sources(config.packs.begin(), config.packs.end());
    std::set<std::string> profiles;
    for (const auto& instance : config.instances) {
        sources.insert(instance.name);
        if (instance.kind != "gateway") continue;
        for (const char* key : {"upstreams", "profiles"}) {
            if (auto v = instance.settings.value(key); v && v->is_object()) {
                for (const auto& [name, value] : v->items()) (key[0] == 'u' ? sources : profiles).insert(name);
            }
        }
    }
    for (const auto& named : config.access_names) {
        const auto& known = named.source ? sources : profiles;
        if (known.count(named.name)) continue;
        out.push_back(named.source ? fmt::format("{}: \"{}\" is not a configured source (packs, rest, openapi, "
                                                 "upstreams): the condition matches nothing until one is",
                                                 named.where, named.name)
                                   : fmt::format("{}: \"{}\" is not a gateway profile (gateway.profiles): the "
                                                 "condition matches nothing",
                                                 named.where, named.name));
    }
    return out;
}

}  // namespace toolport
