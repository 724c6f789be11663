// The OAuth client end to end against a loopback authorization server (ScriptedServer
// playing the protected resource's metadata, the authorization server's metadata, dynamic
// registration and the token endpoint) and its real redirect listener, with a "browser"
// that follows the authorization page's redirect as the authorization server would send it.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <mutex>

#include "client/http_authorizer.hpp"
#include "client/oauth/oauth_authorizer.hpp"
#include "client/oauth/redirect_listener.hpp"
#include "client/oauth/token_store.hpp"
#include "client_oauth_test_support.hpp"
#include "http_client/http_client.hpp"
#include "util/percent.hpp"

namespace toolport::client::oauth {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
using test_support::ScriptedReply;
using test_support::ScriptedServer;
using test_support::SeenRequest;

// The value of `name` in a query or form body.
std::string param(const std::string& text, const std::string& name) {
    auto query = text.substr(text.find('?') == std::string::npos ? 0 : text.find('?') + 1);
    std::size_t pos = 0;
    while (pos <= query.size()) {
        std::size_t end = query.find('&', pos);
        if (end == std::string::npos) end = query.size();
        auto pair = query.substr(pos, end - pos);
        if (pair.rfind(name + "=", 0) == 0) {
            std::string value = pair.substr(name.size() + 1);
            for (char& c : value) {
                if (c == '+') c = ' ';
            }
            return util::percent_decode(value).value_or("<bad>");
        }
        pos = end + 1;
    }
    return "";
}

struct AuthServer {
    std::mutex mutex;
    std::string base;          // http://127.0.0.1:PORT
    std::string prm_resource;  // "" -> base + "/mcp"
    json metadata_extra = json::object();
    int tokens_issued = 0;
    bool dpop = false;  // issue DPoP-bound tokens

    ScriptedReply answer(const SeenRequest& r) {
        std::lock_guard lock(mutex);
        ScriptedReply reply;
        reply.headers = {{"Content-Type", "application/json"}};
        const std::string path = test_support::path_of(r.target);
        if (path == "/.well-known/oauth-protected-resource/mcp") {
            reply.body = json{{"resource", prm_resource.empty() ? base + "/mcp" : prm_resource},
                              {"authorization_servers", {base}},
                              {"scopes_supported", {"mcp:basic"}}}
                             .dump();
        } else if (path == "/.well-known/oauth-authorization-server") {
            json m = {{"issuer", base},
                      {"authorization_endpoint", base + "/authorize"},
                      {"token_endpoint", base + "/token"},
                      {"registration_endpoint", base + "/register"},
                      {"code_challenge_methods_supported", {"S256"}},
                      {"token_endpoint_auth_methods_supported", {"none", "client_secret_basic"}},
                      {"authorization_response_iss_parameter_supported", true}};
            m.update(metadata_extra);
            reply.body = m.dump();
        } else if (path == "/register" && r.method == "POST") {
            reply.status = 201;
            reply.body = json{{"client_id", "dyn-1"}, {"token_endpoint_auth_method", "none"}}.dump();
        } else if (path == "/idp/token" && r.method == "POST") {
            reply.body = json{{"access_token", "the-id-jag"},
                              {"token_type", "N_A"},
                              {"issued_token_type", "urn:ietf:params:oauth:token-type:id-jag"}}
                             .dump();
        } else if (path == "/token" && r.method == "POST") {
            ++tokens_issued;
            reply.body = json{{"access_token", "at-" + std::to_string(tokens_issued)},
                              {"token_type", dpop ? "DPoP" : "Bearer"},
                              {"expires_in", 3600},
                              {"refresh_token", "rt-" + std::to_string(tokens_issued)}}
                             .dump();
        } else {
            reply.status = 404;
            reply.body = "{}";
        }
        return reply;
    }
};

class OAuthFlowTest : public test_support::LoopbackAuthorizationServerTest<AuthServer> {
protected:
    ~OAuthFlowTest() override {
        // A browser request still on its way (the flow may end before the listener's page
        // is read) is finished first: its coroutine holds the client, and a frame left
        // suspended when the loop goes is a leak.
        io.restart();
        while (browser_in_flight > 0 && io.run_one_for(2s) > 0) {}
    }

    // Sends `request` as the user's browser would, without waiting for the answer.
    void browse(http_client::Request request) {
        ++browser_in_flight;
        spawn(browser.fetch(std::move(request)), [this](std::optional<http_client::Response> r, std::exception_ptr) {
            --browser_in_flight;
            if (r) browser_status = r->status;
        });
    }

