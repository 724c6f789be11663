// PKCE (RFC 7636) with the S256 method, which MCP requires of clients: a fresh random code
// verifier per authorization request and its SHA-256 challenge.
#pragma once

#include <string>
#include <string_view>

namespace toolport::client::oauth {

struct Pkce {
    std::string verifier;   // 43 characters of base64url (32 random bytes)
    std::string challenge;  // base64url(SHA-256(verifier)), unpadded
};

// A new verifier from the kernel's random bytes, and its challenge.
Pkce make_pkce();

// The S256 challenge of `verifier` (RFC 7636 §4.2).
std::string s256_challenge(std::string_view verifier);

}  // namespace toolport::client::oauth
