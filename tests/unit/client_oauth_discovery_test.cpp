// The OAuth client's pure parts: WWW-Authenticate challenges, PKCE, the discovery URLs and
// their order, the resource and issuer checks, scope selection and the authorization URL
// and response checks.
#include <gtest/gtest.h>

#include "auth/key_source.hpp"
#include "client/http_authorizer.hpp"
#include "client/oauth/authorization_request.hpp"
#include "client/oauth/browser.hpp"
#include "client/oauth/client_registration.hpp"
#include "client/oauth/pkce.hpp"
#include "client/oauth/protected_resource.hpp"
#include "client/oauth/scope_selection.hpp"
#include "client/oauth/server_metadata.hpp"
#include "client/oauth/www_authenticate.hpp"

namespace toolport::client::oauth {
namespace {

using nlohmann::json;
using Strings = std::vector<std::string>;

TEST(ClientOAuthChallenge, BearerParametersQuotedAndNot) {
    auto c = parse_bearer_challenge(
        R"(Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://x/.well-known/oauth-protected-resource/mcp")");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->param("error"), "insufficient_scope");
    EXPECT_EQ(c->param("scope"), "mcp:basic mcp:write");
    EXPECT_EQ(c->param("resource_metadata"), "http://x/.well-known/oauth-protected-resource/mcp");
    auto plain = parse_bearer_challenge("bearer realm=mcp,error=invalid_token");
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->param("realm"), "mcp");
    EXPECT_EQ(plain->param("error"), "invalid_token");
    EXPECT_FALSE(plain->param("scope"));
}

TEST(ClientOAuthChallenge, OtherSchemesAreSkippedAndEscapesUndone) {
    auto c = parse_bearer_challenge(R"(Basic realm="a, b", Bearer scope="x", error_description="say \"no\"")");
    ASSERT_TRUE(c);
    EXPECT_EQ(c->scheme, "Bearer");
    EXPECT_EQ(c->param("scope"), "x");
    EXPECT_EQ(c->param("error_description"), "say \"no\"");
    EXPECT_FALSE(c->param("realm"));  // Basic's
    EXPECT_FALSE(parse_bearer_challenge("Basic realm=\"x\""));
    EXPECT_FALSE(parse_bearer_challenge(""));
    EXPECT_FALSE(parse_bearer_challenge("Bearer scope=\"unterminated"));
    auto dpop = parse_bearer_challenge("DPoP resource_metadata=\"http://m\"");
    ASSERT_TRUE(dpop);
    EXPECT_EQ(dpop->param("resource_metadata"), "http://m");
}

TEST(ClientOAuthPkce, Rfc7636AppendixBVector) {
    EXPECT_EQ(s256_challenge("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
              "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
    auto a = make_pkce(), b = make_pkce();
    EXPECT_EQ(a.verifier.size(), 43u);
    EXPECT_NE(a.verifier, b.verifier);
    EXPECT_EQ(a.challenge, s256_challenge(a.verifier));
    EXPECT_EQ(a.verifier.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"),
              std::string::npos);
}

TEST(ClientOAuthDiscovery, ProtectedResourceUrlsPathSuffixedThenRoot) {
    EXPECT_EQ(protected_resource_metadata_urls("https://Mcp.Example.com/tenant/mcp?x=1"),
              (Strings{"https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp",
                       "https://mcp.example.com/.well-known/oauth-protected-resource"}));
    EXPECT_EQ(protected_resource_metadata_urls("http://127.0.0.1:8080"),
              (Strings{"http://127.0.0.1:8080/.well-known/oauth-protected-resource"}));
    EXPECT_EQ(canonical_server_url("HTTPS://Mcp.Example.com:443/mcp?q=1"), "https://mcp.example.com/mcp");
    EXPECT_EQ(canonical_server_url("http://localhost:3000/"), "http://localhost:3000");
}

TEST(ClientOAuthDiscovery, AuthorizationServerMetadataUrlOrder) {
    // Reused from the resource server's key discovery: RFC 8414 inserted, OpenID inserted,
    // OpenID appended; no root URL for an issuer with a path.
    EXPECT_EQ(auth::DiscoveredKeySource::metadata_urls("http://as:9/tenant1"),
              (Strings{"http://as:9/.well-known/oauth-authorization-server/tenant1",
                       "http://as:9/.well-known/openid-configuration/tenant1",
                       "http://as:9/tenant1/.well-known/openid-configuration"}));
    EXPECT_EQ(auth::DiscoveredKeySource::metadata_urls("http://as:9"),
              (Strings{"http://as:9/.well-known/oauth-authorization-server",
                       "http://as:9/.well-known/openid-configuration"}));
}

TEST(ClientOAuthDiscovery, ResourceMustBeThisServer) {
    EXPECT_TRUE(resource_matches("http://localhost:5/mcp", "http://localhost:5/mcp"));
    EXPECT_TRUE(resource_matches("http://localhost:5", "http://localhost:5/mcp"));       // root document
    EXPECT_TRUE(resource_matches("http://localhost:5/a/", "http://localhost:5/a/mcp"));  // a parent
    EXPECT_FALSE(resource_matches("https://evil.example.com/mcp", "http://localhost:5/mcp"));
    EXPECT_FALSE(resource_matches("http://localhost:6/mcp", "http://localhost:5/mcp"));
    EXPECT_FALSE(resource_matches("http://localhost:5/mc", "http://localhost:5/mcp"));  // not at a segment
    EXPECT_FALSE(resource_matches("http://localhost:5/mcp/x", "http://localhost:5/mcp"));
    EXPECT_FALSE(resource_matches("not a url", "http://localhost:5/mcp"));

    json document = {{"resource", "https://evil.example.com/mcp"}, {"authorization_servers", {"http://as"}}};
    try {
        parse_protected_resource(document, "http://localhost:5/mcp", "http://localhost:5/.well-known/x");
        FAIL() << "a document for another resource was accepted";
    } catch (const AuthorizationError& e) {
        EXPECT_NE(std::string(e.what()).find("is for https://evil.example.com/mcp"), std::string::npos) << e.what();
    }
    document["resource"] = "http://localhost:5/mcp";
    document["authorization_servers"] = json::array();
    EXPECT_THROW(parse_protected_resource(document, "http://localhost:5/mcp", "u"), AuthorizationError);
    document["authorization_servers"] = {"http://as"};
    document["scopes_supported"] = {"a", "b"};
    auto prm = parse_protected_resource(document, "http://localhost:5/mcp", "u");
    EXPECT_EQ(prm.resource, "http://localhost:5/mcp");
    EXPECT_EQ(prm.scopes_supported, (Strings{"a", "b"}));
}

TEST(ClientOAuthDiscovery, MetadataIssuerMustMatchExactly) {
    json document = {{"issuer", "https://attacker.example.com"},
                     {"authorization_endpoint", "http://as/authorize"},
                     {"token_endpoint", "http://as/token"}};
    EXPECT_THROW(parse_server_metadata(document, "http://as", "u"), AuthorizationError);
    document["issuer"] = "http://as/";  // a trailing slash is another issuer
    EXPECT_THROW(parse_server_metadata(document, "http://as", "u"), AuthorizationError);
    document["issuer"] = "http://as";
    document["authorization_response_iss_parameter_supported"] = true;
    document["client_id_metadata_document_supported"] = true;
    auto m = parse_server_metadata(document, "http://as", "u");
    EXPECT_TRUE(m.iss_parameter_supported);
    EXPECT_TRUE(m.client_id_metadata_document_supported);
    EXPECT_TRUE(m.supports_auth_method("client_secret_basic"));  // RFC 8414's default
    EXPECT_FALSE(m.supports_auth_method("none"));
    document.erase("token_endpoint");
    EXPECT_THROW(parse_server_metadata(document, "http://as", "u"), AuthorizationError);
    auto fallback = default_endpoints("http://localhost:7");
    EXPECT_EQ(fallback.authorization_endpoint, "http://localhost:7/authorize");
    EXPECT_EQ(fallback.token_endpoint, "http://localhost:7/token");
    EXPECT_EQ(fallback.registration_endpoint, "http://localhost:7/register");
}

// Found by fuzz_auth: a flag that is not a boolean threw nlohmann's type_error out of the
// parser instead of reading as false.
TEST(ClientOAuthDiscovery, MetadataFlagsOfAnotherTypeReadAsFalse) {
    json document = {{"issuer", "http://as"},
                     {"token_endpoint", "http://as/token"},
                     {"client_id_metadata_document_supported", "yes"},
                     {"authorization_response_iss_parameter_supported", 1}};
    ServerMetadata m;
    ASSERT_NO_THROW(m = parse_server_metadata(document, "http://as", "u"));
    EXPECT_FALSE(m.client_id_metadata_document_supported);
    EXPECT_FALSE(m.iss_parameter_supported);
    document["client_id_metadata_document_supported"] = json::array({true});
    EXPECT_FALSE(parse_server_metadata(document, "http://as", "u").client_id_metadata_document_supported);
}

TEST(ClientOAuthScopes, ChallengeThenResourceThenNone) {
    ScopeInputs in;
    in.challenge_scope = "mcp:basic";
    in.resource_scopes = {"mcp:profile"};
    EXPECT_EQ(select_scopes(in), (Strings{"mcp:basic"}));
    in.challenge_scope.clear();
    EXPECT_EQ(select_scopes(in), (Strings{"mcp:profile"}));
    in.resource_scopes.clear();
    EXPECT_TRUE(select_scopes(in).empty());
}

TEST(ClientOAuthScopes, StepUpKeepsTheUnionAndOfflineAccessOnlyWhenOffered) {
    ScopeInputs in;
    in.previously_requested = {"mcp:basic"};
    in.challenge_scope = "mcp:write  mcp:basic";
    EXPECT_EQ(select_scopes(in), (Strings{"mcp:basic", "mcp:write"}));
    in.server_scopes = {"mcp:basic", "offline_access"};
    EXPECT_EQ(select_scopes(in), (Strings{"mcp:basic", "mcp:write", "offline_access"}));
    in.want_refresh_token = false;  // client credentials
    EXPECT_EQ(select_scopes(in), (Strings{"mcp:basic", "mcp:write"}));
    EXPECT_EQ(join_scopes(split_scopes(" a  b a ")), "a b");
}

TEST(ClientOAuthAuthorization, UrlCarriesPkceStateResourceAndScope) {
    AuthorizationRequest r{
        "https://c.example/meta.json", "http://127.0.0.1:5/callback", "chal", "st&=", "http://s/mcp", {"a", "b"}};
    EXPECT_EQ(authorization_url("http://as/authorize?tenant=1", r),
              "http://as/authorize?tenant=1&response_type=code&client_id=https%3A%2F%2Fc.example%2Fmeta.json"
              "&redirect_uri=http%3A%2F%2F127.0.0.1%3A5%2Fcallback&code_challenge=chal&code_challenge_method=S256"
              "&state=st%26%3D&resource=http%3A%2F%2Fs%2Fmcp&scope=a%20b");
    r.scopes.clear();
    EXPECT_EQ(authorization_url("http://as/a", r).find("scope="), std::string::npos);
}

TEST(ClientOAuthAuthorization, IssChecks) {
    ServerMetadata advertised;
    advertised.issuer = "http://as";
    advertised.iss_parameter_supported = true;
    ServerMetadata silent = advertised;
    silent.iss_parameter_supported = false;
    AuthorizationResponse ok{"code", "s", "", "", std::string("http://as")};
    EXPECT_NO_THROW(check_authorization_response(ok, advertised));  // iss-supported
    AuthorizationResponse missing{"code", "s", "", "", std::nullopt};
    EXPECT_THROW(check_authorization_response(missing, advertised), AuthorizationError);  // iss-supported-missing
    EXPECT_NO_THROW(check_authorization_response(missing, silent));                       // iss-not-advertised
    AuthorizationResponse wrong{"code", "s", "", "", std::string("https://evil.example.com")};
    EXPECT_THROW(check_authorization_response(wrong, advertised), AuthorizationError);  // iss-wrong-issuer
    EXPECT_THROW(check_authorization_response(wrong, silent), AuthorizationError);      // iss-unexpected
    AuthorizationResponse slash{"code", "s", "", "", std::string("http://as/")};
    EXPECT_THROW(check_authorization_response(slash, advertised), AuthorizationError);  // iss-normalized
    AuthorizationResponse refused{"", "s", "access_denied", "no", std::string("http://as")};
    try {
        check_authorization_response(refused, advertised);
        FAIL();
    } catch (const AuthorizationError& e) {
        EXPECT_NE(std::string(e.what()).find("access_denied (no)"), std::string::npos) << e.what();
    }
}

TEST(ClientOAuthAuthorization, ResponseQueryIsFormDecoded) {
    auto r = parse_authorization_response("code=a%2Fb&state=x+y&iss=http%3A%2F%2Fas&other=1");
    ASSERT_TRUE(r);
    EXPECT_EQ(r->code, "a/b");
    EXPECT_EQ(r->state, "x y");
    EXPECT_EQ(r->iss, "http://as");
    EXPECT_FALSE(parse_authorization_response("code=%zz"));
    EXPECT_FALSE(parse_authorization_response("code=1")->iss);
}

TEST(ClientOAuthRegistration, AuthMethodAndRegistrationRequest) {
    ServerMetadata only_none;
    only_none.token_endpoint_auth_methods_supported = {"none"};
    ServerMetadata post;
    post.token_endpoint_auth_methods_supported = {"client_secret_post"};
    ServerMetadata unspecified;
    EXPECT_EQ(choose_auth_method(post, true, false), "client_secret_post");
    EXPECT_EQ(choose_auth_method(unspecified, true, false), "client_secret_basic");
    EXPECT_EQ(choose_auth_method(only_none, true, false), "none");
    EXPECT_EQ(choose_auth_method(post, false, false), "none");
    EXPECT_EQ(choose_auth_method(post, false, true), "private_key_jwt");
    ClientIdentity id;
    auto request = registration_request(only_none, id, "http://127.0.0.1:9/callback", {"authorization_code"});
    EXPECT_EQ(request["token_endpoint_auth_method"], "none");
    EXPECT_EQ(request["application_type"], "native");
    EXPECT_EQ(request["redirect_uris"], json::array({"http://127.0.0.1:9/callback"}));
    EXPECT_EQ(registration_request(post, id, "", {})["token_endpoint_auth_method"], "client_secret_post");
}

TEST(ClientOAuthBrowser, BrowserVariableIsSplitAndTheUrlIsOneArgument) {
    const std::string url = "http://as/authorize?a=1&b=$(rm -rf ~)";
    auto env = [](std::map<std::string, std::string> values) {
        return [values](const char* name) -> const char* {
            auto it = values.find(name);
            return it == values.end() ? nullptr : it->second.c_str();
        };
    };
    EXPECT_EQ(browser_command(url, env({{"BROWSER", "curl -fsS '-o' /dev/null"}})),
              (Strings{"curl", "-fsS", "-o", "/dev/null", url}));
    EXPECT_EQ(browser_command(url, env({{"DISPLAY", ":0"}})), (Strings{"xdg-open", url}));
    EXPECT_TRUE(browser_command(url, env({})).empty());
    EXPECT_THROW(browser_command(url, env({{"BROWSER", "x; rm"}})), std::invalid_argument);
}

}  // namespace
}  // namespace toolport::client::oauth
