// fuzz_auth: the parsers of Toolport's OAuth code (src/auth, src/client/oauth), which read
// what callers, authorization servers and MCP servers send, each checked against a
// property, not only for crashes:
//
//   0  a bearer token (compact JWS) verified against a fixed key set (RSA, EC P-256,
//      Ed25519) by two verifiers (all algorithms and a required sub; ES256/EdDSA only, no
//      sub, a small size limit): only TokenError is thrown; an accepted token has three
//      canonical base64url parts, a signing alg (never none), the configured issuer, one of
//      the configured audiences, an unexpired exp, a kid of the set whose key fits its alg,
//      a sub when required, and scopes without empty or blank entries.
//   1  the same checks on a token the harness signs itself, so the claims are reached: the
//      first byte picks the signer (RS256, PS256, ES256, EdDSA with the set's keys, or alg
//      none: no signature), then the header bytes, a newline, the payload bytes (each
//      base64url-encoded as they are). An accepted token also names the signer's kid and
//      alg, and one "signed" with none is never accepted.
//   2  parse_jwks (a JWKS document): only JwksError is thrown; every key of the set is a
//      public key whose own alg, if any, fits its type, and every entry of "keys" is either
//      a key or skipped once with a reason. Each key then checks a garbage signature, and
//      the harness's four tokens are verified against the set.
//   3  parse_bearer_challenge (the client reading a WWW-Authenticate header): what it
//      returns is a Bearer or DPoP challenge whose parameter names are lower-case.
//   4  the server's side of the challenge: lines resource, error, scopes (space-separated).
//      resource_metadata_url and _path agree (the path ends the URL, under the well-known
//      segment); bearer_challenge(resource, scopes, error) reads back with
//      parse_bearer_challenge to exactly those values (less the characters a quoted-string
//      cannot hold) and nothing else; a valid_scope_token survives the quoting unchanged.
//   5  Protected Resource Metadata (RFC 9728) as the client reads it: the server URL, a
//      newline, the document. canonical_server_url of an accepted URL matches itself
//      (resource_matches); parse_protected_resource throws only AuthorizationError, and an
//      accepted document names a resource matching the server and an authorization server.
//   6  authorization server metadata (RFC 8414): the issuer, a newline, the document;
//      parse_server_metadata throws only AuthorizationError and keeps the issuer exactly.
//   7  an introspection response (RFC 7662) read by TokenIntrospector::read_response: only
//      TokenError; an accepted one is for this resource, has a subject, the issuer, an
//      unexpired exp and scopes without empty entries.
//   8  a token endpoint's success body (parse_token_response): only TokenEndpointError; an
//      accepted one has an access_token and the token_type Bearer or DPoP. looks_like_jwt
//      of the input never throws.
//
// The first byte picks the parser; the rest is its input. A violated property aborts.
// FUZZ_AUTH_VERBOSE=1 prints each verification's outcome (accepted, or the refusal's reason). Time
// is fixed (2026-01-01T00:00:00Z), so seeds stay valid. The keys below are test keys made
// for this harness with openssl (never used anywhere else): the set's public halves come
// from them, and the committed seed tokens were signed with them.
//
// No network: the introspector is built on the fuzz build's HttpClient stand-in
// (without_http_client.cpp), and only its response reader is called. The client's OAuth
// parsers (src/client/oauth, not in toolport_core_fuzz) are compiled into the target.
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/io_context.hpp>

#include "async/asio_executor.hpp"
#include "auth/introspection.hpp"
#include "auth/jwks.hpp"
#include "auth/jwt.hpp"
#include "auth/resource_metadata.hpp"
#include "auth/token_endpoint.hpp"
#include "auth_test_support.hpp"
#include "client/http_authorizer.hpp"
#include "client/oauth/protected_resource.hpp"
#include "client/oauth/server_metadata.hpp"
#include "client/oauth/www_authenticate.hpp"
#include "http_client/http_client.hpp"
#include "util/base64.hpp"
#include "util/http_text.hpp"
#include "util/json.hpp"

