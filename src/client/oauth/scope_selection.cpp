#include "client/oauth/scope_selection.hpp"

#include <algorithm>

namespace toolport::client::oauth {

namespace {
void add(std::vector<std::string>& out, const std::string& scope) {
    if (!scope.empty() && std::find(out.begin(), out.end(), scope) == out.end()) out.push_back(scope);
}
}  // namespace

std::vector<std::string> split_scopes(std::string_view text) {
    std::vector<std::string> out;
    std::size_t pos = 0;
    while (pos < text.size()) {
        std::size_t end = text.find(' ', pos);
        if (end == std::string_view::npos) end = text.size();
        if (end > pos) add(out, std::string(text.substr(pos, end - pos)));
        pos = end + 1;
    }
    return out;
}

std::string join_scopes(const std::vector<std::string>& scopes) {
    std::string out;
    for (const auto& scope : scopes) {
        if (!out.empty()) out += ' ';
        out += scope;
    }
    return out;
}

std::vector<std::string> select_scopes(const ScopeInputs& inputs) {
    std::vector<std::string> out;
    for (const auto& scope : inputs.previously_requested) add(out, scope);
    auto challenged = split_scopes(inputs.challenge_scope);
    const auto& base = challenged.empty() ? inputs.resource_scopes : challenged;
    for (const auto& scope : base) add(out, scope);
    const bool offered = std::find(inputs.server_scopes.begin(), inputs.server_scopes.end(), "offline_access") !=
                         inputs.server_scopes.end();
    if (inputs.want_refresh_token && offered) add(out, "offline_access");
    return out;
}

}  // namespace toolport::client::oauth