    // The browser: the authorization server's redirect to the listener, with `iss` (and a
    // state of its own when `state` is given).
    OAuthOptions options(std::optional<std::string> iss, std::optional<std::string> state = std::nullopt) {
        OAuthOptions o;
        o.server_url = as.base + "/mcp";
        o.store_path = dir + "/toolport/oauth-tokens.json";
        o.redirect_timeout = 5s;
        o.show_authorization_url = [this, iss, state](const std::string& url) -> OAuthOptions::OpenerCheck {
            pages.push_back(url);
            std::string back = param(url, "redirect_uri") +
                               "?code=the-code&state=" + util::percent_encode(state.value_or(param(url, "state")));
            if (iss) back += "&iss=" + util::percent_encode(*iss);
            http_client::Request request;
            request.url = back;
            browse(std::move(request));
            return {};
        };
        return o;
    }

    std::string challenge(const std::string& extra = "") const { return challenge_of("Bearer", extra); }

    http_client::HttpClient browser{executor, [] {
                                        http_client::ClientOptions o;
                                        o.proxy = http_client::ProxySettings{};
                                        return o;
                                    }()};
    std::vector<std::string> pages;
    unsigned browser_status = 0;
    int browser_in_flight = 0;
};

TEST_F(OAuthFlowTest, AuthorizationCodeWithPkceRegistrationAndResource) {
    OAuthAuthorizer authorizer(executor, options(as.base));
    EXPECT_EQ(drive(authorizer.authorization()), "");  // nothing yet
    EXPECT_TRUE(drive(authorizer.refused(401, challenge(", scope=\"mcp:basic\""))));
    EXPECT_EQ(drive(authorizer.authorization()), "Bearer at-1");
    EXPECT_EQ(browser_status, 200u);

    ASSERT_EQ(pages.size(), 1u);
    const std::string& page = pages[0];
    EXPECT_EQ(page.rfind(as.base + "/authorize?", 0), 0u) << page;
    EXPECT_EQ(param(page, "client_id"), "dyn-1");
    EXPECT_EQ(param(page, "code_challenge_method"), "S256");
    EXPECT_EQ(param(page, "resource"), as.base + "/mcp");
    EXPECT_EQ(param(page, "scope"), "mcp:basic");
    EXPECT_EQ(param(page, "redirect_uri").rfind("http://127.0.0.1:", 0), 0u);

    auto registrations = requests_to("/register");
    ASSERT_EQ(registrations.size(), 1u);
    auto registration = json::parse(registrations[0].body);
    EXPECT_EQ(registration["application_type"], "native");
    EXPECT_EQ(registration["redirect_uris"][0], param(page, "redirect_uri"));
    auto tokens = requests_to("/token");
    ASSERT_EQ(tokens.size(), 1u);
    EXPECT_EQ(param(tokens[0].body, "grant_type"), "authorization_code");
    EXPECT_EQ(param(tokens[0].body, "code"), "the-code");
    EXPECT_EQ(param(tokens[0].body, "resource"), as.base + "/mcp");
    EXPECT_EQ(param(tokens[0].body, "client_id"), "dyn-1");
    EXPECT_EQ(param(tokens[0].body, "code_verifier").size(), 43u);

    // Kept for the next command, in a file only the user can read; no second registration.
    struct stat st {};
    ASSERT_EQ(::stat((dir + "/toolport/oauth-tokens.json").c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 0777, 0600u);
    OAuthAuthorizer next(executor, options(as.base));
    EXPECT_EQ(drive(next.authorization()), "Bearer at-1");
    EXPECT_EQ(server.requests().size(), registrations.size() + tokens.size() + 2);  // + the two metadata documents
}

TEST_F(OAuthFlowTest, StepUpAsksForTheUnionOfScopes) {
    OAuthAuthorizer authorizer(executor, options(as.base));
    ASSERT_TRUE(drive(authorizer.refused(401, challenge(", scope=\"mcp:basic\""))));
    drive(authorizer.authorization());
    // A 403 that is not about scope is not something authorizing can fix.
    EXPECT_FALSE(drive(authorizer.refused(403, challenge(", error=\"invalid_token\""))));
    ASSERT_TRUE(drive(authorizer.refused(403, challenge(", error=\"insufficient_scope\", scope=\"mcp:write\""))));
    ASSERT_EQ(pages.size(), 2u);
    EXPECT_EQ(param(pages[1], "scope"), "mcp:basic mcp:write");
    EXPECT_EQ(requests_to("/register").size(), 1u);  // registered once
    EXPECT_EQ(drive(authorizer.authorization()), "Bearer at-2");
}

TEST_F(OAuthFlowTest, ARefusedTokenIsRefreshedBeforeAskingTheUser) {
    OAuthAuthorizer authorizer(executor, options(as.base));
    ASSERT_TRUE(drive(authorizer.refused(401, challenge())));
    drive(authorizer.authorization());
    ASSERT_TRUE(drive(authorizer.refused(401, challenge())));
    EXPECT_EQ(pages.size(), 1u);  // no second trip through the browser
    auto tokens = requests_to("/token");
    ASSERT_EQ(tokens.size(), 2u);
    EXPECT_EQ(param(tokens[1].body, "grant_type"), "refresh_token");
    EXPECT_EQ(param(tokens[1].body, "refresh_token"), "rt-1");
    EXPECT_EQ(param(tokens[1].body, "resource"), as.base + "/mcp");
    EXPECT_EQ(drive(authorizer.authorization()), "Bearer at-2");
}

TEST_F(OAuthFlowTest, AWrongIssInTheRedirectIsRefusedBeforeTheTokenRequest) {
    OAuthAuthorizer authorizer(executor, options(std::string("https://evil.example.com")));
    EXPECT_THROW(drive(authorizer.refused(401, challenge())), AuthorizationError);
    EXPECT_TRUE(requests_to("/token").empty());
    OAuthAuthorizer missing(executor, options(std::nullopt));  // advertised, then left out
    EXPECT_THROW(drive(missing.refused(401, challenge())), AuthorizationError);
    EXPECT_TRUE(requests_to("/token").empty());
}

TEST_F(OAuthFlowTest, ARedirectWithAnotherStateIsRefused) {
    OAuthAuthorizer authorizer(executor, options(as.base, std::string("forged")));
    try {
        drive(authorizer.refused(401, challenge()));
        FAIL() << "a forged state was accepted";
    } catch (const AuthorizationError& e) {
        EXPECT_NE(std::string(e.what()).find("state"), std::string::npos) << e.what();
    }
    while (browser_status == 0 && io.run_one_for(2s) > 0) {  // the browser's answer may still be on its way
    }
    EXPECT_EQ(browser_status, 400u);
    EXPECT_TRUE(requests_to("/token").empty());
}

TEST_F(OAuthFlowTest, APageOpenerThatFailsEndsTheWaitForTheRedirect) {
    OAuthOptions o = options(as.base);
    o.redirect_timeout = 30s;
    int asked = 0;
    // The opener opens nothing; its check reports the failure on its third asking.
    o.show_authorization_url = [&asked](const std::string&) -> OAuthOptions::OpenerCheck {
        return [&asked]() -> std::optional<std::string> {
            if (++asked < 3) return std::nullopt;
            return std::string("the browser command failed (xdg-open exited with status 3)");
        };
    };
    OAuthAuthorizer authorizer(executor, std::move(o));
    const auto start = std::chrono::steady_clock::now();
    try {
        drive(authorizer.refused(401, challenge()));
        FAIL() << "the flow went on without a redirect";
    } catch (const AuthorizationError& e) {
        EXPECT_NE(std::string(e.what()).find("xdg-open exited with status 3"), std::string::npos) << e.what();
    }
    EXPECT_EQ(asked, 3);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 10s);  // not the 30 s redirect timeout
    EXPECT_TRUE(requests_to("/token").empty());
}

TEST_F(OAuthFlowTest, MetadataForAnotherResourceIsRefusedBeforeAnyAuthorization) {
    as.prm_resource = "https://evil.example.com/mcp";
    OAuthAuthorizer authorizer(executor, options(as.base));
    EXPECT_THROW(drive(authorizer.refused(401, challenge())), AuthorizationError);
    EXPECT_TRUE(pages.empty());
    EXPECT_TRUE(requests_to("/.well-known/oauth-authorization-server").empty());
}

TEST_F(OAuthFlowTest, ClientCredentialsWithBasicAuthentication) {
    auto o = options(as.base);
    o.grant = OAuthOptions::Grant::client_credentials;
    o.identity.client_id = "machine";
    o.identity.client_secret = "s3cret";
    OAuthAuthorizer authorizer(executor, o);
    ASSERT_TRUE(drive(authorizer.refused(401, challenge())));
    EXPECT_TRUE(pages.empty());
    auto tokens = requests_to("/token");
    ASSERT_EQ(tokens.size(), 1u);
    EXPECT_EQ(param(tokens[0].body, "grant_type"), "client_credentials");
    EXPECT_EQ(param(tokens[0].body, "resource"), as.base + "/mcp");
    EXPECT_EQ(tokens[0].header("Authorization"), "Basic bWFjaGluZTpzM2NyZXQ=");
    EXPECT_TRUE(requests_to("/register").empty());
}

TEST_F(OAuthFlowTest, EnterpriseIdTokenExchangedForAnIdJagThenAToken) {
    auto o = options(as.base);
    o.grant = OAuthOptions::Grant::enterprise;
    o.identity.client_id = "xaa-client";
    o.identity.client_secret = "xaa-secret";
    o.idp_token_endpoint = as.base + "/idp/token";
    o.idp_client_id = "idp-client";
    o.idp_id_token = "the-id-token";
    OAuthAuthorizer authorizer(executor, o);
    ASSERT_TRUE(drive(authorizer.refused(401, challenge())));
    EXPECT_TRUE(pages.empty());
    auto exchanges = requests_to("/idp/token");
    ASSERT_EQ(exchanges.size(), 1u);
    const auto& x = exchanges[0].body;
    EXPECT_EQ(param(x, "grant_type"), "urn:ietf:params:oauth:grant-type:token-exchange");
    EXPECT_EQ(param(x, "requested_token_type"), "urn:ietf:params:oauth:token-type:id-jag");
    EXPECT_EQ(param(x, "subject_token"), "the-id-token");
    EXPECT_EQ(param(x, "subject_token_type"), "urn:ietf:params:oauth:token-type:id_token");
    EXPECT_EQ(param(x, "audience"), as.base);
    EXPECT_EQ(param(x, "resource"), as.base + "/mcp");
    EXPECT_EQ(param(x, "client_id"), "idp-client");
    auto tokens = requests_to("/token");
    ASSERT_EQ(tokens.size(), 1u);
    EXPECT_EQ(param(tokens[0].body, "grant_type"), "urn:ietf:params:oauth:grant-type:jwt-bearer");
    EXPECT_EQ(param(tokens[0].body, "assertion"), "the-id-jag");
    EXPECT_EQ(tokens[0].header("Authorization"), "Basic eGFhLWNsaWVudDp4YWEtc2VjcmV0");
    EXPECT_EQ(drive(authorizer.authorization()), "Bearer at-1");
}

TEST_F(OAuthFlowTest, WithoutAStoreTokensLiveInMemoryOnly) {
    auto o = options(as.base);
    o.store_path.clear();
    o.grant = OAuthOptions::Grant::client_credentials;
    o.identity.client_id = "machine";
    o.identity.client_secret = "s3cret";
    OAuthAuthorizer authorizer(executor, o);
    ASSERT_TRUE(drive(authorizer.refused(401, challenge())));
    EXPECT_EQ(drive(authorizer.authorization()), "Bearer at-1");
    EXPECT_FALSE(std::filesystem::exists(dir + "/toolport"));
}

TEST_F(OAuthFlowTest, AServerWithoutPkceS256IsRefused) {
    as.metadata_extra = {{"code_challenge_methods_supported", json::array({"plain"})}};
    OAuthAuthorizer authorizer(executor, options(as.base));
    EXPECT_THROW(drive(authorizer.refused(401, challenge())), AuthorizationError);
    EXPECT_TRUE(pages.empty());
}

TEST_F(OAuthFlowTest, ConcurrentRefusalsShareOneAuthorization) {
    OAuthAuthorizer authorizer(executor, options(as.base));
    int done = 0;
    bool first = false, second = false;
    spawn(authorizer.refused(401, challenge()), [&](std::optional<bool> r, std::exception_ptr) {
        first = r.value_or(false);
        ++done;
    });
    spawn(authorizer.refused(401, challenge()), [&](std::optional<bool> r, std::exception_ptr) {
        second = r.value_or(false);
        ++done;
    });
    io.restart();
    while (done < 2 && io.run_one_for(10s) > 0) {}
    EXPECT_TRUE(first && second);
    EXPECT_EQ(pages.size(), 1u);
    EXPECT_EQ(requests_to("/token").size(), 1u);
}

TEST_F(OAuthFlowTest, ABoundTokenIsRefusedRatherThanSentWithoutItsProof) {
    OAuthAuthorizer authorizer(executor, options(as.base));
    as.dpop = true;
    EXPECT_THROW(drive(authorizer.refused(401, challenge())), AuthorizationError);
    EXPECT_EQ(drive(authorizer.authorization()), "");
}

TEST_F(OAuthFlowTest, AnUnreadableStoreMattersOnlyWhenAuthorizationIsNeeded) {
    std::filesystem::create_directories(dir + "/toolport");
    { std::ofstream(dir + "/toolport/oauth-tokens.json") << "not json"; }
    OAuthAuthorizer authorizer(executor, options(as.base));
    EXPECT_EQ(drive(authorizer.authorization()), "");
    try {
        drive(authorizer.refused(401, challenge()));
        FAIL() << "a corrupt store was overwritten";
    } catch (const AuthorizationError& e) {
        EXPECT_NE(std::string(e.what()).find("oauth-tokens.json"), std::string::npos) << e.what();
    }
    EXPECT_TRUE(pages.empty());
}

TEST_F(OAuthFlowTest, LoginFindsTheMetadataWithoutAChallenge) {
    OAuthAuthorizer authorizer(executor, options(as.base));
    drive(authorizer.login());
    EXPECT_EQ(authorizer.issuer(), as.base);
    ASSERT_FALSE(server.requests().empty());
    EXPECT_EQ(server.requests()[0].target, "/.well-known/oauth-protected-resource/mcp");  // path-suffixed first
    ASSERT_EQ(pages.size(), 1u);
    EXPECT_EQ(param(pages[0], "scope"), "mcp:basic");  // the resource's scopes_supported
    EXPECT_EQ(drive(authorizer.authorization()), "Bearer at-1");
}

TEST_F(OAuthFlowTest, RedirectListenerIgnoresOtherPaths) {
    RedirectListener listener(executor);
    auto uri = listener.redirect_uri();
    http_client::Request stray;
    stray.url = uri.substr(0, uri.size() - std::string("callback").size()) + "favicon.ico";
    auto answer = drive(browser.fetch(stray));
    EXPECT_EQ(answer.status, 404u);
    http_client::Request good;
    good.url = uri + "?code=c&state=s1";
    browse(good);
    auto response = drive(listener.wait("s1", 5s));
    EXPECT_EQ(response.code, "c");
}

}  // namespace