namespace {

namespace auth = toolport::auth;
namespace oauth = toolport::client::oauth;
namespace ts = toolport::test_support;
using toolport::Json;
using Clock = std::chrono::system_clock;

[[noreturn]] void violated(const char* what) {
    std::fprintf(stderr, "property violated: %s\n", what);
    std::abort();
}

void say(std::string_view what, std::string_view detail) {
    static const bool verbose = std::getenv("FUZZ_AUTH_VERBOSE") != nullptr;
    if (verbose) std::fprintf(stderr, "%.*s: %.*s\n", int(what.size()), what.data(), int(detail.size()), detail.data());
}

constexpr const char* kIssuer = "https://as.example.com";
constexpr const char* kAudience = "https://mcp.example.com/mcp";
const Clock::time_point kNow = Clock::time_point(std::chrono::seconds(1767225600));  // 2026-01-01

// Test keys of this harness (see the header comment).
constexpr const char* kRsaPem =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDGrCv7XzNG3L7h\n"
    "hF/QCMu68czPbHdca4AXHRQKyA8Qx3Q+i/39XcF4N3hsOyQhw5U7kL77kGePMsT2\n"
    "2IaxGMjmrjHrW67JPTC+jF5AjFFLAzoGNRggkINn0fWAaBwI6j2Hr7IQnbWS5obI\n"
    "Qe1SSDmS8nMHBd0edx1i/SD2cwRX8K+xTTa0240Dw+qhUvfNqBVbmq3FeLHAcqQl\n"
    "4Oyz8IRKLI8Tf5iHgEUOQdLNI6AsYHdOQ/ex0c0s+9cdTy6+xSXNrLpl0W8S9X7q\n"
    "QB/ZZH3HHCBFTw5aN6fGJ+XyxRmjDBv+EHJqx//4k8jJFbNJ+2o19/qQR9/v6adu\n"
    "byGZdRVbAgMBAAECggEAUG105K92j7Jfp+Yx74MQDt9CfZo4e/adBT5lVbQFvVIx\n"
    "cfy0VvS0lNlH6/DJQM3vxQxk9GxSMDtqV0/yvxD8i75rQQ99o8Qczpb+tPzZEBf/\n"
    "TnICEXTPbaEm1NPQvZ8uR5bN7EIcNpsSZ1GhJJVOkXmLLYWnLWUlRWSaCosnb/2t\n"
    "z45mItpXnah6viz+5fEGGwbYxoWwnkhnoapWSZj6VWc0/HO9nQe7Qhu/MqO+Jjzl\n"
    "rdGELVtbAlJHwtH6vZId5tpoo3LnX23CcmRPzYp9FAgWJ1cxY8ObHPr+JB+b7sJ2\n"
    "sDTz/AXe3MMq4va2KVe2vedNhPSq6R8frkEd23ZCSQKBgQDzi+fQBl57IrNDqWYt\n"
    "XwMfRQJOYyBGR7g8JstjW6K0Lua4T4lnCqOLk4qEcpRblhBEKoiGMOn/kfiKrR1m\n"
    "EC2BbMFG/qWX0Sf+OhEE3QP5QI50h7PX2TLjlMsZf4ZB4H57DIPJlKHhOg3NgsAB\n"
    "50VLzZDztf/txn1Z4unQSH+l1QKBgQDQ1NpmN0xiupfcbYBrzd87T3K2z53pRFzA\n"
    "xHJo0YhV1tiMsVT5xq8ewfvyXYDQzFt9cLhsWiZL+R4fTIFHAKjDwfoX5u37dQw7\n"
    "jRBLQvx6xmZb0qDZv2jgenGU47yqmULOKZDdW1O5CWZnSQ9FzDc7gOarpZ/IbABe\n"
    "vuT8vvx2bwKBgQDht2GB39VC5Bcmd2J2XF9lZKzNf3tTB3dNcFsB29TAj9NPMI/U\n"
    "yvxmCLjRJewvsbWjp5PeYokMTvn9dJIRnJ7AG85JgQpx2Ovq52AMlNXw9Q7SG07n\n"
    "lqpeV/Gf0RvaBDjUy/V8Jt+dARP3yt0vJmuH5J4Z8Syf710PqIkwe3CqfQKBgEOG\n"
    "P+RDRzC5UvdUdOzm0aK06svP0CioETHHk5LvBZ1z7et4P5jQNLnGUbgpochh+8dQ\n"
    "1mE6uR1hvOqz6y1ROkCqDTsDUbo4O69ZyoX7b/YnBtvz/EzMRpYnIWjaRpwHGIHf\n"
    "ENdye1zefD0zc3vHL6jO4kdoM4Uz3t7D7PkIrEuDAoGABetRwcuMFmwmNhBrouUF\n"
    "csfUqJalC5S0rKQuWc4ykhNzehR1romaYx+THAuX82sMhUN0ud9GbYD8F6tVyZDL\n"
    "iAfwUaLx/YctTjbmjLXeMfKzfKx5zEgql+/e2sp24MKbVaB691cIjndrL/lqBGee\n"
    "920Xap6pr+jxbA5/GI/zw00=\n"
    "-----END PRIVATE KEY-----\n";
constexpr const char* kEcPem =
    "-----BEGIN PRIVATE KEY-----\n"
    "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgz3RzuI704C7bEwI3\n"
    "SV6iwuW1LMtvFyfJsk1CmMgI9UuhRANCAAREF1V420AOXDXL1ZyB8QLDChhaT+ng\n"
    "1CWhLs5A25Rox5hr5gLSeG1x+UAKpg9vbDPgAzyyBzoWEx9Eh8PpS/YI\n"
    "-----END PRIVATE KEY-----\n";
constexpr const char* kEdPem =
    "-----BEGIN PRIVATE KEY-----\n"
    "MC4CAQAwBQYDK2VwBCIEIPNSPlf4Z8yMCrkYZZsPYX6JPnUqO9034w0xmnel0N3I\n"
    "-----END PRIVATE KEY-----\n";

ts::TestKey load_key(const char* kid, const char* kty, const char* pem) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem, -1), BIO_free);
    EVP_PKEY* key = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
    if (!key) violated("harness: a test key does not load");
    return {kid, kty, std::shared_ptr<evp_pkey_st>(key, EVP_PKEY_free)};
}

