#include "app/commands/oauth_flags.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "app/commands/command_support.hpp"
#include "client/http_authorizer.hpp"
#include "client/oauth/browser.hpp"
#include "client/oauth/token_store.hpp"
#include "http_client/url.hpp"
#include "util/sanitize.hpp"

namespace toolport::commands {

namespace {

std::string read_secret_file(const std::string& path, const char* what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError(fmt::format("cannot read the {} file {}", what, path));
    std::ostringstream text;
    text << in.rdbuf();
    std::string value = text.str();
    while (!value.empty() && (value.back() == '\n' || value.back() == '\r')) value.pop_back();
    if (value.empty()) throw UsageError(fmt::format("the {} file {} is empty", what, path));
    return value;
}

std::string env_or_empty(const char* name) {
    const char* value = std::getenv(name);
    return value ? value : "";
}

// Opens the page in the user's browser when one can be started, and always prints it: the
// user may be on another machine than the terminal. The browser command is watched (the
// check returned) while the flow waits: one that fails at once will not bring the redirect
// back, and waiting for --login-timeout would only hide that.
client::oauth::OAuthOptions::OpenerCheck show(const std::string& url) {
    fmt::print(stderr, "toolport: to authorize, open this page in a browser:\n  {}\n", url);
    std::vector<std::string> argv;
    try {
        argv = client::oauth::browser_command(url, [](const char* name) { return std::getenv(name); });
    } catch (const std::invalid_argument& e) {
        fmt::print(stderr, "toolport: $BROWSER cannot be used: {}\n", e.what());
        return {};
    }
    if (argv.empty()) {
        fmt::print(stderr, "toolport: waiting for the browser to come back to this machine...\n");
        return {};
    }
    std::shared_ptr<client::oauth::BrowserProcess> browser;
    try {
        browser = std::make_shared<client::oauth::BrowserProcess>(argv);
    } catch (const std::runtime_error& e) {
        throw client::AuthorizationError(
            fmt::format("the browser command failed ({}); fix $BROWSER, or unset it and open the page above by hand",
                        e.what()));
    }
    return [browser]() -> std::optional<std::string> {
        auto ended = browser->ended();
        if (ended && !ended->empty()) {
            return fmt::format(
                "the browser command failed ({}); fix $BROWSER, or unset it and open the page above by hand", *ended);
        }
        return ended;
    };
}

}  // namespace

void add_oauth_flags(CLI::App* command, OAuthFlags& flags) {
    command->add_option("--client-id", flags.client_id,
                        "OAuth client_id an authorization server issued you (without it Toolport registers itself)");
    command->add_option("--client-secret-file", flags.client_secret_file,
                        "File holding that client's secret (default: $TOOLPORT_CLIENT_SECRET)");
    command->add_option("--client-key", flags.client_key_file,
                        "PEM private key (RSA or EC P-256) the client authenticates with (private_key_jwt)");
    command->add_option("--signing-alg", flags.signing_alg, "private_key_jwt signing algorithm (default: from the key)")
        ->check(CLI::IsMember({"RS256", "ES256"}));
    command->add_option("--client-metadata-url", flags.client_metadata_url,
                        "https URL of Toolport's client ID metadata document, used as client_id where the "
                        "authorization server supports such documents");
    command
        ->add_option("--grant", flags.grant,
                     "How to obtain tokens: authorization_code (the browser; default), client_credentials "
                     "(machine to machine), jwt_bearer (a workload identity's assertion) or enterprise (the "
                     "user's ID token from the enterprise IdP, exchanged there for an ID-JAG)")
        ->check(CLI::IsMember({"authorization_code", "client_credentials", "jwt_bearer", "enterprise"}));
    command->add_option("--idp-token-endpoint", flags.idp_token_endpoint, "enterprise: the IdP's token endpoint");
    command->add_option("--idp-client-id", flags.idp_client_id, "enterprise: Toolport's client_id at the IdP");
    command->add_option("--idp-id-token-file", flags.idp_id_token_file,
                        "enterprise: file holding the user's ID token (default: $TOOLPORT_IDP_ID_TOKEN)");
    command->add_option("--assertion-file", flags.assertion_file,
                        "jwt_bearer: file holding the workload's JWT (default: $TOOLPORT_ASSERTION)");
    command
        ->add_option("--login-timeout", flags.login_timeout_s, "How long to wait for the browser to come back (seconds)")
        ->check(CLI::Range(1LL, 3600LL));
    command->add_flag("--no-oauth", flags.no_oauth, "Never authorize with OAuth: a 401 is an error");
}

std::shared_ptr<client::oauth::OAuthAuthorizer> make_authorizer(const OAuthFlags& flags, const std::string& url,
                                                                const std::string& ca_file, AsioExecutor& executor,
                                                                bool required) {
    if (flags.no_oauth) return nullptr;
    using Grant = client::oauth::OAuthOptions::Grant;
    client::oauth::OAuthOptions options;
    options.server_url = url;
    options.ca_file = ca_file;
    options.grant = flags.grant == "client_credentials" ? Grant::client_credentials
                    : flags.grant == "jwt_bearer"       ? Grant::jwt_bearer
                    : flags.grant == "enterprise"       ? Grant::enterprise
                                                        : Grant::authorization_code;
    options.identity.client_id = flags.client_id;
    options.identity.client_secret = flags.client_secret_file.empty()
                                         ? env_or_empty("TOOLPORT_CLIENT_SECRET")
                                         : read_secret_file(flags.client_secret_file, "client secret");
    if (!flags.client_key_file.empty())
        options.identity.private_key_pem = read_secret_file(flags.client_key_file, "client key");
    options.identity.metadata_document_url = flags.client_metadata_url;
    options.signing_alg = flags.signing_alg;
    if (options.grant == Grant::jwt_bearer) {
        options.assertion = flags.assertion_file.empty() ? env_or_empty("TOOLPORT_ASSERTION")
                                                         : read_secret_file(flags.assertion_file, "assertion");
    }
    if (options.grant == Grant::enterprise) {
        options.idp_token_endpoint = flags.idp_token_endpoint;
        options.idp_client_id = flags.idp_client_id;
        options.idp_id_token = flags.idp_id_token_file.empty() ? env_or_empty("TOOLPORT_IDP_ID_TOKEN")
                                                               : read_secret_file(flags.idp_id_token_file, "ID token");
    }
    if (!options.identity.client_secret.empty() && options.identity.client_id.empty()) {
        throw UsageError("a client secret needs its --client-id");
    }
    options.redirect_timeout = std::chrono::seconds(flags.login_timeout_s);
    options.show_authorization_url = show;
    if (!flags.client_metadata_url.empty()) {
        // The document's URL is the client's identity: the draft requires https and a path.
        http_client::Url cimd;
        try {
            cimd = http_client::parse_url(flags.client_metadata_url);
        } catch (const std::invalid_argument& e) {
            throw UsageError(fmt::format("--client-metadata-url: {}", e.what()));
        }
        if (!cimd.https || cimd.target == "/") {
            throw UsageError("--client-metadata-url must be an https URL with a path");
        }
    }
    try {
        try {
            options.store_path = client::oauth::TokenStore::default_path();
        } catch (const client::oauth::TokenStoreError&) {
            // Nowhere to keep tokens: a command that may never meet a 401 still runs.
            if (!required) return nullptr;
            throw;
        }
        return std::make_shared<client::oauth::OAuthAuthorizer>(executor, std::move(options));
    } catch (const std::invalid_argument& e) {
        throw UsageError(fmt::format("OAuth: {}", e.what()));
    } catch (const client::oauth::TokenStoreError& e) {
        throw UsageError(fmt::format("OAuth: {}", e.what()));
    }
}

}  // namespace toolport::commands
