// Access-token verification (src/auth): what a request with a bearer JWT costs.
//  - BM_Signature/<alg>: the OpenSSL signature check alone (verify_signature), to tell
//    OpenSSL's share from Toolport's;
//  - BM_Verify/<alg>: JwtVerifier::verify alone (parse, signature check, claims);
//  - BM_FirstUse/<alg>: TokenAuthenticator::authenticate of a token it has not seen (cache
//    miss: digest, verify, insert), the "first use of a new token" (< 100 µs);
//  - BM_CacheHit: authenticate of a token seen before (digest and lookup only).
// Keys and tokens are generated at start with the unit tests' helpers (OpenSSL).
#include <benchmark/benchmark.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "auth/authenticator.hpp"
#include "auth/jwks.hpp"
#include "auth/jwt.hpp"
#include "auth_test_support.hpp"

using namespace toolport;
using namespace toolport::auth;
using namespace toolport::test_support;
using json = nlohmann::json;

namespace {

const std::string kIssuer = "https://as.example.test";
const std::string kResource = "https://mcp.example.test/mcp";

struct Fixture {
    TestKey rsa = make_rsa_key("rsa");
    TestKey ec = make_ec_key("ec");
    TestKey ed = make_ed25519_key("ed");
    KeySet keys = parse_jwks(jwks_text(json::array({public_jwk(rsa), public_jwk(ec), public_jwk(ed)})));

    const TestKey& key_for(const std::string& alg) const { return alg == "ES256" ? ec : alg == "EdDSA" ? ed : rsa; }
    // A typical access token: ~10 claims.
    std::string token(const std::string& alg, int n) const {
        auto now = std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                       .count();
        json claims = {{"iss", kIssuer},
                       {"aud", kResource},
                       {"sub", "user-" + std::to_string(n)},
                       {"client_id", "agent-app"},
                       {"exp", now + 3600},
                       {"iat", now},
                       {"nbf", now},
                       {"jti", "token-" + std::to_string(n)},
                       {"scope", "tools:read tools:call resources:read"}};
        return sign_token(key_for(alg), alg, claims);
    }
};

const Fixture& fixture() {
    static const Fixture f;
    return f;
}

const char* kAlgs[] = {"RS256", "PS256", "ES256", "EdDSA"};

std::shared_ptr<const VerifiedToken> run_now(Task<std::shared_ptr<const VerifiedToken>> task) {
    std::shared_ptr<const VerifiedToken> out;
    spawn(std::move(task), [&](std::optional<std::shared_ptr<const VerifiedToken>> r, std::exception_ptr e) {
        if (e) std::rethrow_exception(e);
        out = std::move(*r);
    });
    return out;
}

void BM_Signature(benchmark::State& state) {
    std::string alg = kAlgs[state.range(0)];
    state.SetLabel(alg);
    std::string token = fixture().token(alg, 0);
    auto dot = token.rfind('.');
    std::string input = token.substr(0, dot);
    std::string signature = jws_signature(fixture().key_for(alg), alg, input);
    const Jwk* key = fixture().keys.find(fixture().key_for(alg).kid, *alg_from_name(alg));
    for (auto _ : state) {
        if (!verify_signature(*alg_from_name(alg), *key, input, signature)) state.SkipWithError("does not verify");
    }
}
BENCHMARK(BM_Signature)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

void BM_Verify(benchmark::State& state) {
    std::string alg = kAlgs[state.range(0)];
    state.SetLabel(alg);
    JwtVerifier verifier({.issuer = kIssuer, .audiences = {kResource}});
    std::string token = fixture().token(alg, 0);
    for (auto _ : state) {
        auto t = verifier.verify(token, fixture().keys, std::chrono::system_clock::now());
        benchmark::DoNotOptimize(t);
    }
}
BENCHMARK(BM_Verify)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

void BM_FirstUse(benchmark::State& state) {
    std::string alg = kAlgs[state.range(0)];
    state.SetLabel(alg);
    std::vector<std::string> tokens;
    for (int i = 0; i < 512; ++i) tokens.push_back(fixture().token(alg, i));
    TokenAuthenticator authn({.verifier = {.issuer = kIssuer, .audiences = {kResource}}},
                             std::make_shared<StaticKeySource>(fixture().keys));
    std::size_t next = 0;
    for (auto _ : state) {
        if (next == tokens.size()) {
            state.PauseTiming();
            authn.cache().clear();
            next = 0;
            state.ResumeTiming();
        }
        benchmark::DoNotOptimize(run_now(authn.authenticate(tokens[next++])));
    }
    state.counters["signature_checks"] = static_cast<double>(authn.verifier().signature_checks());
}
BENCHMARK(BM_FirstUse)->DenseRange(0, 3)->Unit(benchmark::kMicrosecond);

void BM_CacheHit(benchmark::State& state) {
    TokenAuthenticator authn({.verifier = {.issuer = kIssuer, .audiences = {kResource}}},
                             std::make_shared<StaticKeySource>(fixture().keys));
    std::string token = fixture().token("ES256", 0);
    run_now(authn.authenticate(token));
    for (auto _ : state) benchmark::DoNotOptimize(run_now(authn.authenticate(token)));
    state.counters["signature_checks"] = static_cast<double>(authn.verifier().signature_checks());
}
BENCHMARK(BM_CacheHit)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