struct Signer {
    const ts::TestKey* key;  // null: alg none
    const char* alg;
};

struct Fixture {
    ts::TestKey rsa = load_key("rsa-1", "RSA", kRsaPem);
    ts::TestKey ec = load_key("ec-1", "EC", kEcPem);
    ts::TestKey ed = load_key("ed-1", "OKP", kEdPem);
    // The RSA key without an alg of its own (RS256 and PS256), the others with theirs.
    auth::KeySet keys = auth::parse_jwks(
        ts::jwks_text(Json::array({ts::public_jwk(rsa), ts::public_jwk(ec, "ES256"), ts::public_jwk(ed, "EdDSA")})));
    std::vector<Signer> signers{{&rsa, "RS256"}, {&rsa, "PS256"}, {&ec, "ES256"}, {&ed, "EdDSA"}, {nullptr, "none"}};
    auth::JwtVerifier all{{.issuer = kIssuer, .audiences = {kAudience}}};
    auth::JwtVerifier narrow{{.issuer = kIssuer,
                              .audiences = {"urn:other", kAudience},
                              .max_token_bytes = 2048,
                              .algorithms = {auth::Alg::ES256, auth::Alg::EdDSA},
                              .require_subject = false}};
    // One good token per signing alg, verified against fuzzed key sets.
    std::vector<std::string> tokens;
    boost::asio::io_context io;
    toolport::AsioExecutor executor{io};
    toolport::http_client::HttpClient http{executor};
    auth::TokenIntrospector introspector{
        http, {.endpoint = "https://as.example.com/introspect", .issuer = kIssuer, .audiences = {kAudience}}};

    Fixture() {
        if (keys.keys.size() != 3) violated("harness: the fixed key set lost a key");
        const Json claims = {{"iss", kIssuer}, {"aud", kAudience}, {"sub", "fuzz"}, {"exp", 4102444800}};
        for (std::size_t i = 0; i + 1 < signers.size(); ++i) {
            tokens.push_back(ts::sign_token(*signers[i].key, signers[i].alg, claims));
        }
    }
};

Fixture& fixture() {
    static Fixture f;
    return f;
}

