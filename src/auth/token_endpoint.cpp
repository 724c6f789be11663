#include "auth/token_endpoint.hpp"

#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cmath>
#include <memory>

#include "http_client/url.hpp"
#include "util/base64.hpp"
#include "util/http_text.hpp"
#include "util/random.hpp"
#include "util/sanitize.hpp"

namespace toolport::auth {

namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;

// Token endpoint answers are small JSON objects; a larger one is not a token response.
constexpr std::size_t kMaxTokenResponseBytes = 256 * 1024;
// RFC 7523 asks for a short-lived assertion; five minutes tolerates modest clock skew.
constexpr std::int64_t kAssertionLifetimeSeconds = 300;

// The PEM private key, or a message saying why it cannot be used.
KeyPtr load_private_key(const std::string& pem) {
    std::unique_ptr<BIO, decltype(&BIO_free)> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), BIO_free);
    if (!bio) throw std::invalid_argument("private_key_jwt: out of memory reading the private key");
    // No passphrase callback: an encrypted key is refused rather than prompting on a terminal.
    EVP_PKEY* key = PEM_read_bio_PrivateKey(
        bio.get(), nullptr, [](char*, int, int, void*) { return -1; }, nullptr);
    if (!key) throw std::invalid_argument("private_key_jwt: the private key is not an unencrypted PEM private key");
    return KeyPtr(key, EVP_PKEY_free);
}

// RS256 or ES256 for `key`, checked against the configured algorithm (empty: from the key).
std::string signing_alg_for(EVP_PKEY* key, const std::string& configured) {
    std::string natural;
    if (EVP_PKEY_is_a(key, "RSA")) {
        if (EVP_PKEY_get_bits(key) < 2048)
            throw std::invalid_argument("private_key_jwt: the RSA key is shorter than 2048 bits");
        natural = "RS256";
    } else if (EVP_PKEY_is_a(key, "EC")) {
        char group[64] = {};
        std::size_t length = 0;
        if (EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &length) != 1 ||
            std::string_view(group, length) != "prime256v1")
            throw std::invalid_argument("private_key_jwt: the EC key is not on P-256");
        natural = "ES256";
    } else {
        throw std::invalid_argument("private_key_jwt: the private key is neither RSA nor EC P-256");
    }
    if (!configured.empty() && configured != natural)
        throw std::invalid_argument("private_key_jwt: signing_alg " + configured + " does not fit the key (" + natural +
                                    ")");
    return natural;
}

// The JOSE signature of `input`: RS256 as is, ES256 converted from DER to r||s (RFC 7518 §3.4).
std::string sign(EVP_PKEY* key, const std::string& alg, const std::string& input) {
    std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> ctx(EVP_MD_CTX_new(), EVP_MD_CTX_free);
    std::size_t length = 0;
    const auto* data = reinterpret_cast<const unsigned char*>(input.data());
    if (!ctx || EVP_DigestSignInit(ctx.get(), nullptr, EVP_sha256(), nullptr, key) != 1 ||
        EVP_DigestSign(ctx.get(), nullptr, &length, data, input.size()) != 1)
        throw std::runtime_error("signing a JWS failed");
    std::string signature(length, '\0');
    if (EVP_DigestSign(ctx.get(), reinterpret_cast<unsigned char*>(signature.data()), &length, data, input.size()) != 1)
        throw std::runtime_error("signing a JWS failed");
    signature.resize(length);
    if (alg != "ES256") return signature;
    const auto* p = reinterpret_cast<const unsigned char*>(signature.data());
    std::unique_ptr<ECDSA_SIG, decltype(&ECDSA_SIG_free)> parsed(d2i_ECDSA_SIG(nullptr, &p,
                                                                               static_cast<long>(signature.size())),
                                                                 ECDSA_SIG_free);
    if (!parsed) throw std::runtime_error("signing a JWS failed");
    std::string jose(64, '\0');
    auto* out = reinterpret_cast<unsigned char*>(jose.data());
    if (BN_bn2binpad(ECDSA_SIG_get0_r(parsed.get()), out, 32) != 32 ||
        BN_bn2binpad(ECDSA_SIG_get0_s(parsed.get()), out + 32, 32) != 32)
        throw std::runtime_error("signing a JWS failed");
    return jose;
}

std::string client_assertion(const ClientAuthentication& client, const std::string& token_endpoint) {
    nlohmann::json header = {{"typ", "JWT"}};
    if (!client.signing_alg.empty()) header["alg"] = client.signing_alg;
    if (!client.key_id.empty()) header["kid"] = client.key_id;
    auto now =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
    nlohmann::json claims = {
        {"iss", client.client_id},
        {"sub", client.client_id},
        {"aud", client.assertion_audience.empty() ? token_endpoint : client.assertion_audience},
        // A fresh jti per assertion: servers may refuse a replayed one (RFC 7523 §3).
        {"jti", util::random_hex(16)},
        {"iat", now},
        {"exp", now + kAssertionLifetimeSeconds},
    };
    return sign_jws(client.private_key_pem, std::move(header), claims);
}