// A gateway upstream under `auth: {type: login}`: the tokens of an earlier login are used and
// refreshed, but a new authorization (which needs a user at a browser) is refused, not started.
TEST_F(OAuthFlowTest, NonInteractiveUsesAndRefreshesKeptTokensButNeverAuthorizesAnew) {
    {
        OAuthAuthorizer login(executor, options(as.base));  // `toolport login`
        ASSERT_TRUE(drive(login.refused(401, challenge())));
    }
    ASSERT_EQ(pages.size(), 1u);
    auto o = options(as.base);
    o.interactive = false;
    OAuthAuthorizer gateway(executor, o);
    EXPECT_EQ(drive(gateway.authorization()), "Bearer at-1");
    // Refused once: the refresh token gets a new one.
    ASSERT_TRUE(drive(gateway.refused(401, challenge())));
    EXPECT_EQ(drive(gateway.authorization()), "Bearer at-2");
    // Refused again: only a new authorization could help, which this one may not start.
    const auto registrations = requests_to("/register").size();
    try {
        drive(gateway.refused(401, challenge()));
        FAIL() << "a non-interactive authorizer started an authorization";
    } catch (const AuthorizationError& e) {
        EXPECT_NE(std::string(e.what()).find("needs a user at a browser"), std::string::npos) << e.what();
    }
    EXPECT_EQ(pages.size(), 1u);
    EXPECT_EQ(requests_to("/register").size(), registrations);
    EXPECT_TRUE(requests_to("/authorize").empty());
}

TEST_F(OAuthFlowTest, NonInteractiveWithoutKeptTokensFailsAtTheFirstRefusal) {
    auto o = options(as.base);
    o.interactive = false;
    OAuthAuthorizer gateway(executor, o);
    EXPECT_EQ(drive(gateway.authorization()), "");
    EXPECT_THROW(drive(gateway.refused(401, challenge())), AuthorizationError);
    EXPECT_TRUE(pages.empty());
    EXPECT_TRUE(requests_to("/register").empty());
    EXPECT_TRUE(requests_to("/token").empty());
}

}  // namespace toolport::client::oauth