bool canonical_b64url(std::string_view part) {
    auto bytes = toolport::util::base64url_decode(part);
    return bytes && toolport::util::base64url_encode(*bytes) == part;
}

void check_scopes(const std::vector<std::string>& scopes, const char* what) {
    for (const auto& s : scopes) {
        if (s.empty() || s.find(' ') != std::string::npos) violated(what);
    }
}

// Verifies `token` with `verifier`; the verified token when accepted, after its properties.
std::optional<auth::VerifiedToken> verify(const auth::JwtVerifier& verifier, std::string_view token,
                                          const auth::KeySet& keys) {
    auth::VerifiedToken t;
    try {
        t = verifier.verify(token, keys, kNow);
    } catch (const auth::TokenError& e) {
        say("jwt refused", auth::reason_name(e.reason()));
        return std::nullopt;
    }
    say("jwt accepted", t.kid);
    const auto& options = verifier.options();
    auto first = token.find('.');
    auto second = first == std::string_view::npos ? first : token.find('.', first + 1);
    if (second == std::string_view::npos || token.find('.', second + 1) != std::string_view::npos)
        violated("jwt: accepted a token that is not three parts");
    if (!canonical_b64url(token.substr(0, first)) || !canonical_b64url(token.substr(first + 1, second - first - 1)) ||
        !canonical_b64url(token.substr(second + 1)))
        violated("jwt: accepted a part that is not canonical base64url");
    if (token.size() > options.max_token_bytes) violated("jwt: accepted a token over the size limit");
    if (!options.algorithms.empty() &&
        std::find(options.algorithms.begin(), options.algorithms.end(), t.alg) == options.algorithms.end())
        violated("jwt: accepted an algorithm that is not allowed");
    if (t.issuer != options.issuer) violated("jwt: accepted another issuer");
    if (std::none_of(t.audiences.begin(), t.audiences.end(), [&](const std::string& a) {
            return std::find(options.audiences.begin(), options.audiences.end(), a) != options.audiences.end();
        }))
        violated("jwt: accepted a token for another audience");
    if (t.expires_at + options.skew <= kNow) violated("jwt: accepted an expired token");
    if (options.require_subject && t.subject.empty()) violated("jwt: accepted a token without sub");
    if (!keys.find(t.kid, t.alg)) violated("jwt: accepted with a kid whose key does not fit the alg");
    check_scopes(t.scopes, "jwt: an empty or blank scope");
    return t;
}

void check_token(std::string_view input) {
    auto& f = fixture();
    (void)verify(f.all, input, f.keys);
    (void)verify(f.narrow, input, f.keys);
}

void check_signed_token(std::string_view input) {
    if (input.empty()) return;
    auto& f = fixture();
    const Signer& signer = f.signers[static_cast<unsigned char>(input[0]) % f.signers.size()];
    input.remove_prefix(1);
    auto newline = input.find('\n');
    std::string_view header = input.substr(0, newline);
    std::string_view payload = newline == std::string_view::npos ? std::string_view() : input.substr(newline + 1);
    std::string token = toolport::util::base64url_encode(header) + '.' + toolport::util::base64url_encode(payload);
    std::string signature = signer.key ? ts::jws_signature(*signer.key, signer.alg, token) : std::string();
    token += '.' + toolport::util::base64url_encode(signature);
    for (const auto* verifier : {&f.all, &f.narrow}) {
        auto t = verify(*verifier, token, f.keys);
        if (!t) continue;
        if (!signer.key) violated("jwt: accepted a token with alg none");
        if (t->kid != signer.key->kid) violated("jwt: accepted with the kid of another key than the signer's");
        if (auth::alg_name(t->alg) != signer.alg) violated("jwt: accepted under another alg than it was signed with");
    }
}

