#include "auth/access_policy.hpp"

#include <algorithm>

#include "util/glob.hpp"

namespace toolport::auth {

std::string_view effect_name(AccessEffect effect) { return effect == AccessEffect::allow ? "allow" : "deny"; }

AccessPolicy::AccessPolicy(std::vector<AccessRule> rules, AccessEffect default_effect, std::string groups_claim,
                           std::string local)
    : rules_(std::move(rules)),
      default_effect_(default_effect),
      groups_claim_(std::move(groups_claim)),
      local_(std::move(local)) {
    uses_groups_ = std::any_of(rules_.begin(), rules_.end(), [](const AccessRule& r) { return !r.groups.empty(); });
}

namespace {

bool any_glob(const std::vector<std::string>& patterns, std::string_view text) {
    return std::any_of(patterns.begin(), patterns.end(),
                       [&](const std::string& p) { return util::glob_match(p, text); });
}

bool any_equal(const std::vector<std::string>& values, std::string_view text) {
    return std::any_of(values.begin(), values.end(), [&](const std::string& v) { return v == text; });
}

// Whether `held` (may be null: nothing held) shares a member with `wanted`.
bool any_held(const std::vector<std::string>& wanted, const std::vector<std::string>* held) {
    if (!held) return false;
    return std::any_of(wanted.begin(), wanted.end(), [&](const std::string& w) { return any_equal(*held, w); });
}

}  // namespace

AccessDecision AccessPolicy::decide(const AccessCaller& caller, std::string_view source,
                                    const std::string_view* tool) const {
    for (const auto& rule : rules_) {
        if (!tool && !rule.tools.empty()) continue;  // about tool calls only
        if (!rule.principals.empty() && !any_glob(rule.principals, caller.principal)) continue;
        if (!rule.groups.empty() && !any_held(rule.groups, caller.groups)) continue;
        if (!rule.scopes.empty() && !any_held(rule.scopes, caller.scopes)) continue;
        if (!rule.profiles.empty() && !any_equal(rule.profiles, caller.profile)) continue;
        if (!rule.sources.empty() && !any_equal(rule.sources, source)) continue;
        if (tool && !rule.tools.empty() && !any_glob(rule.tools, *tool)) continue;
        return {rule.effect == AccessEffect::allow, &rule};
    }
    return {default_effect_ == AccessEffect::allow, nullptr};
}

AccessDecision AccessPolicy::for_tool(const AccessCaller& caller, std::string_view source, std::string_view tool) const {
    return decide(caller, source, &tool);
}

AccessDecision AccessPolicy::for_source(const AccessCaller& caller, std::string_view source) const {
    if (source.empty()) return {true, nullptr};
    return decide(caller, source, nullptr);
}

std::string_view access_principal(std::string_view subject, std::string_view principal, bool stdio,
                                  std::string_view local) {
    if (!subject.empty()) return subject;
    if (!principal.empty()) return principal;
    if (stdio) return local;
    return "anonymous";
}

}  // namespace toolport::auth
