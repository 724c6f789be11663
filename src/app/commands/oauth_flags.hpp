// The OAuth flags of the client commands (list, call, skills, login): how Toolport
// identifies itself to an MCP server's authorization server and which grant it uses, and
// turning them into the authorizer the Streamable HTTP transport calls on a 401.
#pragma once

#include <memory>
#include <string>

#include <CLI/CLI.hpp>

#include "client/oauth/oauth_authorizer.hpp"

namespace toolport {
class AsioExecutor;
}

namespace toolport::commands {

struct OAuthFlags {
    std::string client_id, client_secret_file, client_key_file, signing_alg, client_metadata_url;
    std::string grant = "authorization_code";
    std::string assertion_file;
    std::string idp_token_endpoint, idp_client_id, idp_id_token_file;  // --grant enterprise
    long long login_timeout_s = 300;
    bool no_oauth = false;
};

void add_oauth_flags(CLI::App* command, OAuthFlags& flags);

// The authorizer for `url`, or null with --no-oauth (and, unless `required`, when there is
// no directory to keep tokens in: neither XDG_CONFIG_HOME nor HOME). Secrets come from the flags' files or
// from $TOOLPORT_CLIENT_SECRET / $TOOLPORT_ASSERTION (never from argv alone, where other
// users could read them). Throws UsageError.
std::shared_ptr<client::oauth::OAuthAuthorizer> make_authorizer(const OAuthFlags& flags, const std::string& url,
                                                                const std::string& ca_file, AsioExecutor& executor,
                                                                bool required = false);

}  // namespace toolport::commands
