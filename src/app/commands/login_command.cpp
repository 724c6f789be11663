// `toolport login URL` and `toolport logout URL`: authorizing with an MCP server's
// authorization server ahead of use (the browser flow, or a machine grant), and forgetting
// what was obtained. list, call and skills authorize on their own when a server answers
// 401; login is for doing it at a moment of the user's choosing.
//
// Exit status: 0 done; 1 authorization failed; 2 a usage error.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "app/commands/command_support.hpp"
#include "app/commands/commands.hpp"
#include "app/commands/oauth_flags.hpp"
#include "client/oauth/protected_resource.hpp"
#include "client/oauth/token_store.hpp"
#include "client/sync_client.hpp"
#include "util/sanitize.hpp"

namespace toolport::commands {

namespace {
struct LoginFlags {
    std::string url, ca_file;
    OAuthFlags oauth;
};
}  // namespace

Command add_login(CLI::App& app) {
    auto flags = std::make_shared<LoginFlags>();
    auto* login = app.add_subcommand("login",
                                     "Authorize Toolport with an MCP server that uses OAuth, and keep the tokens");
    login->add_option("url", flags->url, "The server's Streamable HTTP endpoint")->required();
    login->add_option("--ca-file", flags->ca_file, "PEM file of CAs to trust for https, besides the system's");
    add_oauth_flags(login, flags->oauth);
    return {login, [flags]() -> int {
                spdlog::set_level(spdlog::level::warn);
                try {
                    if (flags->oauth.no_oauth) throw UsageError("--no-oauth leaves nothing to log in with");
                    client::SyncClient sync;
                    auto authorizer = make_authorizer(flags->oauth, flags->url, flags->ca_file, sync.executor(), true);
                    sync.run(authorizer->login());
                    fmt::print(stderr, "toolport login: authorized with {} for {}; tokens kept in {}\n",
                               authorizer->issuer(), client::oauth::canonical_server_url(flags->url),
                               client::oauth::TokenStore::default_path());
                    return 0;
                } catch (const UsageError& e) {
                    fmt::print(stderr, "toolport login: {}\n", e.what());
                    return 2;
                } catch (const std::exception& e) {
                    fmt::print(stderr, "toolport login: {}\n", util::sanitize_for_message(e.what(), 500));
                    return 1;
                }
            }};
}

Command add_logout(CLI::App& app) {
    auto url = std::make_shared<std::string>();
    auto* logout = app.add_subcommand("logout",
                                      "Forget the OAuth tokens and client registration kept for an MCP server");
    logout->add_option("url", *url, "The server's Streamable HTTP endpoint")->required();
    return {logout, [url]() -> int {
                try {
                    client::oauth::TokenStore store(client::oauth::TokenStore::default_path());
                    const std::string server = client::oauth::canonical_server_url(*url);
                    if (store.remove(server)) fmt::print(stderr, "toolport logout: forgot the tokens for {}\n", server);
                    else fmt::print(stderr, "toolport logout: no tokens were kept for {}\n", server);
                    return 0;
                } catch (const std::invalid_argument& e) {
                    fmt::print(stderr, "toolport logout: {}\n", e.what());
                    return 2;
                } catch (const std::exception& e) {
                    fmt::print(stderr, "toolport logout: {}\n", util::sanitize_for_message(e.what(), 500));
                    return 1;
                }
            }};
}

}  // namespace toolport::commands
