// Who may call what: allow and deny rules by principal (an OAuth token's `sub`, a static
// bearer token's digest, the stdio client), group claim, scope, gateway profile, source and
// tool-name glob (`access:` in the configuration file).
//
//   auth::AccessPolicy policy({rule_a, rule_b}, auth::AccessEffect::allow);
//   auto decision = policy.for_tool({.principal = "alice", .groups = &groups}, "github", "create_issue");
//   if (!decision.allowed) ... decision.rule names the rule (null: the default effect decided)
//
// Rules are ordered and the first that matches decides; when none matches, the default
// effect does. A rule matches when every condition it states holds (a condition it leaves
// out holds for everyone); within one condition any listed value will do. A rule that names
// tools is about tool calls only: what a source offers besides tools (resources, templates,
// prompts, extension methods) is decided by the first matching rule that names none.
//
// Evaluation allocates nothing: patterns are matched as string_views, lists are walked.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::auth {

enum class AccessEffect { allow, deny };

std::string_view effect_name(AccessEffect effect);

struct AccessRule {
    AccessEffect effect = AccessEffect::deny;
    // How messages name it: its `name:` when given, else where it is ("access.rules[2]").
    std::string name;
    std::vector<std::string> principals;  // globs over the principal's name
    std::vector<std::string> groups;      // the caller is in one of them
    std::vector<std::string> scopes;      // the caller's token holds one of them
    std::vector<std::string> profiles;    // the request is served one of these gateway profiles
    std::vector<std::string> sources;     // the tool's (or resource's, prompt's) source is one of them
    std::vector<std::string> tools;       // globs over the tool's name
};

// Who asks, as the rules see them. The pointers may be null: no groups, no token scopes
// (a caller without an OAuth token never matches a rule that names scopes).
struct AccessCaller {
    std::string_view principal;
    const std::vector<std::string>* groups = nullptr;
    const std::vector<std::string>* scopes = nullptr;
    std::string_view profile;
};

struct AccessDecision {
    bool allowed = true;
    const AccessRule* rule = nullptr;  // the rule that decided; null: the default effect
};

class AccessPolicy {
public:
    // `groups_claim`: the access token claim that lists the caller's groups; `local`: the
    // principal name of the stdio client.
    AccessPolicy(std::vector<AccessRule> rules, AccessEffect default_effect, std::string groups_claim = "groups",
                 std::string local = "stdio");

    // Whether the policy lets everything through without a look (no rules, default allow).
    bool empty() const { return rules_.empty() && default_effect_ == AccessEffect::allow; }
    // Whether any rule names groups: only then are a token's groups read.
    bool uses_groups() const { return uses_groups_; }

    AccessDecision for_tool(const AccessCaller& caller, std::string_view source, std::string_view tool) const;
    // What `source` offers besides tools ("" is the server's own: always allowed).
    AccessDecision for_source(const AccessCaller& caller, std::string_view source) const;

    const std::vector<AccessRule>& rules() const { return rules_; }
    AccessEffect default_effect() const { return default_effect_; }
    const std::string& groups_claim() const { return groups_claim_; }
    const std::string& local_principal() const { return local_; }

private:
    AccessDecision decide(const AccessCaller& caller, std::string_view source, const std::string_view* tool) const;

    std::vector<AccessRule> rules_;
    AccessEffect default_effect_;
    std::string groups_claim_;
    std::string local_;
    bool uses_groups_ = false;
};

// The principal name rules match for a caller: an OAuth token's subject, else the
// credential's principal (a static bearer token's "bearer:<digest>"), else `local` for
// the stdio client, else "anonymous" (HTTP without authentication).
std::string_view access_principal(std::string_view subject, std::string_view principal, bool stdio,
                                  std::string_view local);

// The groups a token's claim holds: an array of strings, or one string of names separated
// by spaces or commas. Anything else: none.
template <typename JsonValue>
std::vector<std::string> claim_groups(const JsonValue& claim) {
    std::vector<std::string> out;
    auto split = [&out](std::string_view text) {
        std::size_t i = 0;
        while (i < text.size()) {
            auto end = text.find_first_of(" ,", i);
            if (end == std::string_view::npos) end = text.size();
            if (end > i) out.emplace_back(text.substr(i, end - i));
            i = end + 1;
        }
    };
    if (claim.is_string()) split(claim.template get_ref<const std::string&>());
    else if (claim.is_array()) {
        for (const auto& item : claim) {
            if (item.is_string()) out.push_back(item.template get<std::string>());
        }
    }
    return out;
}

}  // namespace toolport::auth
