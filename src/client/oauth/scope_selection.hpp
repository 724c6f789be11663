// Which scopes an authorization request asks for (MCP spec, "Scope Selection Strategy"):
// the scope of the server's challenge when it names one, else every scope its protected
// resource metadata lists, else none (the scope parameter is left out). On step-up (403
// insufficient_scope) the scopes asked for before are kept alongside the new ones, so a
// new token does not lose what the old one could do. offline_access is added when the
// authorization server lists it (SEP-2207: the client wants a refresh token) and only then.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace toolport::client::oauth {

struct ScopeInputs {
    std::string challenge_scope;               // WWW-Authenticate scope, space-separated
    std::vector<std::string> resource_scopes;  // PRM scopes_supported
    std::vector<std::string> previously_requested;
    std::vector<std::string> server_scopes;  // AS metadata scopes_supported
    bool want_refresh_token = true;          // not for client credentials
};

// The scopes to ask for, in order, without duplicates; empty: omit the parameter.
std::vector<std::string> select_scopes(const ScopeInputs& inputs);

// "a b c" -> {"a", "b", "c"} (runs of spaces ignored).
std::vector<std::string> split_scopes(std::string_view text);
std::string join_scopes(const std::vector<std::string>& scopes);

}  // namespace toolport::client::oauth
