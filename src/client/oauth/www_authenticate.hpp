// The WWW-Authenticate header of a refused MCP request (RFC 9110 §11.6.1), as far as an
// OAuth client needs it: the Bearer (or DPoP) challenge's parameters — resource_metadata
// (RFC 9728 §5.1), scope and error (RFC 6750 §3).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace toolport::client::oauth {

struct Challenge {
    std::string scheme;                         // as sent ("Bearer"), compared case-insensitively
    std::map<std::string, std::string> params;  // names lower-cased, quoted values unescaped

    // The parameter's value, or nullopt.
    std::optional<std::string> param(std::string_view name) const;
};

// The first Bearer challenge of `header` (else the first DPoP one); nullopt when there is
// none or the header cannot be parsed. Other schemes' challenges in the same header (a
// comma-separated list of them) are skipped.
std::optional<Challenge> parse_bearer_challenge(std::string_view header);

// The first challenge of `header` whose scheme is `scheme` (case-insensitive), e.g. the
// DPoP one that says use_dpop_nonce beside a Bearer one; nullopt when there is none.
std::optional<Challenge> parse_challenge(std::string_view header, std::string_view scheme);

}  // namespace toolport::client::oauth
