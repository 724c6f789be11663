// Where the CLI keeps what OAuth gave it, per MCP server: the client registration (so a
// server is registered with once), the access and refresh tokens, their expiry and scopes,
// the DPoP key they are bound to, and the issuer of the authorization server they came from. One JSON file,
// $XDG_CONFIG_HOME/toolport/oauth-tokens.json (default ~/.config/...), readable by the
// user only: it is written to a new file created with mode 0600 in the same directory and
// renamed over the old one, and its directory is created 0700. Nothing here logs, and
// error messages name the file, never its contents.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace toolport::client::oauth {

// The store cannot be read or written. The message names the file and the reason.
struct TokenStoreError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct RegisteredClient {
    std::string issuer;  // the authorization server it is registered with: valid there only
    std::string client_id, client_secret;
    std::string auth_method;  // token_endpoint_auth_method
    std::string kind;         // "dynamic", "metadata-document" or "pre-registered"
};

struct StoredTokens {
    std::string issuer;  // of the authorization server that issued them
    std::string access_token, token_type, refresh_token;
    std::int64_t expires_at = 0;      // Unix seconds; 0: unknown
    std::vector<std::string> scopes;  // asked for (the union grows with step-up)
    // DPoP (RFC 9449): the PEM private key the tokens are bound to, "" when they are not.
    // Kept with them because a bound access or refresh token is useless without it.
    std::string dpop_key;
};

struct ServerEntry {
    std::string resource;  // the RFC 8707 resource the tokens are for
    std::optional<RegisteredClient> client;
    std::optional<StoredTokens> tokens;
};

class TokenStore {
public:
    explicit TokenStore(std::string path) : path_(std::move(path)) {}

    // $XDG_CONFIG_HOME/toolport/oauth-tokens.json, else $HOME/.config/toolport/oauth-tokens.json.
    // Throws TokenStoreError when neither variable is set.
    static std::string default_path();

    const std::string& path() const { return path_; }

    // The entry of `server` (its canonical URL); nullopt when there is none or no file.
    std::optional<ServerEntry> load(const std::string& server) const;
    // Replaces the entry of `server`.
    void save(const std::string& server, const ServerEntry& entry);
    // Removes the entry of `server`; false when there was none.
    bool remove(const std::string& server);

private:
    std::string path_;
};

}  // namespace toolport::client::oauth