void check_jwks(std::string_view input) {
    auto& f = fixture();
    auth::KeySet set;
    try {
        set = auth::parse_jwks(input);
    } catch (const auth::JwksError&) {
        return;
    }
    // parse_jwks accepted it, so it is a JSON object with a "keys" array.
    auto doc = Json::parse(input, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("keys") || !doc["keys"].is_array())
        violated("jwks: accepted a document that is not an object with a keys array");
    const std::size_t entries = doc["keys"].size();
    if (set.keys.size() + set.skipped.size() != entries) violated("jwks: an entry is neither a key nor skipped");
    std::set<std::size_t> indexes;
    for (const auto& s : set.skipped) {
        if (s.index >= entries || !indexes.insert(s.index).second) violated("jwks: a skipped entry out of place");
        if (s.reason.empty()) violated("jwks: a key skipped without a reason");
    }
    static const std::string junk(64, 'x');
    for (const auto& key : set.keys) {
        if (!key.key) violated("jwks: a key without an OpenSSL key");
        if (key.alg && !auth::alg_fits(*key.alg, key.type)) violated("jwks: a key whose alg does not fit its type");
        for (auto alg : {auth::Alg::RS256, auth::Alg::PS256, auth::Alg::ES256, auth::Alg::EdDSA}) {
            if (auth::alg_fits(alg, key.type) && auth::verify_signature(alg, key, "a.b", junk))
                violated("jwks: a garbage signature verifies");
        }
    }
    for (const auto& token : f.tokens) (void)verify(f.all, token, set);
}

