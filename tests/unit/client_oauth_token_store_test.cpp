// The OAuth token store: a round trip per server, a file only the user can read, and
// clear errors for a store that cannot be used.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "client/oauth/token_store.hpp"

namespace toolport::client::oauth {
namespace {

namespace fs = std::filesystem;

class TokenStoreTest : public ::testing::Test {
protected:
    TokenStoreTest() {
        char pattern[] = "/tmp/toolport-token-store-XXXXXX";
        dir = ::mkdtemp(pattern);
        path = dir + "/toolport/oauth-tokens.json";
    }
    ~TokenStoreTest() override { fs::remove_all(dir); }

    static unsigned mode_of(const std::string& p) {
        struct stat st {};
        EXPECT_EQ(::stat(p.c_str(), &st), 0) << p;
        return st.st_mode & 0777;
    }

    std::string dir, path;
};

ServerEntry sample() {
    ServerEntry e;
    e.resource = "http://localhost:5/mcp";
    e.client = RegisteredClient{"http://as", "client-1", "s3cret", "client_secret_basic", "dynamic"};
    e.tokens = StoredTokens{.issuer = "http://as",
                            .access_token = "at-1",
                            .token_type = "Bearer",
                            .refresh_token = "rt-1",
                            .expires_at = 1700000000,
                            .scopes = {"mcp:basic", "offline_access"}};
    return e;
}

TEST_F(TokenStoreTest, RoundTripPerServerInAFileOnlyTheUserCanRead) {
    ::umask(0);  // even a permissive umask must not widen the file
    TokenStore store(path);
    EXPECT_FALSE(store.load("http://localhost:5/mcp"));  // no file yet
    store.save("http://localhost:5/mcp", sample());
    ServerEntry other;
    other.resource = "http://other/mcp";
    store.save("http://other/mcp", other);
    ::umask(022);
    EXPECT_EQ(mode_of(path), 0600u);
    EXPECT_EQ(mode_of(dir + "/toolport"), 0700u);

    auto loaded = TokenStore(path).load("http://localhost:5/mcp");
    ASSERT_TRUE(loaded);
    EXPECT_EQ(loaded->resource, "http://localhost:5/mcp");
    ASSERT_TRUE(loaded->client && loaded->tokens);
    EXPECT_EQ(loaded->client->client_id, "client-1");
    EXPECT_EQ(loaded->client->client_secret, "s3cret");
    EXPECT_EQ(loaded->client->auth_method, "client_secret_basic");
    EXPECT_EQ(loaded->tokens->access_token, "at-1");
    EXPECT_EQ(loaded->tokens->refresh_token, "rt-1");
    EXPECT_EQ(loaded->tokens->expires_at, 1700000000);
    EXPECT_EQ(loaded->tokens->scopes, (std::vector<std::string>{"mcp:basic", "offline_access"}));
    EXPECT_FALSE(store.load("http://other/mcp")->tokens);

    EXPECT_TRUE(store.remove("http://localhost:5/mcp"));
    EXPECT_FALSE(store.remove("http://localhost:5/mcp"));
    EXPECT_FALSE(store.load("http://localhost:5/mcp"));
    EXPECT_TRUE(store.load("http://other/mcp"));
    EXPECT_EQ(mode_of(path), 0600u);
    // No temporary file is left behind.
    int files = 0;
    for (const auto& f : fs::directory_iterator(dir + "/toolport")) files += f.is_regular_file();
    EXPECT_EQ(files, 1);
}

TEST_F(TokenStoreTest, AnExistingWideFileIsReplacedByANarrowOne) {
    fs::create_directories(dir + "/toolport");
    { std::ofstream(path) << "{}"; }
    ::chmod(path.c_str(), 0644);
    TokenStore(path).save("http://s/mcp", sample());
    EXPECT_EQ(mode_of(path), 0600u);
}

TEST_F(TokenStoreTest, ACorruptStoreIsAClearErrorWithoutItsContents) {
    fs::create_directories(dir + "/toolport");
    { std::ofstream(path) << "{\"servers\": {\"x\": \"at-secret\""; }
    try {
        TokenStore(path).load("x");
        FAIL() << "a corrupt store was read";
    } catch (const TokenStoreError& e) {
        std::string what = e.what();
        EXPECT_NE(what.find(path), std::string::npos) << what;
        EXPECT_EQ(what.find("at-secret"), std::string::npos) << what;
    }
}

TEST_F(TokenStoreTest, DefaultPathFollowsXdg) {
    const char* saved_xdg = std::getenv("XDG_CONFIG_HOME");
    const std::string keep = saved_xdg ? saved_xdg : "";
    ::setenv("XDG_CONFIG_HOME", dir.c_str(), 1);
    EXPECT_EQ(TokenStore::default_path(), dir + "/toolport/oauth-tokens.json");
    ::setenv("XDG_CONFIG_HOME", "relative/not/used", 1);  // XDG: relative paths are ignored
    const char* home = std::getenv("HOME");
    if (home && *home) EXPECT_EQ(TokenStore::default_path(), std::string(home) + "/.config/toolport/oauth-tokens.json");
    if (saved_xdg) ::setenv("XDG_CONFIG_HOME", keep.c_str(), 1);
    else ::unsetenv("XDG_CONFIG_HOME");
}

}  // namespace
}  // namespace toolport::client::oauth
