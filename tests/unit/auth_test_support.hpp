// What the auth tests share:
//  - keys, JWKS documents and signed tokens, made at run time with OpenSSL (nothing is
//    copied from elsewhere): RSA 2048, EC P-256 and Ed25519 key pairs, their public JWKs
//    and PEM private keys, and compact JWS tokens signed with them;
//  - LoopbackAuthServerTest, the fixture of the tests that talk HTTP to a scripted
//    authorization server on loopback (token endpoint, introspection, metadata, JWKS);
//  - form_fields, to read the form bodies such a server receives.
// fuzz_auth links auth_test_support.cpp (for the keys and tokens) without GoogleTest: what
// uses GoogleTest is defined here, in the header, and the .cpp must not use it.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "async/asio_executor.hpp"
#include "drive_on_loop.hpp"
#include "http_client/http_client.hpp"
#include "http_test_servers.hpp"
#include "util/percent.hpp"

struct evp_pkey_st;

namespace toolport::test_support {

struct TestKey {
    std::string kid;
    std::string kty;                    // "RSA", "EC", "OKP"
    std::shared_ptr<evp_pkey_st> pair;  // private and public
};

TestKey make_rsa_key(const std::string& kid, int bits = 2048);
TestKey make_ec_key(const std::string& kid);
TestKey make_ed25519_key(const std::string& kid);

// The key's public JWK (kty and its members, kid, use "sig"; `alg` when not empty).
nlohmann::json public_jwk(const TestKey& key, const std::string& alg = "");
// {"keys": [...]} as text.
std::string jwks_text(const nlohmann::json& keys_array);

std::string b64url(const std::string& bytes);
std::string b64url_json(const nlohmann::json& value);

// The JOSE signature (raw bytes; ES256 as r||s) of `signing_input` with `key` under `alg`
// (RS256, PS256, ES256, EdDSA).
std::string jws_signature(const TestKey& key, const std::string& alg, const std::string& signing_input);

// A compact JWS: base64url(header).base64url(payload).base64url(signature), signed with
// `key` under header["alg"].
std::string sign_with_header(const TestKey& key, const nlohmann::json& header, const nlohmann::json& payload);
// The usual header: {"alg": alg, "typ": "JWT", "kid": key.kid}.
std::string sign_token(const TestKey& key, const std::string& alg, const nlohmann::json& payload);

// The key pair's private key as unencrypted PKCS#8 PEM (what private_key_jwt is given).
std::string private_key_pem(const TestKey& key);

// `t` as a NumericDate (whole seconds since the epoch), for exp, iat and nbf claims.
std::int64_t epoch_seconds(std::chrono::system_clock::time_point t);

// An application/x-www-form-urlencoded body as name -> value ('+' is a space). A field
// sent twice or a bad %-escape fails the test.
inline std::map<std::string, std::string> form_fields(const std::string& body) {
    std::map<std::string, std::string> out;
    std::size_t start = 0;
    while (start <= body.size() && !body.empty()) {
        std::size_t end = body.find('&', start);
        if (end == std::string::npos) end = body.size();
        std::string pair = body.substr(start, end - start);
        for (auto& c : pair) {
            if (c == '+') c = ' ';
        }
        auto eq = pair.find('=');
        auto name = util::percent_decode(pair.substr(0, eq));
        auto value = util::percent_decode(eq == std::string::npos ? "" : pair.substr(eq + 1));
        EXPECT_TRUE(name && value) << "bad form encoding: " << pair;
        if (name && value) {
            EXPECT_FALSE(out.count(*name)) << "repeated field " << *name;
            out[*name] = *value;
        }
        start = end + 1;
    }
    return out;
}

// A downstream HTTP client's options for loopback servers: no proxy, whatever the
// environment says.
inline http_client::ClientOptions loopback_client_options() {
    http_client::ClientOptions options;
    options.proxy = http_client::ProxySettings{};
    return options;
}

// The fixture of the tests that talk to an authorization server: `server` runs on
// loopback and `state.answer(request)` scripts its replies (on the server's thread).
// State has a `mutex`, which answer() and the test hold while they use the state, and
// may have an `issuer`, set here to the server's http://127.0.0.1:PORT. `http` is a client
// on `io`.
template <typename State>
class LoopbackAuthServerTest : public ::testing::Test {
protected:
    LoopbackAuthServerTest() : server([this](const SeenRequest& r) { return state.answer(r); }) {
        if constexpr (requires { state.issuer; }) {
            std::lock_guard lock(state.mutex);
            state.issuer = "http://127.0.0.1:" + std::to_string(server.port());
        }
    }

    template <typename T>
    T drive(Task<T> task) {
        return drive_on(io, std::move(task));
    }

    // The targets of the requests the server has seen, in order.
    std::vector<std::string> targets() const {
        std::vector<std::string> out;
        for (const auto& r : server.requests()) out.push_back(r.target);
        return out;
    }

    // The requests the server has seen for `target`, in order.
    std::vector<SeenRequest> requests_to(const std::string& target) const {
        std::vector<SeenRequest> out;
        for (auto& r : server.requests()) {
            if (r.target == target) out.push_back(std::move(r));
        }
        return out;
    }

    State state;  // before the server, which uses it until it stops
    ScriptedServer server;
    boost::asio::io_context io;
    AsioExecutor executor{io};
    http_client::HttpClient http{executor, loopback_client_options()};
};

}  // namespace toolport::test_support
