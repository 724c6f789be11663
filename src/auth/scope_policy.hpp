// Which OAuth scopes a caller's access token must hold, beyond auth.required_scopes: per
// tool (`tools.<name>.scopes`), per source (`sources.<name>.scopes`: a pack, a REST catalog,
// an OpenAPI document, an upstream server) and per profile (`auth.profiles.<name>.scopes`,
// the gateway's URL views). A tool needs its own scopes and its source's; a resource, a
// resource template, a prompt or an extension method needs its source's; a request at a
// profile's URL needs the profile's.
//
// Only callers with an OAuth access token are held to these: static bearer tokens and stdio
// have no scopes to compare and are not filtered.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace toolport::auth {

struct ScopePolicy {
    std::map<std::string, std::vector<std::string>, std::less<>> tools;
    std::map<std::string, std::vector<std::string>, std::less<>> sources;
    std::map<std::string, std::vector<std::string>, std::less<>> profiles;

    bool empty() const { return tools.empty() && sources.empty() && profiles.empty(); }
    // The tool's scopes and its source's, without repeats, in configuration order.
    std::vector<std::string> for_tool(std::string_view tool, std::string_view source) const;
    // The source's scopes ([] for a source without any, and for "": the server's own).
    std::vector<std::string> for_source(std::string_view source) const;
    // The profile's scopes ([] for a profile without any, and for "": the plain MCP path).
    std::vector<std::string> for_profile(std::string_view profile) const;
};

// `a` followed by the members of `b` it lacks (order kept, no repeats): the scopes to ask
// for in a challenge, e.g. what the token holds plus what the tool needs.
std::vector<std::string> scope_union(const std::vector<std::string>& a, const std::vector<std::string>& b);

// The members of `needed` that `held` lacks.
std::vector<std::string> missing_scopes(const std::vector<std::string>& held, const std::vector<std::string>& needed);

// Splits a space-separated `scope` value (RFC 6749 §3.3) into its tokens.
std::vector<std::string> split_scope(std::string_view scope);

// The scopes joined by single spaces.
std::string join_scopes(const std::vector<std::string>& scopes);

}  // namespace toolport::auth
