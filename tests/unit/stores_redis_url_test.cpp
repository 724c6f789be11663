// parse_redis_url and make_stores' configuration errors (no Redis server needed).
#include <gtest/gtest.h>

#include "manual_executor.hpp"
#include "stores/redis_url.hpp"
#include "stores/stores.hpp"

using namespace toolport;
using namespace toolport::stores;

namespace {

std::string error_of(const std::string& url) {
    try {
        parse_redis_url(url);
    } catch (const StoreConfigError& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(StoresRedisUrl, ParsesHostPortAndDatabase) {
    auto e = parse_redis_url("redis://127.0.0.1:6380/3");
    EXPECT_EQ(e.host, "127.0.0.1");
    EXPECT_EQ(e.port, 6380);
    EXPECT_EQ(e.db, 3);
    EXPECT_EQ(e.password, "");
    EXPECT_EQ(e.username, "");
    EXPECT_EQ(e.describe(), "127.0.0.1:6380/3");
}

TEST(StoresRedisUrl, DefaultsToPort6379AndDatabase0) {
    auto e = parse_redis_url("redis://cache.internal");
    EXPECT_EQ(e.host, "cache.internal");
    EXPECT_EQ(e.port, 6379);
    EXPECT_EQ(e.db, 0);
    EXPECT_EQ(parse_redis_url("redis://h:1/").db, 0);
    EXPECT_EQ(parse_redis_url("REDIS://h:1").host, "h");
}

TEST(StoresRedisUrl, ReadsThePasswordAndOptionalUserAndDecodesPercentEscapes) {
    auto e = parse_redis_url("redis://:s3cr%40t%2Fx@localhost:6379/1");
    EXPECT_EQ(e.password, "s3cr@t/x");
    EXPECT_EQ(e.username, "");
    EXPECT_EQ(e.host, "localhost");
    EXPECT_EQ(e.db, 1);
    auto acl = parse_redis_url("redis://toolport:pw@10.0.0.5:7000");
    EXPECT_EQ(acl.username, "toolport");
    EXPECT_EQ(acl.password, "pw");
    EXPECT_EQ(acl.describe().find("pw"), std::string::npos);
}

TEST(StoresRedisUrl, AcceptsBracketedIpv6) {
    auto e = parse_redis_url("redis://[::1]:6390/2");
    EXPECT_EQ(e.host, "::1");
    EXPECT_EQ(e.port, 6390);
    EXPECT_EQ(e.describe(), "[::1]:6390/2");
    EXPECT_EQ(parse_redis_url("redis://[fe80::1]").port, 6379);
}

TEST(StoresRedisUrl, RefusesOtherSchemesNamingThem) {
    EXPECT_NE(error_of("http://localhost:6379").find("unsupported scheme \"http\""), std::string::npos);
    EXPECT_NE(error_of("rediss://localhost:6379").find("TLS"), std::string::npos);
    EXPECT_NE(error_of("unix:///tmp/redis.sock").find("\"unix\""), std::string::npos);
    EXPECT_NE(error_of("localhost:6379").find("expected \"memory\" or redis://"), std::string::npos);
    EXPECT_NE(error_of("").find("expected"), std::string::npos);
}

TEST(StoresRedisUrl, RefusesMalformedUrlsNamingTheProblem) {
    const std::vector<std::pair<std::string, std::string>> cases = {
        {"redis://", "host is missing"},
        {"redis://:6379", "host is missing"},
        {"redis://localhost:", "port after ':' is empty"},
        {"redis://localhost:0", "1 to 65535"},
        {"redis://localhost:65536", "1 to 65535"},
        {"redis://localhost:63a9", "1 to 65535"},
        {"redis://localhost:6379/x", "database"},
        {"redis://localhost:6379/1/2", "database"},
        {"redis://localhost:6379/99999999999", "database"},
        {"redis://localhost:6379?db=1", "query"},
        {"redis://localhost:6379#x", "fragment"},
        {"redis://::1:6379", "brackets"},
        {"redis://[::1:6379", "not closed"},
        {"redis://[::1]x", "':port'"},
        {"redis://[zz]:1", "IPv6"},
        {"redis://local host:1", "host"},
        {"redis://password@localhost:6379", "':' is missing"},
        {"redis://:@localhost:6379", "password after ':' is empty"},
        {"redis://:bad%zzescape@localhost", "percent-escape"},
        {"redis://:bad%2@localhost", "percent-escape"},
    };
    for (const auto& [url, expected] : cases) {
        const auto message = error_of(url);
        EXPECT_NE(message.find(expected), std::string::npos) << url << " -> " << message;
        EXPECT_EQ(message.rfind("store URL: ", 0), 0u) << message;
    }
}

TEST(StoresRedisUrl, ErrorsNeverRepeatThePassword) {
    const std::string password = "Sup3rS3cret";
    const std::vector<std::string> urls = {
        "redis://:" + password + "@localhost:0",
        "redis://:" + password + "@localhost:6379/x",
        "redis://:" + password + "@local host",
        "redis://:" + password + "%zz@localhost",
        "redis://user:" + password + "@[::1",
        "redis://:Sup3r/S3cret@localhost",  // an unescaped '/' splits the password
        "redis://:Sup3r:S3cret@",
        "ftp://:" + password + "@localhost",
        "redis://:" + password + "@h?x=1",
    };
    for (const auto& url : urls) {
        const auto message = error_of(url);
        EXPECT_NE(message, "(accepted)") << url;
        EXPECT_EQ(message.find("Sup3r"), std::string::npos) << message;
        EXPECT_EQ(message.find("S3cret"), std::string::npos) << message;
    }
}

TEST(StoresMakeStores, MemoryGivesInProcessStoresOnAnyExecutor) {
    test_support::ManualExecutor exec;
    auto stores = make_stores(StoreOptions{}, exec);
    EXPECT_EQ(stores->backend(), "memory");
    EXPECT_EQ(stores->state(), StoreState::available);
    EXPECT_EQ(stores->cache().backend(), "memory");
    EXPECT_EQ(stores->rate_limits().backend(), "memory");
    EXPECT_EQ(stores->budgets().backend(), "memory");
    EXPECT_EQ(stores->cache().state(), StoreState::available);
}

TEST(StoresMakeStores, RedisNeedsTheAsioExecutor) {
    test_support::ManualExecutor exec;
    StoreOptions options;
    options.url = "redis://127.0.0.1:6379";
    try {
        make_stores(options, exec);
        FAIL() << "expected StoreConfigError";
    } catch (const StoreConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("Asio event loop"), std::string::npos) << e.what();
    }
}

TEST(StoresMakeStores, RefusesBadUrlsAndTimeouts) {
    test_support::ManualExecutor exec;
    StoreOptions options;
    options.url = "redis://:pw@host:99999";
    EXPECT_THROW(make_stores(options, exec), StoreConfigError);
    options.url = "";
    EXPECT_THROW(make_stores(options, exec), StoreConfigError);
    options.url = "Memory";
    EXPECT_THROW(make_stores(options, exec), StoreConfigError);
    options.url = "redis://127.0.0.1:6379";
    options.redis_timeout = std::chrono::milliseconds(0);
    try {
        make_stores(options, exec);
        FAIL() << "expected StoreConfigError";
    } catch (const StoreConfigError& e) {
        EXPECT_NE(std::string(e.what()).find("timeout"), std::string::npos) << e.what();
    }
}

TEST(StoresHealth, NamesEveryState) {
    EXPECT_EQ(to_string(StoreState::available), "available");
    EXPECT_EQ(to_string(StoreState::degraded), "degraded");
    EXPECT_EQ(to_string(StoreState::unavailable), "unavailable");
}

}  // namespace