std::string form_body(const std::vector<std::pair<std::string, std::string>>& fields) {
    std::string body;
    for (const auto& [name, value] : fields) {
        if (!body.empty()) body += '&';
        body += form_urlencode(name);
        body += '=';
        body += form_urlencode(value);
    }
    return body;
}

std::string string_member(const nlohmann::json& body, const char* name, unsigned status) {
    auto it = body.find(name);
    if (it == body.end() || it->is_null()) return {};
    if (!it->is_string())
        throw TokenEndpointError(status, "", std::string("the token response's ") + name + " is not a string");
    return it->get<std::string>();
}

std::optional<std::chrono::seconds> expires_in_of(const nlohmann::json& body, unsigned status) {
    auto it = body.find("expires_in");
    if (it == body.end() || it->is_null()) return std::nullopt;
    auto bad = [&] {
        return TokenEndpointError(status, "", "the token response's expires_in is not a non-negative number");
    };
    if (it->is_number_unsigned()) {
        auto v = it->get<std::uint64_t>();
        // Anything past a century is as good as "does not expire" and must not overflow.
        return std::chrono::seconds(static_cast<std::int64_t>(std::min<std::uint64_t>(v, 3'155'760'000ull)));
    }
    if (it->is_number_integer()) throw bad();  // negative
    if (it->is_number_float()) {
        double v = it->get<double>();
        if (!std::isfinite(v) || v < 0) throw bad();
        return std::chrono::seconds(static_cast<std::int64_t>(std::min(v, 3'155'760'000.0)));
    }
    if (it->is_string()) {
        // Some servers send the number as a string; only plain digits are taken.
        const auto& text = it->get_ref<const std::string&>();
        if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos) throw bad();
        return std::chrono::seconds(std::min<std::int64_t>(std::stoll(text), 3'155'760'000ll));
    }
    throw bad();
}

}  // namespace

std::string sign_jws(const std::string& private_key_pem, nlohmann::json header, const nlohmann::json& claims) {
    auto key = load_private_key(private_key_pem);
    auto alg_member = header.find("alg");
    std::string alg = signing_alg_for(key.get(), alg_member != header.end() && alg_member->is_string()
                                                     ? alg_member->get<std::string>()
                                                     : "");
    header["alg"] = alg;
    std::string input = util::base64url_encode(header.dump()) + "." + util::base64url_encode(claims.dump());
    return input + "." + util::base64url_encode(sign(key.get(), alg, input));
}

TokenEndpointError::TokenEndpointError(unsigned status, std::string error, std::string description)
    : std::runtime_error([&] {
          std::string message = "the token endpoint ";
          message += error.empty() ? "gave an unusable answer" : "refused: " + error;
          message += " (HTTP " + std::to_string(status) + ")";
          if (!description.empty()) message += ": " + description;
          return message;
      }()),
      status(status),
      error(std::move(error)),
      description(std::move(description)) {}

std::string_view method_name(ClientAuthentication::Method method) {
    switch (method) {
        case ClientAuthentication::Method::none: return "none";
        case ClientAuthentication::Method::client_secret_basic: return "client_secret_basic";
        case ClientAuthentication::Method::client_secret_post: return "client_secret_post";
        case ClientAuthentication::Method::private_key_jwt: return "private_key_jwt";
    }
    return "none";
}

std::optional<ClientAuthentication::Method> parse_method(std::string_view name) {
    using M = ClientAuthentication::Method;
    for (M m : {M::none, M::client_secret_basic, M::client_secret_post, M::private_key_jwt}) {
        if (method_name(m) == name) return m;
    }
    return std::nullopt;
}

void check_client_authentication(const ClientAuthentication& client) {
    using M = ClientAuthentication::Method;
    if (client.client_id.empty()) throw std::invalid_argument("the client_id is empty");
    switch (client.method) {
        case M::none: break;
        case M::client_secret_basic:
        case M::client_secret_post:
            if (client.client_secret.empty())
                throw std::invalid_argument(std::string(method_name(client.method)) + " needs a client_secret");
            break;
        case M::private_key_jwt: {
            if (client.private_key_pem.empty()) throw std::invalid_argument("private_key_jwt needs a private key");
            if (!client.signing_alg.empty() && client.signing_alg != "RS256" && client.signing_alg != "ES256")
                throw std::invalid_argument("private_key_jwt: signing_alg must be RS256 or ES256");
            auto key = load_private_key(client.private_key_pem);
            signing_alg_for(key.get(), client.signing_alg);
            break;
        }
    }
}

std::string form_urlencode(std::string_view value) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string out;
    out.reserve(value.size());
    for (unsigned char c : value) {
        // The WHATWG urlencoded serializer's set (RFC 6749 Appendix B defers to it): these
        // stay, space becomes '+', every other byte (UTF-8 included) is %XX.
        if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '*' || c == '-' ||
            c == '.' || c == '_') {
            out += static_cast<char>(c);
        } else if (c == ' ') {
            out += '+';
        } else {
            out += '%';
            out += kHex[c >> 4];
            out += kHex[c & 0xF];
        }
    }
    return out;
}

http_client::Request client_form_post(const std::string& endpoint, const ClientAuthentication& client,
                                      std::vector<std::pair<std::string, std::string>> fields) {
    using M = ClientAuthentication::Method;
    http_client::Request request;
    request.method = "POST";
    request.url = endpoint;
    request.headers = {{"Content-Type", "application/x-www-form-urlencoded"}, {"Accept", "application/json"}};
    switch (client.method) {
        case M::none:
            if (!client.client_id.empty()) fields.emplace_back("client_id", client.client_id);
            break;
        case M::client_secret_basic:
            request.headers.emplace_back("Authorization",
                                         "Basic " + util::base64_encode(form_urlencode(client.client_id) + ":" +
                                                                        form_urlencode(client.client_secret)));
            break;
        case M::client_secret_post:
            fields.emplace_back("client_id", client.client_id);
            fields.emplace_back("client_secret", client.client_secret);
            break;
        case M::private_key_jwt:
            // client_id is optional with an assertion (RFC 7523 §3.2) but harmless, and some
            // servers look the client up by it before reading the assertion.
            fields.emplace_back("client_id", client.client_id);
            fields.emplace_back("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
            fields.emplace_back("client_assertion", client_assertion(client, endpoint));
            break;
    }
    request.body = form_body(fields);
    return request;
}

TokenResponse parse_token_response(unsigned status, std::string_view text) {
    auto body = nlohmann::json::parse(text, nullptr, false);
    if (body.is_discarded() || !body.is_object())
        throw TokenEndpointError(status, "", "the token response is not a JSON object");
    TokenResponse out;
    out.access_token = string_member(body, "access_token", status);
    if (out.access_token.empty()) throw TokenEndpointError(status, "", "the token response has no access_token");
    out.token_type = string_member(body, "token_type", status);
    if (out.token_type.empty()) throw TokenEndpointError(status, "", "the token response has no token_type");
    out.issued_token_type = string_member(body, "issued_token_type", status);
    // Bearer is what an MCP server or REST API takes; DPoP-bound tokens are reported as
    // such (the caller decides whether it can use them). RFC 8693 §2.2.1: a token exchange
    // that issues something other than an access token (an ID-JAG, a SAML assertion, named
    // by issued_token_type) says N_A; it is for the caller's next grant, never a header.
    // Anything else cannot be used.
    if (util::iequals_ascii(out.token_type, "bearer")) out.token_type = "Bearer";
    else if (util::iequals_ascii(out.token_type, "dpop")) out.token_type = "DPoP";
    else if (out.token_type == "N_A" && !out.issued_token_type.empty() &&
             out.issued_token_type != "urn:ietf:params:oauth:token-type:access_token")
        out.token_type = "N_A";
    else
        throw TokenEndpointError(status, "",
                                 "the token response's token_type \"" + util::sanitize_for_message(out.token_type, 40) +
                                     "\" is neither Bearer nor DPoP (nor N_A for a token exchange that issued no "
                                     "access token)");
    out.refresh_token = string_member(body, "refresh_token", status);
    out.scope = string_member(body, "scope", status);
    out.id_token = string_member(body, "id_token", status);
    out.expires_in = expires_in_of(body, status);
    out.raw = std::move(body);
    return out;
}

Task<TokenResponse> request_token(http_client::HttpClient& http, const std::string& token_endpoint,
                                  const ClientAuthentication& client,
                                  std::vector<std::pair<std::string, std::string>> grant,
                                  http_client::CallOptions options, TokenRequestExtras extras) {
    auto url = http_client::parse_url(token_endpoint);  // throws std::invalid_argument
    if (token_endpoint.find('#') != std::string::npos)
        throw std::invalid_argument("the token endpoint URL must not have a fragment");

    auto request = client_form_post(token_endpoint, client, std::move(grant));
    for (auto& header : extras.headers) request.headers.push_back(std::move(header));
    if (options.max_response_bytes == 0) options.max_response_bytes = kMaxTokenResponseBytes;

    auto response = co_await http.fetch(std::move(request), std::move(options));
    std::string nonce = response.header("DPoP-Nonce").value_or("");
    if (response.status >= 200 && response.status < 300) {
        auto parsed = parse_token_response(response.status, response.body);
        parsed.dpop_nonce = std::move(nonce);
        co_return parsed;
    }

    // RFC 6749 §5.2: a JSON object with `error` (and maybe error_description).
    auto body = nlohmann::json::parse(response.body, nullptr, false);
    if (body.is_object()) {
        auto error = body.find("error");
        if (error != body.end() && error->is_string() && !error->get_ref<const std::string&>().empty()) {
            std::string description;
            auto d = body.find("error_description");
            if (d != body.end() && d->is_string()) description = d->get<std::string>();
            TokenEndpointError refused(response.status, util::sanitize_for_message(error->get<std::string>(), 80),
                                       util::sanitize_for_message(description, 300));
            refused.dpop_nonce = std::move(nonce);
            throw refused;
        }
    }
    throw TokenEndpointError(response.status, "",
                             url.display() + " answered HTTP " + std::to_string(response.status) +
                                 " without an OAuth error body");
}

}  // namespace toolport::auth