bool lower_case(const std::string& s) {
    return std::none_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

void check_challenge(std::string_view input) {
    auto challenge = oauth::parse_bearer_challenge(input);
    if (!challenge) return;
    using toolport::util::iequals_ascii;
    if (!iequals_ascii(challenge->scheme, "Bearer") && !iequals_ascii(challenge->scheme, "DPoP"))
        violated("www-authenticate: a challenge of another scheme");
    for (const auto& [name, value] : challenge->params) {
        if (!lower_case(name)) violated("www-authenticate: a parameter name that is not lower-cased");
    }
}

// What a quoted-string of bearer_challenge can hold of `value`.
std::string quotable(std::string_view value) {
    std::string out;
    for (char c : value) {
        auto u = static_cast<unsigned char>(c);
        if (c != '"' && c != '\\' && u >= 0x20 && u != 0x7f) out += c;
    }
    return out;
}

void check_server_challenge(std::string_view input) {
    std::vector<std::string> lines;
    for (std::size_t at = 0; lines.size() < 3;) {
        auto next = input.find('\n', at);
        lines.emplace_back(input.substr(at, next == std::string_view::npos ? std::string_view::npos : next - at));
        if (next == std::string_view::npos) break;
        at = next + 1;
    }
    lines.resize(3);
    const std::string& resource = lines[0];
    const std::string& error = lines[1];
    std::vector<std::string> scopes;
    for (std::size_t at = 0; at < lines[2].size();) {
        auto next = lines[2].find(' ', at);
        if (next == std::string::npos) next = lines[2].size();
        if (next > at) scopes.push_back(lines[2].substr(at, next - at));
        at = next + 1;
    }

    try {
        const std::string url = auth::resource_metadata_url(resource);
        const std::string path = auth::resource_metadata_path(resource);
        if (path.rfind("/.well-known/oauth-protected-resource", 0) != 0) violated("metadata path: not well-known");
        if (url.size() < path.size() || url.compare(url.size() - path.size(), path.size(), path) != 0)
            violated("metadata url: does not end with the metadata path");
        if (url.rfind("http://", 0) != 0 && url.rfind("https://", 0) != 0) violated("metadata url: not http(s)");
    } catch (const std::invalid_argument&) {}

    auto header = auth::bearer_challenge(resource, scopes, error);
    auto parsed = oauth::parse_bearer_challenge(header);
    if (!parsed) violated("challenge: Toolport's own challenge does not parse");
    if (parsed->scheme != "Bearer") violated("challenge: not Bearer");
    std::size_t expected = 0;
    auto expect = [&](const char* name, bool present, const std::string& value) {
        auto got = parsed->param(name);
        if (!present) {
            if (got) violated("challenge: a parameter that was not given");
            return;
        }
        ++expected;
        if (!got || *got != quotable(value)) violated("challenge: a parameter reads back otherwise");
    };
    std::string joined;
    for (const auto& s : scopes) joined += (joined.empty() ? "" : " ") + s;
    expect("error", !error.empty(), error);
    expect("resource_metadata", !resource.empty(), resource);
    expect("scope", !scopes.empty(), joined);
    if (parsed->params.size() != expected) violated("challenge: reads back with more parameters");
    for (const auto& s : scopes) {
        if (auth::valid_scope_token(s) && quotable(s) != s) violated("scope: a valid scope token loses characters");
    }
    auto doc = auth::protected_resource_metadata(resource, {error}, scopes);
    if (doc["resource"] != resource) violated("metadata document: another resource");
}

// Splits "first line\nrest"; without a newline, the whole input is the rest.
std::pair<std::string_view, std::string_view> line_and_rest(std::string_view input) {
    auto newline = input.find('\n');
    if (newline == std::string_view::npos) return {{}, input};
    return {input.substr(0, newline), input.substr(newline + 1)};
}

void check_protected_resource(std::string_view input) {
    auto [server_line, body] = line_and_rest(input);
    std::string server_url = kAudience;
    try {
        auto canonical = oauth::canonical_server_url(server_line);
        if (!oauth::resource_matches(canonical, server_line))
            violated("prm: the canonical server URL does not match the server");
        (void)oauth::protected_resource_metadata_urls(server_line);
        server_url = std::string(server_line);
    } catch (const std::invalid_argument&) {}
    auto doc = Json::parse(body, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return;  // fetch_json_document refuses these
    try {
        auto prm = oauth::parse_protected_resource(doc, server_url, "https://mcp.example.com/.well-known/x");
        if (!oauth::resource_matches(prm.resource, server_url)) violated("prm: accepted a resource of another server");
        if (prm.authorization_servers.empty()) violated("prm: accepted without an authorization server");
    } catch (const toolport::client::AuthorizationError&) {}
}

void check_server_metadata(std::string_view input) {
    auto [issuer_line, body] = line_and_rest(input);
    std::string issuer = issuer_line.empty() ? std::string(kIssuer) : std::string(issuer_line);
    auto doc = Json::parse(body, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) return;
    try {
        auto metadata = oauth::parse_server_metadata(doc, issuer, "https://as.example.com/.well-known/x");
        if (metadata.issuer != issuer) violated("as metadata: accepted another issuer");
        (void)metadata.supports_auth_method("client_secret_basic");
    } catch (const toolport::client::AuthorizationError&) {}
}

void check_introspection(std::string_view input) {
    auto& f = fixture();
    auto doc = Json::parse(input, nullptr, false);
    if (doc.is_discarded()) return;  // the introspector refuses a body that is not JSON before reading it
    std::shared_ptr<const auth::VerifiedToken> t;
    try {
        t = f.introspector.read_response(doc, kNow);
    } catch (const auth::TokenError& e) {
        say("introspection refused", auth::reason_name(e.reason()));
        return;
    }
    say("introspection accepted", t ? t->subject : "");
    if (!t) violated("introspection: accepted without a token");
    if (std::find(t->audiences.begin(), t->audiences.end(), kAudience) == t->audiences.end())
        violated("introspection: accepted a token for another audience");
    if (t->subject.empty()) violated("introspection: accepted without a subject");
    if (t->issuer != kIssuer) violated("introspection: accepted another issuer");
    if (t->expires_at + std::chrono::seconds(60) <= kNow) violated("introspection: accepted an expired token");
    check_scopes(t->scopes, "introspection: an empty or blank scope");
}

void check_token_response(std::string_view input) {
    (void)auth::looks_like_jwt(input);
    try {
        auto response = auth::parse_token_response(200, input);
        if (response.access_token.empty()) violated("token response: accepted without an access_token");
        if (response.token_type != "Bearer" && response.token_type != "DPoP")
            violated("token response: accepted another token_type");
        if (response.expires_in && response.expires_in->count() < 0) violated("token response: negative expires_in");
    } catch (const auth::TokenEndpointError&) {}
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) return 0;
    std::string_view input(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 9) {
        case 0: check_token(input); break;
        case 1: check_signed_token(input); break;
        case 2: check_jwks(input); break;
        case 3: check_challenge(input); break;
        case 4: check_server_challenge(input); break;
        case 5: check_protected_resource(input); break;
        case 6: check_server_metadata(input); break;
        case 7: check_introspection(input); break;
        case 8: check_token_response(input); break;
    }
    return 0;
}
